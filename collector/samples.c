/*
 * samples.c — loads bpf/samples.bpf.c on one software CPU-clock perf event
 * per CPU, and turns each sample into a cpu_samples row whose stack is
 * interned in stacks/stack_frames (kinds 'native' and 'kernel').
 *
 * A stack is symbolized once per (process, user stack id, kernel stack id)
 * — the kernel's stack ids are stable because the map is never cleared —
 * and stored under a 64-bit id hashed from the process and the addresses,
 * in the same id space as the preload library's stack hashes.  Return
 * addresses (every frame but the innermost) are looked up at ip - 1, inside
 * the calling instruction.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/samples.skel.h"
#include "../bpf/samples.h"
#include "store.h"
#include "symbolize.h"
#include "tracer.h"

struct stack_key {
	uint32_t pid;
	int32_t user, kernel;
	uint32_t pad;
	uint64_t leaf_caller;   /* accepted leaf return address, 0 = none */
};

struct stack_entry {
	struct stack_key k;
	int64_t id;
	int used;
};

static struct stack_entry *cache;
static size_t cache_cap, cache_n;

int samples_attach(struct tracer *t)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = t->o.sample_hz,
		.freq = 1,
	};
	int err, attached = 0;

	t->samples = samples_bpf__open();
	if (!t->samples)
		return -errno;
	if ((err = tracer_share_maps(t, t->samples->maps.traced, t->samples->maps.events,
				     t->samples->maps.drops)) ||
	    (err = samples_bpf__load(t->samples)))
		return err;
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0)
		return -EINVAL;
	t->perf_fds = calloc(t->ncpus, sizeof(int));
	t->perf_links = calloc(t->ncpus, sizeof(*t->perf_links));
	if (!t->perf_fds || !t->perf_links)
		return -ENOMEM;
	for (int cpu = 0; cpu < t->ncpus; cpu++) {
		t->perf_fds[cpu] = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
						PERF_FLAG_FD_CLOEXEC);
		if (t->perf_fds[cpu] < 0)
			continue;   /* an offline CPU */
		t->perf_links[cpu] = bpf_program__attach_perf_event(t->samples->progs.on_sample,
								    t->perf_fds[cpu]);
		if (!t->perf_links[cpu]) {
			close(t->perf_fds[cpu]);
			t->perf_fds[cpu] = -1;
			continue;
		}
		attached++;
	}
	t->sym = sym_new();
	return attached ? 0 : -ENODEV;
}

void samples_detach(struct tracer *t)
{
	for (int cpu = 0; t->perf_links && cpu < t->ncpus; cpu++) {
		bpf_link__destroy(t->perf_links[cpu]);
		if (t->perf_fds[cpu] >= 0)
			close(t->perf_fds[cpu]);
	}
	free(t->perf_links);
	free(t->perf_fds);
	t->perf_links = NULL;
	t->perf_fds = NULL;
	samples_bpf__destroy(t->samples);
	t->samples = NULL;
	sym_free(t->sym);
	t->sym = NULL;
	free(cache);
	cache = NULL;
	cache_cap = cache_n = 0;
}

static size_t key_hash(const struct stack_key *k)
{
	return k->pid * 31u + (uint32_t)k->user * 17u + (uint32_t)k->kernel +
	       (size_t)(k->leaf_caller * 0x9e3779b97f4a7c15ull >> 20);
}

static struct stack_entry *cache_slot(const struct stack_key *k)
{
	if (!cache || (cache_n + 1) * 2 > cache_cap) {
		size_t cap = cache_cap ? cache_cap * 2 : 4096;
		struct stack_entry *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t i = 0; i < cache_cap; i++) {
			if (!cache[i].used)
				continue;
			size_t j = key_hash(&cache[i].k) & (cap - 1);
			while (n[j].used)
				j = (j + 1) & (cap - 1);
			n[j] = cache[i];
		}
		free(cache);
		cache = n;
		cache_cap = cap;
	}
	for (size_t i = key_hash(k) & (cache_cap - 1);;
	     i = (i + 1) & (cache_cap - 1)) {
		if (!cache[i].used || memcmp(&cache[i].k, k, sizeof(*k)) == 0)
			return &cache[i];
	}
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* Read one stack id's addresses; returns the depth. */
static int read_stack(struct tracer *t, int32_t id, uint64_t *ips)
{
	int n = 0;

	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(t->samples->maps.stacks), &id, ips))
		return 0;
	while (n < INGERO_STACK_DEPTH && ips[n])
		n++;
	return n;
}

