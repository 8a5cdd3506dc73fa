/*
 * collectives.h — the ranks of a job meeting at their collectives: for each
 * collective, when each rank arrived and when it completed; per rank, how
 * often it came last, how late, and how long it waited for the others.
 *
 * Two sources, the exact one first:
 *   nccl  the collectives table (schema version 7, preload/nccl_hooks.c):
 *         the ranks' calls of one communicator matched by its identity and
 *         sequence number.  A rank arrives when its operation could start
 *         on the GPU — the later of its call and the moment its stream had
 *         finished its earlier work (the GPU mark recorded just before the
 *         call) — and completes when the mark recorded just after it
 *         completed (else when the call returned).
 *   gloo  host collectives, timed through what they block in: PyTorch's
 *         ProcessGroupGloo all-reduces a CUDA tensor on a worker thread of
 *         its own that waits for the copy of the tensor to the host
 *         (cudaStreamSynchronize on the copy's stream), runs gloo's
 *         all-reduce over TCP — the thread blocked in the socket's poll or
 *         recv while the other ranks are late — and copies the result back
 *         (cudaMemcpyAsync host-to-device on the same stream, as many bytes
 *         as went to the host).  So on a thread other than the process's
 *         main thread, a stream sync followed directly by such a copy back
 *         is one collective: arrival at the sync's return, completion at
 *         the copy.  Every rank makes a process group's collectives in
 *         one order, but not every one shows on every rank in that shape
 *         (a broadcast's root alone sends its tensor: rank 0 of a DDP job
 *         has one or more extra, its module broadcast at the start — the
 *         H200's traces, docs/gpu-runs.md 29), so the ranks' collectives
 *         are aligned in completion order: the next of every rank's are one
 *         collective when they have as many bytes and none completed before
 *         another rank arrived (it cannot: it needs every rank's part);
 *         else the one completed first is no collective of every rank and
 *         is passed over.
 * Only collectives every rank of the job took part in count (a
 * communicator of some of the ranks is left out), and the first of them
 * is left out when more follow: it meets the ranks' start-ups, whose
 * lengths differ (loading data, building the model) without saying
 * anything of their steps.  Clocks: one node, one
 * CLOCK_MONOTONIC.
 */
#ifndef IA_COLLECTIVES_H
#define IA_COLLECTIVES_H

#include "load/trace.h"
#include "measure/gpu_time.h"
#include "measure/ranks.h"

#include <cjson/cJSON.h>

enum ia_coll_source { IA_COLL_NONE = 0, IA_COLL_NCCL, IA_COLL_GLOO };
const char *ia_coll_source_name(enum ia_coll_source s);

#define IA_COLL_TIDS 8   /* gloo worker threads remembered a rank (ProcessGroupGloo runs 2 by default) */
/* The threads that ran a process's gloo collectives (the first few):
 * their syncs and copies are the collectives', not the program's. */
struct ia_coll_tids {
	uint32_t tid[IA_COLL_TIDS];
	uint32_t n;
};
/* 1 when tid is in the set (s may be NULL). */
int ia_coll_tids_has(const struct ia_coll_tids *s, uint32_t tid);

struct ia_coll_rank {
	int rank;
	uint32_t proc;             /* index into trace.procs of its node's trace */
	const struct ia_trace *trace;   /* its node's trace */
	int node;                  /* index of that node (0: a trace of one node) */
	uint64_t first_ns, last_ns;   /* its first arrival and last completion: its span */
	uint64_t wait_ns;          /* Σ (last arrival − its arrival): time it waited for the last rank */
	uint64_t last_count;       /* collectives it arrived at last (by more than IA_COLL_TIE_NS) */
	uint64_t late_ns;          /* Σ, where last, its arrival − the median arrival of the others */
	uint64_t imposed_ns;       /* Σ, where last, the others' waits for it */
	uint64_t h2d_bytes, launches;   /* its program's host-to-device bytes and kernel launches in its span,
	                                 * the collectives' own threads left out (gloo's copies back) */
	struct ia_coll_tids gloo;  /* threads that ran its gloo collectives */
};

#define IA_COLL_TIE_NS 100000ull   /* arrivals within 100 µs of the next are a tie: nobody is last */

struct ia_collectives {
	enum ia_coll_source source;
	char op[32];               /* the collective most matched ("ncclAllReduce", "gloo all-reduce") */
	size_t n;                  /* collectives matched across every rank */
	size_t nranks;
	struct ia_coll_rank *r;    /* [nranks], in rank order */
	size_t ntied;              /* collectives with no rank last */
	uint64_t imposed_ns;       /* Σ over the collectives with a rank last of the others' waits for it */
	double imposed_sq;         /* Σ of the squares of those waits, one a collective (chain_straggler.c) */
	uint64_t total_bytes;      /* NCCL: bytes of the matched collectives, one rank's */
	int skipped_first;         /* the first matched collective (the ranks' start-ups meeting) left out */
	int comm_nranks;           /* NCCL: the communicator's size; more than nranks when some of its ranks
	                            * are in other traces (other nodes: explain A.db B.db) */
};

/* 0 (c->n 0 when nothing matched: no ranks, no collectives), or -1. */
int ia_collectives_compute(const struct ia_trace *t, const struct ia_ranks *rk, struct ia_collectives *c, char *err,
			   size_t errlen);

/* Several nodes' traces of one job (one report.db each): the same, with
 * every time of node n moved by its offset (realtime − monotonic of its
 * clock anchor) onto one timeline, then refined by the collectives (NCCL
 * only): a collective completes at nearly the same instant on every rank,
 * so node n ≥ 1 is moved by the median, over the matched collectives, of
 * (node 0's median completion − its own); what is left — the largest
 * distance of a collective's difference from that median, or if more, how
 * far apart the two nodes' ranks still complete once aligned (the median
 * collective's spread: a rank that returns when woken, not read from a
 * mark, can be late on one node every time) — is its stated uncertainty.
 * fit[n] (n < nn) receives both. */
struct ia_coll_node {
	const struct ia_trace *t;
	const struct ia_ranks *rk;
	int64_t offset_ns;
};
struct ia_clock_fit {
	int64_t correction_ns;     /* added after the anchors (0 for node 0) */
	uint64_t uncertainty_ns;   /* what is left, as above */
	size_t used;               /* collectives it rests on */
};
int ia_collectives_compute_nodes(const struct ia_coll_node *nodes, size_t nn, struct ia_collectives *c,
				 struct ia_clock_fit *fit, char *err, size_t errlen);
void ia_collectives_free(struct ia_collectives *c);

/* One process's collectives: as spans, sorted and merged (gpu_time.h's
 * ia_spans_merge; w NULL when none), its NCCL calls' as above (arrival to
 * completion, by the GPU marks around them), else its gloo all-reduces'
 * (the sync of the copy out to the copy back) — what the per-step
 * breakdown counts as collectives; and the threads that ran gloo's, whose
 * syncs and copies are the collectives' own, not the program's (a sync
 * there waits for the tensor's copy to the host: no per-step sync the
 * program could drop). */
struct ia_coll_windows {
	struct ia_span *w;
	size_t n;
	struct ia_coll_tids gloo;
};
/* 0, or -1 with err. */
int ia_collective_windows(const struct ia_trace *t, uint32_t proc, struct ia_coll_windows *cw, char *err,
			  size_t errlen);
void ia_coll_windows_free(struct ia_coll_windows *cw);

#endif
