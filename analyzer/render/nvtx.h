/*
 * nvtx.h — explain's section on the program's NVTX ranges (measure/nvtx.h).
 */
#ifndef IA_RENDER_NVTX_H
#define IA_RENDER_NVTX_H

#include "rules/analysis.h"

#include <stdio.h>

/* After the verdict: the range holding most of the GPU's idle time
 * (ia_nvtx_idle_home), in one line; nothing when none holds half. */
void ia_nvtx_print_home(FILE *f, const struct ia_analysis *a);
/* Nothing when the trace has no range of the main process. */
void ia_nvtx_print(FILE *f, const struct ia_analysis *a, int verbose);

#endif
