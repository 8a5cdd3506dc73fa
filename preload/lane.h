/*
 * lane.h — a thread's own queue of CALL records, in the memory a process
 * shares with its forked children (shm.h), drained by the owner's sender.
 *
 * Why not only the shared ring: there every call claims its slot with a
 * locked compare-and-swap on a line all producers and the sender share,
 * and publishes it with another; in PyTorch on the H200 that put was ~200
 * ns of a recorded call's ~380 (docs/gpu-runs.md section 9).  A lane has one
 * producer, so a record goes in with plain stores: the entry, then the
 * tail (a release store, a plain move on x86).  The producer keeps its tail
 * and a copy of the sender's head in its TLS, so it reads no shared line
 * unless the copy says the lane is full.  A call without bytes, direction
 * or stack (every launch but the sampled ones) is one 64-byte unit; others
 * take two.
 *
 * Ownership: a thread claims a free lane at its first recorded call
 * (compare-and-swap of the owner word from 0 to pid:tid) and keeps it; the
 * sender frees it once the thread is gone and the lane is drained.  A thread
 * without a lane (all taken), or whose lane is full, puts into the shared
 * ring instead: nothing is dropped that the ring would have kept.
 *
 * Order: a call in a lane may name a stack or kernel that another thread
 * defined in the ring just before; the sender takes a lane's records only up
 * to where its tail stood before it read the ring's tail, and only once the
 * ring is drained to there (sender.c), so a definition is always seen first.
 */
#ifndef INGERO_PRELOAD_LANE_H
#define INGERO_PRELOAD_LANE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ingero/event.h"

#define INGERO_LANE_UNIT  64
#define INGERO_LANE_UNITS 2048u   /* 128 KiB: ~95 ms of a launch-bound PyTorch loop */
#define INGERO_LANES_MAX  256

enum ingero_lane_tag {
	INGERO_LANE_SHORT = 1,   /* struct ingero_lane_short, one unit */
	INGERO_LANE_FULL = 2,    /* struct ingero_lane_full, two units */
	INGERO_LANE_PAD = 3,     /* the lane's last unit, skipped: a FULL entry did not fit */
	INGERO_LANE_TSC = 0x80,  /* or-ed into the tag: start and dur are TSC ticks */
};

/* A call with no bytes, direction or stack; pid and tid are the lane's owner's. */
struct ingero_lane_short {
	uint8_t tag;
	uint8_t flags;
	uint16_t api;
	int32_t ret;
	uint64_t start, dur;
	uint64_t stream, kernel;
	uint32_t grid[3], block[3];
};

struct ingero_lane_full {
	uint8_t tag;
	uint8_t pad[7];
	struct ingero_cuda_call ev;
};

struct ingero_lane {
	/* the producer's line */
	_Atomic uint64_t owner;   /* pid << 32 | tid; 0: free */
	_Atomic uint64_t tail;    /* units published */
	char pad0[48];
	/* the sender's line */
	_Atomic uint64_t head;    /* units taken */
	char pad1[56];
	unsigned char units[INGERO_LANE_UNITS][INGERO_LANE_UNIT];
};

_Static_assert(sizeof(struct ingero_lane_short) == INGERO_LANE_UNIT, "a short call is one unit");
_Static_assert(sizeof(struct ingero_lane_full) <= 2 * INGERO_LANE_UNIT, "a full call is two units");

/* The producer's side, in its thread's TLS (record.h). */
struct ingero_lane_writer {
	struct ingero_lane *lane;   /* NULL: none claimed (yet) */
	uint64_t tail;              /* the lane's tail, our copy */
	uint64_t head;              /* the sender's head as last read */
};

