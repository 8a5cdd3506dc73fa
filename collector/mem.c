/*
 * mem.c — loads bpf/mem.bpf.c and drains the per-(process, bucket) memory
 * aggregate (bpf/mem_map.bpf.h: its page allocations, and the page faults
 * sched.bpf.c adds from the kernel's per-task counts) into page_allocs.
 * Closed buckets only (the kernel still adds to the current one); the
 * final flush takes all.
 */
#include <errno.h>
#include <stdlib.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/mem.skel.h"
#include "bpf/sched.skel.h"
#include "../bpf/mem.h"
#include "store.h"
#include "tracer.h"

int mem_attach(struct tracer *t)
{
	int err;

	t->mem = mem_bpf__open();
	if (!t->mem)
		return -errno;
	t->mem->rodata->bucket_ns = t->o.bucket_ns;
	if ((err = tracer_share_maps(t, t->mem->maps.traced, t->mem->maps.events,
				     t->mem->maps.drops)) ||
	    (err = bpf_map__reuse_fd(t->mem->maps.mem, bpf_map__fd(t->sched->maps.mem))))
		return err;
	if ((err = mem_bpf__load(t->mem)) || (err = mem_bpf__attach(t->mem)))
		return err;
	store_session(t->store, "page_faults", "task_counts");
	return 0;
}

void mem_flush(struct tracer *t, int final)
{
	int fd;
	uint64_t now = mono_now_ns(), horizon;
	struct mem_key key, next, *prev = NULL;
	struct mem_key *done = NULL;
	size_t ndone = 0, cap = 0;
	struct mem_val v;

	if (!t->mem)
		return;
	fd = bpf_map__fd(t->mem->maps.mem);
	horizon = now - now % t->o.bucket_ns - t->o.bucket_ns;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!final && key.bucket >= horizon)
			continue;
		if (ndone == cap) {
			cap = cap ? cap * 2 : 256;
			struct mem_key *d = realloc(done, cap * sizeof(*d));
			if (!d)
				break;
			done = d;
		}
		done[ndone++] = key;
	}
	for (size_t i = 0; i < ndone; i++) {
		if (bpf_map_lookup_elem(fd, &done[i], &v))
			continue;
		bpf_map_delete_elem(fd, &done[i]);
		store_page_allocs(t->store, done[i].pid, done[i].bucket, v.pages, v.allocs, v.faults);
	}
	free(done);
}

void mem_detach(struct tracer *t)
{
	mem_bpf__destroy(t->mem);
	t->mem = NULL;
}
