/*
 * chain_slow.c — the slow_calls rule: an API's slow tail, aligned call by
 * call with what its thread and the machine did (docs/chains.md).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"
#include "measure/phases.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOW_HIGH 0.05
#define SLOW_MEDIUM 0.01
#define CONTENTION_RUNQ 0.20         /* runnable share of slow-call time */
#define CONTENTION_RUNQ_SAT 0.05     /* ... or this much with CPUs saturated */
#define SATURATED 0.90
/* A call that queues work (a launch, memset, async copy) is slow while the
 * GPU certainly had work IA_QUEUE_FULL_BUSY of the time (calls.h):
 * the host ran ahead of a busy GPU and waited for room in its queue. */

/* What the parts of a slow-calls chain read, computed once. */
struct slow_view {
	const struct ia_analysis *a;
	const struct ia_trace *t;
	const struct ia_slow_api *s;
	double rq, blk, on;
	double gpu_busy;   /* share of the slow calls' time the GPU certainly had work; -1 not measured */
	int contention, cls, pageable, reads, queue_full, workers, cpus;
	const struct ia_proc_stats *mps;
	const struct ia_proc *mp;
};

#define VIEW_LOCALS(v) \
	const struct ia_analysis *a = (v)->a; \
	const struct ia_trace *t = (v)->t; \
	const struct ia_slow_api *s = (v)->s; \
	(void)a; (void)t; (void)s

static void slow_timeline(struct ia_chain *c, const struct slow_view *v)
{
	VIEW_LOCALS(v);
	double rq = v->rq, blk = v->blk, on = v->on;
	int workers = v->workers, cpus = v->cpus;
	const struct ia_proc_stats *mps = v->mps;
	const struct ia_proc *mp = v->mp;
	char p99[32], p50[32], r[32], n1[32], d1[32], d2[32], d3[32], d4[32];
	ia_fmt_dur(p99, sizeof p99, s->p99);
	ia_fmt_dur(p50, sizeof p50, s->p50);
	if (s->cpu_sat >= 0)
		ia_chain_line(c, "[SYSTEM] CPU %.0f%% busy during the slow calls (%d CPUs); traced processes allocated %s pages/s "
		     "then (%s/s over the whole window)", 100 * s->cpu_sat, cpus,
		     ia_fmt_count(n1, sizeof n1, (uint64_t)s->pages_per_s), ia_fmt_count(d4, sizeof d4, (uint64_t)s->pages_per_s_all));
	else
		ia_chain_line(c, "[SYSTEM] %d CPUs; no CPU-busy evidence in this trace", cpus);
	/* (not its threads' summed off-CPU time nor its worst stall: a
	 * PyTorch process's dozens of pool threads sleep the whole run, 338 s
	 * "off-CPU" and a 13 s "stall" that say nothing of these calls) */
	if (mps)
		ia_chain_line(c, "[HOST] %s (pid %d, %u thread%s): %s context switches, run-queue delay p99 %s", mp->comm,
		     mp->pid, mps->nthreads, mps->nthreads == 1 ? "" : "s", ia_fmt_count(n1, sizeof n1, mps->context_switches),
		     ia_fmt_dur(d3, sizeof d3, mps->runq_p99_ns));
	ia_chain_line(c, "[HOST] during the %s slow calls (%s): waiting for a CPU %s (%.0f%%), blocked %s (%.0f%%), on-CPU %s (%.0f%%)",
	     ia_fmt_count(n1, sizeof n1, s->nslow), ia_fmt_dur(d4, sizeof d4, s->slow_ns),
	     ia_fmt_dur(d1, sizeof d1, s->runq_ns), 100 * rq, ia_fmt_dur(d2, sizeof d2, s->blocked_ns), 100 * blk,
	     ia_fmt_dur(d3, sizeof d3, s->oncpu_ns), 100 * on);
	if (workers || s->ntook) {
		char took[300] = "";
		for (int i = 0; i < s->ntook; i++) {
			int pi = ia_proc_index(t, s->took[i].pid);
			ia_addf(took, sizeof took, "%s%s %d (%s)", i ? ", " : "", pi >= 0 ? t->procs[pi].comm : "pid",
			     s->took[i].pid, ia_fmt_dur(d1, sizeof d1, s->took[i].ns));
		}
		if (workers)
			ia_chain_line(c, "[HOST] %d worker%s on-CPU %s during the slow calls%s%s", workers,
				      workers == 1 ? "" : "s", ia_fmt_dur(d2, sizeof d2, s->workers_oncpu_ns),
				      took[0] ? "; the CPU went to " : "", took);
		else   /* (no workers: not "0 workers on-CPU 0ns") */
			ia_chain_line(c, "[HOST] during the slow calls the CPU went to %s", took);
	}
	if (s->ncomp) {
		char comp[300] = "";
		for (int i = 0; i < s->ncomp; i++)
			ia_addf(comp, sizeof comp, "%s%s (pid %d) %s", i ? ", " : "", s->comp[i].comm, s->comp[i].pid,
			     ia_fmt_dur(d1, sizeof d1, s->comp[i].ns));
		ia_chain_line(c, "[HOST] untraced processes on-CPU then: %s", comp);
	}
	ia_chain_line(c, "[CUDA] %s p50=%s p99=%s max=%s over %s calls; %s calls >= %s (%s, %s above p50)",
	     ia_api_name(t, s->api), p50, p99, ia_fmt_dur(d1, sizeof d1, s->max), ia_fmt_count(n1, sizeof n1, s->count),
	     ia_fmt_count(d4, sizeof d4, s->nslow), ia_fmt_dur(d2, sizeof d2, s->threshold),
	     ia_fmt_dur(d3, sizeof d3, s->slow_ns), ia_fmt_dur(r, sizeof r, s->excess_ns));
}

