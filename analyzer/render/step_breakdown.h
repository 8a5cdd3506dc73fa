/*
 * step_breakdown.h — where each steady step's time went
 * (measure/step_breakdown.h) for people and programs: explain prints it as
 * a table after the verdict, explain --json and MCP's get_gpu_idle carry it.
 */
#ifndef IA_RENDER_STEP_BREAKDOWN_H
#define IA_RENDER_STEP_BREAKDOWN_H

#include "rules/chains.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "Steps: where each step's time went (N steady steps): CLASS", a row per
 * part (median, p90, share), the thresholds and how overlap is resolved;
 * nothing when no step was timed. */
void ia_step_breakdown_print(FILE *f, const struct ia_analysis *a);
/* {steps, total_ns, class, class_part, parts:{KEY:{p50_ns, p90_ns, total_ns, share_pct}},
 *  thresholds:{KEY:{high_pct, moderate_pct}}, order, overlap} or {steps: 0}. */
cJSON *ia_step_breakdown_json(const struct ia_analysis *a);

#endif
