/*
 * gpu_marks.h — measured GPU time: when the work queued on a stream had
 * really finished on the GPU.
 *
 * The host sees when work is queued, not when it runs.  So the library puts
 * CUDA events ("marks") into the program's own streams behind its work and
 * a watcher thread reads when each one completed, on the GPU's clock turned
 * into CLOCK_MONOTONIC (gpu_watch.c).  A mark recorded at host time r and
 * completed at g says: every piece of work queued on that stream before r
 * was finished at g, and some of it was still queued during [r, g].  With
 * the submission times of the CUDA calls this bounds, per stream, when the
 * GPU had work (docs/schema.md, gpu_marks).
 *
 * Who records them, by cost (docs/preload.md).  The watcher thread records
 * a mark into every stream that got new work since its last mark, once per
 * poll period (INGERO_GPU_POLL_US): the program's threads pay nothing but
 * storing the submission time in the stream's slot.  That resolves the GPU
 * to a poll period wherever it lags behind the host (each mark then waits,
 * and the time it waits is busy for sure).  But a poll period holds many
 * kernels whose run times a mark behind all of them cannot tell apart —
 * where the GPU keeps up (small kernels launched one by one, the host-bound
 * case: when the GPU idled) and where it lags (which kernels its time went
 * to) — so the calling thread marks its submissions itself, one each,
 * within a budget of one mark per INGERO_GPU_MARK_US for the process.  It
 * marks in runs of consecutive launches (a kernel is timed only by a mark
 * right behind it with the launch before it marked too — from its launch,
 * or where the GPU lags from the mark before it: a lone mark times
 * nothing), started only with two marks' budget, each at a drawn
 * number of launches into the program's: a budget spent as soon as it
 * allowed went to the same first launches of every step, and kernels later
 * in the step were never timed (the real traces' widest estimates).
 *
 * The ration is there to time the program's work, and a steady workload's
 * work is the same step after step: after INGERO_GPU_MARK_STEADY of its
 * marks (500) with no kernel new to the process, it halves, and again
 * after as many more, down to a sixteenth (one per 64 ms by default); a
 * new kernel — a new phase, a recompilation — brings it back whole.  Each
 * mark costs the calling thread microseconds of driver calls: in a PyTorch
 * loop's first seconds ~60-85 ns of each recorded call at one per 4 ms, over
 * a long run much less (halving them saved ~14 ns of ~210: docs/gpu-runs.md
 * section 18) — and each is a driver call on the program's thread and a
 * query on the watcher's that a steady state does not need.  The whole
 * ration is what short traces need (the real corpus with every trace's
 * ration halved from the start lost c08's idle by 7.5 points; stretched
 * this way, none).
 *
 * Marks are never recorded into a stream that is being captured into a
 * CUDA graph (they would become part of the graph), nor into the
 * per-thread default stream (the watcher cannot name another thread's),
 * nor in a fork child (it has no watcher; CUDA does not survive fork).
 */
#ifndef INGERO_PRELOAD_GPU_MARKS_H
#define INGERO_PRELOAD_GPU_MARKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hot_data.h"
#include "ingero/schema.h"

#define INGERO_GPU_STREAMS 64      /* streams timed per process; more are counted, not timed */
#define INGERO_GPU_QUEUE 256       /* marks in flight per stream (a power of two) */
#define INGERO_GPU_MARK_BURST 32   /* marks the calling threads may record back to back (a step's kernels) */
#define INGERO_GPU_MARK_RUN 8      /* consecutive launches a run of the calling threads' marks takes at most */
#define INGERO_GPU_MARK_SKIP 64    /* a run starts after passing over 0 to this many - 1 (drawn) of the launches with budget for one */

/* One mark in flight: the event and when it was recorded (ticks, clock.h). */
struct ingero_gpu_mark {
	void *ev;                  /* created once per queue slot by the watcher */
	uint64_t rec;              /* host time just before cuEventRecord, in ticks */
	uint64_t rec_ns;           /* the same in CLOCK_MONOTONIC ns, for the watcher */
	uint32_t flags;            /* enum ingero_gpu_mark_flags */
};

/* One stream the program queued work on.  The calling threads write
 * last_submit; whoever holds `lock` may record a mark (head); the watcher
 * alone consumes completed marks (tail).  A launch only writes the line
 * (a store waits for no miss); it reads it only when a mark is due. */