static inline uint64_t ingero_lane_owner(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* Claims a free lane of the n at lanes for owner: the writer is set up and
 * the lane's pages faulted in (a fault in the program's later calls cost
 * ~10 us each on the H200's VM).  False when all are taken. */
bool ingero_lane_claim(struct ingero_lane *lanes, uint32_t n, uint64_t owner, struct ingero_lane_writer *w);

/* Room for units more from the tail, reading the sender's head only when
 * the copy says the lane is full. */
static inline bool ingero_lane_room(struct ingero_lane_writer *w, uint64_t units)
{
	if (__builtin_expect(w->tail + units - w->head <= INGERO_LANE_UNITS, 1))
		return true;
	w->head = atomic_load_explicit(&w->lane->head, memory_order_acquire);
	return w->tail + units - w->head <= INGERO_LANE_UNITS;
}

/* Puts one short unit, room for it known: the unit, then the tail. */
static inline __attribute__((always_inline)) void ingero_lane_put_unit(struct ingero_lane_writer *w,
								       const struct ingero_lane_short *u)
{
	uint64_t t = w->tail;
	__builtin_memcpy(w->lane->units[t & (INGERO_LANE_UNITS - 1)], u, sizeof *u);
	atomic_store_explicit(&w->lane->tail, t + 1, memory_order_release);
	w->tail = t + 1;
}

/* The call a short unit holds, made by pid:tid (the lane's owner). */
static inline struct ingero_cuda_call ingero_lane_short_call(const struct ingero_lane_short *s, uint32_t pid,
							     uint32_t tid)
{
	return (struct ingero_cuda_call){
		.api = s->api, .flags = s->flags, .ret = s->ret, .pid = pid, .tid = tid,
		.start_ns = s->start, .dur_ns = s->dur, .stream = s->stream, .kernel = s->kernel,
		.grid = { s->grid[0], s->grid[1], s->grid[2] },
		.block = { s->block[0], s->block[1], s->block[2] },
	};
}

/* Puts one finished call (pid, tid: the owner's when short); false when the
 * lane is full (nothing written).  Inline: the per-call path is plain stores. */
static inline __attribute__((always_inline)) bool ingero_lane_put(struct ingero_lane_writer *w, const struct ingero_cuda_call *ev, bool tsc)
{
	struct ingero_lane *l = w->lane;
	uint8_t tsc_bit = tsc ? INGERO_LANE_TSC : 0;
	uint64_t t = w->tail;
	if (__builtin_expect(ev->stack_id == 0 && ev->bytes == 0 && ev->dir == 0, 1)) {
		if (__builtin_expect(!ingero_lane_room(w, 1), 0))
			return false;
		ingero_lane_put_unit(w, &(struct ingero_lane_short){
			.tag = INGERO_LANE_SHORT | tsc_bit, .flags = ev->flags, .api = ev->api, .ret = ev->ret,
			.start = ev->start_ns, .dur = ev->dur_ns, .stream = ev->stream, .kernel = ev->kernel,
			.grid = { ev->grid[0], ev->grid[1], ev->grid[2] },
			.block = { ev->block[0], ev->block[1], ev->block[2] },
		});
		return true;
	}
	/* two units, never split over the lane's end */
	uint64_t pad = (t & (INGERO_LANE_UNITS - 1)) == INGERO_LANE_UNITS - 1;
	if (!ingero_lane_room(w, pad + 2))
		return false;
	if (pad)
		l->units[t++ & (INGERO_LANE_UNITS - 1)][0] = INGERO_LANE_PAD;
	struct ingero_lane_full *f = (struct ingero_lane_full *)l->units[t & (INGERO_LANE_UNITS - 1)];
	f->tag = INGERO_LANE_FULL | tsc_bit;
	__builtin_memcpy(&f->ev, ev, sizeof *ev);
	t += 2;
	atomic_store_explicit(&l->tail, t, memory_order_release);
	w->tail = t;
	return true;
}

/* Units put but not yet taken, by the writer's last look at the head. */
static inline uint64_t ingero_lane_writer_used(const struct ingero_lane_writer *w)
{
	return w->tail - w->head;
}

/* --- the sender's side ------------------------------------------------------------------ */

/* One call taken from a lane: pid and tid filled in, tsc says the clock. */
typedef void (*ingero_lane_fn)(struct ingero_cuda_call *ev, bool tsc, void *arg);

/* Takes the lane's entries up to position upto (a tail read earlier), at
 * most max calls, each given to fn; returns how many.  An entry whose tag is
 * unknown (the memory was scribbled on: it is the program's) ends the take:
 * the lane is emptied to upto and *bad counts it. */
uint32_t ingero_lane_take(struct ingero_lane *l, uint64_t upto, uint32_t max, ingero_lane_fn fn, void *arg,
			  uint64_t *bad);

/* Frees each lane whose thread is gone and whose calls were all taken (the
 * sender, now and then: a thread does not say when it ends); how many. */
uint32_t ingero_lanes_free_gone(struct ingero_lane *lanes, uint32_t n);

#endif
