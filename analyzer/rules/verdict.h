/*
 * verdict.h — the answer to "is my GPU starving?" in one line, before the
 * findings that explain it.
 *
 * Read from the steady state's GPU-idle bounds (idle.h), with the gaps'
 * thresholds (docs/chains.md): below 3 % idle at most (where no gap
 * chain is made) the GPU is busy and what limits the run is its own work,
 * which no host-side finding can speed up.  A steady-state finding of at
 * least MEDIUM means it starves, and says why — unless the GPU idled under
 * 10 %: then the steps are slowed rather than starved (copies from pageable
 * memory keep the copy engine busy at a fraction of its bandwidth).  Else
 * it idles some of the time.  Bounds from host evidence alone that
 * straddle both thresholds say neither.  One-time phases (start-up,
 * compilation) are costs of the run, not starvation: the verdict names the
 * largest when it took at least 10 % of the window.
 */
#ifndef IA_VERDICT_H
#define IA_VERDICT_H

#include "rules/chains.h"

#include <cjson/cJSON.h>

enum ia_verdict_state {
	IA_VERDICT_NONE = 0,   /* no steady state to judge (no CUDA work queued) */
	IA_VERDICT_BUSY,       /* the GPU had work nearly all the steady state */
	IA_VERDICT_PARTLY,     /* it idled some of it */
	IA_VERDICT_STARVING,   /* it idled much of it */
	IA_VERDICT_SLOWED,     /* under 10 % idle, but a finding of MEDIUM or more costs the steps time */
	IA_VERDICT_UNKNOWN,    /* host evidence only, bounds too wide to tell */
};

struct ia_verdict {
	enum ia_verdict_state state;
	double low, high;                 /* steady-state GPU idle, % */
	const struct ia_chain *cause;     /* the first steady-state finding, or NULL */
	const struct ia_chain *one_time;  /* the costliest phase finding of >= 10 % of the window, or NULL */
	const struct ia_gpu_time *gpu;    /* busy or mostly busy: where its time went, by kernel (gpu_time.h) */
	const struct ia_gpu_sharing *sharing;   /* other processes queuing GPU work meanwhile, said; or NULL */
	int main_pid;                     /* with sharing: the process the figures are of */
	char text[1536];                  /* "Verdict: …" */
};

/* The cause a steady-state finding stands for, in words ("the main thread
 * waiting for DataLoader workers, …"): the verdict's, and the CI gate's. */
const char *ia_verdict_cause(const struct ia_chain *c, char *buf, size_t n);

void ia_verdict_compute(const struct ia_analysis *a, struct ia_verdict *v);
/* explain --json's "verdict": {state, steady_idle_low_pct, steady_idle_high_pct,
 * cause_kind, one_time_kind, text}, and where the GPU was shared,
 * gpu_shared: {processes, pids, gpus} */
cJSON *ia_verdict_json(const struct ia_verdict *v);

#endif