struct __attribute__((aligned(64))) ingero_gpu_stream {
	_Atomic uint64_t key;      /* stream handle + 1; 0 = free slot */
	_Atomic uint64_t last_submit;  /* ticks of the latest submission */
	_Atomic uint64_t last_mark;    /* ticks of the latest mark (or skipped attempt) */
	_Atomic uint64_t marked_upto;  /* last_submit value the latest mark covers */
	_Atomic int lock;
	_Atomic int ready;         /* 1: events created, marks may be recorded; -1: never */
	_Atomic int keeps_up;      /* the last mark read found the stream empty (the GPU keeps up) */
	void *ctx;                 /* the stream's context (set by the first submitter) */
	_Atomic uint32_t head, tail;
	struct ingero_gpu_mark q[INGERO_GPU_QUEUE];
};

/* Flags of a mark: enum ingero_gpu_mark_flags (ingero/schema.h, gpu_marks.flags in report.db). */

/* The marks' state a launch reads only when a mark may be due (what every
 * launch reads — on, next_mark, burst_ticks, fresh_n, slots_gen — is
 * ingero_hot's gpu_*, hot_data.h); in the page of the globals every call
 * reads (hot_data.c), the streams' slots apart. */
struct ingero_gpu_state {
	unsigned gen;              /* ingero_hot.gen of the process that runs the watcher */
	_Atomic uint64_t mark_ticks;   /* the calling threads' budget: INGERO_GPU_MARK_US in ticks, stretched while steady (gpu_watch.c) */
	_Atomic uint64_t fresh_at;     /* ticks: the latest new kernel */
	uint64_t fresh_ticks;      /* INGERO_GPU_FRESH_MS in ticks: after fresh_at, every launch is marked */
	uint64_t tpu;              /* ticks per microsecond, set by the watcher (0 before) */
	/* marks recorded / lost (no slot, error, never read): a line of
	 * their own, as each mark writes it */
	_Atomic uint64_t made __attribute__((aligned(64))), lost;
	_Atomic uint64_t rationed;     /* of made, the calling threads' ration's */
};

extern struct ingero_gpu_state ingero_gpu;
extern struct ingero_gpu_stream ingero_gpu_streams[INGERO_GPU_STREAMS];

/* The hot path: a call that queued work on `stream` returned at `t1`
 * (ticks).  api tells the per-thread default stream apart; kernel is the
 * launched kernel's handle (0 for other work). */
void ingero_gpu_note_slow(uint64_t stream, uint64_t t1, unsigned api, uint64_t kernel);

static inline void ingero_gpu_note(uint64_t stream, uint64_t t1, unsigned api, uint64_t kernel)
{
	if (__builtin_expect(atomic_load_explicit(&ingero_hot.gpu_on, memory_order_relaxed) >= 0, 1))   /* (on by default) */
		ingero_gpu_note_slow(stream, t1, api, kernel);
}

/* Kernels new to the process, timed first (gpu_fresh.c): each is owed
 * this many launches timed alone, outside the INGERO_GPU_MARK_US ration —
 * what the analyzer needs to stand one kernel's times in for its others —
 * marked for at most INGERO_GPU_FRESH_MS after the latest new kernel. */
#define INGERO_GPU_FRESH_TIMES 3
#define INGERO_GPU_FRESH_MS 250
void ingero_gpu_fresh_add(uint64_t kernel);   /* a kernel named for the first time */
void *ingero_gpu_fresh_find(uint64_t kernel, uint64_t now); /* its slot while marks are owed, else NULL */
void ingero_gpu_fresh_paid(void *slot);       /* one owed mark recorded */

/* A mark recorded on `stream` now, outside the calling threads' ration,
 * behind work whose GPU start and end matter (nccl_hooks.c: a collective).
 * False when none could be: marks off, a fork child, the per-thread default
 * stream, the stream not readied yet (this call starts that: its next mark
 * can be), its lock held, the queue full. */
bool ingero_gpu_mark_now(uint64_t stream);

/* The program destroys a stream: its slot is retired (waits for a mark
 * being recorded into it, a few microseconds at most). */
void ingero_gpu_forget(uint64_t stream);

/* Filled by the watcher before it lets marks be recorded. */
void ingero_gpu_tables_init(void);

/* The watcher (gpu_watch.c): started by the first note of the process that
 * owns the ring; stopped before the final drain (sender.c), idempotent. */
int ingero_gpu_watch_start(void);
/* Recording was paused for `ns` (capture.c): the calling threads' mark
 * budget earns nothing for that time. */
void ingero_gpu_pause(uint64_t ns);
void ingero_gpu_watch_stop(void);

/* Shared by the hot path and the watcher: record one mark into slot s
 * (caller holds s->lock).  Returns true when a mark was queued. */
bool ingero_gpu_record(struct ingero_gpu_stream *s, uint64_t stream, uint64_t now, uint32_t flags);

#endif
