/*
 * gate_analysis.h — the one seam between the gate and explain: a run
 * summary's chains and GPU-idle estimate are taken from the explain --json
 * document of the analysis (issue 5's contract), so the gate judges
 * exactly what `ingero-analyze explain` reports and never re-derives it.
 */
#ifndef IA_GATE_ANALYSIS_H
#define IA_GATE_ANALYSIS_H

#include "rules/chains.h"
#include "gate/gate_run.h"

#include <stddef.h>

/* 0, or -1 with a one-line reason in err. */
int ia_gate_from_explain(struct ia_gate_summary *s, const struct ia_analysis *a, char *err, size_t errlen);

#endif
