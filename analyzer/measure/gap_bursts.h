/*
 * gap_bursts.h — whether the GPU's idle comes in a few long waits.
 *
 * A loop that starves evenly (every step a little) and one that starves in
 * bursts (a validation pass every 40 steps, a checkpoint, one slow batch in
 * 16) need different words and fixes: the second is a phase or an item of
 * its own, and its code is found in the long gaps, not in the steps.  The
 * long gaps are those of 10x the median gap and 1 ms or more, in bursts of
 * those close together (a validation pass waits once per batch it reads
 * back); the bursts recur regularly when most of the times from one's start
 * to the next's are within a quarter of their median.
 */
#ifndef IA_GAP_BURSTS_H
#define IA_GAP_BURSTS_H

#include "measure/gaps.h"

struct ia_gap_bursts {
	uint64_t min_len;      /* a long gap's least length (10x the median gap, 1 ms at least) */
	size_t n;              /* the long gaps */
	size_t nbursts;        /* they in bursts: a gap joins the last one's when the time between them
	                        * is under a quarter of either */
	uint64_t ns, longest;  /* their time, the longest */
	uint64_t span_ns;      /* the bursts' time, each from its first gap's start to its last's end */
	double share;          /* their share of all the gaps' time */
	uint64_t every_ns;     /* when regular, the median time from one burst's start to the next's, else 0 */
};

/* The steady gaps' bursts (g->g, in time order); 0, or -1 out of memory. */
int ia_gap_bursts(const struct ia_gaps *g, struct ia_gap_bursts *b);

/* Whether they are the story: at least 3 bursts, the long gaps holding
 * half of the gaps' time or more, the bursts spanning at most 3/4 of the
 * steady state (steady_ns; 0: not checked), and at most one burst in 5 of
 * the loop's steady steps (nsteps, step_times.h), or where no steps were
 * found (0), in 4 gaps. */
int ia_gap_bursts_dominant(const struct ia_gap_bursts *b, size_t ngaps, size_t nsteps, uint64_t steady_ns);

#endif
