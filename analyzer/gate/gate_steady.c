/*
 * gate_steady.c — a run's steady-state figures and their noise, for the
 * gate (see gate_steady.h).
 *
 * Nothing here re-derives what explain computes: the steady windows come
 * from phases.c, the step from steps.c (ph.steps), the GPU idle of the
 * whole steady state from idle.c, and the idle stretches the blocks are
 * measured with are the ones idle.c summed (the measured idle spans and
 * the estimate's busy spans with GPU marks, the steady gaps without).
 * What is added is the cut into blocks, the counts of the main process's
 * calls in them, and the facts a cause is told by.
 */
#include "gate/gate_steady.h"

#include "gate/gate_stats.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Time of the steady gaps inside [a, b) (gaps are sorted and disjoint). */
static uint64_t gaps_within(const struct ia_gaps *g, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {   /* first gap ending after a */
		size_t mid = (lo + hi) / 2;
		if (g->g[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t sum = 0;
	for (size_t i = lo; i < g->n && g->g[i].start < b; i++) {
		uint64_t s = g->g[i].start > a ? g->g[i].start : a, e = g->g[i].end < b ? g->g[i].end : b;
		if (e > s)
			sum += e - s;
	}
	return sum;
}

/* What one block (or the whole steady state) holds. */
struct tally {
	uint64_t ns, calls, launches, syncs, idle_ns, est_busy_ns;
	uint64_t pinned_bytes, pageable_bytes;
};

static void tally_span(const struct ia_analysis *a, uint64_t s, uint64_t e, struct tally *x)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	x->ns += e - s;
	for (size_t i = ia_gaps_first_call_at(t, g, s); i < g->nmain_calls; i++) {
		const struct ia_call *c = &t->calls[g->main_calls[i]];
		if (c->start >= e)
			break;
		enum ingero_api_class k = ingero_api_class(c->api);
		x->calls++;
		x->launches += k == INGERO_CLASS_LAUNCH;
		x->syncs += k == INGERO_CLASS_SYNC;
		if (k == INGERO_CLASS_COPY && c->dir == INGERO_DIR_HTOD && c->bytes >= IA_GATE_COPY_MIN) {
			if (c->flags & INGERO_FLAG_HOST_PAGEABLE)
				x->pageable_bytes += c->bytes;
			else if (c->flags & INGERO_FLAG_HOST_PINNED)
				x->pinned_bytes += c->bytes;
		}
	}
	if (g->gpu.measured) {
		x->idle_ns += ia_spans_within(g->gpu.idle, g->gpu.nidle, s, e);
		x->est_busy_ns += ia_spans_within(g->gpu.est[1], g->gpu.nest[1], s, e);
	} else {
		x->idle_ns += gaps_within(g, s, e);
	}
}

/* Steps in a tally: launches over a step's launches, else calls over a step's calls. */
static double steps_of(const struct ia_steps *st, const struct tally *x)
{
	if (st->launches)
		return (double)x->launches / st->launches;
	if (st->calls)
		return (double)x->calls / st->calls;
	return 0;
}

static double sd_over_root(const double *v, size_t n)
{
	return n >= 2 ? ia_gate_sd(v, n) / sqrt((double)n) : 0;
}

/* The parts of windows w[0..nw) outside the main thread's CUDA calls (a
 * sync may spin on a CPU: that is waiting for the GPU, not host work), as
 * a new array of *n pairs; NULL when out of memory. */
static uint64_t *outside_calls(const struct ia_analysis *a, const uint64_t *w, size_t nw, size_t *n)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t *out = NULL;
	size_t cap = 0;
	*n = 0;
	for (size_t i = 0; i < nw; i++) {
		uint64_t cur = w[2 * i], e = w[2 * i + 1];
		for (size_t k = ia_gaps_first_call_at(t, g, cur); k <= g->nmain_calls && cur < e; k++) {
			const struct ia_call *c = k < g->nmain_calls ? &t->calls[g->main_calls[k]] : NULL;
			if (c && c->th != a->pp.main_thread)
				continue;
			uint64_t stop = c && c->start < e ? c->start : e;
			if (stop > cur) {
				if (ia_grow((void **)&out, &cap, 2 * (*n + 1), sizeof *out) < 0) {
					free(out);
					return NULL;
				}
				out[2 * *n] = cur;
				out[2 * *n + 1] = stop;
				(*n)++;
			}
			if (!c || c->start >= e)
				break;
			if (c->start + c->dur > cur)
				cur = c->start + c->dur;
		}
	}
	return out;
}

/* CPU time in windows w of the main thread outside its CUDA calls, and of
 * the worker processes' threads. */
static void cpu_in(const struct ia_analysis *a, const uint64_t *w, size_t nw, uint64_t *main_ns, uint64_t *workers_ns)
{
	const struct ia_trace *t = a->t;
	*main_ns = *workers_ns = 0;
	if (a->pp.main_thread != UINT32_MAX) {
		size_t n = 0;
		uint64_t *own = outside_calls(a, w, nw, &n);
		if (own)
			*main_ns = ia_thread_oncpu_windows(t, a->pp.main_thread, own, n);
		free(own);
	}
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_proc_stats *ps = ia_pp_of_proc(&a->pp, t->threads[th].proc);
		if (ps && ps->role == IA_ROLE_WORKER && !ia_thread_is_tracer(&t->threads[th]))
			*workers_ns += ia_thread_oncpu_windows(t, (uint32_t)th, w, nw);
	}
}

