/*
 * sched.c — loads bpf/sched.bpf.c (which owns the shared maps) and turns its
 * records into off_cpu and cpu_busy rows; drains the in-kernel competitor
 * aggregate into the competitors table.
 *
 * Competitor buckets are drained once they are closed (older than the
 * current bucket by a whole bucket), read-then-delete; the final flush takes
 * everything and the open busy-time bucket of every CPU.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/sched.skel.h"
#include "../bpf/sched.h"
#include "session.h"
#include "store.h"
#include "tracer.h"

/* Opened and loaded, with the stop's flush of closed intervals or without */
static int sched_load(struct tracer *t, bool flush)
{
	t->sched = sched_bpf__open();
	if (!t->sched)
		return -errno;
	t->sched->rodata->bucket_ns = t->o.bucket_ns;
	bpf_program__set_autoload(t->sched->progs.flush_closed, flush);
	return sched_bpf__load(t->sched);
}

int sched_attach(struct tracer *t)
{
	int err;

	if ((err = sched_load(t, true))) {
		/* a kernel without task iterators, or without task storage in
		 * them: all but the final flush of closed intervals and faults
		 * (lost then: one interval per thread still on a CPU at the stop,
		 * and the faults each thread made since it last left one) */
		sched_bpf__destroy(t->sched);
		if ((err = sched_load(t, false)))
			return err;
	}
	if ((err = sched_bpf__attach(t->sched)))
		return err;
	t->traced_fd = bpf_map__fd(t->sched->maps.traced);
	t->events_fd = bpf_map__fd(t->sched->maps.events);
	t->drops_fd = bpf_map__fd(t->sched->maps.drops);
	t->block_tail_fd = bpf_map__fd(t->sched->maps.block_tail);
	t->block_at_fd = bpf_map__fd(t->sched->maps.block_at);
	return 0;
}

/* After an enrolment from user space: every task looks its traced flag up
 * again (the cache in sched.bpf.c's task storage). */
void sched_new_generation(struct tracer *t)
{
	__atomic_fetch_add(&t->sched->bss->traced_gen, 1, __ATOMIC_RELEASE);
}

/* Give another object the shared maps before it loads. */
int tracer_share_maps(struct tracer *t, struct bpf_map *traced, struct bpf_map *events,
		      struct bpf_map *drops)
{
	int err;

	if ((err = bpf_map__reuse_fd(traced, t->traced_fd)) ||
	    (err = bpf_map__reuse_fd(events, t->events_fd)) ||
	    (err = bpf_map__reuse_fd(drops, t->drops_fd)))
		return err;
	return 0;
}

void sched_event(struct tracer *t, const void *data, size_t len)
{
	const struct off_cpu_event *e = data;
	const struct cpu_busy_event *b = data;

	if (e->kind == EV_OFF_CPU && len >= sizeof(*e)) {
		struct off_cpu_row r = {
			.pid = e->pid, .tid = e->tid, .next_pid = e->next_pid, .cpu = e->cpu,
			.start_ns = e->start_ns, .runnable_ns = e->runnable_ns, .end_ns = e->end_ns,
			.preempted = e->preempted, .syscall = e->syscall,
			.syscall_known = e->syscall != OFF_NO_SYSCALL,
			.waker_tid = e->waker_tid, .waker_pid = e->waker_pid, .holder_pid = e->holder_pid,
			.holder_ns = e->holder_ns, .holder_tid = e->holder_tid,
		};
		store_off_cpu(t->store, &r);
	} else if (b->kind == EV_CPU_BUSY && len >= sizeof(*b) && t->o.bucket_ns) {
		uint64_t n = 0;

		for (uint64_t at = b->first_bucket; at <= b->last_bucket && n < 100000;
		     at += t->o.bucket_ns, n++)
			store_cpu_busy(t->store, b->cpu, at, b->busy_ns);
	}
}

static void drain_competitors(struct tracer *t, int final)
{
	int fd = bpf_map__fd(t->sched->maps.competitors);
	uint64_t now = mono_now_ns(), horizon = now - now % t->o.bucket_ns - t->o.bucket_ns;
	struct comp_key key, next, *prev = NULL;
	struct comp_key done[1024];
	size_t ndone = 0;
	struct comp_val v;

	/* collect closed keys first: deleting while iterating restarts the walk */
	while (ndone < sizeof done / sizeof done[0] && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!final && key.bucket >= horizon)
			continue;
		done[ndone++] = key;
	}
	for (size_t i = 0; i < ndone; i++) {
		if (bpf_map_lookup_elem(fd, &done[i], &v))
			continue;
		bpf_map_delete_elem(fd, &done[i]);
		v.comm[sizeof v.comm - 1] = 0;
		store_competitor(t->store, done[i].pid, v.comm, done[i].bucket, v.cpu_ns, v.preemptions, v.held_ns);
	}
	if (ndone == sizeof done / sizeof done[0])
		drain_competitors(t, final);
}

/* The open bucket of each CPU, and the run in progress on it. */
static void flush_cpu_state(struct tracer *t)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->sched->maps.cpu_state);
	uint32_t zero = 0;
	uint64_t now = mono_now_ns();
	struct cpu_acct *v;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return;
	if (bpf_map_lookup_elem(fd, &zero, v) == 0) {
		for (int c = 0; c < ncpu; c++) {
			uint64_t busy = v[c].busy, b = v[c].bucket;

			if (!v[c].last_ts)
				continue;
			if (v[c].running && now > v[c].last_ts) {
				/* count the running stretch up to now, bucket by bucket */
				uint64_t from = v[c].last_ts;

				while (now > b + t->o.bucket_ns) {
					store_cpu_busy(t->store, c, b, busy + (b + t->o.bucket_ns - from));
					b += t->o.bucket_ns;
					from = b;
					busy = 0;
				}
				busy += now - from;
			}
			if (busy)
				store_cpu_busy(t->store, c, b, busy);
		}
	}
	free(v);
}

/* The intervals closed (their thread came back on a CPU) but not sent yet,
 * as their thread has not left it since, those still open (a thread off a
 * CPU at the stop: cut there, session.sched_end_mono_ns), and the faults
 * made since: sched_switch detached first, so none can be closed or sent
 * meanwhile, then the task iterator sends them.  (A detach does not wait for a run
 * already going on another CPU: the pause lets it end, so that the
 * iterator cannot send what it sends.) */
static void flush_closed(struct tracer *t)
{
	struct bpf_link *it = t->sched->links.flush_closed;
	char buf[64];
	int fd;

	bpf_link__destroy(t->sched->links.on_switch);
	t->sched->links.on_switch = NULL;
	/* the scheduler evidence ends here: intervals still open are cut at it */
	uint64_t stop = mono_now_ns();
	t->sched->bss->stop_ns = stop;
	session_set_u64(t->store, "sched_end_mono_ns", stop);
	nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (!it || (fd = bpf_iter_create(bpf_link__fd(it))) < 0)
		return;
	while (read(fd, buf, sizeof buf) > 0)
		;
	close(fd);
}

void sched_flush(struct tracer *t, int final)
{
	if (!t->sched)
		return;
	drain_competitors(t, final);
	if (final)
		flush_cpu_state(t);
}

void sched_flush_closed(struct tracer *t)
{
	if (t->sched)
		flush_closed(t);
}

void sched_detach(struct tracer *t)
{
	sched_bpf__destroy(t->sched);
	t->sched = NULL;
}
