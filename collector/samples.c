/*
 * samples.c — loads bpf/samples.bpf.c on one software CPU-clock perf event
 * per CPU, and turns each sample into a cpu_samples row whose stack is
 * interned in stacks, its frames in frames, each stored once (kinds
 * 'native', 'kernel', and 'python' for the frames of a CPython thread,
 * named by python.c; store_frames.c).
 *
 * A stack is symbolized and stored once per process, under a 64-bit id
 * hashed from the process and the addresses (the same id space as the
 * preload library's stack hashes; a collision is as unlikely).  Return
 * addresses (every frame but the innermost) are looked up at ip - 1, inside
 * the calling instruction.
 */
#include "ingero/fnv.h"
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
#include "ingero/python_layout.h"
#include "python.h"
#include "store.h"
#include "symbolize.h"
#include "tracer.h"

/* stacks already stored: a set of 64-bit ids (0 = empty slot) */
static uint64_t *known;
static size_t known_cap, known_n;

/* 1 when id was already in the set; adds it otherwise. */
static int known_add(uint64_t id)
{
	if (!known || (known_n + 1) * 2 > known_cap) {
		size_t cap = known_cap ? known_cap * 2 : 4096;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return 0;
		for (size_t i = 0; i < known_cap; i++) {
			if (!known[i])
				continue;
			size_t j = (size_t)(known[i] * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
			while (n[j])
				j = (j + 1) & (cap - 1);
			n[j] = known[i];
		}
		free(known);
		known = n;
		known_cap = cap;
	}
	for (size_t i = (size_t)(id * 0x9e3779b97f4a7c15ull >> 17) & (known_cap - 1);;
	     i = (i + 1) & (known_cap - 1)) {
		if (known[i] == id)
			return 1;
		if (!known[i]) {
			known[i] = id;
			known_n++;
			return 0;
		}
	}
}

/* on_block into sched.bpf.c's tail-call slot (block.bpf.h): the
 * session's block_stacks value. */
static const char *block_stacks_on(struct tracer *t, const char *refused)
{
	uint32_t zero = 0;
	int fd;

	if (!t->o.block_stacks)
		return "off: --no-block-stacks";
	if (!bpf_program__autoload(t->samples->progs.on_block))
		return refused ? refused : "off: no Python frames";
	fd = bpf_program__fd(t->samples->progs.on_block);
	if (bpf_map_update_elem(t->block_tail_fd, &zero, &fd, BPF_ANY))
		return "off: the kernel refused the tail call";
	return "on";
}

int samples_attach(struct tracer *t)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_freq = t->o.sample_hz,
		.freq = 1,
	};
	int err = 0, attached = 0;
	struct bpf_program *prog;
	/* with Python frames and block stacks; without block stacks if this
	 * kernel refuses them; without Python frames if it refuses the walk */
	static const struct { int python, block; } tries[] = { { 1, 1 }, { 1, 0 }, { 0, 0 } };
	const char *refused = NULL;
	size_t i;

	for (i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		int python = tries[i].python, block = tries[i].block;

		if (python > t->o.python_frames || block > t->o.block_stacks)
			continue;   /* not asked for */
		t->samples = samples_bpf__open();
		if (!t->samples)
			return -errno;
		bpf_program__set_autoload(python ? t->samples->progs.on_sample_native : t->samples->progs.on_sample,
					  false);
		bpf_program__set_autoload(t->samples->progs.on_block, block);
		if ((err = tracer_share_maps(t, t->samples->maps.traced, t->samples->maps.events,
					     t->samples->maps.drops)) ||
		    (err = bpf_map__reuse_fd(t->samples->maps.block_tail, t->block_tail_fd)) ||
		    (err = bpf_map__reuse_fd(t->samples->maps.block_at, t->block_at_fd)))
			return err;
		if (!(err = samples_bpf__load(t->samples)))
			break;
		samples_bpf__destroy(t->samples);
		t->samples = NULL;
		if (block)
			refused = "off: the kernel refused the program";
		else if (python)
			fprintf(stderr, "ingero-collector: on-CPU samples without Python frames: this kernel refuses "
					"the frame walk (%s)\n", strerror(-err));
	}
	if (!t->samples)
		return err ? err : -EINVAL;
	prog = bpf_program__autoload(t->samples->progs.on_sample) ? t->samples->progs.on_sample
								   : t->samples->progs.on_sample_native;
	store_session(t->store, "python_frames", prog == t->samples->progs.on_sample ? "on"
		      : t->o.python_frames ? "off: the kernel refused the frame walk" : "off: --no-python-frames");
	t->o.python_frames = prog == t->samples->progs.on_sample;
	store_session(t->store, "block_stacks", block_stacks_on(t, refused));
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
		t->perf_links[cpu] = bpf_program__attach_perf_event(prog, t->perf_fds[cpu]);
		if (!t->perf_links[cpu]) {
			close(t->perf_fds[cpu]);
			t->perf_fds[cpu] = -1;
			continue;
		}
		attached++;
	}
	t->sym = sym_new();
	if (t->sym)
		sym_preload_kernel(t->sym);
	t->py = pythons_new();
	return attached ? 0 : -ENODEV;
}

void samples_detach(struct tracer *t)
{
	uint32_t zero = 0;

	/* the switch hook stops calling into what goes away */
	if (t->samples && t->block_tail_fd >= 0)
		bpf_map_delete_elem(t->block_tail_fd, &zero);
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
	pythons_free(t->py);
	t->py = NULL;
	free(known);
	known = NULL;
	known_cap = known_n = 0;
}


