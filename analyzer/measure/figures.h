/*
 * figures.h — the figures every view shows first, computed once from the
 * measures (idle.h, gaps.h, phases.h), so that explain, stats, per-process,
 * the HTML report, the Perfetto export, the MCP server and the gate say the
 * same thing in the same words (render/headline.h writes them).
 *
 * The headline is the GPU's idle share of the steady state (what the run
 * is for), as bounds, with the estimate beside them only when it narrows
 * them (idle.h).  Beside it: the whole window's share, and the phases that
 * make the difference.  Then the main thread's time over the steady state
 * as one partition that sums to the steady state:
 *   - in the gaps (the GPU idle for IA_MEASURED_GAP_MIN_NS or more, or, from
 *     host evidence, no work queued): on-CPU, blocked, waiting for a CPU;
 *   - inside CUDA calls (the main process's, a union across its threads)
 *     outside the gaps: syncs, copies, launches, other — and, apart, those
 *     of the threads that run gloo's collectives (their syncs wait for the
 *     other ranks: c52's "syncs 85 %" were theirs, not the main thread's);
 *   - the rest: host work while the GPU had work.
 * Every share here says what it is a share of; a sum over several threads
 * is "thread time" wherever it is shown.
 */
#ifndef IA_FIGURES_H
#define IA_FIGURES_H

#include "measure/gaps.h"
#include "measure/idle.h"
#include "measure/phases.h"
#include "measure/per_process.h"

enum ia_main_part {
	IA_MAIN_GAP_ONCPU,      /* in a gap, on a CPU: the host is the bottleneck */
	IA_MAIN_GAP_BLOCKED,    /* in a gap, blocked (waiting for workers, I/O, a lock, ...) */
	IA_MAIN_GAP_RUNQ,       /* in a gap, runnable but waiting for a CPU */
	IA_MAIN_SYNC,           /* inside a sync, outside the gaps */
	IA_MAIN_COPY,
	IA_MAIN_LAUNCH,
	IA_MAIN_OTHER_CUDA,
	IA_MAIN_COLLECTIVE,     /* gloo's threads' calls (its all-reduce's syncs and copies): the collectives' wait */
	IA_MAIN_HOST_QUEUED,    /* host work while the GPU had work */
	IA_MAIN_N
};

struct ia_figures {
	int have;                   /* the selection queued GPU work: there is a window */
	int measured;               /* GPU idle from GPU marks; else from host evidence */
	uint64_t traced_ns;         /* first to last evidence of the selection */
	uint64_t window_ns;         /* first queued GPU work to the last CUDA call (recorded part) */
	uint64_t steady_ns;
	uint64_t phase_ns[IA_PHASE_N];
	/* GPU idle, % of the steady state and of the window; *_about: the
	 * estimate (has_*_about: said, as it narrows the bounds) */
	double steady_low, steady_high, steady_about;
	double window_low, window_high, window_about;
	int has_steady_about, has_window_about;
	size_t ntimed;              /* kernels and copies timed alone (what the estimate stands on) */
	size_t unmarked_streams, streams;
	/* the steady state's gaps */
	size_t ngaps;
	uint64_t gaps_ns;
	/* the main thread over the steady state: sums to steady_ns (rounding
	 * aside: a gap the phases cut is counted whole) */
	uint64_t main_ns[IA_MAIN_N];
	int main_known;             /* a main thread to speak of */
	size_t nworkers;
	/* the loop's step (phases.h) */
	uint32_t step_calls;
	uint64_t step_ns;
};

/* 0, or -1 out of memory. */
int ia_figures_compute(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_gaps *g,
		       const struct ia_phases *ph, const struct ia_idle *i, const struct ia_coll_tids *gloo,
		       struct ia_figures *out);
/* Name of a part for people ("on-CPU", "blocked", ...). */
const char *ia_main_part_name(enum ia_main_part p);
/* Its key in JSON ("gap_oncpu_ns", ...). */
const char *ia_main_part_key(enum ia_main_part p);

#endif
