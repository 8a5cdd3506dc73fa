/*
 * nvtx.h — explain's section on the program's NVTX ranges (measure/nvtx.h).
 */
#ifndef IA_RENDER_NVTX_H
#define IA_RENDER_NVTX_H

#include "rules/analysis.h"

#include <stdio.h>

/* Nothing when the trace has no range of the main process. */
void ia_nvtx_print(FILE *f, const struct ia_analysis *a, int verbose);

#endif
