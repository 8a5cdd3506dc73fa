/*
 * gpu_time_internal.h — what gpu_time.c gathers per stream, shared with the
 * estimate of the GPU time of work not timed (gpu_estimate.c).  Internal to
 * the two.
 */
#ifndef IA_GPU_TIME_INTERNAL_H
#define IA_GPU_TIME_INTERNAL_H

#include "measure/gpu_time.h"
#include "base/util.h"

/* A mark done this soon after it was recorded found its stream empty. */
#define EMPTY_NS 20000ull

/* A completion point of one stream: work queued before r was done by g.
 * exact: g is when it was done (a mark, or a host wait that lasted), not
 * only an upper bound. */
struct cpt {
	uint64_t r, g;
	int exact;
	int mark;                  /* a GPU mark (else a host wait) */
};

/* What a copy or memset moves its bytes over: a copy's time, once it is
 * large, is its bytes at the link's pace (gpu_estimate.c's copy rates). */
enum ia_link { IA_LINK_NONE, IA_LINK_HOST_PINNED, IA_LINK_HOST_PAGEABLE, IA_LINK_DEVICE, IA_LINK_MEMSET };

/* A call that queued work: its start and end, and what it queued
 * (ia_call.work, .func). */
struct sub {
	uint64_t a, b;
	uint32_t work, func;
	uint32_t after;            /* the work queued just before it on its stream (0: none): its place in a step */
	unsigned launch : 1;       /* a kernel (else a copy or memset) */
	unsigned host_sync : 1;    /* a copy the host waited through (pageable, or to the host): done by b */
	/* queued right behind a wait for an event (cudaStreamWaitEvent) while
	 * another stream of its process had work (ia_gt_waits_met): it began
	 * when that work reached the event, so the span from its call to the
	 * mark behind it holds that wait (c52: gloo's copies of the gradients,
	 * "33 ms" for 7 MiB pinned) — it is not timed alone */
	unsigned after_wait : 1;
	unsigned link : 3;         /* enum ia_link */
	/* no work of its size was timed alone, and its link's pace is known: its
	 * time is its bytes at that pace (ia_gt_alike_find) */
	unsigned rated : 1;
	uint32_t kib;              /* a copy's or memset's size, KiB (saturated) */
	size_t alike_lo, alike_end;   /* the timed samples of work alike it (ia_gt_alike_find): acc.smp[lo, end) */
};
_Static_assert(sizeof(struct sub) == 56, "a sub per queued call: keep it 56 bytes");

struct stream_acc {
	int pid;
	uint32_t key;
	int main;                  /* its process queued the most work on it (ia_gt_mark_main) */
	int wait_pending;          /* a wait for an event queued since its last piece of work */
	size_t nmarks;
	struct sub *sub; size_t nsub, csub;
	struct cpt *cp; size_t ncp, ccp;
};

/* The GPU time of one piece of work that ran alone (gpu_estimate.c),
 * filed three times: under its work (by_func 0), its function (1) and its
 * work after the work before it (2). */
struct sample {
	int pid;
	uint16_t by_func;
	uint8_t link;              /* enum ia_link: the piece's */
	uint32_t key;
	uint32_t kib;              /* ... and its size (a copy's or memset's) */
	uint64_t ns;
};
_Static_assert(sizeof(struct sample) == 24, "three samples per timed piece: keep them 24 bytes");

/* A link's pace, per process, from its large copies timed alone: ns per
 * KiB at the quartiles and the median (the replays' q 0, 1, 2). */
struct copy_rate {
	int pid;
	unsigned link;
	double ns_per_kib[3];
};

struct acc {
	struct stream_acc *s; size_t n, cap;
	struct ia_span *busy; size_t nbusy, cbusy;
	struct sample *smp; size_t nsmp, csmp;
	uint64_t *smp_sum;         /* smp_sum[i]: the ns of smp[0..i), summed (a key's mean in O(1)) */
	size_t ntimed;             /* pieces timed alone (each filed three times in smp) */
	struct ia_timed_piece *tp; size_t ntp, ctp;   /* ... and when each ran (handed to ia_gpu_time) */
	struct sample *typical; size_t ntypical;   /* per process: the median of its timed pieces */
	struct copy_rate *rate; size_t nrate;   /* per process and link (ia_gt_samples_ready) */
	/* the median replay's GPU time by kernel, or kind of copy or memset
	 * (gpu_kernels.c) */
	struct ia_map kmap;        /* func -> index into kt */
	struct kacc {
		uint32_t func; int launch;
		uint64_t ns, n, steady_ns, steady_n;
		unsigned where, steady_where;   /* IA_ON_MAIN | IA_ON_OTHER: the streams its pieces ran on */
		/* each piece's GPU time, the top bit set for the steady state's
		 * (stats --kernels: mean, p50, max a launch) */
		uint64_t *d; size_t nd, cd;
	} *kt; size_t nkt, ckt;
	int several;               /* a process queued work on more than one stream */
	const struct ia_phases *ph;   /* what is the steady state (NULL: not known) */
	int oom;
};

void ia_gt_add_busy(struct acc *a, uint64_t x, uint64_t y);
/* First submission (by start) that ended after r. */
size_t ia_gt_first_after(const struct stream_acc *s, uint64_t r);

/* gpu_estimate.c.  After a stream's completion points are sorted by r:
 * the work that ran alone, timed (into a->smp). */
/* A piece behind a wait for an event, queued when no other stream of its
 * process still had work, waited for nothing (the event had fired): it
 * may be timed alone after all (c08: XLA puts a wait ahead of most of
 * JAX's work).  Every stream's completions sorted first. */
void ia_gt_waits_met(struct acc *a);
void ia_gt_time_alone(struct acc *a, const struct stream_acc *s);
/* Once every stream's samples are in: sorts them for lookup. */
void ia_gt_samples_ready(struct acc *a);
/* One stream's estimated busy spans over [lo, hi): its work queued one
 * after another, each piece taking quantile q (0: p25, 1: p50, 2: p75) of
 * the times of alike work timed alone, held to its completion points and
 * kept out of its certainly-idle spans (idle, nidle).  Appended to *out. */
void ia_gt_estimate(struct acc *a, const struct stream_acc *s, int q, uint64_t lo, uint64_t hi,
		    const struct ia_span *idle, size_t nidle, struct ia_span **out, size_t *nout, size_t *cout);
/* Work queued on s within [lo, hi), and of it, alike some work timed alone
 * (both added to). */
/* Each piece of work's alike samples, found once for the three replays and
 * the coverage (after ia_gt_samples_ready). */
void ia_gt_alike_find(const struct acc *a, struct stream_acc *s);
void ia_gt_coverage(const struct stream_acc *s, uint64_t lo, uint64_t hi, size_t *n,
		    size_t *alike);

/* gpu_kernels.c: a launch's piece of the median replay, ns of GPU time in
 * the window; then the kernels named from the trace, most time first (into
 * g->kernels); 0 or -1 (out of memory). */
/* Flags each stream with work that its process queued the most pieces on. */
void ia_gt_mark_main(struct acc *a);
/* One piece of s's work, of ns GPU time; steady: queued in the steady state (acc.ph). */
void ia_gt_kernel_add(struct acc *a, const struct stream_acc *s, uint32_t func, int launch, uint64_t ns, int steady);
/* Everything an acc holds (gpu_time.c), its streams' pieces and each kernel's times too. */
void ia_gt_acc_free(struct acc *a);
int ia_gt_kernels_name(const struct ia_trace *t, struct acc *a, struct ia_gpu_time *g);

#endif
