/*
 * analysis.h — the rules stage's entry: a loaded trace in, one struct
 * ia_analysis out (chains.h): every measure taken once, every rule run
 * once over them, the chains most severe first.  The renderers and the
 * front ends (explain, the HTML report, the MCP server, the gate) take this
 * one result, so they never disagree on a figure.
 */
#ifndef IA_ANALYSIS_H
#define IA_ANALYSIS_H

#include "rules/chains.h"

#include <stddef.h>

/* 0, or -1 with a one-line reason in err (a->… may be partly filled:
 * ia_analysis_free it either way). */
int ia_analyze(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen);
void ia_analysis_free(struct ia_analysis *a);

/* Derives a->chains from the other parts (called by ia_analyze). */
int ia_chains_build(struct ia_analysis *a, char *err, size_t errlen);

#endif
