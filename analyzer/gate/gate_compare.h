/*
 * gate_compare.h — the gate's checks: each one compares one figure of the
 * current run with the baseline and gives a verdict with its evidence.
 *
 * Checks, in the order they are reported:
 *   latency    per API, over the steady state: p50 (Mann–Whitney U + growth
 *              threshold) and p99 (bootstrap CI of the p99 ratio + growth
 *              threshold); a baseline of several runs adds a multiple of
 *              the spread of its runs' p50s and p99s to the thresholds
 *   steady     whether both steady states are long enough to judge
 *   gpu_idle   the steady state's GPU idle
 *   throughput the steady state's steps (or calls) per second
 *   chains     a HIGH chain the baseline lacks, whose cost rose
 *   phases     start-up, compilation, autotuning, epoch boundaries: warned
 *              about unless the config asks to gate them
 * A steady figure, or a chain's cost, fails only when its change exceeds
 * both its limit and noise_multiple times its noise (gate_compare_internal.h).  What
 * changed between the runs — the chain diff and the facts that tell a
 * cause — is listed with the checks (changes), and a failing check's
 * reason names the changes behind it.
 */
#ifndef IA_GATE_COMPARE_H
#define IA_GATE_COMPARE_H

#include "gate/gate_config.h"
#include "gate/gate_run.h"

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

/* One line of "what changed": a chain new, grown, gone or of another
 * cause, or a fact of the steady state that moved. */
enum ia_gate_change_kind { IA_GATE_NEW, IA_GATE_GROWN, IA_GATE_CAUSE, IA_GATE_GONE, IA_GATE_SHRUNK, IA_GATE_FACT };
struct ia_gate_change {
	enum ia_gate_change_kind kind;
	char text[512];        /* "new: the main thread's own work … (gaps_host_busy, 0% -> 58% of the steady state)" */
	char api[64];          /* the API it is about, "" when none */
	double growth;         /* cost points gained (facts: 0), to rank by */
	int steady;            /* explains a steady-state figure (throughput, GPU idle) */
};

struct ia_gate_result {
	struct ia_gate_check *checks;
	size_t n, cap;
	size_t fails, warns;
	struct ia_gate_change *changes;
	size_t nchanges, ccap;
	/* the runs that made the baseline (their sources), for the reports */
	char **base_runs;
	size_t nbase_runs;
};

/* Runs every check; -1 only on out of memory. */
int ia_gate_compare(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		    const struct ia_gate_summary *cur, struct ia_gate_result *out);
void ia_gate_result_free(struct ia_gate_result *r);

const char *ia_gate_verdict_name(enum ia_gate_verdict v);

#endif
