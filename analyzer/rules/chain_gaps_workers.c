/*
 * chain_gaps_workers.c — the gaps_waiting_workers kind (docs/chains.md):
 * the main thread waits for DataLoader workers that are slower than the
 * GPU, either on CPUs (per-item Python work: the batch-level fix first) or
 * blocked while loading (storage, a remote store, a sleep: the waits to
 * overlap), as the stacks of their blocks tell (gap_workers.c).
 */
#include "rules/chain_gaps.h"

#include "base/json_out.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The workers' loading, where their blocks were sampled: how long they
 * were blocked loading, in what, at which line. */
void ia_gap_view_workers(struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	const struct ia_gap_blocks *b = &g->worker_blocks;
	v->wwait = IA_WAIT_UNKNOWN;
	if (!v->workers)
		return;
	v->wload = ia_gap_workers_loading_ns(g);
	v->wio = v->wload > g->workers_oncpu_ns;
	v->wblocked_at = ia_gap_block_line(b);
	v->wstorage = b->loading_weight > 0 && b->loading_iowait >= IOWAIT_DOMINANT * b->loading_weight;
	uint64_t sys[256], total = 0, ns;
	for (int k = 0; k < 256; k++)   /* (estimates, as ns: one scale with the measured sums) */
		total += sys[k] = (uint64_t)b->loading_sys[k];
	v->wwait = ia_gaps_wait_kind(sys, total, WAIT_DOMINANT, &ns, &v->wwait_sys);
}

/* The workers' blocked time in the gaps: how much of it loading, in D
 * state, in which calls and at which lines. */
void ia_gap_workers_lines(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	const struct ia_gap_blocks *b = &g->worker_blocks;
	char d1[32], d2[32], n1[32], n2[32], line[400], at[600];
	snprintf(line, sizeof line, "[HOST] the workers' main threads blocked %s during the gaps, about %s of it loading "
		 "(not waiting for an index)", ia_fmt_dur(d1, sizeof d1, g->workers_blocked_ns), ia_fmt_dur(d2, sizeof d2, v->wload));
	if (g->workers_iowait_ns && (double)g->workers_iowait_ns >= IOWAIT_SHOWN * (double)g->workers_blocked_ns)
		ia_addf(line, sizeof line, ", %s in D state (storage)", ia_fmt_dur(d1, sizeof d1, g->workers_iowait_ns));
	uint8_t codes[3];
	size_t n = ia_gaps_blocked_in(g->workers_sys_ns, g->workers_blocked_ns, codes, 3);
	for (size_t i = 0; i < n; i++)
		ia_addf(line, sizeof line, "%s%s %s", i ? ", " : "; in ", ia_sys_code_name(codes[i]),
			ia_fmt_dur(d1, sizeof d1, g->workers_sys_ns[codes[i]]));
	ia_chain_line(c, "%s", line);
	if (b->n)
		ia_chain_line(c, "[HOST] where they blocked loading (%s of %s stacks of their blocks in the gaps): %s",
			      ia_fmt_count(n1, sizeof n1, b->loading_sampled), ia_fmt_count(n2, sizeof n2, b->sampled),
			      ia_gap_blocks_text(b, at, sizeof at));
}

/* Batches ready before they are needed: persistent workers, a deeper prefetch. */
/* Workers that keep up: their CPU a step (busy: the workers on CPUs at a
 * time in the gaps, taken as their pace all step long) over the step's
 * time less its wait; 0 without steps to go by. */
static double workers_needed(const struct gap_view *v, double busy, double *batch_ns, double *side_ns)
{
	double steps = ia_steady_steps(v->a);
	uint64_t steady = v->a->idle.steady_ns;
	if (steps < 3 || !steady)
		return 0;
	double step = (double)steady / steps, wait = (double)v->g->total_ns / steps;
	if (wait >= step || step - wait < 1e5)   /* (a step that is all wait: no pace to keep) */
		return 0;
	*batch_ns = busy * step;
	*side_ns = step - wait;
	return *batch_ns / *side_ns;
}

