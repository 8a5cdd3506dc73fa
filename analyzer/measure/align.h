/*
 * align.h — per-call alignment: what the calling thread and the machine were
 * doing during exactly one CUDA call, and the slow tail of each API
 * aggregated from it.
 *
 * For a call [start, start + dur) on thread T:
 *   runq    = T's off-CPU time in the call spent runnable (woken or
 *             preempted, waiting for a CPU): end - max(runnable, start),
 *             clipped to the call
 *   blocked = T's other off-CPU time in the call (sleeping in the driver,
 *             on a futex, on I/O)
 *   oncpu   = dur - runq - blocked (spinning in the driver, copying)
 *   cpu_sat = busy time of all CPUs over the call / (CPUs x dur)
 * Slow calls of an API: count >= IA_SLOW_MIN_CALLS and dur >=
 * max(IA_SLOW_RATIO x p50, p50 + IA_SLOW_MIN_EXCESS_NS); an API has a slow
 * tail when its p99 is slow.  docs/chains.md documents the thresholds.
 */
#ifndef IA_ALIGN_H
#define IA_ALIGN_H

#include "measure/per_process.h"
#include "load/series.h"
#include "measure/stats.h"
#include "load/trace.h"

#define IA_SLOW_MIN_CALLS 20
#define IA_SLOW_RATIO 10
#define IA_SLOW_MIN_EXCESS_NS 1000000ull
#define IA_SLOW_TOP 5

struct ia_call_align {
	uint64_t runq_ns, blocked_ns, oncpu_ns, nswitch, npreempt;
	double cpu_sat;        /* 0..1, -1 without cpu_busy evidence */
};

void ia_align_call(const struct ia_trace *t, const struct ia_evidence *e, const struct ia_call *c,
		   struct ia_call_align *out);

struct ia_slow_call {
	uint64_t start, dur, bytes, runq_ns, blocked_ns;
	double cpu_sat;
	uint32_t th, stack;
	uint8_t flags;
};

/* Copies below this size cost their latency, not their bandwidth: pinning
 * does not change it, and one that waited for queued GPU work (a small
 * device-to-host read of a result: c09, c59's .tolist()) would read as a
 * slow transfer.  The pageable-copies rule and the slow copies' cause
 * count only copies of this size or more as pageable. */
#define IA_PAGEABLE_MIN_BYTES (1u << 20)

struct ia_slow_api {
	uint16_t api;
	uint64_t count, p50, p99, max, threshold;
	uint64_t nslow, slow_ns, excess_ns;           /* excess: sum of (dur - p50) */
	uint64_t runq_ns, blocked_ns, oncpu_ns, nswitch, npreempt;
	double cpu_sat;                               /* duration-weighted, -1 unknown */
	uint64_t pages;                               /* traced processes, during slow calls */
	double pages_per_s, pages_per_s_all;          /* during slow calls vs whole window */
	uint64_t workers_oncpu_ns;                    /* workers' CPU time during slow calls */
	uint64_t copy_pageable, copy_pinned;          /* slow copies by memory kind (pageable: IA_PAGEABLE_MIN_BYTES on) */
	uint64_t copy_to_host;                        /* slow copies device to host: each waits for the work before it */
	struct ia_slow_call top[IA_SLOW_TOP];         /* slowest, longest first */
	int ntop;
	struct { int pid; char comm[32]; uint64_t ns; } comp[3];   /* untraced CPU holders */
	int ncomp;
	struct { int pid; uint64_t ns; } took[3];     /* who took the CPU (next_pid, top calls) */
	int ntook;
	uint64_t *win; size_t nwin;                   /* the slow calls' times, merged: (start, end) pairs */
};

/* Every API with a slow tail, largest excess first; ia_slow_apis_free frees them. */
int ia_slow_apis(const struct ia_trace *t, const struct ia_evidence *e, const struct ia_stats *s,
		 const struct ia_per_process *pp, struct ia_slow_api **out, size_t *n, char *err, size_t errlen);
void ia_slow_apis_free(struct ia_slow_api *s, size_t n);

#endif
