/*
 * tracer.c — BPF lifecycle and the ring-buffer consumer.
 *
 * sched.bpf.o is loaded first and owns the shared maps (traced, events,
 * drops); every other object reuses their fds before load.  If any part
 * fails to load or attach, the whole tracer is closed and the collector
 * runs CUDA-only, saying why.  The ring callback dispatches on the record's
 * kind; after each full drain the process tree's epoch advances (see
 * proc_tree_barrier).  Drop counters are summed over CPUs and stored as
 * losses "bpf_ringbuf_<slot>".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ingero/schema.h"
#include "../bpf/traced.h"
#include "proc_tree.h"
#include "session.h"
#include "store.h"
#include "symbolize.h"
#include "tracer.h"

static const char *const drop_names[DROP_NSLOTS] = {
	[DROP_SCHED_SWITCH] = "sched_switch",
	[DROP_CPU_BUSY] = "cpu_busy",
	[DROP_FORK] = "fork",
	[DROP_EXEC] = "exec",
	[DROP_EXIT] = "exit",
	[DROP_THREAD] = "thread",
	[DROP_SAMPLE] = "sample",
	[DROP_START_MAP] = "start_map",
	[DROP_MEM_MAP] = "mem_map",
	[DROP_COMP_MAP] = "competitor_map",
	[DROP_TRACED_MAP] = "traced_map",
	[DROP_BLOCK] = "block_stack",
	[DROP_UNCLOSED] = "unclosed",
};

uint64_t mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("INGERO_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;
	uint32_t kind;

	if (len < sizeof(kind))
		return 0;
	memcpy(&kind, data, sizeof(kind));
	t->events++;
	switch (kind) {
	case EV_OFF_CPU:
	case EV_CPU_BUSY:
		sched_event(t, data, len);
		break;
	case EV_FORK:
	case EV_EXEC:
	case EV_EXIT:
	case EV_THREAD:
		procs_event(t, data, len);
		break;
	case EV_SAMPLE:
	case EV_BLOCK:
		samples_event(t, data, len);
		break;
	}
	return 0;
}

struct tracer *tracer_open(struct store *st, const struct tracer_opts *o, char *why, size_t whylen)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	t->store = st;
	t->o = *o;
	t->traced_fd = t->events_fd = t->drops_fd = t->stats_fd = -1;
	t->block_tail_fd = t->block_at_fd = -1;
	libbpf_set_print(libbpf_quiet);
	if (geteuid() != 0) {
		snprintf(why, whylen, "not running as root");
		free(t);
		return NULL;
	}
	bpf_cost_enable(t);
	if ((err = sched_attach(t))) {
		snprintf(why, whylen, "cannot load the scheduler BPF programs (%s)", strerror(-err));
		goto fail;
	}
	if ((err = procs_attach(t))) {
		snprintf(why, whylen, "cannot load the process-tree BPF programs (%s)", strerror(-err));
		goto fail;
	}
	if ((err = mem_attach(t))) {
		snprintf(why, whylen, "cannot load the memory BPF programs (%s)", strerror(-err));
		goto fail;
	}
	if (!t->o.sample_hz)
		store_session(st, "block_stacks", "off: no sampler (--sample-hz=0)");
	if (t->o.sample_hz && (err = samples_attach(t))) {
		snprintf(why, whylen, "cannot attach the on-CPU sampler (%s)", strerror(-err));
		goto fail;
	}
	t->rb = ring_buffer__new(t->events_fd, on_record, t, NULL);
	if (!t->rb) {
		snprintf(why, whylen, "cannot open the BPF ring buffer (%s)", strerror(errno));
		goto fail;
	}
	proc_tree_enable_epochs();
	return t;
fail:
	tracer_close(t);
	return NULL;
}

int tracer_enroll(struct tracer *t, uint32_t pid)
{
	uint32_t one = INGERO_TRACED_ON;

	if (!t)
		return 0;
	/* one already followed keeps its flags (a worker forked while its
	 * parent's capture was paused stays paused when it says HELLO) */
	if (bpf_map_update_elem(t->traced_fd, &pid, &one, BPF_NOEXIST) && errno != EEXIST)
		return -errno;
	/* after the map: a task that looks again must find the pid there */
	sched_new_generation(t);
	return 0;
}

