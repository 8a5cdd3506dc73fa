/*
 * gate_baseline.h — the baseline file of the CI gate (its format is in
 * gate_summary.h): read, written, and made from several runs.
 *
 * A baseline of several runs knows its noise: each run's steady-state
 * figures, each chain's cost in each run and each API's p50 and p99 in
 * each run are kept, so the gate can take their median and their spread
 * (gate_compare.c); the latencies of all runs are pooled into one sample
 * per API, reduced to max_samples order statistics.
 */
#ifndef IA_GATE_BASELINE_H
#define IA_GATE_BASELINE_H

#include "gate/gate_run.h"

#include <stddef.h>

/* Parses a baseline file's text into s (whose source is set); 0, or -1 with
 * a one-line reason naming path. */
int ia_gate_baseline_read(struct ia_gate_summary *s, const char *path, const char *text, size_t len,
			  size_t max_samples, char *err, size_t errlen);

#endif
