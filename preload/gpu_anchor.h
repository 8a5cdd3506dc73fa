/*
 * gpu_anchor.h — where on the host's clock the GPU stamped an anchor event
 * (gpu_watch.c: every mark's completion is the anchor's host time plus the
 * GPU's elapsed time from the anchor to the mark).
 *
 * The GPU stamps an event recorded into an empty stream some time after
 * the record call returns (the front end's pickup, ~0-3 us on an H100) and
 * the host sees it done some time after that.  Taking the call's return as
 * the stamp made each renewal's anchor early by that renewal's pickup, and
 * the pickup varied: in one trace of c77 (AdamW foreach=False on an H100)
 * half the ~3 us kernels' completions fell before their marks were
 * recorded and were clamped there, the other half not (docs/gpu-runs.md
 * section 54).  So each try bounds its stamp by [the record call's return,
 * the host seeing it done], the GPU's elapsed time from the first try's
 * event to each later one carries every try's bounds onto the first's
 * stamp, and the anchor is the middle of their intersection.
 */
#ifndef INGERO_PRELOAD_GPU_ANCHOR_H
#define INGERO_PRELOAD_GPU_ANCHOR_H

#include <stdint.h>

/* n tries: try k recorded its event by t1[k] (the record call's return)
 * and was seen done at t2[k] (host ns); e[k] the GPU's ns from try 0's
 * stamp to try k's (e[0] = 0).  *at: try 0's stamp on the host's clock,
 * *half: how far off it can be.  Where the bounds do not meet (a try
 * whose thread lost its CPU between its stamp and its query cannot do
 * that; clocks that disagree can), the try with the narrowest bounds
 * alone. */
void ingero_anchor_fit(const uint64_t *t1, const uint64_t *t2, const int64_t *e, int n, uint64_t *at,
		       uint64_t *half);

#endif
