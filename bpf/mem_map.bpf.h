/*
 * mem_map.bpf.h — the per-(process, bucket) memory aggregate (mem.h) and
 * its slot.  Two objects add to it: mem.bpf.c the page allocations, and
 * sched.bpf.c the page faults, read from the kernel's own per-task counts
 * when a thread leaves a CPU (no program on the fault path).  sched.bpf.c
 * owns the map; the collector hands its fd to mem.bpf.c before it loads.
 */
#ifndef INGERO_MEM_MAP_BPF_H
#define INGERO_MEM_MAP_BPF_H

#include "traced.bpf.h"
#include "mem.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct mem_key);
	__type(value, struct mem_val);
} mem SEC(".maps");

/* tgid's entry for the bucket holding now, made if new; NULL (and a drop
 * counted) when the map is full. */
static __always_inline struct mem_val *mem_slot(u32 tgid, u64 now)
{
	struct mem_key k = { .pid = tgid, .bucket = bucket_of(now) };
	struct mem_val *v = bpf_map_lookup_elem(&mem, &k);

	if (!v) {
		struct mem_val zero = {};

		bpf_map_update_elem(&mem, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&mem, &k);
		if (!v)
			count_drop(DROP_MEM_MAP);
	}
	return v;
}

#endif