static void prefetch_fix(struct ia_chain *c, const struct gap_view *v)
{
	/* the epoch boundaries say whether the workers outlive an epoch: no
	 * advice to set what is set */
	int persist = ia_phases_workers_persist(&v->a->ph);
	if (persist == 1)
		ia_chain_fix(c, "prefetch_factor=4 (the workers are persistent already: an epoch's iterator restart "
				"forked none), so more batches are ready before they are needed");
	else if (persist == 0)
		ia_chain_fix(c, "persistent_workers=True (each epoch's iterator forked new workers here) and "
				"prefetch_factor=4, so batches are ready before they are needed");
	else
		ia_chain_fix(c, "persistent_workers=True (if not set already) and prefetch_factor=4, so batches are "
				"ready before they are needed");
}

/* What I/O-bound workers waited on, in words, from their loading blocks. */
static const char *loading_wait_words(const struct gap_view *v)
{
	if (v->wstorage)
		return "on storage (D state: reading files the page cache did not hold, or faulting in a memory-mapped "
		       "dataset)";
	switch (v->wwait) {
	case IA_WAIT_SLEEP: return "asleep (time.sleep in the Dataset's code: a rate limit, a retry's back-off, or "
				   "latency it stands in for)";
	case IA_WAIT_POLL:
	case IA_WAIT_READ: return "on a socket, a pipe or a file descriptor (a remote store or service, or another "
				  "process)";
	case IA_WAIT_OPEN: return "on the file system, opening files (many small files, or a network file system)";
	case IA_WAIT_FUTEX: return "on a lock or a queue";
	case IA_WAIT_FAULT: return "in page faults (a memory-mapped dataset)";
	default: return "on I/O, a lock or a sleep";
	}
}

/* The workers were blocked loading longer than they ran: the loading waits
 * on I/O (storage, a remote store, a sleep), and the fix overlaps or
 * shortens the waits, not the CPU work. */
static void loading_io_cause(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	const struct ia_gap_line *at = v->wblocked_at;
	int workers = v->workers;
	char d1[32], d2[32], d3[32], d4[32], n1[32];
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Data loading is slower than the GPU, and it waits on I/O: the main thread was blocked for %s of the %s "
		 "with no GPU work queued, while its %d worker%s were blocked loading for about %s in those gaps (on CPUs "
		 "only %s) — %s%s%s. More CPUs or cheaper Python code would not help; overlapping or shortening the "
		 "waits does.",
		 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns), workers,
		 workers > 1 ? "s" : "", ia_fmt_dur(d3, sizeof d3, v->wload), ia_fmt_dur(d4, sizeof d4, g->workers_oncpu_ns),
		 loading_wait_words(v), v->wwait_sys && !v->wstorage ? ", in " : "",
		 v->wwait_sys && !v->wstorage ? v->wwait_sys : "");
	if (at) {
		snprintf(c->source, sizeof c->source, "%s", at->line);
		ia_addf(c->root_cause, sizeof c->root_cause, " They blocked at %s%s%s%s: %.0f%% of their loading time, by "
			"%s stacks of their blocks while loading.", at->line, at->inner[0] ? " (in " : "", at->inner,
			at->inner[0] ? ")" : "", 100 * at->weight / g->worker_blocks.loading_weight,
			ia_fmt_count(n1, sizeof n1, g->worker_blocks.loading_sampled));
	}
	int more = 2 * workers > 64 ? 64 : 2 * workers;
	ia_chain_fix(c, "More workers: num_workers=%d (%d now) — they wait on I/O rather than use CPUs, so more of them "
			"than CPUs still overlap their waits (memory permitting)", more > v->nw ? more : v->nw, workers);
	const char *where = at ? at->line : "in the Dataset's __getitem__";
	const char *pre = at ? "at " : "";
	if (v->wstorage || v->wwait == IA_WAIT_FAULT)
		ia_chain_fix(c, "Read faster from storage (%s%s): keep the dataset in RAM or on local NVMe, or pack items "
				"into larger files (shards) read sequentially, not one small random read per item", pre, where);
	else if (v->wwait == IA_WAIT_SLEEP)
		ia_chain_fix(c, "The Dataset sleeps %s%s: remove the sleep, or overlap it (more workers, concurrent "
				"requests)", pre, where);
	else if (v->wwait == IA_WAIT_OPEN)
		ia_chain_fix(c, "Open files once, not per item (%s%s): in the Dataset's __init__ or once per worker; on a "
				"network file system each open costs a round trip", pre, where);
	else
		ia_chain_fix(c, "Fetch items concurrently or in batches inside each worker (%s%s): a thread pool in "
				"__getitem__, or a batch sampler fetching a whole batch per request; cache them locally "
				"after the first epoch", pre, where);
	char brief[160];
	snprintf(brief, sizeof brief, "whose loading waits %s", v->wstorage ? "on storage"
		 : v->wwait == IA_WAIT_SLEEP ? "asleep" : v->wwait == IA_WAIT_POLL || v->wwait == IA_WAIT_READ
		 ? "on a socket, a pipe or a file descriptor" : v->wwait == IA_WAIT_OPEN ? "on opening files" : "on I/O");
	ia_json_str(c->evidence, "blocked_on", brief);
}

