/*
 * ring.c — the shared multi-producer ring (see ring.h for the contract).
 *
 * Stamps.  Position p lives in slot p & mask; its lap base is L = p & ~mask
 * (a multiple of cap).  A slot's stamp says:
 *
 *     L          free for position p (or claimed for p, not yet published)
 *     L + 1      published for p
 *     L + cap    taken (or skipped) by the consumer: free for p + cap
 *
 * Zeroed memory is therefore an empty ring (every stamp 0 = free for lap 0):
 * the mapping is created untouched and pages are faulted in only as used.
 *
 * Claiming.  A producer claims n positions t..t+n-1 with one CAS on tail,
 * after checking that the last of them is free for this lap.  The consumer
 * takes records strictly in position order, so the last one being free means
 * all earlier ones are free too; that is why one check suffices.
 *
 * Publishing is a CAS L → L+1 rather than a store, and skipping a hole is a
 * CAS L → L+cap, so a producer that stalls past the hole timeout and the
 * consumer that gives up on it cannot both win: the loser learns it (the
 * producer returns INGERO_RING_LOST and its caller counts a drop).
 *
 * Continuation slots of a multi-slot record carry reserved = 1, so that a
 * continuation found where a record should start (its first slot was
 * skipped) is recognised and discarded rather than misread.
 */
#include "ring.h"

#include <string.h>

size_t ingero_ring_bytes(uint64_t cap)
{
	return sizeof(struct ingero_ring) + cap * sizeof(struct ingero_slot);
}

void ingero_ring_init(struct ingero_ring *r, uint64_t cap)
{
	r->cap = r->ccap = cap;
	r->mask = r->cmask = cap - 1;
	r->hole_pos = UINT64_MAX;   /* no position waited on yet */
}

static inline uint32_t slots_for(uint32_t len)
{
	return len == 0 ? 1 : (len + INGERO_SLOT_DATA - 1) / INGERO_SLOT_DATA;
}

int ingero_ring_put(struct ingero_ring *r, const void *rec, uint32_t len)
{
	uint32_t n = slots_for(len);
	if (len > INGERO_RING_MAX_REC || n > r->cap / 2)
		return INGERO_RING_TOOBIG;
	uint64_t t;
	if (!ingero_ring_claim(r, n, &t))
		return INGERO_RING_FULL;
	const uint8_t *src = rec;
	uint32_t left = len;
	for (uint32_t i = 0; i < n; i++) {
		struct ingero_slot *sl = ingero_ring_slot(r, t + i);
		uint32_t chunk = left < INGERO_SLOT_DATA ? left : INGERO_SLOT_DATA;
		sl->len = i == 0 ? len : 0;
		sl->reserved = i != 0;
		memcpy(sl->data, src, chunk);
		src += chunk;
		left -= chunk;
	}
	return ingero_ring_publish(r, t, n);
}

void ingero_ring_prefault(struct ingero_ring *r)
{
	size_t per_page = 4096 / sizeof(struct ingero_slot);
	for (uint64_t i = 0; i < r->ccap; i += per_page)
		atomic_fetch_add_explicit(&r->slots[i].stamp, 0, memory_order_relaxed);
}

/* Consumer: gives a slot back for the next lap. */
static inline void release(struct ingero_ring *r, uint64_t p)
{
	atomic_store_explicit(&r->slots[p & r->cmask].stamp, (p & ~r->cmask) + r->ccap,
			      memory_order_release);
}

/* Consumer: position p is claimed but unpublished.  Returns 1 once it has
 * stayed so for longer than the timeout (its producer died or stalled). */
static int hole_expired(struct ingero_ring *r, uint64_t p, uint64_t now, uint64_t timeout)
{
	if (r->hole_pos != p) {
		r->hole_pos = p;
		r->hole_since_ns = now;
		return 0;
	}
	return now - r->hole_since_ns >= timeout;
}

/* Consumer: gives up on the unpublished position p.  Returns 0 if its
 * producer published after all (the record is then read normally, or
 * discarded as a stray continuation). */
static int skip(struct ingero_ring *r, uint64_t p, uint64_t now, uint64_t timeout)
{
	uint64_t expect = p & ~r->cmask;
	if (!atomic_compare_exchange_strong_explicit(&r->slots[p & r->cmask].stamp, &expect,
						     expect + r->ccap, memory_order_acq_rel,
						     memory_order_relaxed))
		return 0;
	/* A dead producer of a multi-slot record leaves consecutive holes: the
	 * next unpublished position is given up on at once. */
	r->hole_pos = p + 1;
	r->hole_since_ns = now - timeout;
	return 1;
}

int ingero_ring_get(struct ingero_ring *r, void *buf, uint32_t *len, uint64_t now_ns,
		    uint64_t hole_timeout_ns)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	struct ingero_slot *sl = &r->slots[h & r->cmask];
	uint64_t lap = h & ~r->cmask;
	uint64_t s = atomic_load_explicit(&sl->stamp, memory_order_acquire);

	if (s != lap + 1) {
		if (atomic_load_explicit(&r->tail, memory_order_acquire) <= h)
			return INGERO_RING_EMPTY;
		if (!hole_expired(r, h, now_ns, hole_timeout_ns) ||
		    !skip(r, h, now_ns, hole_timeout_ns))
			return INGERO_RING_EMPTY;
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
		return INGERO_RING_SKIPPED;
	}
	if (sl->reserved) {   /* a continuation whose first slot was skipped */
		release(r, h);
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
		return INGERO_RING_SKIPPED;
	}
	uint32_t l = sl->len;
	uint32_t n = slots_for(l);
	if (l > INGERO_RING_MAX_REC || n > r->ccap / 2) {   /* cannot happen unless memory was scribbled */
		release(r, h);
		atomic_store_explicit(&r->head, h + 1, memory_order_release);
		return INGERO_RING_SKIPPED;
	}
	for (uint32_t i = 1; i < n; i++) {
		uint64_t p = h + i;
		uint64_t sp = atomic_load_explicit(&r->slots[p & r->cmask].stamp, memory_order_acquire);
		if (sp == (p & ~r->cmask) + 1)
			continue;
		if (!hole_expired(r, p, now_ns, hole_timeout_ns))
			return INGERO_RING_EMPTY;
		/* The record is incomplete for good: give back, in order, what it
		 * had; position p itself is dealt with by the next call (skipped
		 * at once, or discarded as a stray continuation). */
		for (uint32_t j = 0; j < i; j++)
			release(r, h + j);
		r->hole_since_ns = now_ns - hole_timeout_ns;
		atomic_store_explicit(&r->head, p, memory_order_release);
		return INGERO_RING_SKIPPED;
	}
	uint8_t *dst = buf;
	uint32_t left = l;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t chunk = left < INGERO_SLOT_DATA ? left : INGERO_SLOT_DATA;
		memcpy(dst, r->slots[(h + i) & r->cmask].data, chunk);
		dst += chunk;
		left -= chunk;
		release(r, h + i);
	}
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	*len = l;
	return INGERO_RING_GOT;
}

uint64_t ingero_ring_used(struct ingero_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_relaxed) -
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}
