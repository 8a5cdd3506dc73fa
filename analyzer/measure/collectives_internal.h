/*
 * collectives_internal.h — how collectives.c times one rank's part of a
 * collective and lines the ranks' gloo collectives up, shared with the
 * list of every collective one by one (collective_list.c); and the table
 * of arrivals both sources fill, which the clock fit (clock_fit.c) puts
 * on one clock.  Internal to the three.
 */
#ifndef IA_COLLECTIVES_INTERNAL_H
#define IA_COLLECTIVES_INTERNAL_H

#include "measure/collectives.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The NCCL functions that are collectives (the others: point-to-point,
 * groups, communicators' lives), as SQL. */
#define IA_COLL_OPS "('ncclAllReduce','ncclReduceScatter','ncclAllGather','ncclBroadcast','ncclBcast','ncclReduce')"

/* The GPU marks of (pid, stream) recorded inside [a, b], in order: the
 * statement ia_nccl_times takes. */
#define IA_COLL_MARKS_SQL "SELECT done_ns FROM gpu_marks WHERE pid = ?1 AND stream = ?2 AND recorded_ns BETWEEN ?3 " \
			  "AND ?4 ORDER BY recorded_ns"

/* An NCCL call's arrival and completion (collectives.h: nccl) from its
 * row (start, dur, flags) and mk (IA_COLL_MARKS_SQL prepared);
 * *marked_before / *marked_after when the arrival / completion was read
 * from the GPU mark before / after it.  0, or -1 with err. */
int ia_nccl_times(sqlite3_stmt *mk, int pid, int64_t stream, uint64_t start, uint64_t dur, unsigned flags,
		  uint64_t *arrive, uint64_t *done, int *marked_before, int *marked_after, char *err, size_t errlen);

/* One gloo collective of one rank (collectives.h, gloo): arrival at the
 * sync's return, completion at the copy back's start, the copy's bytes,
 * and the thread (ProcessGroupGloo's) that made it. */
struct ia_gloo_span {
	uint64_t arrive, done, bytes;
	uint32_t tid;
};

/* A process's gloo collectives, sorted by completion (*out NULL when none).
 * 0, or -1 out of memory. */
int ia_gloo_spans(const struct ia_trace *t, uint32_t proc, struct ia_gloo_span **out, size_t *nout);

/* The ranks' gloo collectives (sp[k], ns[k] of rank k, each sorted by
 * completion) lined up in completion order, as collectives.h says: for
 * each collective of every rank, match(ctx, h) with h[k] the index of
 * rank k's part in sp[k].  0, or -1 when match returned -1 or memory ran
 * out. */
int ia_gloo_align(struct ia_gloo_span *const *sp, const size_t *ns, size_t nr, int (*match)(void *ctx, const size_t *h),
		  void *ctx);

/* One column per rank of the job (of every node), in rank order. */
struct ia_coll_col {
	int rank, node;
	uint32_t proc;
};

/* Row i, column k: collective i's arrival and completion at rank k. */
struct ia_coll_table {
	size_t n, cap, nr;
	uint64_t *arrive, *done;   /* [n * nr]; 0 = that rank's part not seen */
	uint8_t *marked;           /* [n * nr]: done read from the GPU mark after it, not the call's return */
	struct ia_coll_tids gloo[64];   /* gloo: per column, the threads that ran its collectives */
};

/* Nodes 1..nn-1 onto node 0's clock by the collectives' completions
 * (collectives.h: ia_collectives_compute_nodes): tb's rows of those nodes
 * shifted, fit[n] their correction and its uncertainty.  0, or -1 out of
 * memory. */
int ia_coll_refine_clocks(struct ia_coll_table *tb, const struct ia_coll_col *cols, size_t nn, struct ia_clock_fit *fit);

#endif