#define WORKERS_SATURATED 0.5   /* of the workers on CPUs at a time, on average: more would help */
#define WORKERS_ALL_ALONG 0.85  /* ... on their CPUs nearly all along: a deeper queue cannot help */
#define LONG_WAITS_SHARE 0.6     /* of the gap time in the long gaps (gap_bursts.h): a wait now and then */
#define ONE_WORKER_BUSY 0.6      /* of those gaps' time, the busiest worker on a CPU */
#define OTHERS_IDLE 0.5          /* the other workers' CPU time there, of the busiest one's */

/* In the long gaps (gap_bursts.h), the busiest worker's time on a CPU gap
 * by gap (one_ns) and all the workers' (all_ns).  -1 out of memory. */
static int burst_workers(const struct gap_view *v, uint64_t *one_ns, uint64_t *all_ns)
{
	const struct ia_gaps *g = v->g;
	const struct ia_trace *t = v->a->t;
	*one_ns = *all_ns = 0;
	/* the workers' main threads, once: not a walk of every thread per gap */
	uint32_t *wt = malloc(t->nthreads * sizeof *wt);
	size_t nw = 0;
	if (!wt && t->nthreads)
		return -1;
	for (size_t th = 0; th < t->nthreads; th++)
		if (ia_worker_main_thread(t, &v->a->pp, (uint32_t)th))
			wt[nw++] = (uint32_t)th;
	for (size_t i = 0; i < g->n; i++) {
		const struct ia_gap *x = &g->g[i];
		if (x->end - x->start < v->bursts.min_len)
			continue;
		uint64_t w[2] = { x->start, x->end }, one = 0;
		for (size_t k = 0; k < nw; k++) {
			uint64_t on = ia_thread_oncpu_windows(t, wt[k], w, 1);
			*all_ns += on;
			one = on > one ? on : one;
		}
		*one_ns += one;
	}
	free(wt);
	return 0;
}

/* Head-of-line blocking: batches come back in order, so one slow batch
 * holds up the loop while the workers that finished theirs wait for their
 * next index (the prefetch queue is full).  The loop waits rarely and long,
 * one worker at a time on a CPU: more workers would wait too; the slow item
 * is what to fix, or the order to relax.  1 when it is that. */