int ia_gate_steady_compute(const struct ia_analysis *a, struct ia_gate_run *r)
{
	const struct ia_idle *id = &a->idle;
	const struct ia_gaps *g = &a->gaps;
	const struct ia_steps *st = &a->ph.steps;
	r->startup_s = (double)(id->phase_ns[IA_PHASE_STARTUP] + id->pre_window_startup_ns) / 1e9;
	r->compilation_s = (double)id->phase_ns[IA_PHASE_COMPILE] / 1e9;
	r->autotuning_s = (double)id->phase_ns[IA_PHASE_AUTOTUNE] / 1e9;
	r->epochs_s = (double)id->phase_ns[IA_PHASE_EPOCH] / 1e9;
	r->workers = (double)a->pp.nworkers;
	r->window_s = (double)id->window_ns / 1e9;
	if (a->pp.main < 0 || !id->steady_ns || g->win_end <= g->win_start)
		return 0;

	size_t nw = 0;
	uint64_t *w = ia_phases_steady_windows(&a->ph, g->win_start, g->win_end, &nw);
	uint64_t whole[2] = { g->win_start, g->win_end };
	if (!w) {   /* no phase in the window (or no memory): the steady state is the window */
		w = whole;
		nw = 1;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < nw; i++)
		total += w[2 * i + 1] - w[2 * i];

	struct tally all;
	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < nw; i++)
		tally_span(a, w[2 * i], w[2 * i + 1], &all);
	double steps = steps_of(st, &all);

	/* blocks of equal steady time, a few steps (or 50 calls) each */
	double units = steps > 0 ? steps / IA_GATE_BLOCK_STEPS : (double)all.calls / 50;
	size_t nb = units > IA_GATE_BLOCKS ? IA_GATE_BLOCKS : units > 2 ? (size_t)units : 2;
	struct tally *blk = calloc(nb, sizeof *blk);
	double *v = calloc(nb, sizeof *v);
	if (!blk || !v || !total) {
		free(blk);
		free(v);
		if (w != whole)
			free(w);
		return total ? -1 : 0;
	}
	size_t k = 0;
	uint64_t done = 0;   /* steady time tallied so far */
	for (size_t i = 0; i < nw; i++) {
		uint64_t s = w[2 * i], e = w[2 * i + 1];
		while (s < e) {
			/* block k ends at steady time (k + 1) * total / nb; the last runs to the end */
			uint64_t end_k = k + 1 >= nb ? UINT64_MAX
						     : (uint64_t)((double)total * (double)(k + 1) / (double)nb);
			uint64_t room = end_k > done ? end_k - done : 0;
			uint64_t cut = e - s <= room ? e : s + room;
			if (cut > s)
				tally_span(a, s, cut, &blk[k]);
			done += cut - s;
			s = cut;
			if (done >= end_k)
				k++;
		}
	}

	r->steady = 1;
	r->blocks = (unsigned)nb;
	r->steady_s = (double)id->steady_ns / 1e9;
	r->step_calls = st->calls;
	r->step_launches = st->launches;
	r->step_s = (double)st->ns / 1e9;
	r->steps = steps;
	double secs = (double)total / 1e9;
	r->calls_per_s = (double)all.calls / secs;
	for (size_t b = 0; b < nb; b++)
		v[b] = blk[b].ns ? (double)blk[b].calls * 1e9 / (double)blk[b].ns : 0;
	r->calls_per_s_se = sd_over_root(v, nb);
	if (steps > 0) {
		r->steps_per_s = steps / secs;
		for (size_t b = 0; b < nb; b++)
			v[b] = blk[b].ns ? steps_of(st, &blk[b]) * 1e9 / (double)blk[b].ns : 0;
		r->steps_per_s_se = sd_over_root(v, nb);
	}

	/* GPU idle: explain's figures for the whole steady state, the blocks for their noise */
	r->idle_measured = id->measured;
	r->idle_low = 100.0 * (double)id->steady_low_ns / (double)id->steady_ns;
	r->idle_high = 100.0 * (double)id->steady_high_ns / (double)id->steady_ns;
	for (size_t b = 0; b < nb; b++)
		v[b] = blk[b].ns ? 100.0 * (double)blk[b].idle_ns / (double)blk[b].ns : 0;
	r->idle_low_se = sd_over_root(v, nb);
	r->idle_has_est = ia_idle_estimated(id);
	if (r->idle_has_est) {
		r->idle_est = 100.0 * (double)id->steady_est_ns[1] / (double)id->steady_ns;
		for (size_t b = 0; b < nb; b++)
			v[b] = blk[b].ns && blk[b].ns > blk[b].est_busy_ns
				       ? 100.0 * (double)(blk[b].ns - blk[b].est_busy_ns) / (double)blk[b].ns : 0;
		r->idle_est_se = sd_over_root(v, nb);
	}

	/* the facts, per step (per second without one) */
	uint64_t main_ns, workers_ns;
	cpu_in(a, w, nw, &main_ns, &workers_ns);
	double per = steps > 0 ? steps : secs;
	r->main_cpu_ms = (double)main_ns / 1e6 / per;
	r->workers_cpu_ms = (double)workers_ns / 1e6 / per;
	r->syncs = (double)all.syncs / per;
	r->h2d_pinned_mb = (double)all.pinned_bytes / 1048576.0 / per;
	r->h2d_pageable_mb = (double)all.pageable_bytes / 1048576.0 / per;
	free(blk);
	free(v);
	if (w != whole)
		free(w);
	return 0;
}