static void slow_cause(struct ia_chain *c, const struct slow_view *v)
{
	VIEW_LOCALS(v);
	double rq = v->rq, blk = v->blk, on = v->on;
	int workers = v->workers, cpus = v->cpus, cls = v->cls, contention = v->contention, pageable = v->pageable;
	char n1[32], d1[32];
	int nw = ia_good_workers(a);
	if (contention) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "CPU contention: during its slow %s calls the calling thread spent %.0f%% of the time runnable "
			 "but not running",
			 ia_api_name(t, s->api), 100 * rq);
		if (s->cpu_sat >= 0)
			ia_addf(c->root_cause, sizeof c->root_cause, ", with the CPUs %.0f%% busy", 100 * s->cpu_sat);
		ia_addf(c->root_cause, sizeof c->root_cause, ".");
		if (workers)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " %d DataLoader-style workers%s held the CPUs (%s on-CPU during those calls)", workers,
			     ia_workers_crowd_cpus(a) ? ", more than the CPUs left beside the main process," : "",
			     ia_fmt_dur(d1, sizeof d1, s->workers_oncpu_ns));
		if (workers && s->pages_per_s_all > 0 && s->pages_per_s >= 1000)
			ia_addf(c->root_cause, sizeof c->root_cause, ", allocating %s pages/s (heavy page-allocation pressure)",
			     ia_fmt_count(n1, sizeof n1, (uint64_t)s->pages_per_s));
		if (workers)
			ia_addf(c->root_cause, sizeof c->root_cause, ".");
		if (s->ncomp && s->comp[0].ns * 10 >= s->runq_ns)
			ia_addf(c->root_cause, sizeof c->root_cause, " Untraced processes also took CPU: %s (pid %d) %s.",
			     s->comp[0].comm, s->comp[0].pid, ia_fmt_dur(d1, sizeof d1, s->comp[0].ns));
		if (ia_workers_crowd_cpus(a))
			ia_chain_fix(c, "num_workers=%d (%d CPUs: one for the main process); %d workers now", nw, cpus,
				     (int)a->pp.workers_at_once);
		if (workers) {
			/* (the epochs say whether the workers outlive one: no advice
			 * to set what is set; 2 is DataLoader's default prefetch) */
			int persist = ia_phases_workers_persist(&a->ph);
			if (persist == 0)
				ia_chain_fix(c, "persistent_workers=True (each epoch's iterator forked new workers here): no "
						"worker start-up");
			else if (persist < 0)
				ia_chain_fix(c, "persistent_workers=True (if not set already) and prefetch_factor at its default "
						"of 2: no worker start-up, a bounded queue");
			ia_batch_level_fix(c);
		} else {
			ia_chain_fix(c, "Keep other CPU-heavy work off the CPUs the training process needs (taskset/cgroups), "
			       "or leave it a free CPU");
		}
	} else if (pageable) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The slow copies are from pageable host memory, which the driver stages through a bounce buffer "
			 "while the host waits.");
		ia_pin_fix(c, a);
	} else if (v->reads) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The slow copies read results back to the host (device to host): each returns only once the work "
			 "queued before it has run, as a sync does (.item(), .cpu(), .tolist(), printing a tensor), so its "
			 "tail is that GPU work.");
		ia_chain_fix(c, "If the value is needed at once, nothing to fix here; else read it back less often or "
				"later (accumulate on the GPU, copy one scalar every N steps), or into pinned memory with "
				"non_blocking=True and an event to wait on");
	} else if (v->queue_full) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The GPU certainly had work %.0f%% of the time these launches took: the host had run ahead of "
			 "the GPU, and a call that queues work waits for room in the GPU's queue once it is full. That is what a busy "
			 "GPU looks like, not a host-side cost: the steps go at the GPU's pace.",
			 100 * v->gpu_busy);
		ia_chain_fix(c, "Nothing to fix on the host; to go faster make the GPU's work cheaper (look at its kernels "
		       "with nsys or torch.profiler)");
	} else if (cls == INGERO_CLASS_SYNC || ingero_api_free_waits(s->api)) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "No host-side cause: the thread was %s, not waiting for a CPU (%.0f%%), during the slow calls. "
			 "A sync returns when the GPU finishes the queued work, so its tail is the GPU work itself "
			 "(long kernels or copies queued before it).%s",
			 on >= blk ? "on-CPU (spinning in the driver)" : "blocked in the driver", 100 * rq,
			 ingero_api_free_waits(s->api) ? " A free waits the same way (see the sync_frees chain, if any)." : "");
		ia_chain_fix(c, "If the GPU work is expected, nothing to fix here; otherwise look at the kernels queued before the "
		       "sync (nsys or torch.profiler)");
	} else {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "No host-side cause found: during the slow calls the thread was on-CPU %.0f%% and blocked %.0f%%, "
			 "waiting for a CPU only %.0f%%. The time is spent inside the CUDA library or driver.",
			 100 * on, 100 * blk, 100 * rq);
		ia_chain_fix(c, "Look inside the driver call (nsys with OS runtime tracing): allocation, JIT, or a lock in "
		       "the runtime");
	}
	for (int i = 0; i < s->ntop && !c->source[0]; i++) {   /* the slowest call with a Python frame */
		const char *py = ia_stack_source(a->names, t->stack_ids[s->top[i].stack]);
		if (py)
			snprintf(c->source, sizeof c->source, "%s", py);
	}
}

