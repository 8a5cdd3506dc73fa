/*
 * gate_steady.h — one run's figures for the CI gate, taken from explain's
 * analysis: its steady state (the window less start-up, compilation,
 * autotuning and epoch boundaries: phases.h), judged apart from those
 * one-time phases, which vary with caches and imports.
 *
 * Throughput is the loop's steps per second over the steady state: the
 * main process's launches in it over the launches of one step (steps.h),
 * or its calls over the calls of a step when a step has no launch; calls
 * per second where no step was found.  GPU idle is the steady state's, as
 * explain gives it (idle.h): bounds, and the estimate inside them where
 * the trace has GPU marks and enough work was timed.
 *
 * Each figure comes with its noise within the run: the steady state is cut
 * into blocks of equal time (a few steps each, at most IA_GATE_BLOCKS), the
 * figure is taken in every block, and its standard error is the blocks'
 * standard deviation over the square root of their number.  A short or
 * uneven steady state has a wide one — three gaps in a tenth of a second
 * say little about a run — and the gate asks a change to exceed it
 * (gate_compare.c).
 *
 * The facts a regression's cause is told by are measured here too, over
 * the same steady state: DataLoader worker processes, the main thread's
 * and the workers' CPU time, syncs, and host-to-device bytes from pinned
 * and from pageable memory — per step (per second without a step).
 */
#ifndef IA_GATE_STEADY_H
#define IA_GATE_STEADY_H

#include "rules/chains.h"
#include "gate/gate_run.h"

#define IA_GATE_BLOCKS 20           /* at most, over the steady state */
#define IA_GATE_BLOCK_STEPS 5       /* steps per block at least, while more than 2 blocks */
#define IA_GATE_COPY_MIN (1u << 20) /* copies counted in the pinned/pageable facts, bytes */

/* Fills r's figures (not source or command) from a; 0, or -1 out of memory. */
int ia_gate_steady_compute(const struct ia_analysis *a, struct ia_gate_run *r);

#endif
