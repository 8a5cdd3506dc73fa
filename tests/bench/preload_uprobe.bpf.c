// SPDX-License-Identifier: GPL-2.0
/*
 * preload_uprobe.bpf.c — what an eBPF tracer of CUDA calls does per call,
 * for the preload benchmark's comparison: a uprobe stores the entry time
 * per thread, the uretprobe computes the duration.  (The Go Ingero traced
 * CUDA this way.)  Built and loaded by tests/bench/preload.sh through
 * tests/helpers/preload_uprobe.c.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

SEC("uprobe")
int call_enter(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 t = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &t, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int call_leave(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *t = bpf_map_lookup_elem(&start, &tid);
	if (!t)
		return 0;
	__u32 k0 = 0, k1 = 1;
	__u64 *calls = bpf_map_lookup_elem(&totals, &k0);
	__u64 *ns = bpf_map_lookup_elem(&totals, &k1);
	if (calls)
		__sync_fetch_and_add(calls, 1);
	if (ns)
		__sync_fetch_and_add(ns, bpf_ktime_get_ns() - *t);
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
