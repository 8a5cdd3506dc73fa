/*
 * nccl_hooks.c — NCCL's entry points, timed (include/ingero/nccl.h).
 *
 * PyTorch's libtorch_cuda.so links libnccl.so.2 dynamically and calls
 * ncclAllReduce & co. through its PLT, so these definitions — exported
 * unversioned, as NCCL exports its own — are what those calls bind to under
 * LD_PRELOAD; each forwards to the real one (real.c: RTLD_NEXT, else the
 * loaded libnccl.so.2 by soname).
 *
 * What a collective's record says (wire.h COLL, table collectives): the
 * communicator, this process's rank and the communicator's size, count,
 * type and bytes, the stream, and a per-communicator sequence number — the
 * n-th collective this process called on the communicator, which NCCL
 * requires every rank to call in the same order, so (communicator identity,
 * seq) names one operation across all ranks.  A communicator's identity is
 * what every rank's copy of it shares: a hash of the ncclUniqueId it was
 * made from, or for a split, of its parent's identity, the color and how
 * many splits of the parent came before (the ranks of one color share it).
 *
 * When the operation ran on the GPU: NCCL queues it and returns, and the
 * wait for the other ranks happens on the GPU.  So a GPU mark (gpu_marks.h)
 * goes onto its stream just before the real call — completed when the
 * stream's earlier work was done: where the operation could start — and
 * one just after — completed with the operation.  The analyzer finds them
 * by time (recorded inside the call's [start, end]).  Inside a group
 * (ncclGroupStart/End) the operations are queued at the group's end, so
 * the marks go around ncclGroupEnd.  Marks are recorded only where the
 * library's GPU watcher runs (the ring's owner, a stream it has readied):
 * a stream's first collective readies it, its marks start with the next.
 *
 * The communicator table is fixed (COMMS slots, claimed with a CAS; never
 * freed: a destroyed communicator's handle may come back, and is then
 * claimed afresh by its init).  No lock, no allocation on these paths; a
 * collective costs two clock reads, a probe, an atomic increment and a ring
 * put (`make bench-nccl`), plus the two marks' driver calls.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "hooks.h"
#include "ingero/nccl.h"

#define INGERO_LIBNCCL "libnccl.so.2"
#define NCCL_SYSTEM_ERROR 2        /* ncclSystemError: the real function is missing */
#define NCCL_SPLIT_NOCOLOR (-1)
#define COMMS 256
#define PEERS 256                  /* send/recv sequence numbers kept per peer below this */

typedef int ncclResult_t;
typedef void *ncclComm_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

struct comm_slot {
	_Atomic uint64_t key;          /* handle + 1; 0 free */
	uint64_t id;                   /* identity shared by every rank's copy */
	int32_t rank, nranks;
	_Atomic uint64_t seq;          /* collectives called on it */
	_Atomic uint32_t splits;       /* ncclCommSplit calls on it */
	_Atomic uint32_t p2p[PEERS];
};

static struct comm_slot comms[COMMS];
static _Atomic uint32_t init_alls;
/* COLL records that found the ring full, carried by the next one (wire.h) */
static _Atomic uint64_t coll_lost;
/* the calling thread's ncclGroupStart depth (NCCL's groups are per thread),
 * and the stream of the first operation of its open group: the marks go
 * around the outermost ncclGroupEnd, on that stream */
static __thread int group_depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t group_stream __attribute__((tls_model("initial-exec")));

static unsigned comm_hash(uint64_t key)
{
	return (unsigned)((key >> 4) ^ (key >> 14) ^ (key >> 24));
}

/* A communicator's slot; with `claim`, made anew for it (an init). */
static struct comm_slot *comm_of(ncclComm_t comm, bool claim)
{
	uint64_t key = (uint64_t)(uintptr_t)comm + 1;
	if (!comm)
		return NULL;
	unsigned h = comm_hash(key);
	for (unsigned i = 0; i < COMMS; i++) {
		struct comm_slot *s = &comms[(h + i) % COMMS];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == key)
			return s;
		if (k == 0) {
			if (!claim)
				return NULL;
			uint64_t none = 0;
			if (atomic_compare_exchange_strong(&s->key, &none, key) || none == key)
				return s;
		}
	}
	return NULL;
}

