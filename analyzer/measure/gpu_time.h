/*
 * gpu_time.h — when the GPU had work, from measured completions.
 *
 * The preload library puts CUDA events ("marks") behind the program's work
 * and reads when each completed on the GPU (schema 3, gpu_marks).  A mark
 * recorded at r and done at g says: all work queued on its stream before r
 * was finished at g.  Host waits say the same (a stream sync covers its
 * stream; a device sync, a synchronous copy or a waiting free covers every
 * stream of the process).  Per stream, with the times work was queued:
 *
 *   certainly idle  from a completion g to the next time work was queued
 *                   on that stream (when that is after g), and before the
 *                   stream's first work;
 *   certainly busy  from r to g when the mark was still waiting at r (the
 *                   work before it was not done), back to when that work was
 *                   queued; and a host wait that lasted (the GPU was busy).
 *
 * The GPU is idle where every marked stream is certainly idle (low bound of
 * idle; a stream the library could not mark — a fork child's, the per-thread
 * default stream — is left out of it and counted in nunmarked)
 * and may be idle wherever no stream is certainly busy (high bound).  The
 * bounds are as narrow as the marks are dense; the library marks a stream
 * at least once per INGERO_GPU_MARK_US while work is queued and again when it
 * goes quiet, so the width is the time of dense small kernels it could not
 * resolve.  Without marks (schema 1-2, INGERO_GPU_MARKS=0) nothing is
 * measured and the analysis falls back to host evidence (gaps.h).
 *
 * Within the bounds, an estimate (gpu_estimate.c): work timed alone (a mark
 * right behind one piece of work queued on an empty stream, or behind work
 * whose end a mark right behind it measured) gives the GPU time of alike
 * work (same kernel and geometry, same kind and size of copy), and
 * each stream is replayed with those times, held to its measured
 * completions.  Three replays, with the 25th, 50th and 75th percentile of
 * the times: est[1] is the estimate, est[0] and est[2] its range.
 */
#ifndef IA_GPU_TIME_H
#define IA_GPU_TIME_H

#include "load/trace.h"

struct ia_span {
	uint64_t a, b;
};

struct ia_phases;   /* phases.h */

/* A kernel's share of the estimate — or a kind of copy's, or the memsets' —
 * GPU time of its launches in the steady state (or the window: see
 * ia_gpu_time.kernels_steady; the median replay's pieces, clipped to their
 * completions). */
struct ia_kernel_time {
	char *name;                       /* as the trace has it (mangled, for C++ kernels); "copies host to device (pinned)", "memsets" */
	enum ia_work_kind { IA_WORK_KERNEL, IA_WORK_COPY, IA_WORK_MEMSET } kind;
	char short_name[96];              /* its nested name, without template arguments: at::native::foo */
	uint64_t ns, launches;
	uint64_t timed;                   /* of its launches (any process's), timed alone: what its time stands on */
	uint32_t func;                    /* ia_call.func of its work: the calls that queued it */
	unsigned where;                   /* IA_ON_MAIN | IA_ON_OTHER: the streams it ran on */
};
/* A piece of work timed alone: it ran on its stream from a to b (GPU
 * time, on the host's clock), measured by the mark right behind it. */
struct ia_timed_piece {
	uint64_t a, b;
	int pid;
	uint32_t stream;                  /* ia_stream_key */
	uint32_t func;                    /* ia_call.func: the kernel, or the kind of copy */
	int launch;                       /* a kernel (else a copy or memset) */
};

struct ia_kernel_row {
	struct ia_kernel_time k;          /* name, kind, short name, time, launches, timed alone, streams */
	uint64_t mean_ns, p50_ns, max_ns; /* a launch's GPU time */
};

/* A process's main stream is the one it queued the most work on. */
#define IA_ON_MAIN 1u
#define IA_ON_OTHER 2u

struct ia_gpu_time {
	int measured;                     /* the traced processes' streams carry marks */
	uint64_t win_start, win_end;
	uint64_t idle_low_ns, idle_high_ns, busy_ns;   /* busy_ns: certainly busy */
	size_t nmarks, nstreams, nunmarked;   /* streams with work; of them, without marks (left out of the idle) */
	struct ia_span *busy; size_t nbusy;   /* certainly busy, sorted, disjoint */
	struct ia_span *idle; size_t nidle;   /* certainly idle, sorted, disjoint */
	/* estimated busy (p25, p50, p75 replays), sorted, disjoint, each within
	 * the bounds: holds the certainly-busy spans, none of the idle ones */
	struct ia_span *est[3]; size_t nest[3];
	size_t ntimed;                    /* pieces of work timed alone (the estimate's samples) */
	struct ia_timed_piece *timed; size_t ntimed_pieces;   /* each of them, by stream then time */
	size_t nwork, nwork_alike;        /* work queued in the window; of it, alike some timed */
	/* the estimate's GPU time by kernel or kind of copy, most first (named
	 * ones, at most IA_GPU_KERNELS_MAX), and all its work's, named or not:
	 * over the steady state's work (kernels_steady) where the phases were
	 * given and it had some — what the steps' GPU time goes to, not a
	 * start-up's or an autotuner's — else over the window's */
	struct ia_kernel_time *kernels; size_t nkernels;
	uint64_t work_ns;
	/* every kernel and kind of copy or memset of the estimate, over the
	 * same part as kernels, most time first, with its launches' GPU time
	 * each (mean, p50, max): stats --kernels */
	struct ia_kernel_row *all; size_t nall;
	int kernels_steady;
	/* a process queued work on several streams, which may run at once (the
	 * shares add each stream's time) */
	int several_streams;
};
#define IA_GPU_KERNELS_MAX 8

/* Over [win_start, win_end), for the selected processes; ph (or NULL): the
 * run's phases, whose steady state the kernels' shares are of.  0, or -1
 * with one line in err (a read error of the trace). */
int ia_gpu_time_compute(const struct ia_trace *t, uint64_t win_start, uint64_t win_end, const struct ia_phases *ph,
			struct ia_gpu_time *g, char *err, size_t errlen);
void ia_gpu_time_free(struct ia_gpu_time *g);

/* Where an entry ran, for people and JSON: "main" (its process's stream
 * with the most work queued, or the only one), "other" (another of its
 * process's streams), "several" (both). */
const char *ia_kernel_stream(const struct ia_gpu_time *g, const struct ia_kernel_time *kt);

/* Sorts and merges spans in place, clipped to [lo, hi); returns the count. */
size_t ia_spans_merge(struct ia_span *s, size_t n, uint64_t lo, uint64_t hi);

/* Time of the spans inside [a, b); the spans sorted and disjoint (as
 * ia_spans_merge leaves them), found by a binary search. */
uint64_t ia_spans_within(const struct ia_span *s, size_t n, uint64_t a, uint64_t b);
/* The same inside each of nw windows w ((start, end) pairs, disjoint), added up. */
uint64_t ia_spans_within_windows(const struct ia_span *s, size_t n, const uint64_t *w, size_t nw);

#endif