static void slow_evidence(struct ia_chain *c, const struct slow_view *v)
{
	VIEW_LOCALS(v);
	int workers = v->workers, cpus = v->cpus, cls = v->cls;
	const struct ia_proc_stats *mps = v->mps;
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "count", s->count);
	ia_json_u64(ev, "p50_ns", s->p50);
	ia_json_u64(ev, "p99_ns", s->p99);
	ia_json_u64(ev, "max_ns", s->max);
	ia_json_round(ev, "p99_over_p50", s->p50 ? (double)s->p99 / (double)s->p50 : 0, 2);
	ia_json_u64(ev, "slow_threshold_ns", s->threshold);
	ia_json_u64(ev, "slow_calls", s->nslow);
	ia_json_u64(ev, "slow_ns", s->slow_ns);
	ia_json_u64(ev, "excess_ns", s->excess_ns);
	/* with none, the tail is the GPU's own work: not a cause of starvation (verdict.h) */
	cJSON_AddBoolToObject(ev, "host_cause", v->contention || v->pageable);
	cJSON_AddStringToObject(ev, "tail_cause", v->contention ? "cpu_contention" : v->pageable ? "pageable_memory"
				: v->reads ? "gpu_work" : v->queue_full ? "gpu_queue_full"
				: cls == INGERO_CLASS_SYNC || ingero_api_free_waits(s->api) ? "gpu_work" : "inside_driver");
	if (v->gpu_busy >= 0)
		ia_json_round(ev, "gpu_busy_in_slow_calls", v->gpu_busy, 3);
	cJSON_AddBoolToObject(ev, "gpu_queue_full", v->queue_full);
	ia_json_u64(ev, "runq_ns", s->runq_ns);
	ia_json_u64(ev, "blocked_ns", s->blocked_ns);
	ia_json_u64(ev, "oncpu_ns", s->oncpu_ns);
	ia_json_u64(ev, "context_switches_in_slow_calls", s->nswitch);
	ia_json_u64(ev, "preemptions_in_slow_calls", s->npreempt);
	if (mps)
		ia_json_u64(ev, "main_context_switches", mps->context_switches);
	if (s->cpu_sat >= 0)
		ia_json_round(ev, "cpu_saturation", s->cpu_sat, 4);
	ia_json_round(ev, "pages_per_s_in_slow_calls", s->pages_per_s, 0);
	ia_json_round(ev, "pages_per_s_overall", s->pages_per_s_all, 0);
	ia_json_u64(ev, "workers", (uint64_t)workers);
	ia_json_u64(ev, "workers_oncpu_ns", s->workers_oncpu_ns);
	cJSON_AddNumberToObject(ev, "cpus", cpus);
	cJSON *top = cJSON_AddArrayToObject(ev, "slowest");
	for (int i = 0; i < s->ntop; i++) {
		const struct ia_slow_call *x = &s->top[i];
		cJSON *o = cJSON_CreateObject();
		ia_json_u64(o, "start_rel_ns", x->start - t->t0);
		ia_json_u64(o, "dur_ns", x->dur);
		cJSON_AddNumberToObject(o, "tid", t->threads[x->th].tid);
		ia_json_u64(o, "runq_ns", x->runq_ns);
		ia_json_u64(o, "blocked_ns", x->blocked_ns);
		if (x->cpu_sat >= 0)
			ia_json_round(o, "cpu_saturation", x->cpu_sat, 4);
		if (cls == INGERO_CLASS_COPY) {
			ia_json_u64(o, "bytes", x->bytes);
			ia_json_round(o, "gbps", ia_gbps(x->bytes, x->dur), 3);
			cJSON_AddStringToObject(o, "memory", x->flags & INGERO_FLAG_HOST_PINNED ? "pinned"
						: x->flags & INGERO_FLAG_HOST_PAGEABLE ? "pageable" : "unknown");
		}
		ia_json_str(o, "python", ia_stack_python(a->names, t->stack_ids[x->stack]));
		cJSON_AddItemToArray(top, o);
	}
	cJSON *tk = cJSON_AddArrayToObject(ev, "cpu_taken_by");
	for (int i = 0; i < s->ntook; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", s->took[i].pid);
		int pi = ia_proc_index(t, s->took[i].pid);
		ia_json_str(o, "comm", pi >= 0 ? t->procs[pi].comm : NULL);
		ia_json_u64(o, "ns", s->took[i].ns);
		cJSON_AddItemToArray(tk, o);
	}
	cJSON *cp = cJSON_AddArrayToObject(ev, "competitors");
	for (int i = 0; i < s->ncomp; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", s->comp[i].pid);
		cJSON_AddStringToObject(o, "comm", s->comp[i].comm);
		ia_json_u64(o, "cpu_ns", s->comp[i].ns);
		cJSON_AddItemToArray(cp, o);
	}
}

