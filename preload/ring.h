/*
 * ring.h — a bounded multi-producer, single-consumer ring of fixed 128-byte
 * slots that lives in memory shared by a process and its forked children.
 *
 * Producers (any thread of any process that shares the mapping) claim one or
 * more consecutive positions with a CAS on `tail`, copy their record in and
 * publish each slot by moving its stamp.  The one consumer (the sender
 * thread of the ring's owner) takes records in position order.  There are no
 * locks: a producer killed or stopped between claim and publish leaves a
 * hole that the consumer skips after a timeout (see ring.c for the stamps).
 *
 * A record is any byte string up to INGERO_RING_MAX_REC bytes; one that does
 * not fit one slot spans consecutive slots and comes back whole.
 */
#ifndef INGERO_PRELOAD_RING_H
#define INGERO_PRELOAD_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prefetch.h"

#define INGERO_SLOT_BYTES   128
#define INGERO_SLOT_DATA    (INGERO_SLOT_BYTES - 16)
#define INGERO_RING_MAX_REC (64 * INGERO_SLOT_DATA)

struct ingero_slot {
	_Atomic uint64_t stamp;   /* lap base = free, lap base + 1 = published */
	uint32_t len;             /* whole record length, in its first slot */
	uint32_t reserved;
	uint8_t data[INGERO_SLOT_DATA];
};

/* Two cache lines: the producers' (where to claim, and the ring's shape:
 * one line per put, not two) and the consumer's (with its own copy of the
 * shape, so that it never reads the line the producers write). */
struct ingero_ring {
	_Atomic uint64_t tail;              /* next position to claim (producers) */
	uint64_t cap;                       /* slots, a power of two */
	uint64_t mask;
	char pad0[40];
	_Atomic uint64_t head;              /* next position to take (consumer) */
	uint64_t hole_pos;                  /* consumer only: position seen unpublished */
	uint64_t hole_since_ns;             /* ... and since when */
	uint64_t ccap, cmask;               /* cap and mask, the consumer's copy */
	char pad1[24];
	struct ingero_slot slots[];
};

enum {
	INGERO_RING_OK = 0,
	INGERO_RING_FULL = -1,     /* no room: the record was not written */
	INGERO_RING_LOST = -2,     /* written too late: the consumer had skipped it */
	INGERO_RING_TOOBIG = -3,
};

/* Bytes a ring of cap slots needs (cap a power of two ≥ 2). */
size_t ingero_ring_bytes(uint64_t cap);
/* Sets up a ring in zeroed memory of ingero_ring_bytes(cap) bytes.  Zeroed
 * memory is already a valid empty ring, so untouched pages stay untouched. */
void ingero_ring_init(struct ingero_ring *r, uint64_t cap);

/* Producer: copies rec into the ring.  Never blocks, never waits. */
int ingero_ring_put(struct ingero_ring *r, const void *rec, uint32_t len);

/* Producer, in steps, for a caller that writes its record straight into
 * the slots (the per-call path: no copy through its own frame, no libc
 * memcpy): claim n consecutive slots, fill each one's data (and len,
 * reserved: see ingero_ring_put), publish.  Inline, so that with n a
 * constant the claim folds to a few instructions (`make bench-lines`). */
/* Claims positions *pos..*pos+n-1; false if the ring is full. */
static inline bool ingero_ring_claim(struct ingero_ring *r, uint32_t n, uint64_t *pos)
{
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	for (;;) {
		uint64_t last = t + n - 1;
		uint64_t lap = last & ~r->mask;
		uint64_t s = atomic_load_explicit(&r->slots[last & r->mask].stamp, memory_order_acquire);
		if (s == lap) {
			if (atomic_compare_exchange_weak_explicit(&r->tail, &t, t + n, memory_order_relaxed,
								  memory_order_relaxed)) {
				*pos = t;
				return true;
			}
			continue;
		}
		uint64_t t2 = atomic_load_explicit(&r->tail, memory_order_relaxed);
		if ((int64_t)(s - lap) < 0 && t2 == t)
			return false;   /* the previous lap is still unread */
		t = t2;
	}
}

static inline struct ingero_slot *ingero_ring_slot(struct ingero_ring *r, uint64_t pos)
{
	return &r->slots[pos & r->mask];
}

/* Publishes positions pos..pos+n-1: INGERO_RING_OK, or INGERO_RING_LOST if
 * the consumer had given up on one of them (it stalled past the timeout). */
static inline int ingero_ring_publish(struct ingero_ring *r, uint64_t pos, uint32_t n)
{
	int rc = INGERO_RING_OK;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t p = pos + i;
		uint64_t expect = p & ~r->mask;
		if (!atomic_compare_exchange_strong_explicit(&r->slots[p & r->mask].stamp, &expect,
							     expect + 1, memory_order_release,
							     memory_order_relaxed))
			rc = INGERO_RING_LOST;
	}
	/* The next record's slot was last written by the consumer a lap (and
	 * megabytes) ago: out of every cache.  Fetching it for writing now, in
	 * the time the program spends before its next CUDA call, takes that
	 * miss off the next call (it was half the put's time, and the locked
	 * publish above waits for the stores queued behind it). */
	const char *next = (const char *)&r->slots[(pos + n) & r->mask];
	for (size_t off = 0; off < sizeof(struct ingero_slot); off += 64)
		ingero_prefetch_write(next + off);
	return rc;
}

/* The consumer's thread, once: every page of the slots faulted in, so that
 * no producer takes a page fault inside the program's call (the mapping is
 * created untouched; on the H200's VM a first touch costs ~10 us, ~350 ns
 * a call over the first lap of an 8 MiB ring: INGERO_SELF_TIME).  An
 * atomic add of 0 to a stamp: a fault, never a change a producer could lose. */
void ingero_ring_prefault(struct ingero_ring *r);

/* Consumer results. */
enum {
	INGERO_RING_GOT = 1,
	INGERO_RING_EMPTY = 0,        /* nothing ready (maybe a producer mid-write) */
	INGERO_RING_SKIPPED = -4,     /* a hole older than the timeout was skipped */
};
/* Consumer: takes the next record into buf (cap ≥ INGERO_RING_MAX_REC).
 * A position claimed but unpublished for longer than hole_timeout_ns is
 * skipped (its producer died or stalled); now_ns is the caller's clock. */
int ingero_ring_get(struct ingero_ring *r, void *buf, uint32_t *len, uint64_t now_ns,
		    uint64_t hole_timeout_ns);
/* Records claimed but not yet taken (approximate). */
uint64_t ingero_ring_used(struct ingero_ring *r);

#endif