static int head_of_line(struct ia_chain *c, const struct gap_view *v, const char *where)
{
	const struct ia_gap_bursts *bu = &v->bursts;
	if (!v->bursty || bu->share < LONG_WAITS_SHARE)
		return 0;
	/* in the long waits one worker at a time ran (the others' CPU time is
	 * small beside the busiest one's): not workers in lockstep, nor
	 * workers starting up together */
	uint64_t one, all;
	if (burst_workers(v, &one, &all) < 0 || one < ONE_WORKER_BUSY * bu->ns || all - one > OTHERS_IDLE * one)
		return 0;
	const struct ia_gaps *g = v->g;
	char d1[32], d2[32], d3[32], n1[32], n2[32];
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The loop waits for one slow batch at a time: the main thread was blocked for %s of the %s with no GPU "
		 "work queued, and %s of the %s gaps hold %.0f%% of the gap time (the longest %s); in them one worker "
		 "at a time was on a CPU (%.0f%% of their time; the other %d together %.0f%%). The DataLoader hands "
		 "batches over in order, so the loop waits for the slow one while the other workers, their batches done, "
		 "wait for their next index (head-of-line blocking): on average the workers keep up, and more of them "
		 "would wait too.",
		 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
		 ia_fmt_count(n1, sizeof n1, bu->n), ia_fmt_count(n2, sizeof n2, g->n), 100 * bu->share,
		 ia_fmt_dur(d3, sizeof d3, bu->longest), 100.0 * (double)one / (double)bu->ns, v->at_once - 1,
		 100.0 * (double)(all - one) / (double)bu->ns);
	if (v->stk_workers[0])
		ia_addf(c->root_cause, sizeof c->root_cause, " Worker CPU time (sampled): %s.", v->stk_workers);
	ia_chain_fix(c, "Find the slow items and make them cheap%s%s: time __getitem__ per index (a few items cost far "
			"more than the rest: large files, long sequences, a retry) and precompute, cache or cap them",
		     where[0] ? " — the workers' time is most in " : "", where);
	ia_chain_fix(c, "DataLoader(..., in_order=False) (PyTorch 2.6+) hands over the batches that are ready first, "
			"so one slow batch no longer holds up the others (the order of batches changes)");
	ia_json_round(c->evidence, "long_waits_share", bu->share, 3);
	ia_json_round(c->evidence, "long_waits_one_worker", (double)one / (double)bu->ns, 3);
	return 1;
}

