/*
 * lane.c — claiming a lane, and the sender's take (see lane.h).
 */
#include "lane.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

bool ingero_lane_claim(struct ingero_lane *lanes, uint32_t n, uint64_t owner, struct ingero_lane_writer *w)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ingero_lane *l = &lanes[i];
		uint64_t free_ = 0;
		if (atomic_load_explicit(&l->owner, memory_order_relaxed) != 0 ||
		    !atomic_compare_exchange_strong_explicit(&l->owner, &free_, owner, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		/* A freed lane is empty (the sender frees it drained): the
		 * positions go on from where its last owner stopped. */
		w->tail = atomic_load_explicit(&l->tail, memory_order_relaxed);
		w->head = atomic_load_explicit(&l->head, memory_order_acquire);
		/* Each page written once now rather than faulted in by a later
		 * call; an add of 0, so a sender reading it sees no change. */
		for (uint32_t u = 0; u < INGERO_LANE_UNITS; u += 4096 / INGERO_LANE_UNIT)
			atomic_fetch_add_explicit((_Atomic uint64_t *)(void *)l->units[u], 0, memory_order_relaxed);
		w->lane = l;
		return true;
	}
	return false;
}

uint32_t ingero_lane_take(struct ingero_lane *l, uint64_t upto, uint32_t max, ingero_lane_fn fn, void *arg,
			  uint64_t *bad)
{
	uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
	uint64_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
	uint32_t pid = (uint32_t)(owner >> 32), tid = (uint32_t)owner;
	uint32_t calls = 0;
	if (upto - h > INGERO_LANE_UNITS) {   /* a tail no producer wrote */
		(*bad)++;
		atomic_store_explicit(&l->head, upto, memory_order_release);
		return 0;
	}
	while (h != upto && calls < max) {   /* (not h < upto: positions from scribbled memory may wrap) */
		const unsigned char *u = l->units[h & (INGERO_LANE_UNITS - 1)];
		uint8_t tag = u[0];
		bool tsc = tag & INGERO_LANE_TSC;
		struct ingero_cuda_call ev;
		switch (tag & ~INGERO_LANE_TSC) {
		case INGERO_LANE_SHORT: {
			struct ingero_lane_short s;
			memcpy(&s, u, sizeof s);
			ev = ingero_lane_short_call(&s, pid, tid);
			h += 1;
			break;
		}
		case INGERO_LANE_FULL:
			if (upto - h < 2 || (h & (INGERO_LANE_UNITS - 1)) == INGERO_LANE_UNITS - 1)
				goto scribbled;
			memcpy(&ev, u + offsetof(struct ingero_lane_full, ev), sizeof ev);
			ev.pid = pid;   /* the writer's own, unless the memory was scribbled */
			ev.tid = tid;
			h += 2;
			break;
		case INGERO_LANE_PAD:
			atomic_store_explicit(&l->head, ++h, memory_order_release);
			continue;
		default:
			goto scribbled;
		}
		/* given back before fn runs: fn may send, which can wait */
		atomic_store_explicit(&l->head, h, memory_order_release);
		fn(&ev, tsc, arg);
		calls++;
	}
	return calls;
scribbled:
	(*bad)++;
	atomic_store_explicit(&l->head, upto, memory_order_release);
	return calls;
}

uint32_t ingero_lanes_free_gone(struct ingero_lane *lanes, uint32_t n)
{
	uint32_t freed = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct ingero_lane *l = &lanes[i];
		uint64_t owner = atomic_load_explicit(&l->owner, memory_order_acquire);
		if (!owner)
			continue;
		/* gone first, then drained: a gone thread's tail moves no more */
		if (syscall(SYS_tgkill, (pid_t)(owner >> 32), (pid_t)(uint32_t)owner, 0) == 0 || errno != ESRCH)
			continue;
		if (atomic_load_explicit(&l->tail, memory_order_acquire) !=
		    atomic_load_explicit(&l->head, memory_order_relaxed))
			continue;
		freed += atomic_compare_exchange_strong_explicit(&l->owner, &owner, 0, memory_order_release,
								 memory_order_relaxed);
	}
	return freed;
}