/* Each split's name and what its held windows keep paused. */
static const struct {
	const char *name;
	uint32_t held;
} splits[] = {
	[TRACER_SPLIT_ALL] = { "all", INGERO_TRACED_PAUSED },
	[TRACER_SPLIT_SAMPLES] = { "samples", INGERO_TRACED_NO_SAMPLES },
	[TRACER_SPLIT_SCHED] = { "sched", INGERO_TRACED_NO_SCHED },
	[TRACER_SPLIT_MEM] = { "mem", INGERO_TRACED_NO_MEM },
};
#define NSPLITS (sizeof splits / sizeof splits[0])

int tracer_split_parse(const char *name)
{
	if (!name || !*name)
		return TRACER_SPLIT_NONE;
	for (size_t i = 1; i < NSPLITS; i++)
		if (strcmp(name, splits[i].name) == 0)
			return (int)i;
	return -1;
}

const char *tracer_split_name(enum tracer_split s)
{
	return splits[s].name;
}

const char *tracer_split_choices(void)
{
	static char list[64];

	if (!list[0])
		for (size_t i = 1; i < NSPLITS; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i > 1 ? ", " : "",
				 splits[i].name);
	return list;
}

/* What a window that begins now keeps paused while the library records:
 * the second, fourth, ... under INGERO_SPLIT_BPF, nothing otherwise. */
static uint32_t split_held(struct tracer *t, int recording)
{
	uint32_t held = 0;

	if (t->o.split == TRACER_SPLIT_NONE)
		return 0;
	if (recording) {
		if (!t->split_recording)
			t->split_windows++;
		if (t->split_windows % 2 == 0)
			held = splits[t->o.split].held;
	}
	t->split_recording = recording;
	return held;
}

int tracer_capture(struct tracer *t, uint32_t pid, int recording)
{
	uint32_t key, next, *prev = NULL, v;
	int changed = 0;

	if (!t)
		return 0;
	uint32_t held = split_held(t, recording);
	/* the process and its followed descendants (a DataLoader's workers):
	 * one capture for the program's whole tree */
	while (bpf_map_get_next_key(t->traced_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!proc_tree_is_descendant(key, pid) || bpf_map_lookup_elem(t->traced_fd, &key, &v))
			continue;
		uint32_t want = recording ? (v & ~(INGERO_TRACED_PAUSED | INGERO_TRACED_HELD)) | held
					  : v | INGERO_TRACED_PAUSED;
		if (want != v && bpf_map_update_elem(t->traced_fd, &key, &want, BPF_EXIST) == 0)
			changed = 1;
	}
	if (changed) {   /* after the map: tasks look their flag up again */
		sched_new_generation(t);
		bpf_cost_mode(t, recording && !(held & INGERO_TRACED_PAUSED));
	}
	return 0;
}

int tracer_poll(struct tracer *t, int timeout_ms)
{
	/* records are submitted without wake-ups (traced.bpf.h): the poll mostly
	 * times out, and consume() takes what accumulated */
	int n = ring_buffer__poll(t->rb, timeout_ms);

	if (n >= 0)
		n += ring_buffer__consume(t->rb);

	proc_tree_epoch_advance();
	return n;
}

static void flush_drops(struct tracer *t)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0 || t->drops_fd < 0)
		return;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return;
	for (uint32_t slot = 0; slot < DROP_NSLOTS; slot++) {
		uint64_t sum = 0;
		char name[64];

		if (bpf_map_lookup_elem(t->drops_fd, &slot, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		snprintf(name, sizeof name, INGERO_LOSS_RINGBUF_PREFIX "%s", drop_names[slot]);
		store_loss_max(t->store, name, 0, sum);
		if (!sum)
			store_loss_add(t->store, name, 0, 0);
	}
	free(v);
}

void tracer_flush(struct tracer *t, int final)
{
	if (!t)
		return;
	if (final) {
		sched_flush_closed(t);
		ring_buffer__consume(t->rb);
	}
	sched_flush(t, final);
	mem_flush(t, final);
	flush_drops(t);
	if (final) {
		bpf_cost_store(t);
		if (t->sym)
			session_set_u64(t->store, "maps_reads", sym_maps_reads(t->sym));
	}
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	samples_detach(t);
	mem_detach(t);
	procs_detach(t);
	sched_detach(t);
	bpf_cost_disable(t);
	free(t);
}
