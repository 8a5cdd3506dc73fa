// SPDX-License-Identifier: GPL-2.0
/*
 * preload_count.bpf.c — one counter per attached uprobe (its attach cookie
 * is the counter's index): the independent count of CUDA entry points that
 * tests/helpers/preload_uprobe_count.c compares with the library's.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("uprobe")
int count_hit(void *ctx)
{
	__u32 k = (__u32)bpf_get_attach_cookie(ctx);
	__u64 *v = bpf_map_lookup_elem(&hits, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
