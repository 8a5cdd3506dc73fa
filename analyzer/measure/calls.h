/*
 * calls.h — what a CUDA call does to the GPU's queue: queues work (a
 * launch, a copy, a memset), or returns only once the work before it is
 * done (a sync, a blocking copy, a free that waits); and a process's calls
 * in one time order.  The vocabulary gaps, GPU time and the rules share.
 */
#ifndef IA_CALLS_H
#define IA_CALLS_H

#include "load/trace.h"

#include <stddef.h>
#include <stdint.h>

#define IA_SYNC_FLOOR_NS 20000ull   /* a sync with nothing to wait for costs about this */

/* Whether an API returns only after the device work before it is done. */
int ia_api_completes_work(unsigned api);
/* The same for one call: a free of NULL (INGERO_FLAG_NULL_FREE) waits for nothing. */
int ia_call_completes_work(const struct ia_call *c);
/* A free that waited for the device (ingero_api_free_waits, not of NULL). */
int ia_call_is_waiting_free(const struct ia_call *c);
/* Whether an API queues device work (launch, copy, memset). */
int ia_api_queues_work(unsigned api);
/* A call that queues work waited for room in its queue, not for the host,
 * when the GPU was busy at least this share of its time (a full queue). */
#define IA_QUEUE_FULL_BUSY 0.90
/* The calls of process `proc` (index into trace.procs), all its threads
 * merged by start time (ties: thread index): a malloc'd array of indexes
 * into trace.calls, *n of them; NULL when out of memory. */
uint32_t *ia_proc_calls(const struct ia_trace *t, uint32_t proc, size_t *n);
/* Walking such merged calls in order: the part of c after the calls before
 * it ended (*until, 0 at the start), as [*a, *b); 0 when nothing of it is
 * left (it lay inside an earlier one), else 1 and *until moved to its end. */
static inline int ia_call_clip(const struct ia_call *c, uint64_t *until, uint64_t *a, uint64_t *b)
{
	*a = c->start > *until ? c->start : *until;
	*b = c->start + c->dur;
	if (*b <= *a)
		return 0;
	*until = *b;
	return 1;
}

#endif
