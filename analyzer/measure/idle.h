/*
 * idle.h — the GPU-idle figures every rule ranks by, computed in one place.
 *
 * Two windows: the whole window W (the main process's first queued work to
 * the end of its last call) and its steady state (W minus the one-time
 * phases in it: phases.h).  For each, GPU idle as bounds: low = time with
 * certainly no work of the process queued (the gaps), high = the window
 * minus the time the GPU was known busy.  Today both come from host
 * evidence (gaps.h).  When measured GPU time is there (GPU completion
 * marks, schema 3), the gaps and the known-busy time are the measured
 * ones and this struct is where they reach the rules: nothing else reads
 * the bounds.
 *
 * A rule judges severity by the steady state (ia_idle_share: what the run
 * is for, not its start-up) and ranks by what a cause costs the whole
 * window (ia_idle_impact): start-up, compilation and autotuning are costs
 * of the whole run, and only that figure is comparable between them.
 */
#ifndef IA_IDLE_H
#define IA_IDLE_H

#include "measure/gaps.h"
#include "measure/phases.h"

#include <cjson/cJSON.h>

struct ia_idle {
	int measured;                    /* from GPU completions; 0: estimated from host evidence */
	uint64_t window_ns;              /* W */
	uint64_t steady_ns;              /* W minus the one-time phases in it */
	uint64_t low_ns, high_ns;        /* GPU idle over W */
	uint64_t steady_low_ns, steady_high_ns;   /* ... over the steady state */
	uint64_t phase_ns[IA_PHASE_N];   /* time of each phase in W ([IA_PHASE_STEADY] = steady_ns) */
	uint64_t pre_window_startup_ns;  /* start-up before the first queued work (not in W) */
	size_t nmarks, nstreams, nunmarked;   /* measured: GPU marks, streams with work, of them unmarked */
	/* measured: the estimate within the bounds (gpu_time.h), GPU idle with
	 * alike work's times at their 75th, 50th and 25th percentile: [1] is
	 * the estimate, [0]..[2] its range (low to high) */
	uint64_t est_ns[3], steady_est_ns[3];
	size_t ntimed, nwork, nwork_alike;   /* work timed alone; work queued, of it alike some timed */
};

void ia_idle_compute(const struct ia_gaps *g, const struct ia_phases *ph, struct ia_idle *out);
/* ns as a share of the steady state (severity); 0 without one. */
double ia_idle_share(const struct ia_idle *i, uint64_t ns);
/* ns as a share of the whole window (ranking); 0 without one. */
double ia_idle_impact(const struct ia_idle *i, uint64_t ns);
/* Measured, with work timed alone: the estimate within the bounds is there. */
int ia_idle_estimated(const struct ia_idle *i);
/* Whether "about" says more than the bounds over the steady state (steady)
 * or the window: the estimate is there and the bounds are not one figure. */
int ia_idle_about(const struct ia_idle *i, int steady);
/* "87-98% (about 95%)": the steady state's bounds and, when it says more,
 * the estimate. */
char *ia_idle_fmt_steady(const struct ia_idle *i, char *buf, size_t len);
/* explain --json's "gpu_idle_pct": {low, high, steady_low, steady_high, estimate, basis,
 * estimate_from_timed_work when there} */
cJSON *ia_idle_json(const struct ia_idle *i);

#endif
