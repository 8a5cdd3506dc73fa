/*
 * step_breakdown.h — where each steady step's wall time went, as XProf's
 * step-time graph splits a step (issue 43).
 *
 * The steps are step_times.h's (the steady state's, start to next start);
 * the GPU's idle stretches are gaps.h's (measured idle of 50 µs or more
 * with GPU marks, else no work queued), with the main thread's on-CPU /
 * blocked / run-queue split of each; the main process's CUDA calls are the
 * gaps' main_calls, cut to their union as figures.c cuts them.  Every
 * instant of a step goes to exactly one part, the GPU's state first:
 *   - the GPU had work (outside the gaps): device compute — whatever the
 *     host did meanwhile (queued more, waited in a sync) was overlapped;
 *     collectives take their part of it first (an NCCL kernel running,
 *     or waiting on the GPU for the other ranks);
 *   - the GPU idle (inside a gap): inside one of the process's collectives
 *     → collectives (gloo's all-reduce on the host: the stream waits for
 *     its result, and a sync meanwhile waits for it too); else by what the
 *     main thread did, in this priority: inside a sync or a host-blocking
 *     copy → sync; inside a launch (or an async copy/memset queueing work)
 *     → launch; outside those calls, blocked → input wait (DataLoader
 *     workers, a producer, reading), or other waits where it blocked
 *     writing or syncing files or waiting for a child process (a
 *     checkpoint, a log, a subprocess: c14's fsync had made its steps
 *     "input-bound"); runnable but waiting for a CPU → CPU wait (other
 *     tasks or a CPU quota held the CPUs: c10's and c05-under-a-quota's
 *     waits had read as 86-97 % host compute, "host-bound"); on a CPU or
 *     in another CUDA call → host compute — and blocked in a gap that autograd's engine
 *     thread ended (backward(): the main thread waits while that thread
 *     does the host's work and queues the next) → host compute too (c40's
 *     starved autograd thread had read as 24 % input wait), and so is its
 *     lock-wait share of a gap where the GIL held it (gaps.h ia_gaps_gil:
 *     c06's logger thread had read as 90 % input wait).
 * Without GPU marks "the GPU had work" means only work queued: inside
 * hostbound.h's host-bound stretches (the closing sync waited for nothing:
 * the GPU had finished before the host asked) the host set the pace, so
 * that time goes to launch (inside launches) or host compute (the rest)
 * instead.  With marks the measured gaps say where the GPU idled for 50 µs
 * or more; between them, where the GPU finishes each short kernel before
 * the host queues the next (a launch-rate-bound loop: idles of a few µs,
 * most of the time), the estimate (gpu_time.h, est: the headline's "about
 * N%") says how much of it the GPU was busy: the rest goes, as a host-bound
 * stretch's, to launch (inside launches) or host compute, so that device
 * compute is the estimate's busy time, not every instant outside a gap.
 * A gap's blocked / on-CPU split is the whole gap's (gaps.c), taken pro
 * rata where a step cuts a gap; sync time inside a gap comes out of its
 * blocked time and launch time out of its on-CPU time (either from the
 * other when one runs short), and host compute is what is left of the
 * gap, so the parts sum to the step exactly.
 *
 * The class follows XProf's tiers (input_pipeline_analyzer): the first
 * part, in the order input, other waits, CPU wait ("CPU-starved": XProf
 * has no such tier, a profiler of one process), collectives, sync, host, launch
 * (ia_step_class_order), at or above
 * its high threshold names the class ("input-bound"); else the first at
 * or above its moderate one ("somewhat input-bound"); else device-bound
 * when device compute is half the steps or more, "balanced" otherwise.
 * Shares are of the summed step time.
 */
#ifndef IA_STEP_BREAKDOWN_H
#define IA_STEP_BREAKDOWN_H

#include "measure/gaps.h"
#include "measure/hostbound.h"
#include "measure/step_times.h"

enum ia_step_part {
	IA_STEP_INPUT,        /* main thread blocked while the GPU idled */
	IA_STEP_HOST,         /* main thread on a CPU (or waiting for one) while the GPU idled */
	IA_STEP_LAUNCH,       /* inside launch calls while the GPU idled */
	IA_STEP_SYNC,         /* inside syncs / host-blocking copies while the GPU idled */
	IA_STEP_DEVICE,       /* the GPU had work */
	IA_STEP_COLLECTIVES,  /* inside the main process's collectives (NCCL's on the GPU, gloo's on the host) */
	IA_STEP_OTHER_WAIT,   /* main thread blocked, not for input: writing, syncing files, a child process */
	IA_STEP_CPU_WAIT,     /* main thread runnable, waiting for a CPU, while the GPU idled */
	IA_STEP_NPARTS
};

struct ia_step_threshold {
	double high_pct, moderate_pct;   /* share of the step */
};

struct ia_step_breakdown {
	size_t n;                               /* steps broken down */
	uint64_t *part_ns[IA_STEP_NPARTS];      /* [n] each: the step's part */
	uint64_t total_ns;                      /* the steps summed */
	uint64_t sum_ns[IA_STEP_NPARTS];
	uint64_t p50_ns[IA_STEP_NPARTS], p90_ns[IA_STEP_NPARTS];
	double share_pct[IA_STEP_NPARTS];       /* of total_ns */
	int cls_part;                           /* the part naming the class; -1: device-bound or balanced */
	int cls_moderate;                       /* at the moderate tier ("somewhat") */
	char cls[48];                           /* "input-bound", "somewhat host-bound", "device-bound", ... */
	/* device-bound, the host ran ahead of the GPU: the steps' mean at least
	 * twice their median, and most long steps (twice the median or more)
	 * spent half their excess or more inside the main process's CUDA calls
	 * (launches into a full queue, a sync) — the median is the host
	 * issuing a step, the mean the GPU's pace (c19: 1.54 against 5.43 ms);
	 * not an evaluation or a checkpoint now and then, the host's own time */
	int host_ahead;
};

/* The tiers per part (XProf's: input 20/5, collectives 40/10, launch
 * 20/10, others 20/10); device compute has none (0/0). */
const struct ia_step_threshold *ia_step_threshold(enum ia_step_part p);
const char *ia_step_part_name(enum ia_step_part p);   /* "input wait", ... */
const char *ia_step_part_key(enum ia_step_part p);    /* "input_wait", ... */
/* The parts that can name the class, in the order they are tried. */
extern const enum ia_step_part ia_step_class_order[];
extern const size_t ia_step_class_order_n;

/* One pass over the steady steps st, the gaps g and its main_calls; hb:
 * the host-bound stretches (NULL: none); cw: the main process's
 * collectives as ncw spans (collectives.h ia_collective_windows; NULL,
 * 0: none).  0 (out->n 0 when no step was
 * timed), or -1 out of memory. */
int ia_step_breakdown_compute(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_hostbound *hb,
			      const struct ia_step_times *st, const struct ia_span *cw, size_t ncw,
			      struct ia_step_breakdown *out);
void ia_step_breakdown_free(struct ia_step_breakdown *b);

#endif
