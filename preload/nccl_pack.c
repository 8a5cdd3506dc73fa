/*
 * nccl_pack.c — an NCCL call's ring record (nccl_hooks.c) packed as a wire
 * COLL record (wire.h) by the sender: checked first (it comes from the
 * memory of processes that share the ring), its TSC ticks made
 * CLOCK_MONOTONIC ns.  What was lost travels with the next record: the
 * records the process's ring had no room for (counted by the producer) and
 * those in batches the sender could not send.
 */
#include <string.h>

#include "clock.h"
#include "ingero/nccl.h"
#include "ingero/wire.h"
#include "pack.h"

int ingero_pack_coll_record(msgpack_packer *pk, const void *buf, uint32_t len, uint64_t send_lost)
{
	struct rrec_coll c;
	if (len < sizeof c)
		return -1;
	memcpy(&c, buf, sizeof c);
	if (!ingero_pack_valid_id(c.tid) || c.op == 0 || c.op >= INGERO_NCCL_MAX || !ingero_nccl_name(c.op))
		return -1;
	uint64_t start = c.start, end = c.start + c.dur;
	if (c.h.flags & INGERO_RREC_TSC) {
		start = ingero_clock_ns(start);
		end = ingero_clock_ns(end);
	}
	msgpack_pack_array(pk, 18);
	msgpack_pack_uint32(pk, INGERO_REC_COLL);
	msgpack_pack_uint32(pk, c.h.pid);
	msgpack_pack_uint32(pk, c.tid);
	msgpack_pack_uint32(pk, c.op);
	msgpack_pack_uint64(pk, c.comm);
	msgpack_pack_uint64(pk, c.comm_id);
	msgpack_pack_uint64(pk, c.seq);
	msgpack_pack_int32(pk, c.rank);
	msgpack_pack_int32(pk, c.nranks);
	msgpack_pack_uint64(pk, c.count);
	msgpack_pack_int32(pk, c.dtype);
	msgpack_pack_int32(pk, c.peer);
	msgpack_pack_uint64(pk, c.stream);
	msgpack_pack_uint64(pk, start);
	msgpack_pack_uint64(pk, end > start ? end - start : 0);
	msgpack_pack_int32(pk, c.ret);
	msgpack_pack_uint32(pk, c.cflags);
	msgpack_pack_uint64(pk, c.lost + send_lost);
	return 0;
}
