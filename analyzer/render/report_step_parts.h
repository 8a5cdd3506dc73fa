/*
 * report_step_parts.h — the per-step breakdown as the HTML report's chart
 * (a stacked column per step, its legend with each part's share).
 */
#ifndef IA_REPORT_STEP_PARTS_H
#define IA_REPORT_STEP_PARTS_H

#include "rules/chains.h"

#include <stdio.h>

/* Nothing when no step was broken down. */
void ia_report_step_parts(FILE *f, const struct ia_analysis *a);

#endif