/* Where the loop's first full step begins (phases.h), 0 without one: what
 * comes before it is the loop's set-up. */
static uint64_t loop_start(const struct ia_analysis *a)
{
	return a->ph.steps.calls ? a->ph.steps.first_ns : 0;
}

/* Whether most of the slow calls' time lies in the steady state, after
 * the loop's first step: slow calls of a one-time phase (start-up's weight uploads from pageable
 * memory, c01, c69) are that phase's time, told by its finding, not a
 * steady-state cause.  True without a steady state (nothing to hold them
 * to). */
static int slow_in_steady(const struct ia_analysis *a, const struct ia_slow_api *s)
{
	if (!a->idle.steady_ns || !s->nwin)
		return 1;
	/* before the loop's first full step is its set-up, whatever slice
	 * the phases put it in: model.cuda()'s weight uploads at the first
	 * GPU work (c34: eight 16 MiB pageable copies, "pin the memory") */
	uint64_t from = loop_start(a), span = 0, in = 0;
	for (size_t i = 0; i < s->nwin; i++) {
		uint64_t w0 = s->win[2 * i] > from ? s->win[2 * i] : from, w1 = s->win[2 * i + 1];
		span += s->win[2 * i + 1] - s->win[2 * i];
		if (w1 > w0)
			in += ia_phases_time_in(&a->ph, IA_PHASE_STEADY, w0, w1);
	}
	return in * 2 >= span;
}