/* FNV-1a, then a finaliser: a 64-bit identity from bytes */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (!h)
		h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

/* One NCCL call being timed. */
struct coll {
	struct rrec_coll r;
	bool tsc, on;
};

static bool recording(void)
{
	return ingero_recording_now() && ingero_is_active();
}

static void coll_begin(struct coll *c, unsigned op, ncclComm_t comm, void *stream, size_t count, int dtype, int peer,
		       bool marks)
{
	memset(&c->r, 0, sizeof c->r);
	c->on = recording();
	if (!c->on)
		return;
	c->tsc = ingero_hot.use_tsc;
	c->r.h.type = INGERO_RREC_COLL;
	c->r.h.flags = c->tsc ? INGERO_RREC_TSC : 0;
	c->r.op = (uint8_t)op;
	c->r.comm = (uint64_t)(uintptr_t)comm;
	c->r.stream = (uint64_t)(uintptr_t)stream;
	c->r.count = count;
	c->r.dtype = dtype;
	c->r.peer = peer;
	c->r.rank = c->r.nranks = -1;
	if (group_depth > 0) {
		c->r.cflags |= INGERO_COLL_IN_GROUP;
		if (!group_stream)
			group_stream = c->r.stream;
	}
	c->r.start = ingero_stamp(c->tsc);
	if (marks && stream && ingero_gpu_mark_now(c->r.stream))
		c->r.cflags |= INGERO_COLL_MARK_BEFORE;
}

static void coll_put(struct coll *c, int ret, bool mark_after)
{
	if (mark_after && c->r.stream && ingero_gpu_mark_now(c->r.stream))
		c->r.cflags |= INGERO_COLL_MARK_AFTER;
	c->r.dur = ingero_stamp(c->tsc) - c->r.start;
	c->r.ret = ret;
	c->r.h.pid = ingero_hot.pid;
	c->r.tid = ingero_tid();
	c->r.lost = atomic_load_explicit(&coll_lost, memory_order_relaxed);
	if (!ingero_put(&c->r, sizeof c->r, false))
		atomic_fetch_add_explicit(&coll_lost, 1, memory_order_relaxed);
}

/* A collective (every rank calls it): its sequence number on the
 * communicator, counted whether recorded or not, so that ranks stay matched
 * across a pause (INGERO_CAPTURE). */
static void coll_seq(struct coll *c, ncclComm_t comm, unsigned op)
{
	struct comm_slot *s = comm_of(comm, false);
	uint64_t seq = 0;
	if (s) {
		if (ingero_nccl_kind(op) == INGERO_NCCL_P2P)
			seq = (unsigned)c->r.peer < PEERS ? atomic_fetch_add(&s->p2p[c->r.peer], 1) : 0;
		else
			seq = atomic_fetch_add_explicit(&s->seq, 1, memory_order_relaxed);
	}
	if (!c->on)
		return;
	if (!s || (ingero_nccl_kind(op) == INGERO_NCCL_P2P && (unsigned)c->r.peer >= PEERS)) {
		c->r.cflags |= INGERO_COLL_NO_COMM_SLOT;
		return;
	}
	c->r.seq = seq;
	c->r.comm_id = s->id;
	c->r.rank = s->rank;
	c->r.nranks = s->nranks;
}

/* A new communicator's slot filled (init, split). */
static void comm_made(struct coll *c, ncclComm_t comm, uint64_t id, int rank, int nranks)
{
	struct comm_slot *s = comm_of(comm, true);
	if (s) {
		s->id = id;
		s->rank = rank;
		s->nranks = nranks;
		atomic_store(&s->seq, 0);
		atomic_store(&s->splits, 0);
		for (unsigned i = 0; i < PEERS; i++)
			atomic_store_explicit(&s->p2p[i], 0, memory_order_relaxed);
	}
	c->r.comm = (uint64_t)(uintptr_t)comm;
	c->r.comm_id = id;
	c->r.rank = rank;
	c->r.nranks = nranks;
	if (!s)
		c->r.cflags |= INGERO_COLL_NO_COMM_SLOT;
}