/* The word at the user stack pointer is the caller of a frameless leaf when
 * it is a return address (follows a call) and the unwinder did not already
 * report it as the next frame. */
static uint64_t leaf_caller(struct tracer *t, const struct sample_event *e)
{
	uint64_t w = e->user_sp_word;

	if (!w || !e->n_user || w == e->user[0] || (e->n_user > 1 && w == e->user[1]))
		return 0;
	return sym_is_return_address(t->sym, e->pid, w) ? w : 0;
}

static void store_frames(struct tracer *t, uint64_t id, uint32_t pid, const uint64_t *uips, int nu,
			 const uint64_t *kips, int nk, const struct frame_row *py, int npy)
{
	struct frame_row f[2 * INGERO_STACK_DEPTH + 1 + INGERO_PY_DEPTH + 1];
	int n = 0;

	for (int i = 0; i < nk; i++, n++) {
		struct sym_result r;

		sym_kernel(t->sym, kips[i] - (i > 0), &r);
		f[n] = (struct frame_row){ .kind = "kernel", .depth = i, .ip = kips[i],
					   .symbol = r.symbol, .module = r.module,
					   .offset = r.offset + (i > 0), .line = -1 };
	}
	for (int i = 0; i < nu; i++, n++) {
		struct sym_result r;

		(i ? sym_user : sym_user_leaf)(t->sym, pid, uips[i] - (i > 0), &r);
		f[n] = (struct frame_row){ .kind = "native", .depth = i, .ip = uips[i],
					   .symbol = r.symbol, .module = r.module,
					   .offset = r.offset + (i > 0), .line = -1 };
	}
	for (int i = 0; i < npy; i++)
		f[n++] = py[i];
	store_stack(t->store, (int64_t)id, pid, f, n);
}

void samples_event(struct tracer *t, const void *data, size_t len)
{
	const struct sample_event *e = data;
	uint64_t uips[INGERO_STACK_DEPTH + 1], caller, h = INGERO_FNV_SEED;
	struct frame_row py[INGERO_PY_DEPTH + 1];
	int nu, nk, npy = 0;
	struct sample_row r;

	if (len < sizeof(*e) || !t->samples)
		return;
	if (t->o.python_frames)
		python_seen(t, e->pid);
	if (e->py_status == PY_READ_FAILED || e->py_status == PY_AMBIGUOUS)
		store_loss_add(t->store, "sample_python_frames", e->pid, 1);
	/* the garbage collector, running in this thread: an innermost Python
	 * frame of its own (docs/schema.md, stack_frames) */
	if (e->py_gc == 1)
		py[npy++] = (struct frame_row){ .kind = "python", .depth = 0, .ip = 0, .symbol = INGERO_PY_GC_FUNC,
						.file = INGERO_PY_GC_FILE, .line = -1 };
	if (e->n_py) {
		npy += python_rows(t, e->pid, e->py, e->n_py < INGERO_PY_DEPTH ? (int)e->n_py : INGERO_PY_DEPTH,
				   py + npy);
		for (int i = 0; i < npy; i++)
			py[i].depth = (uint32_t)i;
	}
	nu = e->n_user < INGERO_STACK_DEPTH ? (int)e->n_user : INGERO_STACK_DEPTH;
	nk = e->n_kernel < INGERO_STACK_DEPTH ? (int)e->n_kernel : INGERO_STACK_DEPTH;
	memcpy(uips, e->user, nu * sizeof(*uips));
	/* the leaf's caller goes right after the leaf */
	if ((caller = leaf_caller(t, e))) {
		memmove(&uips[2], &uips[1], (nu - 1) * sizeof(*uips));
		uips[1] = caller;
		nu++;
	}
	r = (struct sample_row){ .pid = e->pid, .tid = e->tid, .cpu = e->cpu, .ts_ns = e->ts_ns,
				 .blocked = e->kind == EV_BLOCK,
				 /* (0 would weigh infinitely: the least chance there is) */
				 .chance = (e->chance ? e->chance : 1) / 4294967296.0 };
	if (nu || nk || npy) {
		h = ingero_fnv(h, "bpf", 3);
		h = ingero_fnv(h, &e->pid, sizeof e->pid);
		h = ingero_fnv(h, uips, nu * sizeof(*uips));
		h = ingero_fnv(h, "|", 1);
		h = ingero_fnv(h, e->kernel, nk * sizeof(*e->kernel));
		for (int i = 0; i < npy; i++) {   /* named frames: one id per source line */
			h = ingero_fnv(h, "|", 1);
			h = ingero_fnv(h, py[i].file, strlen(py[i].file) + 1);
			h = ingero_fnv(h, py[i].symbol, strlen(py[i].symbol) + 1);
			h = ingero_fnv(h, &py[i].line, sizeof py[i].line);
		}
		if (!h)
			h = 1;
		if (!known_add(h))
			store_frames(t, h, e->pid, uips, nu, (const uint64_t *)e->kernel, nk, py, npy);
		r.stack_id = (int64_t)h;
	}
	store_sample(t->store, &r);
}

/* Process-tree hooks so addresses resolve in the right image. */
void samples_fork(struct tracer *t, uint32_t child, uint32_t parent)
{
	if (t->sym)
		sym_fork(t->sym, child, parent);
	python_fork(t, child, parent);
}

void samples_exec(struct tracer *t, uint32_t pid)
{
	if (t->sym)
		sym_exec(t->sym, pid);
	python_exec(t, pid);
}

void samples_exit(struct tracer *t, uint32_t pid)
{
	python_exit(t, pid);
}

void samples_enroll(struct tracer *t, uint32_t pid)
{
	if (t && t->sym)
		sym_load_pid(t->sym, pid);
}
