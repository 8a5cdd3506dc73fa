// SPDX-License-Identifier: GPL-2.0
/*
 * mem.bpf.c — page allocations and user page faults of traced processes,
 * counted in the kernel per (tgid, bucket): one map update per event, no
 * ring traffic.  The allocating task is `current` for mm_page_alloc, and
 * the faulting one for page_fault_user.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "traced.bpf.h"
#include "mem.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct mem_key);
	__type(value, struct mem_val);
} mem SEC(".maps");

static __always_inline struct mem_val *slot(void)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mem_key k = { .pid = tgid };
	struct mem_val *v;

	if (!is_recorded(tgid, INGERO_TRACED_NO_MEM))
		return NULL;
	k.bucket = bucket_of(bpf_ktime_get_ns());
	v = bpf_map_lookup_elem(&mem, &k);
	if (!v) {
		struct mem_val zero = {};

		bpf_map_update_elem(&mem, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&mem, &k);
		if (!v)
			count_drop(DROP_MEM_MAP);
	}
	return v;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(on_page_alloc, struct page *page, unsigned int order, gfp_t gfp, int migratetype)
{
	struct mem_val *v = slot();

	if (v) {
		__sync_fetch_and_add(&v->pages, 1ull << (order & 31));
		__sync_fetch_and_add(&v->allocs, 1);
	}
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	struct mem_val *v = slot();

	if (v)
		__sync_fetch_and_add(&v->faults, 1);
	return 0;
}