static int64_t intern_stack(struct tracer *t, const struct sample_event *e, uint64_t leaf_caller)
{
	uint64_t uips[INGERO_STACK_DEPTH + 1], kips[INGERO_STACK_DEPTH];
	struct frame_row f[2 * INGERO_STACK_DEPTH + 1];
	int nu = read_stack(t, e->user_stack, uips), nk = read_stack(t, e->kernel_stack, kips), n = 0;
	uint64_t h = 0xcbf29ce484222325ull;

	/* the leaf's caller goes right after the leaf */
	if (leaf_caller && nu >= 1) {
		memmove(&uips[2], &uips[1], (nu - 1) * sizeof(*uips));
		uips[1] = leaf_caller;
		nu++;
	}

	if (!nu && !nk)
		return 0;
	h = fnv(h, "bpf", 3);
	h = fnv(h, &e->pid, sizeof e->pid);
	h = fnv(h, uips, nu * sizeof(*uips));
	h = fnv(h, "|", 1);
	h = fnv(h, kips, nk * sizeof(*kips));
	if (!h)
		h = 1;
	for (int i = 0; i < nk; i++, n++) {
		struct sym_result r;

		sym_kernel(t->sym, kips[i] - (i > 0), &r);
		f[n] = (struct frame_row){ .kind = "kernel", .depth = i, .ip = kips[i],
					   .symbol = r.symbol, .module = r.module,
					   .offset = r.offset + (i > 0), .line = -1 };
	}
	for (int i = 0; i < nu; i++, n++) {
		struct sym_result r;

		sym_user(t->sym, e->pid, uips[i] - (i > 0), &r);
		f[n] = (struct frame_row){ .kind = "native", .depth = i, .ip = uips[i],
					   .symbol = r.symbol, .module = r.module,
					   .offset = r.offset + (i > 0), .line = -1 };
	}
	store_stack(t->store, (int64_t)h, e->pid, f, n);
	return (int64_t)h;
}

/* The word at the user stack pointer is the caller of a frameless leaf when
 * it is a return address (follows a call) and the unwinder did not already
 * report it as the next frame. */
static uint64_t leaf_caller(struct tracer *t, const struct sample_event *e)
{
	uint64_t next = 0, w = e->user_sp_word;
	uint64_t ips[INGERO_STACK_DEPTH];

	if (!w || e->user_stack < 0)
		return 0;
	if (read_stack(t, e->user_stack, ips) > 1)
		next = ips[1];
	if (w == next || w == ips[0])
		return 0;
	return sym_is_return_address(t->sym, e->pid, w) ? w : 0;
}

void samples_event(struct tracer *t, const void *data, size_t len)
{
	const struct sample_event *e = data;
	struct stack_key k;
	struct stack_entry *c;
	struct sample_row r;

	if (len < sizeof(*e) || !t->samples)
		return;
	memset(&k, 0, sizeof k);
	k.pid = e->pid;
	k.user = e->user_stack < 0 ? -1 : e->user_stack;
	k.kernel = e->kernel_stack < 0 ? -1 : e->kernel_stack;
	k.leaf_caller = leaf_caller(t, e);
	c = cache_slot(&k);
	r = (struct sample_row){ .pid = e->pid, .tid = e->tid, .cpu = e->cpu, .ts_ns = e->ts_ns };
	if (c && c->used) {
		r.stack_id = c->id;
	} else {
		r.stack_id = intern_stack(t, e, k.leaf_caller);
		if (c) {
			c->k = k;
			c->id = r.stack_id;
			c->used = 1;
			cache_n++;
		}
	}
	store_sample(t->store, &r);
}

/* Process-tree hooks so addresses resolve in the right image. */
void samples_fork(struct tracer *t, uint32_t child, uint32_t parent)
{
	if (t->sym)
		sym_fork(t->sym, child, parent);
}

void samples_exec(struct tracer *t, uint32_t pid)
{
	if (t->sym)
		sym_exec(t->sym, pid);
}

void samples_enroll(struct tracer *t, uint32_t pid)
{
	if (t && t->sym)
		sym_load_pid(t->sym, pid);
}
