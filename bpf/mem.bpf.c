// SPDX-License-Identifier: GPL-2.0
/*
 * mem.bpf.c — page allocations of traced processes, counted in the kernel
 * per (tgid, bucket): one map update per allocation, no ring traffic.  The
 * allocating task is `current` for mm_page_alloc.  (Their page faults are
 * counted by sched.bpf.c from the kernel's per-task counts: mem_map.bpf.h.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "mem_map.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(on_page_alloc, struct page *page, unsigned int order, gfp_t gfp, int migratetype)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mem_val *v;

	if (!is_recorded(tgid, INGERO_TRACED_NO_MEM) || !(v = mem_slot(tgid, bpf_ktime_get_ns())))
		return 0;
	__sync_fetch_and_add(&v->pages, 1ull << (order & 31));
	__sync_fetch_and_add(&v->allocs, 1);
	return 0;
}
