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
#include <stddef.h>
#include <stdint.h>

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
