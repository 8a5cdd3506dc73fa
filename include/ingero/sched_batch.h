/*
 * sched_batch.h — the tracer's own threads give way to the program's.
 *
 * The collector's threads, and the preload library's sender (with the nng
 * threads it creates, which inherit its policy), run under SCHED_BATCH:
 * the same share of the CPUs as any thread of their nice value, but a
 * wake-up of theirs never preempts the thread running where it lands; it
 * waits for a free CPU or the next tick.  Their
 * work is throughput (rings that hold seconds of records), while the
 * thread they would preempt is often a step's critical one: in the real
 * traces the collector and its nng threads were the first competitors of
 * the program's threads.  Only a thread under the default policy changes:
 * a real-time or idle policy someone chose stays.  INGERO_TRACER_BATCH=0
 * keeps the default.  Not the library's GPU watcher: when it must wait for
 * a tick its marks come late and the measured GPU idle loses its precision
 * (preload/gpu_watch.c).
 */
#ifndef INGERO_SCHED_BATCH_H
#define INGERO_SCHED_BATCH_H

#include <sched.h>

/* The calling thread (Linux: pid 0 is the thread, not the process) to
 * SCHED_BATCH if it runs under SCHED_OTHER; 1 when it changed. */
static inline int ingero_sched_batch(void)
{
	struct sched_param p = { .sched_priority = 0 };

	return sched_getscheduler(0) == SCHED_OTHER && sched_setscheduler(0, SCHED_BATCH, &p) == 0;
}

/* Back to SCHED_OTHER: a process the collector starts must not inherit
 * the policy it gave itself. */
static inline void ingero_sched_default(void)
{
	struct sched_param p = { .sched_priority = 0 };

	if (sched_getscheduler(0) == SCHED_BATCH)
		sched_setscheduler(0, SCHED_OTHER, &p);
}

#endif