#define NCCL_REAL(name)                                                                   \
	({                                                                                \
		static _Atomic(void *) slot_;                                             \
		(name##_fn) INGERO_REAL(slot_, #name, INGERO_LIBNCCL);                     \
	})

/* --- collectives ------------------------------------------------------------------------ */

/* A collective or point-to-point operation: timed, its marks around it
 * (unless inside a group: ncclGroupEnd's), its sequence number. */
#define COLL_CALL(OP, COMM, STREAM, COUNT, DTYPE, PEER, CALL)                              \
	do {                                                                              \
		if (!fn_)                                                                 \
			return NCCL_SYSTEM_ERROR;                                         \
		struct coll c_;                                                           \
		bool marks_ = group_depth == 0;                                           \
		coll_begin(&c_, (OP), (COMM), (STREAM), (COUNT), (DTYPE), (PEER), marks_); \
		ncclResult_t r_ = (CALL);                                                 \
		coll_seq(&c_, (COMM), (OP));                                              \
		if (c_.on)                                                                \
			coll_put(&c_, r_, marks_);                                        \
		return r_;                                                                \
	} while (0)

typedef ncclResult_t (*ncclAllReduce_fn)(const void *, void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op,
					 ncclComm_t comm, void *stream)
{
	ncclAllReduce_fn fn_ = NCCL_REAL(ncclAllReduce);
	COLL_CALL(INGERO_NCCL_ALL_REDUCE, comm, stream, count, datatype, -1,
		  fn_(sendbuff, recvbuff, count, datatype, op, comm, stream));
}

typedef ncclResult_t (*ncclReduceScatter_fn)(const void *, void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, int datatype,
					     int op, ncclComm_t comm, void *stream)
{
	ncclReduceScatter_fn fn_ = NCCL_REAL(ncclReduceScatter);
	COLL_CALL(INGERO_NCCL_REDUCE_SCATTER, comm, stream, recvcount, datatype, -1,
		  fn_(sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}

typedef ncclResult_t (*ncclAllGather_fn)(const void *, void *, size_t, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, int datatype,
					 ncclComm_t comm, void *stream)
{
	ncclAllGather_fn fn_ = NCCL_REAL(ncclAllGather);
	COLL_CALL(INGERO_NCCL_ALL_GATHER, comm, stream, sendcount, datatype, -1,
		  fn_(sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

typedef ncclResult_t (*ncclBroadcast_fn)(const void *, void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, int datatype, int root,
					 ncclComm_t comm, void *stream)
{
	ncclBroadcast_fn fn_ = NCCL_REAL(ncclBroadcast);
	COLL_CALL(INGERO_NCCL_BROADCAST, comm, stream, count, datatype, root,
		  fn_(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

typedef ncclResult_t (*ncclBcast_fn)(void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, int datatype, int root, ncclComm_t comm, void *stream)
{
	ncclBcast_fn fn_ = NCCL_REAL(ncclBcast);
	COLL_CALL(INGERO_NCCL_BCAST, comm, stream, count, datatype, root, fn_(buff, count, datatype, root, comm, stream));
}

typedef ncclResult_t (*ncclReduce_fn)(const void *, void *, size_t, int, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, int datatype, int op,
				      int root, ncclComm_t comm, void *stream)
{
	ncclReduce_fn fn_ = NCCL_REAL(ncclReduce);
	COLL_CALL(INGERO_NCCL_REDUCE, comm, stream, count, datatype, root,
		  fn_(sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}

typedef ncclResult_t (*ncclSend_fn)(const void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer, ncclComm_t comm,
				    void *stream)
{
	ncclSend_fn fn_ = NCCL_REAL(ncclSend);
	COLL_CALL(INGERO_NCCL_SEND, comm, stream, count, datatype, peer, fn_(sendbuff, count, datatype, peer, comm, stream));
}

typedef ncclResult_t (*ncclRecv_fn)(void *, size_t, int, int, ncclComm_t, void *);
INGERO_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer, ncclComm_t comm,
				    void *stream)
{
	ncclRecv_fn fn_ = NCCL_REAL(ncclRecv);
	COLL_CALL(INGERO_NCCL_RECV, comm, stream, count, datatype, peer, fn_(recvbuff, count, datatype, peer, comm, stream));
}

/* --- groups ------------------------------------------------------------------------------- */

typedef ncclResult_t (*ncclGroupStart_fn)(void);
INGERO_EXPORT ncclResult_t ncclGroupStart(void)
{
	ncclGroupStart_fn fn_ = NCCL_REAL(ncclGroupStart);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	coll_begin(&c, INGERO_NCCL_GROUP_START, NULL, NULL, 0, -1, -1, false);
	ncclResult_t r = fn_();
	if (r == 0 && group_depth++ == 0)
		group_stream = 0;
	if (c.on)
		coll_put(&c, r, false);
	return r;
}

typedef ncclResult_t (*ncclGroupEnd_fn)(void);
INGERO_EXPORT ncclResult_t ncclGroupEnd(void)
{
	ncclGroupEnd_fn fn_ = NCCL_REAL(ncclGroupEnd);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	/* the outermost end queues the group's operations: marked on the
	 * stream of its first */
	bool outer = group_depth == 1;
	coll_begin(&c, INGERO_NCCL_GROUP_END, NULL, (void *)(uintptr_t)(outer ? group_stream : 0), 0, -1, -1,
		   outer);
	ncclResult_t r = fn_();
	if (group_depth > 0)
		group_depth--;
	if (c.on)
		coll_put(&c, r, outer);
	return r;
}

/* --- communicators ------------------------------------------------------------------------ */

typedef ncclResult_t (*ncclCommInitRank_fn)(ncclComm_t *, int, ncclUniqueId, int);
INGERO_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	ncclCommInitRank_fn fn_ = NCCL_REAL(ncclCommInitRank);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	coll_begin(&c, INGERO_NCCL_COMM_INIT_RANK, NULL, NULL, 0, -1, -1, false);
	ncclResult_t r = fn_(comm, nranks, commId, rank);
	if (comm && *comm)
		comm_made(&c, *comm, hash_bytes(0, commId.internal, sizeof commId.internal), rank, nranks);
	if (c.on)
		coll_put(&c, r, false);
	return r;
}

typedef ncclResult_t (*ncclCommInitRankConfig_fn)(ncclComm_t *, int, ncclUniqueId, int, void *);
INGERO_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
						  void *config)
{
	ncclCommInitRankConfig_fn fn_ = NCCL_REAL(ncclCommInitRankConfig);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	coll_begin(&c, INGERO_NCCL_COMM_INIT_RANK_CONFIG, NULL, NULL, 0, -1, -1, false);
	ncclResult_t r = fn_(comm, nranks, commId, rank, config);
	if (comm && *comm)
		comm_made(&c, *comm, hash_bytes(0, commId.internal, sizeof commId.internal), rank, nranks);
	if (c.on)
		coll_put(&c, r, false);
	return r;
}

typedef ncclResult_t (*ncclCommInitAll_fn)(ncclComm_t *, int, const int *);
INGERO_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms_out, int ndev, const int *devlist)
{
	ncclCommInitAll_fn fn_ = NCCL_REAL(ncclCommInitAll);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	coll_begin(&c, INGERO_NCCL_COMM_INIT_ALL, NULL, NULL, 0, -1, -1, false);
	ncclResult_t r = fn_(comms_out, ndev, devlist);
	/* one process holds every rank: the identity is its own, per call */
	uint32_t n = atomic_fetch_add(&init_alls, 1);
	uint64_t key[2] = { ingero_hot.pid, n };
	uint64_t id = hash_bytes(0, key, sizeof key);
	for (int i = 0; r == 0 && comms_out && i < ndev; i++) {
		struct coll one = c;
		comm_made(&one, comms_out[i], id, i, ndev);
		if (one.on)
			coll_put(&one, r, false);
	}
	if (c.on && (r != 0 || !comms_out || ndev <= 0))
		coll_put(&c, r, false);
	return r;
}

typedef ncclResult_t (*ncclCommCount_fn)(const ncclComm_t, int *);
typedef ncclResult_t (*ncclCommUserRank_fn)(const ncclComm_t, int *);
typedef ncclResult_t (*ncclCommSplit_fn)(ncclComm_t, int, int, ncclComm_t *, void *);
INGERO_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, void *config)
{
	ncclCommSplit_fn fn_ = NCCL_REAL(ncclCommSplit);
	if (!fn_)
		return NCCL_SYSTEM_ERROR;
	struct coll c;
	coll_begin(&c, INGERO_NCCL_COMM_SPLIT, comm, NULL, 0, -1, color, false);
	struct comm_slot *parent = comm_of(comm, false);
	/* every rank of the parent calls the split, in the same order */
	uint32_t nth = parent ? atomic_fetch_add(&parent->splits, 1) : 0;
	ncclResult_t r = fn_(comm, color, key, newcomm, config);
	if (newcomm && *newcomm && color != NCCL_SPLIT_NOCOLOR) {
		uint64_t k[3] = { parent ? parent->id : (uint64_t)(uintptr_t)comm, (uint64_t)(int64_t)color, nth };
		int rank = -1, n = -1;
		ncclCommUserRank_fn ur = NCCL_REAL(ncclCommUserRank);
		ncclCommCount_fn cn = NCCL_REAL(ncclCommCount);
		/* (a non-blocking communicator may not answer yet: then unknown) */
		if (ur && ur(*newcomm, &rank) != 0)
			rank = -1;
		if (cn && cn(*newcomm, &n) != 0)
			n = -1;
		comm_made(&c, *newcomm, hash_bytes(0, k, sizeof k), rank, n);
		if (!parent)
			c.r.cflags |= INGERO_COLL_NO_COMM_SLOT;
	}
	if (c.on)
		coll_put(&c, r, false);
	return r;
}

/* Destroy, abort, finalize: the communicator's last record (its slot stays:
 * a new communicator at the same address is claimed afresh by its init). */
static void comm_end(struct coll *c, ncclComm_t comm)
{
	struct comm_slot *s = comm_of(comm, false);
	if (s) {
		c->r.comm_id = s->id;
		c->r.rank = s->rank;
		c->r.nranks = s->nranks;
		c->r.seq = atomic_load(&s->seq);
	}
}

typedef ncclResult_t (*comm_fn)(ncclComm_t);
#define COMM_END(OP, NAME)                                                                \
	do {                                                                              \
		static _Atomic(void *) slot_;                                             \
		comm_fn fn_ = (comm_fn)INGERO_REAL(slot_, NAME, INGERO_LIBNCCL);           \
		if (!fn_)                                                                 \
			return NCCL_SYSTEM_ERROR;                                         \
		struct coll c_;                                                           \
		coll_begin(&c_, (OP), comm, NULL, 0, -1, -1, false);                      \
		comm_end(&c_, comm);                                                      \
		ncclResult_t r_ = fn_(comm);                                              \
		if (c_.on)                                                                \
			coll_put(&c_, r_, false);                                         \
		return r_;                                                                \
	} while (0)

INGERO_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	COMM_END(INGERO_NCCL_COMM_DESTROY, "ncclCommDestroy");
}

INGERO_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	COMM_END(INGERO_NCCL_COMM_ABORT, "ncclCommAbort");
}

INGERO_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	COMM_END(INGERO_NCCL_COMM_FINALIZE, "ncclCommFinalize");
}
