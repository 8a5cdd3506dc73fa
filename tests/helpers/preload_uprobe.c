/*
 * preload_uprobe.c — the other side of the preload benchmark: the same
 * no-op CUDA call loop as `preload_calls loop`, with an eBPF uprobe +
 * uretprobe pair (tests/bench/preload_uprobe.bpf.c) attached to the fake
 * runtime's cudaStreamSynchronize.  Needs root (or CAP_BPF+CAP_PERFMON).
 *
 *   preload_uprobe BPF_OBJECT N WARMUP
 *   → ns_per_call=… cpu_ns_per_call=… probe_hits=…
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fakecuda/cuda_runtime_fake.h"

static double ns_of(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: preload_uprobe BPF_OBJECT N WARMUP\n");
		return 2;
	}
	long n = atol(argv[2]), warm = atol(argv[3]);
	Dl_info di;
	if (!dladdr((void *)cudaStreamSynchronize, &di) || !di.dli_fname) {
		fprintf(stderr, "preload_uprobe: cannot locate libcudart\n");
		return 1;
	}
	libbpf_set_print(NULL);
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "preload_uprobe: cannot load %s (root and BPF needed)\n", argv[1]);
		return 1;
	}
	struct bpf_program *enter = bpf_object__find_program_by_name(obj, "call_enter");
	struct bpf_program *leave = bpf_object__find_program_by_name(obj, "call_leave");
	LIBBPF_OPTS(bpf_uprobe_opts, eo, .func_name = "cudaStreamSynchronize", .retprobe = false);
	LIBBPF_OPTS(bpf_uprobe_opts, lo, .func_name = "cudaStreamSynchronize", .retprobe = true);
	struct bpf_link *l1 = enter ? bpf_program__attach_uprobe_opts(enter, 0, di.dli_fname, 0, &eo) : NULL;
	struct bpf_link *l2 = leave ? bpf_program__attach_uprobe_opts(leave, 0, di.dli_fname, 0, &lo) : NULL;
	if (!l1 || !l2) {
		fprintf(stderr, "preload_uprobe: cannot attach to cudaStreamSynchronize in %s\n", di.dli_fname);
		return 1;
	}
	cudaStream_t s;
	cudaStreamCreate(&s);
	for (long i = 0; i < warm; i++)
		cudaStreamSynchronize(s);
	struct timespec w0, w1, c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	for (long i = 0; i < n; i++)
		cudaStreamSynchronize(s);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	unsigned long long hits = 0;
	int fd = bpf_object__find_map_fd_by_name(obj, "totals");
	unsigned key = 0;
	if (fd >= 0)
		bpf_map_lookup_elem(fd, &key, &hits);
	printf("ns_per_call=%.1f cpu_ns_per_call=%.1f probe_hits=%llu\n", ns_of(&w0, &w1) / n, ns_of(&c0, &c1) / n,
	       hits);
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bpf_object__close(obj);
	return 0;
}
