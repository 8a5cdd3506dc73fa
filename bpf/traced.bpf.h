/*
 * traced.bpf.h — the maps every BPF object shares, and their helpers.
 *
 * Each object declares the same three maps; the collector loads sched.bpf.c
 * first and hands its map fds to the others (bpf_map__reuse_fd), so there is
 * one set in the kernel:
 *   traced  tgid → enrolment flags: the processes we follow.  Filled by the
 *           collector (-p, -- CMD, HELLO) and by proc.bpf.c at fork.
 *   events  the one ring buffer every record goes through (traced.h).
 *   drops   per-CPU counters of records lost, by slot (enum ingero_drop_slot).
 * bucket_ns is the width of the aggregation buckets (cpu_busy, page_allocs,
 * competitors), set before load.
 */
#ifndef INGERO_TRACED_BPF_H
#define INGERO_TRACED_BPF_H

#include "traced.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INGERO_TRACED_MAX);
	__type(key, u32);
	__type(value, u32);
} traced SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_NSLOTS);
	__type(key, u32);
	__type(value, u64);
} drops SEC(".maps");

const volatile __u64 bucket_ns = 100000000ull;

/* Followed: forks, execs, exits, threads. */
static __always_inline bool is_traced(u32 tgid)
{
	return tgid && bpf_map_lookup_elem(&traced, &tgid) != NULL;
}

/* tgid's `traced` value; 0 when not followed. */
static __always_inline u32 traced_flags(u32 tgid)
{
	u32 *v = tgid ? bpf_map_lookup_elem(&traced, &tgid) : NULL;

	return v ? *v : 0;
}

/* Followed and not paused: its evidence of this part (INGERO_TRACED_NO_…,
 * held in a benchmark's windows) is recorded. */
static __always_inline bool flags_record(u32 flags, u32 part)
{
	return flags && !(flags & (INGERO_TRACED_PAUSED | part));
}

static __always_inline bool is_recorded(u32 tgid, u32 part)
{
	return flags_record(traced_flags(tgid), part);
}

static __always_inline void count_drop(u32 slot)
{
	u64 *n = bpf_map_lookup_elem(&drops, &slot);

	if (n)
		*n += 1;   /* per-CPU slot: no atomics needed */
}

/* Reserve a ring record of the given kind, counting a failure in `slot`. */
static __always_inline void *reserve(u64 size, u32 kind, u32 slot)
{
	u32 *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec) {
		count_drop(slot);
		return NULL;
	}
	*rec = kind;
	return rec;
}

/* Submit without waking the collector: it polls every few tens of ms, and a
 * wake-up per record would make it preempt the very threads we trace.
 * Only a ring filling up (over 1/4) wakes it early. */
static __always_inline void submit(void *rec)
{
	u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	bpf_ringbuf_submit(rec, avail > (4 << 20) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* One of the tracer's own threads in a traced process: the preload's
 * (named "ingero-…": its sender, its GPU watcher) and nng's ("nng:…",
 * which only the preload's sender uses there).  Their scheduling and
 * samples are the tracer's, not the program's: in the real traces they
 * were most of the off-CPU records (the watcher alone ~1,000 a second).
 * Read from the name each time, not cached: a thread names itself after
 * its first switch.  (A program of its own using nng loses its nng
 * threads' evidence too.) */
static __always_inline bool is_tracer_thread(const struct task_struct *t)
{
	const char *c = t->comm;

	if (c[0] == 'i')
		return c[1] == 'n' && c[2] == 'g' && c[3] == 'e' && c[4] == 'r' && c[5] == 'o' && c[6] == '-';
	return c[0] == 'n' && c[1] == 'n' && c[2] == 'g' && c[3] == ':';
}

static __always_inline u64 bucket_of(u64 ts)
{
	return ts - ts % bucket_ns;
}

#endif
