/*
 * fuzz_preload_lane.c — the sender takes CALLs from lanes other processes
 * of the tree write (preload/lane.c), so a lane's units and tail are
 * untrusted bytes: whatever they hold, ingero_lane_take reads only inside
 * the lane, gives at most one call per unit between head and the tail it
 * was handed, each with the lane owner's pid and tid, and leaves the head
 * at that tail.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../preload/lane.h"

struct seen {
	uint64_t calls;
	uint32_t pid, tid;
};

static void on_call(struct ingero_cuda_call *ev, bool tsc, void *arg)
{
	struct seen *s = arg;
	(void)tsc;
	if (ev->pid != s->pid || ev->tid != s->tid)
		abort();
	s->calls++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ingero_lane *l;
	if (!l && !(l = aligned_alloc(64, sizeof *l)))
		return 0;
	if (size < 24 || size > 24 + (size_t)INGERO_LANE_UNITS * INGERO_LANE_UNIT)
		return 0;
	uint64_t head, span, owner;
	memcpy(&head, data, 8);
	memcpy(&span, data + 8, 8);
	memcpy(&owner, data + 16, 8);
	/* most inputs a plausible span, some any tail at all */
	uint64_t upto = (span >> 63) ? head + span : head + span % (INGERO_LANE_UNITS + 1);
	memset(l->units, 0, sizeof l->units);
	memcpy(l->units, data + 24, size - 24);
	atomic_store(&l->owner, owner);
	atomic_store(&l->head, head);
	atomic_store(&l->tail, upto);
	struct seen s = { 0, (uint32_t)(owner >> 32), (uint32_t)owner };
	uint64_t bad = 0;
	uint32_t n = ingero_lane_take(l, upto, UINT32_MAX, on_call, &s, &bad);
	if (n != s.calls || atomic_load(&l->head) != upto)
		abort();
	if (upto - head <= INGERO_LANE_UNITS && n > upto - head)
		abort();
	if (upto - head > INGERO_LANE_UNITS && (n != 0 || bad != 1))
		abort();
	return 0;
}