/* ---- slow calls ---- */
int ia_rule_slow_calls(struct ia_analysis *a, size_t *cap, const struct ia_slow_api *s)
{
	const struct ia_trace *t = a->t;
	/* judged on the steady state, ranked on the whole window; a trace
	 * with no queued work has neither: its whole length then */
	uint64_t all = t->last_ns - t->first_ns;
	uint64_t steady = a->idle.steady_ns ? a->idle.steady_ns : all, whole = a->idle.window_ns ? a->idle.window_ns : all;
	if (!steady || !s->slow_ns || !slow_in_steady(a, s))
		return 0;
	double impact = (double)s->excess_ns / (double)steady;
	double rq = (double)s->runq_ns / (double)s->slow_ns, blk = (double)s->blocked_ns / (double)s->slow_ns;
	double on = (double)s->oncpu_ns / (double)s->slow_ns;
	int contention = rq >= CONTENTION_RUNQ || (s->cpu_sat >= SATURATED && rq >= CONTENTION_RUNQ_SAT);
	int cls = ingero_api_class(s->api);
	int pageable = cls == INGERO_CLASS_COPY && s->copy_pageable * 2 > s->nslow;
	/* a copy to the host returns once the work queued before it has run:
	 * a sync, not a wait for room in the queue (c59: .tolist() of a metric
	 * behind busy steps, read as the queue full) */
	int reads = cls == INGERO_CLASS_COPY && !pageable && s->copy_to_host * 2 > s->nslow;
	double gpu_busy = -1;
	if (a->gaps.gpu.measured) {
		/* (over the slow calls of the loop: set-up's before its first
		 * step, model.cuda()'s uploads to an idle GPU, say nothing of
		 * its queue — c22) */
		uint64_t from = loop_start(a), span = 0;
		size_t w0 = 0;
		while (w0 < s->nwin && s->win[2 * w0 + 1] <= from)
			w0++;
		if (w0 == s->nwin)
			w0 = 0;
		for (size_t w = w0; w < s->nwin; w++)
			span += s->win[2 * w + 1] - s->win[2 * w];
		if (span)
			gpu_busy = (double)ia_spans_within_windows(a->gaps.gpu.busy, a->gaps.gpu.nbusy, s->win + 2 * w0,
								 s->nwin - w0) / (double)span;
	}
	int queue_full = !contention && !pageable && !reads && ia_api_queues_work(s->api) && gpu_busy >= IA_QUEUE_FULL_BUSY;
	if (queue_full) {
		/* one finding for the full queue: the other APIs that waited on
		 * it (memsets, copies, the driver's launches) are lines of the
		 * first, not findings of their own (c22: six, all LOW) */
		for (size_t k = 0; k < a->nchains; k++) {
			struct ia_chain *q = &a->chains[k];
			if (q->kind != IA_KIND_SLOW_CALLS ||
			    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q->evidence, "gpu_queue_full")))
				continue;
			char p99[32], n1[32];
			ia_chain_line(q, "[CUDA] %s waited on the same full queue: %s calls >= %s, p99=%s",
				      ia_api_name(t, s->api), ia_fmt_count(n1, sizeof n1, s->nslow),
				      ia_fmt_dur((char[32]){ 0 }, 32, s->threshold), ia_fmt_dur(p99, sizeof p99, s->p99));
			return 0;
		}
	}
	enum ia_severity sev;
	if (contention)
		sev = impact >= SLOW_HIGH ? IA_SEV_HIGH : impact >= SLOW_MEDIUM ? IA_SEV_MEDIUM : IA_SEV_LOW;
	else
		/* a sync or free whose tail has no host cause waited for the
		 * GPU's own work: what a busy GPU looks like, not starvation */
		sev = ((cls == INGERO_CLASS_SYNC || ingero_api_free_waits(s->api) || reads) && !pageable) || queue_full ? IA_SEV_LOW
			: impact >= SHARE_MEDIUM ? IA_SEV_MEDIUM : IA_SEV_LOW;
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_SLOW_CALLS);
	if (!c)
		return -1;
	c->sev = sev;
	c->api = s->api;
	c->impact = (double)s->excess_ns / (double)whole;
	c->cost_ns = s->excess_ns;
	int workers = (int)a->pp.nworkers, cpus = ia_cpus_of(a);
	const struct ia_proc_stats *mps = a->pp.main >= 0 ? &a->pp.p[a->pp.main] : NULL;
	const struct ia_proc *mp = mps ? &t->procs[mps->proc] : NULL;
	char p99[32], p50[32], r[32], n1[32];
	snprintf(c->summary, sizeof c->summary, "%s p99=%s (%s p50=%s)", ia_api_name(t, s->api),
		 ia_fmt_dur(p99, sizeof p99, s->p99), ia_fmt_ratio(r, sizeof r, s->p50 ? (double)s->p99 / (double)s->p50 : 0),
		 ia_fmt_dur(p50, sizeof p50, s->p50));
	if (contention) {
		ia_addf(c->summary, sizeof c->summary, " -");
		if (s->cpu_sat >= 0)
			ia_addf(c->summary, sizeof c->summary, " CPU %.0f%% +", 100 * s->cpu_sat);
		ia_addf(c->summary, sizeof c->summary, " %s context switches",
		     ia_fmt_count(n1, sizeof n1, mps ? mps->context_switches : s->nswitch));
	} else if (pageable) {
		ia_addf(c->summary, sizeof c->summary, " - pageable host memory");
	} else if (reads) {
		ia_addf(c->summary, sizeof c->summary, " - copies to the host, each waiting for the work queued before it");
	} else if (queue_full) {
		ia_addf(c->summary, sizeof c->summary, " - the GPU's queue was full: it had work %.0f%% of that time",
			100 * gpu_busy);
	} else {
		ia_addf(c->summary, sizeof c->summary, " - no host cause: the thread was %s during the slow calls",
		     on >= blk ? "on-CPU" : "blocked");
	}
	struct slow_view v = { a, t, s, rq, blk, on, gpu_busy, contention, cls, pageable, reads, queue_full, workers, cpus,
			       mps, mp };
	slow_timeline(c, &v);
	slow_cause(c, &v);
	slow_evidence(c, &v);
	return 0;
}
