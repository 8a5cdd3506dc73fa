/*
 * nccl.h — the NCCL entry points Ingero times, with stable numeric ids, and
 * what a collective's record says about itself.
 *
 * The preload library interposes these in libnccl.so.2 (preload/nccl_hooks.c),
 * the wire carries the id (wire.h, COLL), and the collector stores the name
 * (collectives.op in report.db, docs/schema.md).  Ids are never reused or
 * renumbered: new entry points are appended.
 *
 * Kinds: a collective (every rank of the communicator calls it, in the same
 * order: the n-th collective of a communicator is the same operation on
 * every rank, matched by comm_id and seq), point-to-point (send/recv: seq
 * counts the calls between this rank and that peer), a group bracket, or a
 * communicator's life (init, split, destroy, abort, finalize).
 */
#ifndef INGERO_NCCL_H
#define INGERO_NCCL_H

#include <stddef.h>
#include <stdint.h>

enum ingero_nccl_kind {
	INGERO_NCCL_COLLECTIVE = 1,
	INGERO_NCCL_P2P = 2,
	INGERO_NCCL_GROUP = 3,
	INGERO_NCCL_COMM = 4,
};

/* X(id, ENUM_SUFFIX, "name", kind) */
#define INGERO_NCCL_LIST(X) \
	X(1,  ALL_REDUCE,           "ncclAllReduce",            COLLECTIVE) \
	X(2,  REDUCE_SCATTER,       "ncclReduceScatter",        COLLECTIVE) \
	X(3,  ALL_GATHER,           "ncclAllGather",            COLLECTIVE) \
	X(4,  BROADCAST,            "ncclBroadcast",            COLLECTIVE) \
	X(5,  REDUCE,               "ncclReduce",               COLLECTIVE) \
	X(6,  BCAST,                "ncclBcast",                COLLECTIVE) \
	X(7,  SEND,                 "ncclSend",                 P2P)        \
	X(8,  RECV,                 "ncclRecv",                 P2P)        \
	X(9,  GROUP_START,          "ncclGroupStart",           GROUP)      \
	X(10, GROUP_END,            "ncclGroupEnd",             GROUP)      \
	X(11, COMM_INIT_RANK,       "ncclCommInitRank",         COMM)       \
	X(12, COMM_INIT_RANK_CONFIG, "ncclCommInitRankConfig",  COMM)       \
	X(13, COMM_INIT_ALL,        "ncclCommInitAll",          COMM)       \
	X(14, COMM_SPLIT,           "ncclCommSplit",            COMM)       \
	X(15, COMM_DESTROY,         "ncclCommDestroy",          COMM)       \
	X(16, COMM_ABORT,           "ncclCommAbort",            COMM)       \
	X(17, COMM_FINALIZE,        "ncclCommFinalize",         COMM)

enum ingero_nccl_op {
	INGERO_NCCL_NONE = 0,
#define INGERO_NCCL_ENUM_(id, e, name, kind) INGERO_NCCL_##e = id,
	INGERO_NCCL_LIST(INGERO_NCCL_ENUM_)
#undef INGERO_NCCL_ENUM_
	INGERO_NCCL_MAX = 64,   /* ids are < INGERO_NCCL_MAX */
};

static inline const char *ingero_nccl_name(unsigned op)
{
	switch (op) {
#define INGERO_NCCL_NAME_(id, e, name, kind) case id: return name;
	INGERO_NCCL_LIST(INGERO_NCCL_NAME_)
#undef INGERO_NCCL_NAME_
	default: return 0;
	}
}

static inline int ingero_nccl_kind(unsigned op)
{
	switch (op) {
#define INGERO_NCCL_KIND_(id, e, name, kind) case id: return INGERO_NCCL_##kind;
	INGERO_NCCL_LIST(INGERO_NCCL_KIND_)
#undef INGERO_NCCL_KIND_
	default: return 0;
	}
}

/* Bytes of one element of an ncclDataType_t (nccl.h: ncclInt8 0, ncclUint8
 * 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5, ncclFloat16 6,
 * ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9, ncclFloat8e4m3 10,
 * ncclFloat8e5m2 11); 0 for a type this version does not know. */
static inline unsigned ingero_nccl_dtype_bytes(int dtype)
{
	static const unsigned char size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return dtype >= 0 && (unsigned)dtype < sizeof size ? size[dtype] : 0;
}

/* collectives.flags */
enum ingero_coll_flags {
	INGERO_COLL_IN_GROUP = 1u << 0,    /* called between ncclGroupStart and ncclGroupEnd: queued at the group's end */
	INGERO_COLL_MARK_BEFORE = 1u << 1, /* a GPU mark was recorded on its stream just before the real call */
	INGERO_COLL_MARK_AFTER = 1u << 2,  /* ... and one just after it: the collective's GPU end */
	INGERO_COLL_NO_COMM_SLOT = 1u << 3, /* the communicator was not known (more than the library tracks): no comm_id, seq */
};

#endif
