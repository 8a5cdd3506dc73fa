/*
 * step_times.h — how long each step of the loop took, in the steady state.
 *
 * steps.h finds the loop's period: a step queues the same kernels in the
 * same order.  Its first run of launches (up to IA_STEP_SIG) that
 * appears once in the step is its signature (a run inside a loop of the
 * step's own — an optimizer's kernels per parameter, c77 — would match
 * again in the same step); every place in the main process's launches where the
 * signature appears again starts a step, and a step lasts from its start
 * to the next.  A match less than 3/4 of a step's launches after the last
 * start is the same step's repeated layer, not a new step (c02: a
 * transformer's layers matched at half a step).  Where the step's calls
 * repeat on one thread (steps.h's by_calls), the signature is its calls —
 * API and kernel, the second step's (the first may hold a call made once)
 * — so that the copy and the sync ending an inference request tell it
 * from its layers, whose launches alone repeat from one request to the
 * next (c26).  Steps that touch a phase (start-up, compilation, an epoch
 * boundary: phases.h) are left out: a step time is the steady state's.  A
 * trace whose calls carry no kernel or copy kind (older files, an unknown
 * entry point) has no signature, and no step times.
 */
#ifndef IA_STEP_TIMES_H
#define IA_STEP_TIMES_H

#include "measure/gaps.h"
#include "measure/phases.h"

#define IA_STEP_SIG 32
#define IA_STEP_HIST_BINS 24

struct ia_step_times {
	uint64_t *start, *ns;   /* each step's start (absolute) and time, in time order */
	size_t n;
	uint64_t min, p50, p90, p99, max;
	double mean;
	/* a histogram of the step times: IA_STEP_HIST_BINS bins of equal
	 * width from min to max (hist_lo, hist_width) */
	uint64_t hist[IA_STEP_HIST_BINS];
	uint64_t hist_lo, hist_width;
};

/* 0, or -1 out of memory. */
int ia_step_times_compute(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_phases *ph,
			  struct ia_step_times *out);
void ia_step_times_free(struct ia_step_times *s);

#endif
