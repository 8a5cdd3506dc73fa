/*
 * gate_compare.h — the gate's checks: each one compares one figure of the
 * current run with the baseline and gives a verdict with its evidence.
 *
 * Checks, in the order they are reported:
 *   latency    per API: p50 (Mann–Whitney U + growth threshold) and p99
 *              (bootstrap CI of the p99 ratio + growth threshold)
 *   gpu_idle   the GPU-idle estimate (both bounds grew by more than N points)
 *   throughput CUDA calls per second over the span of CUDA activity
 *   chains     a HIGH chain in the current run that the baseline lacks
 */
#ifndef IA_GATE_COMPARE_H
#define IA_GATE_COMPARE_H

#include "gate/gate_config.h"
#include "gate/gate_summary.h"

#include <stddef.h>

enum ia_gate_verdict {
	IA_GATE_PASS,
	IA_GATE_IMPROVED,   /* significantly better: a pass worth reporting */
	IA_GATE_SKIP,       /* not judged (too few samples, switched off, not in both runs) */
	IA_GATE_WARN,       /* a regression the config says to report but not fail on */
	IA_GATE_FAIL,
};

struct ia_gate_check {
	char group[16];        /* "latency", "gpu_idle", "throughput", "chains" */
	char name[160];        /* "cudaStreamSynchronize p99" */
	char baseline[64];     /* figures as printed */
	char current[64];
	char change[32];       /* "+102%", "+28 pts", "new" */
	char evidence[160];    /* "U p=3e-12, r=0.81", "95% CI x1.9..x2.2" */
	char limit[48];        /* the threshold that applied: "> +20%" */
	char why[512];         /* one sentence; set for WARN/FAIL/SKIP */
	enum ia_gate_verdict verdict;
	int minor;             /* a skip nobody needs to see in the terminal (an API called 3 times) */
};

struct ia_gate_result {
	struct ia_gate_check *checks;
	size_t n, cap;
	size_t fails, warns;
};

/* Runs every check; -1 only on out of memory. */
int ia_gate_compare(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		    const struct ia_gate_summary *cur, struct ia_gate_result *out);
void ia_gate_result_free(struct ia_gate_result *r);

const char *ia_gate_verdict_name(enum ia_gate_verdict v);

#endif
