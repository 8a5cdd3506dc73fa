/*
 * nvtx_pack.c — an NVTX range's ring record (nvtx_hooks.c) packed as a wire
 * RANGE record (wire.h) by the sender: checked first (it comes from the
 * memory of processes that share the ring), its TSC ticks made
 * CLOCK_MONOTONIC ns.  What was lost travels with the next record: the
 * records the process's ring had no room for (counted by the producer) and
 * those in batches the sender could not send.
 */
#include <stddef.h>
#include <string.h>

#include "clock.h"
#include "ingero/wire.h"
#include "pack.h"
#include "record.h"

void ingero_pack_range_stats(msgpack_packer *pk, uint32_t pid, uint64_t lost)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint32(pk, INGERO_REC_RANGE_STATS);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, lost);
}

int ingero_pack_range_record(msgpack_packer *pk, const void *buf, uint32_t len, uint64_t send_lost)
{
	struct rrec_range r;
	if (len < sizeof r)
		return -1;
	memcpy(&r, buf, sizeof r);
	if (!ingero_pack_valid_id(r.tid) || r.kind == 0 || r.kind >= INGERO_RANGE_KIND_MAX ||
	    r.name_len > INGERO_RANGE_NAME_MAX || offsetof(struct rrec_range, name) + r.name_len > len)
		return -1;
	uint64_t start = r.start, end = r.start + r.dur;
	if (r.h.flags & INGERO_RREC_TSC) {
		start = ingero_clock_ns(start);
		end = ingero_clock_ns(end);
	}
	msgpack_pack_array(pk, 9);
	msgpack_pack_uint32(pk, INGERO_REC_RANGE);
	msgpack_pack_uint32(pk, r.h.pid);
	msgpack_pack_uint32(pk, r.tid);
	msgpack_pack_uint64(pk, start);
	msgpack_pack_uint64(pk, end > start ? end - start : 0);
	msgpack_pack_uint32(pk, r.depth);
	msgpack_pack_uint32(pk, r.kind);
	msgpack_pack_str(pk, r.name_len);
	msgpack_pack_str_body(pk, (const char *)buf + offsetof(struct rrec_range, name), r.name_len);
	msgpack_pack_uint64(pk, r.lost + send_lost);
	return 0;
}
