/*
 * gpu_fresh.c — kernels new to the process, timed first.  The calling
 * threads' marks (gpu_marks.c) are rationed to one per INGERO_GPU_MARK_US,
 * and a mark times a kernel alone only when the launch before it on the
 * stream was marked too; so a kernel that runs a few times after a
 * recompilation is almost never timed, and the analyzer (gpu_estimate.c)
 * cannot stand it in for its untimed launches: it needs three times of
 * alike work.  So each kernel named for the first time (kernel.c) is put
 * on a short list, owed INGERO_GPU_FRESH_TIMES launches timed alone, and
 * for INGERO_GPU_FRESH_MS after the latest new kernel every launch on a
 * stream the GPU keeps up with is marked, outside the ration, until the
 * list is paid.  A listed kernel that is not paid within the window (run
 * too few times, or only where the GPU lags) is forgotten with it.  What
 * that costs is bounded by the window (a launch-bound loop pays ~1.2 us a
 * launch for 250 ms: ~5 ms per burst of new kernels); in a steady state
 * nothing is listed and a launch reads one counter.
 */
#include "gpu_marks.h"

#include <stddef.h>

#include "clock.h"

#define FRESH_SLOTS 256   /* a power of two */
#define FRESH_PROBE 8

struct fresh_slot {
	_Atomic uint64_t key;    /* kernel handle; 0 = never used */
	_Atomic uint64_t added;  /* ticks when listed */
	_Atomic int32_t owed;    /* launches timed alone still owed */
};

static struct fresh_slot fresh[FRESH_SLOTS];

static unsigned slot0(uint64_t k)
{
	return (unsigned)((k >> 4) ^ (k >> 13) ^ (k >> 22)) & (FRESH_SLOTS - 1);
}

/* Owes marks, and was listed inside the window: a kernel launched too few
 * times (or only where the GPU lags) does not hold its slot for ever. */
static bool live(struct fresh_slot *s, int32_t owed, uint64_t now)
{
	return owed > 0 && now - atomic_load_explicit(&s->added, memory_order_relaxed) < ingero_gpu.fresh_ticks;
}

void ingero_gpu_fresh_add(uint64_t kernel)
{
	if (!kernel)
		return;
	uint64_t now = ingero_ticks();
	/* a new window: what the last one left unpaid is forgotten */
	if (now - atomic_load_explicit(&ingero_gpu.fresh_at, memory_order_relaxed) >= ingero_gpu.fresh_ticks)
		atomic_store_explicit(&ingero_hot.gpu_fresh_n, 0, memory_order_relaxed);
	unsigned h = slot0(kernel);
	for (unsigned i = 0; i < FRESH_PROBE; i++) {
		struct fresh_slot *s = &fresh[(h + i) & (FRESH_SLOTS - 1)];
		int32_t owed = atomic_load_explicit(&s->owed, memory_order_acquire);
		if (live(s, owed, now))
			continue;
		/* a free slot: claim it (a large negative debt while it is filled) */
		if (!atomic_compare_exchange_strong_explicit(&s->owed, &owed, -1000, memory_order_acq_rel,
							     memory_order_relaxed))
			continue;
		atomic_store_explicit(&s->key, kernel, memory_order_relaxed);
		atomic_store_explicit(&s->added, now, memory_order_relaxed);
		atomic_store_explicit(&s->owed, INGERO_GPU_FRESH_TIMES, memory_order_release);
		atomic_fetch_add_explicit(&ingero_hot.gpu_fresh_n, 1, memory_order_relaxed);
		break;
	}
	/* (no room: this kernel is timed only as the window's launches are) */
	atomic_store_explicit(&ingero_gpu.fresh_at, now, memory_order_relaxed);
}

void *ingero_gpu_fresh_find(uint64_t kernel, uint64_t now)
{
	if (!kernel)
		return NULL;
	unsigned h = slot0(kernel);
	for (unsigned i = 0; i < FRESH_PROBE; i++) {
		struct fresh_slot *s = &fresh[(h + i) & (FRESH_SLOTS - 1)];
		if (live(s, atomic_load_explicit(&s->owed, memory_order_acquire), now) &&
		    atomic_load_explicit(&s->key, memory_order_relaxed) == kernel)
			return s;
	}
	return NULL;
}

void ingero_gpu_fresh_paid(void *slot)
{
	struct fresh_slot *s = slot;
	/* the last mark owed frees the slot (two threads may both pay it: the
	 * one that takes it to 0 counts it off the list; a slot taken over by
	 * another kernel meanwhile owes that one a mark less: harmless) */
	if (atomic_fetch_sub_explicit(&s->owed, 1, memory_order_acq_rel) == 1 &&
	    atomic_load_explicit(&ingero_hot.gpu_fresh_n, memory_order_relaxed))
		atomic_fetch_sub_explicit(&ingero_hot.gpu_fresh_n, 1, memory_order_relaxed);
}
