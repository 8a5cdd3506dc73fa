/*
 * step_times.h — the steady state's step times (measure/step_times.h) for
 * people and programs: stats prints the distribution, the HTML report
 * draws it, explain --json and stats --json carry it.
 */
#ifndef IA_RENDER_STEP_TIMES_H
#define IA_RENDER_STEP_TIMES_H

#include "rules/chains.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "Step times (steady state, N steps): p50 …, p90 …, p99 …, max …" and a
 * histogram; nothing when no step was timed. */
void ia_step_times_print(FILE *f, const struct ia_analysis *a);
/* {count, mean_ns, min_ns, p50_ns, p90_ns, p99_ns, max_ns, histogram:{lo_ns, width_ns, counts:[…]}}
 * or {count: 0}. */
cJSON *ia_step_times_json(const struct ia_analysis *a);

#endif
