/*
 * wire_decode.h — decoding one preload→collector message (wire.h).
 *
 * ingero_wire_decode() checks the whole message first — msgpack structure,
 * version, every record's field count and types, the limits of wire.h —
 * and only then hands out records, so a caller never sees half a message:
 * either every known record of the message, or an error and nothing.
 * Records of unknown type are skipped and counted (n_unknown).
 *
 * Strings point into the caller's buffer (msgpack-c is zero-copy for str and
 * bin), and the record array lives in the batch; both stay valid until
 * ingero_wire_batch_free() and as long as the input buffer lives.
 */
#ifndef INGERO_WIRE_DECODE_H
#define INGERO_WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "wire.h"

/* A string as it came on the wire: not NUL-terminated; ptr NULL for nil. */
struct ingero_wire_str {
	const char *ptr;
	uint32_t len;
};

struct ingero_wire_hello {
	uint32_t pid, ppid;
	uint64_t start_ns;
	struct ingero_wire_str comm, exe, cmdline;
};

struct ingero_wire_counts {
	uint32_t pid;
	uint64_t made, dropped;
};

struct ingero_wire_native_frame {
	uint64_t ip;
	struct ingero_wire_str symbol, module;   /* either may be nil */
	uint64_t offset;
};

struct ingero_wire_python_frame {
	struct ingero_wire_str file, function;
	uint32_t line;
};

struct ingero_wire_stack {
	uint32_t pid;
	uint64_t id;
	uint32_t n_native, n_python;           /* ≤ INGERO_WIRE_MAX_NATIVE / _PYTHON */
	const struct ingero_wire_native_frame *native;   /* innermost first */
	const struct ingero_wire_python_frame *python;
};

struct ingero_wire_kernel {
	uint32_t pid;
	uint64_t addr;
	struct ingero_wire_str name;
};

struct ingero_wire_bye {
	uint32_t pid;
	uint64_t end_ns;
};

struct ingero_wire_orphan {
	uint32_t pid;
};

struct ingero_wire_gpu {
	uint32_t pid;
	uint32_t flags;
	uint64_t stream;
	uint64_t recorded_ns, done_ns;
};

struct ingero_wire_gpu_stats {
	uint32_t pid;
	uint64_t made, lost;
};

struct ingero_wire_capture {
	uint32_t pid;
	uint32_t recording;   /* 1 recording from t_ns on, 0 paused */
	uint64_t t_ns;
};

/* COLL: an NCCL call (wire.h); -1 for an unknown rank, nranks, dtype, peer */
struct ingero_wire_coll {
	uint32_t pid, tid;
	uint32_t op, flags;
	int32_t rank, nranks, dtype, peer, ret;
	uint64_t comm, comm_id, seq, count, stream, start_ns, dur_ns, lost;
};

struct ingero_wire_range {
	uint32_t pid, tid;
	uint32_t depth, kind;          /* enum ingero_range_kind */
	uint64_t start_ns, dur_ns, lost;
	struct ingero_wire_str name;
};

struct ingero_wire_range_stats {
	uint32_t pid;
	uint64_t lost;
};

struct ingero_wire_record {
	uint32_t type;   /* enum ingero_record_type */
	union {
		struct ingero_wire_hello hello;
		struct ingero_cuda_call call;
		struct ingero_wire_counts counts;
		struct ingero_wire_stack stack;
		struct ingero_wire_kernel kernel;
		struct ingero_wire_bye bye;
		struct ingero_wire_orphan orphan;
		struct ingero_wire_gpu gpu;
		struct ingero_wire_gpu_stats gpu_stats;
		struct ingero_wire_capture capture;
		struct ingero_wire_coll coll;
		struct ingero_wire_range range;
		struct ingero_wire_range_stats range_stats;
	} u;
};

struct ingero_wire_batch {
	uint32_t version;
	uint32_t sender_pid;                  /* as the sender sees itself */
	uint32_t n_records;                   /* known records, in message order */
	uint32_t n_unknown;                   /* records of unknown type, skipped */
	uint32_t n_calls;                     /* how many of the records are CALLs */
	struct ingero_wire_record *records;
	void *priv_;                          /* msgpack state; owned by the batch */
};

enum ingero_wire_error {
	INGERO_WIRE_OK = 0,
	INGERO_WIRE_E_SIZE = -1,       /* empty or larger than INGERO_WIRE_MAX_MSG_BYTES */
	INGERO_WIRE_E_MSGPACK = -2,    /* not exactly one well-formed msgpack value */
	INGERO_WIRE_E_SHAPE = -3,      /* not [version, sender_pid, [records]] */
	INGERO_WIRE_E_VERSION = -4,    /* version other than INGERO_WIRE_VERSION */
	INGERO_WIRE_E_RECORD = -5,     /* a known record with missing or mistyped fields */
	INGERO_WIRE_E_LIMIT = -6,      /* a string or frame list over the wire.h limits */
	INGERO_WIRE_E_NOMEM = -7,
};

/* Decode buf[0..len).  0 on success (free the batch afterwards), else a
 * negative enum ingero_wire_error and the batch is left empty. */
int ingero_wire_decode(const void *buf, size_t len, struct ingero_wire_batch *out);
void ingero_wire_batch_free(struct ingero_wire_batch *b);
const char *ingero_wire_strerror(int err);

#endif