void ia_gap_cause_workers(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	int workers = v->workers, cpus = v->cpus, nw = v->nw;
	char d1[32], d2[32], d3[32], where[520];
	if (v->wio) {
		loading_io_cause(c, v);
		prefetch_fix(c, v);
		return;
	}
	/* workers mostly off their CPUs do not produce too slowly on average:
	 * the loop waits for batches at times (a restart's first batches, a
	 * slow item) — not "slower than the GPU" (c32: 0.5 of 4 workers busy,
	 * the waits after each epoch's fork) */
	int idle_pace = g->total_ns && (double)g->workers_oncpu_ns < WORKERS_SATURATED * v->at_once * (double)g->total_ns &&
			!ia_cpu_quota_throttled(v->a) && !ia_workers_crowd_cpus(v->a) && !(v->sat >= SATURATED);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "%s: the main thread was blocked for %s of the %s with no GPU work queued, while %d worker%s spent %s on "
		 "CPUs in those gaps%s",
		 idle_pace ? "The loop waits for its batches" : "Data loading is slower than the GPU",
		 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns), workers,
		 workers > 1 ? "s" : "", ia_fmt_dur(d3, sizeof d3, g->workers_oncpu_ns),
		 idle_pace ? "." : " — the workers produce batches slower than the model consumes them.");
	if (idle_pace && ia_phases_workers_persist(&v->a->ph) == 0)
		ia_addf(c->root_cause, sizeof c->root_cause, " Each epoch's iterator forked new workers, and its first "
			"batches wait for them to start (the epoch boundaries finding).");
	int wmech = IA_MECH_NONE;
	if (v->stk_workers[0]) {
		ia_addf(c->root_cause, sizeof c->root_cause, " Worker CPU time (sampled): %s.", v->stk_workers);
		wmech = ia_gap_mech_workers(c, v);
	}
	/* the general wait-for walk (wakers.c) through the loader: which of its
	 * threads ended the loop's waits (a worker, its queue's feeder, the
	 * pin-memory thread) and where that chain of waits ends (version 7) */
	if (v->a->wakers.nhops) {
		char path[1200];
		ia_addf(c->root_cause, sizeof c->root_cause, " Followed to its end: %s.",
			ia_wakers_text(v->a->t, &v->a->wakers, path, sizeof path));
	}
	/* Per-item work in the workers: collation frames, or the interpreter
	 * running __getitem__ row by row.  More workers divide it; doing it per
	 * batch removes it (on the H200, 7M rows: 9.9 s with 15 workers, 0.68 s
	 * sliced), so that fix comes first. */
	double winterp = ia_stacks_interpreter_share(g, IA_GAP_WORKERS);
	int wcoll = ia_stacks_show_collation(g, IA_GAP_WORKERS);
	int per_item = wcoll || winterp >= INTERPRETER_SHARE;
	const struct ia_gap_stack *whot = ia_stacks_python_top(g, IA_GAP_WORKERS);
	if (per_item && !wcoll && whot)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of the workers' samples run Python code, the most in %s: per-item work such as a "
			"Dataset's __getitem__ and the default collation.", 100 * winterp, ia_python_where(whot, where, sizeof where));
	else if (per_item && !wcoll)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of the workers' samples are the Python interpreter itself: per-item Python code "
			"such as a Dataset's __getitem__ and the default collation.", 100 * winterp);
	if (whot && whot->user_python[0] && per_item)   /* the workers' own code starves the GPU */
		snprintf(c->source, sizeof c->source, "%s", whot->user_python);
	else if (v->blocked_at && strcmp(v->blocked_at->line, "(no Python frame)"))
		/* the loop's line that waits for the batch (the DataLoader's
		 * iteration), not the call after the wait (c01: x.cuda()) */
		snprintf(c->source, sizeof c->source, "%s", v->blocked_at->line);
	if (ia_workers_crowd_cpus(v->a))
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %d workers plus the main process are more than the %d CPUs: they also fight for them.", v->at_once,
			cpus);
	if (ia_cpu_quota_throttled(v->a)) {
		ia_cpu_quota_cause(c, v->a);
		ia_addf(c->root_cause, sizeof c->root_cause, ": the workers' CPU time is capped by the quota, not by the "
			"machine's %d CPUs.", ia_machine_cpus(v->a));
		ia_cpu_quota_fix(c);
	}
	/* more workers only help when the ones there are busy: with fewer than
	 * half of them on a CPU at a time, more would mostly wait too */
	double busy = g->total_ns ? (double)g->workers_oncpu_ns / (double)g->total_ns : 0;
	int idle_workers = busy < WORKERS_SATURATED * v->at_once;
	if (idle_workers && v->at_once > 1 && !ia_cpu_quota_throttled(v->a) &&
	    head_of_line(c, v, whot && per_item ? ia_python_where(whot, where, sizeof where) : "")) {
		prefetch_fix(c, v);
		return;
	}
	if (idle_workers && v->at_once <= cpus - 1)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" The %d workers were on CPUs %.1f at a time on average in the gaps, fewer than half of them: "
			"more workers would mostly wait as well.", v->at_once, busy);
	if (per_item)
		ia_batch_level_fix(c);
	char shared[48] = "";   /* ranks share the machine's CPUs (ia_good_workers: a rank's share) */
	if (v->a->local_ranks > 1)
		snprintf(shared, sizeof shared, " for %d ranks", v->a->local_ranks);
	/* workers on their CPUs all along produce a batch per their CPU a
	 * step: how many would keep up with the step's own time (the step
	 * less its wait) — past the CPUs there are, each batch must get
	 * cheaper first (c64: JPEG decoding, ~180 ms of CPU a batch against a
	 * 9 ms step: ~21 workers, 15 CPUs free; "num_workers=6" had led) */
	double need_batch = 0, need_side = 0, need = busy >= WORKERS_ALL_ALONG * v->at_once && !ia_workers_crowd_cpus(v->a)
					     ? workers_needed(v, busy, &need_batch, &need_side) : 0;
	char d4[32], d5[32];
	if (need > nw) {
		ia_addf(c->root_cause, sizeof c->root_cause,
			" Each batch takes the workers about %s of CPU while a step needs %s besides its wait: about %.0f "
			"workers would keep up, more than the %d the CPUs allow%s, so each batch must get cheaper.",
			ia_fmt_dur(d4, sizeof d4, (uint64_t)need_batch), ia_fmt_dur(d5, sizeof d5, (uint64_t)need_side),
			ceil(need), nw, shared);
		size_t before = (size_t)c->nfixes;
		if (wmech != IA_MECH_NONE) {
			ia_chain_fix(c, "%s", ia_mech_fix((enum ia_mech)wmech));
			wmech = IA_MECH_NONE;   /* (said: not again below) */
		}
		if ((size_t)c->nfixes > before)
			ia_chain_fix_move(c, c->nfixes - 1, 0);
		if (v->at_once < nw)
			ia_chain_fix(c, "Then more workers, up to the CPUs: num_workers=%d (%d now, %d CPUs%s)", nw, v->at_once,
				     cpus, shared);
	} else if (need > v->at_once && v->at_once < nw) {
		ia_chain_fix(c, "More workers: num_workers=%.0f (%d now): each batch takes them about %s of CPU, a step %s "
				"besides its wait", ceil(need), v->at_once, ia_fmt_dur(d4, sizeof d4, (uint64_t)need_batch),
			     ia_fmt_dur(d5, sizeof d5, (uint64_t)need_side));
	} else if (ia_workers_crowd_cpus(v->a))
		ia_chain_fix(c, "num_workers=%d: %d workers + the main process on %d CPUs%s fight for them", nw, v->at_once,
			     cpus, shared);
	else if (v->at_once < nw && !idle_workers && nw <= 2 * v->at_once)
		ia_chain_fix(c, "More workers: num_workers=%d (%d now, %d CPUs%s)", nw, v->at_once, cpus, shared);
	else if (v->at_once < nw && !idle_workers)   /* doubled first, then measured again */
		ia_chain_fix(c, "More workers: num_workers=%d (%d now, %d CPUs%s), and up to %d while the GPU still waits "
				"for batches", 2 * v->at_once, v->at_once, cpus, shared, nw);
	/* what the workers' time is (decoding images): its fix makes each
	 * batch cheaper, after more workers where CPUs are free */
	if (wmech != IA_MECH_NONE)
		ia_chain_fix(c, "%s", ia_mech_fix((enum ia_mech)wmech));
	/* a deeper queue evens out a loader's bursts; it adds no CPU to
	 * workers that already have every CPU (more of them than CPUs, or the
	 * CPUs saturated: c51), nor to workers on their CPUs all along (c45,
	 * c47: 1.8 of 2, 1.0 of 1): no advice that cannot help — but workers
	 * forked again each epoch are a cost persistent_workers removes */
	int workers_busy = busy >= WORKERS_ALL_ALONG * v->at_once;
	if (!ia_workers_crowd_cpus(v->a) && !(v->sat >= SATURATED) && !workers_busy)
		prefetch_fix(c, v);
	else if (workers_busy && ia_phases_workers_persist(&v->a->ph) == 0)
		ia_chain_fix(c, "persistent_workers=True: each epoch's iterator forked new workers here");
	if (!per_item && !g->samples_workers)
		ia_batch_level_fix(c);
}
