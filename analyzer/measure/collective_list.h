/*
 * collective_list.h — every collective each process made, one by one, and
 * the ranks' parts of one collective matched: what the Perfetto export
 * draws (render/export_perfetto.c).  collectives.h sums the ranks' parts
 * per rank for explain; this keeps each part, timed the same way.
 *
 *   nccl  every collectives row of a collective (all-reduce, reduce-scatter,
 *         all-gather, broadcast, reduce) of a selected process, inside the
 *         window; arrival and completion as collectives.h times them (the
 *         GPU marks around the call when there are, else the call).  The
 *         parts of one collective are the rows of one communicator identity
 *         and sequence number, over every process of every node given: a
 *         communicator of some of the ranks, or of other nodes' ranks only,
 *         is matched too.
 *   gloo  the host collectives of a rank's process that made no NCCL
 *         collective (collectives.h: a sync of the copy out, the copy
 *         back, on a thread of their own).  Matched across the ranks of
 *         one node only, lined up in completion order as explain lines
 *         them up; across nodes they are listed, not matched (the order
 *         needs one clock).
 *
 * Of a matched collective (two parts or more): the first and the last
 * arrival, each part's lateness after the first and its wait for the last,
 * and the part that arrived last — when it did by more than IA_COLL_TIE_NS
 * (else nobody was waited for: a tie), the rank the others waited for.
 *
 * Times are on the job's clock: each node's moved by its shift (node 0's
 * clock; 0 for one file).
 */
#ifndef IA_COLLECTIVE_LIST_H
#define IA_COLLECTIVE_LIST_H

#include "load/trace.h"
#include "measure/collectives.h"
#include "measure/ranks.h"

#include <stddef.h>
#include <stdint.h>

#define IA_COLL_ALONE ((size_t)-1)   /* no group: a collective no other part was matched to; no last part */

struct ia_coll_item {
	int node;                  /* index of its node (0: one file) */
	uint32_t proc;             /* index into its node's trace.procs */
	int pid;
	uint32_t tid;              /* the thread that made it (gloo: ProcessGroupGloo's) */
	int job_rank;              /* its process's rank in the job (the launcher's RANK), -1 unknown */
	enum ia_coll_source source;
	const char *op;            /* "ncclAllReduce", ..., "gloo all-reduce" (static) */
	int has_comm;
	uint64_t comm_id;          /* nccl: the communicator's identity (has_comm) */
	int64_t seq;               /* nccl: its sequence number on the communicator; gloo: the matched
	                            * collective's number (from 0); -1 none */
	int rank, nranks;          /* nccl: its rank in the communicator and its size; gloo: the job's; -1 / 0 unknown */
	uint64_t bytes;            /* nccl: the row's; gloo: the copy back's */
	uint64_t call_ns, call_dur_ns;   /* nccl: the host call (job's clock); gloo: 0 */
	uint64_t a, b;             /* arrival and completion, job's clock */
	int marked_before, marked_after;   /* arrival / completion read from the GPU mark before / after it */
	size_t group;              /* index into list.g, IA_COLL_ALONE */
	uint64_t late_ns;          /* its arrival after the first part's (0 alone) */
	uint64_t wait_ns;          /* the last part's arrival after its own: its wait (0 alone) */
};

struct ia_coll_group {
	size_t n;                  /* parts matched, 2 or more */
	size_t last;               /* item that arrived last by more than IA_COLL_TIE_NS; IA_COLL_ALONE: a tie */
	uint64_t first_ns, last_ns;   /* the first and the last arrival */
};

struct ia_coll_list {
	struct ia_coll_item *it;   /* [n], by node, process, arrival (the longest first of equal arrivals) */
	size_t n;
	struct ia_coll_group *g;   /* [ng] */
	size_t ng;
	size_t nlinked;            /* parts that waited for a last one: Σ over groups with a last of n − 1 */
};

struct ia_coll_list_node {
	const struct ia_trace *t;
	const struct ia_ranks *rk; /* its ranks (NULL or none: no gloo collectives, job_rank -1) */
	int64_t shift_ns;          /* added to its times: onto node 0's clock */
};

/* 0 (l->n 0 when the traces hold no collective), or -1 with err. */
int ia_coll_list_build(const struct ia_coll_list_node *nodes, size_t nn, struct ia_coll_list *l, char *err,
		       size_t errlen);
void ia_coll_list_free(struct ia_coll_list *l);

#endif
