/*
 * gap_bursts.h — whether the GPU's idle comes in a few long waits.
 *
 * A loop that starves evenly (every step a little) and one that starves in
 * bursts (a validation pass every 40 steps, a checkpoint, one slow batch in
 * 16) need different words and fixes: the second is a phase or an item of
 * its own, and its code is found in the long gaps, not in the steps.  The
 * long gaps are those of 10x the median gap and 1 ms or more; they recur
 * regularly when most of the times from one's start to the next's are
 * within a quarter of their median.
 */
#ifndef IA_GAP_BURSTS_H
#define IA_GAP_BURSTS_H

#include "measure/gaps.h"

struct ia_gap_bursts {
	uint64_t min_len;      /* a long gap's least length (10x the median gap, 1 ms at least) */
	size_t n;              /* the long gaps */
	uint64_t ns, longest;  /* their time, the longest */
	double share;          /* their share of all the gaps' time */
	uint64_t every_ns;     /* when regular, the median time from one's start to the next's, else 0 */
};

/* The steady gaps' bursts (g->g, in time order); 0, or -1 out of memory. */
int ia_gap_bursts(const struct ia_gaps *g, struct ia_gap_bursts *b);

/* Whether they are the story: at least 3, at most a quarter of the gaps,
 * holding half of the gaps' time or more, and at most one in 5 of the
 * loop's steady steps (nsteps, step_times.h; 0 when not found). */
int ia_gap_bursts_dominant(const struct ia_gap_bursts *b, size_t ngaps, size_t nsteps);

#endif
