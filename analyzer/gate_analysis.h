/*
 * gate_analysis.h — the one seam between the gate and the analyzer's
 * causal-chain analysis: fills a run summary's HIGH/MEDIUM/LOW chains and
 * its GPU-idle estimate from a loaded trace, exactly as `explain` computes
 * them (the gate never re-derives either).
 */
#ifndef IA_GATE_ANALYSIS_H
#define IA_GATE_ANALYSIS_H

#include "gate_summary.h"
#include "trace.h"

#include <stddef.h>

/* 0, or -1 with a one-line reason in err. */
int ia_gate_analyse(struct ia_gate_summary *s, const struct ia_trace *t, char *err, size_t errlen);

#endif
