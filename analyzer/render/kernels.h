/*
 * kernels.h — `stats --kernels`: the GPU's time by kernel (and kind of copy
 * or memset), as nsys stats' cuda_gpu_kern_sum gives it: launches, GPU
 * time, its share of the GPU's work, a launch's mean, p50 and max.  The
 * times are the estimate within the measured bounds (measure/gpu_time.h:
 * each stream replayed with the times of alike work timed alone, held to
 * the measured completions), over the steady state when it queued work;
 * a trace without GPU marks has none, and says so.
 */
#ifndef IA_KERNELS_H
#define IA_KERNELS_H

#include "rules/chains.h"

#include <cjson/cJSON.h>
#include <stdio.h>

void ia_kernels_print(FILE *f, const struct ia_analysis *a, int width);
/* {"measured", "over", "work_ns", "kernels":[{name, short_name, kind, launches, gpu_ns, share_pct,
 *  mean_ns, p50_ns, max_ns, timed_alone, stream}], "figures"} */
cJSON *ia_kernels_json(const struct ia_analysis *a);

#endif
