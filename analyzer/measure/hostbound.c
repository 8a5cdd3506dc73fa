/*
 * hostbound.c — finding the stretches where the GPU kept up with the host,
 * and measuring what the host did in them (see hostbound.h).
 *
 * Costs: one walk over the main process's calls (the merged list gaps.c
 * builds), a binary search into the main thread's off-CPU index per
 * stretch, and one bounded query (steps.h) for the call-sequence period of
 * the longest stretch.
 */
#include "measure/hostbound.h"

#include "load/db.h"
#include "measure/gaps.h"
#include "measure/phases.h"
#include "measure/steps.h"
#include "base/util.h"

#include <ingero/api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_launch(unsigned api)
{
	return ingero_api_class(api) == INGERO_CLASS_LAUNCH;
}

/* Python line of each stack-sampled launch of a stretch (1 in 256 by default:
 * the counts are samples, comparable with each other, not launch counts). */
static int count_lines(const struct ia_trace *t, struct ia_stack_names *names, struct ia_hostbound *h,
		       size_t *cap, size_t *ucap, const uint8_t *th_generate, const struct ia_call *c)
{
	if (!is_launch(c->api) || !c->stack)
		return 0;
	h->launch_samples++;
	uint64_t id = t->stack_ids[c->stack];
	h->generate_samples += ia_stack_hf_generate(names, id) || (!ia_stack_py_whole(names, id) && th_generate[c->th]);
	const char *user = ia_stack_user_python(names, id);
	if (user) {
		struct ia_gap_line *u = ia_line_slot(&h->user_lines, &h->nuser_lines, ucap, user);
		if (!u)
			return -1;
		u->count++;
		u->api = c->api;
	}
	const char *py = ia_stack_python(names, id);   /* innermost: torch/optim lines name the optimizer */
	if (!py)
		return 0;
	const char *fn = strstr(py, "/optim/") ? ia_stack_python_func(names, id) : NULL;
	if (fn) {
		h->optim_single_samples += !strncmp(fn, "_single_tensor_", 15);
		h->optim_fused_samples += !strncmp(fn, "_fused_", 7);
	}
	struct ia_gap_line *l = ia_line_slot(&h->lines, &h->nlines, cap, py);
	if (!l)
		return -1;
	l->count++;
	l->api = c->api;
	return 0;
}

/* Adds the stretch ix[first..last] (last = its closing call) when it is
 * host-bound; returns -1 only when out of memory. */
struct walk {
	size_t lcap, ucap;           /* of h->lines, h->user_lines */
	size_t wcap;                 /* of h->w */
	size_t cwcap;                /* of h->calls_w */
	size_t dwcap;                /* of h->drain_wait */
	uint64_t drained;            /* the wait beyond the floor of the last completing call */
	uint64_t *th_launches;       /* per thread index */
	uint8_t *th_generate;        /* per thread index: it runs Transformers' generate (generate_threads) */
	const struct ia_phases *ph;
	const struct ia_gaps *g;     /* its relay (gaps.h), where the main process has one */
};

/* Time inside the calls ix[first..last] (union across threads), and of it
 * inside launches. */
static void time_in_calls(const struct ia_trace *t, const uint32_t *ix, size_t first, size_t last, uint64_t b,
			  uint64_t *in, uint64_t *in_launch)
{
	uint64_t until = t->calls[ix[first]].start;
	*in = *in_launch = 0;
	for (size_t k = first; k <= last; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		/* (to the stretch's end: a closing call that waited ends it where it began) */
		uint64_t end = c->start + c->dur < b ? c->start + c->dur : b, s0 = c->start > until ? c->start : until;
		if (end > s0) {   /* union: calls of two threads may overlap */
			*in += end - s0;
			if (is_launch(c->api))
				*in_launch += end - s0;
			until = end;
		}
	}
}

static int add_stretch(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		       struct ia_hostbound *h, struct walk *wk, const uint32_t *ix, size_t first, size_t last)
{
	const struct ia_call *close = &t->calls[ix[last]];
	/* a closing call that waited (kept only with the GPU estimate) ends the
	 * stretch where it began: its wait is the sync's, not the host's issuing */
	uint64_t a = t->calls[ix[first]].start,
		 b = close->start + (close->dur > IA_SYNC_FLOOR_NS ? 0 : close->dur);
	uint64_t launches = 0;
	for (size_t k = first; k <= last; k++)
		launches += is_launch(t->calls[ix[k]].api);
	/* the rate is over the whole stretch: a stretch of slow host work with
	 * a few launches is host time, not launch-bound */
	if (!launches || b <= a || (double)launches * 1e9 < IA_HOSTBOUND_MIN_RATE * (double)(b - a))
		return 0;
	if (wk->ph && ia_phases_majority(wk->ph, a, b) != IA_PHASE_STEADY)
		return 0;   /* start-up, compiling, autotuning: reported as phases */
	uint64_t in, in_launch, wait = 0, wait_launch = 0;
	time_in_calls(t, ix, first, last, b, &in, &in_launch);
	if (last > first)   /* before the closing call, which waited no more than the floor */
		time_in_calls(t, ix, first, last - 1, b, &wait, &wait_launch);
	if ((wait - wait_launch) * 2 >= b - a) {   /* the host waited for the device inside calls */
		h->waited_n++;
		return 0;
	}
	if (ia_grow((void **)&h->w, &wk->wcap, 2 * (h->n + 1), sizeof *h->w) < 0)
		return -1;
	if (ia_grow((void **)&h->drain_wait, &wk->dwcap, h->n + 1, sizeof *h->drain_wait) < 0)
		return -1;
	h->drain_wait[h->n] = wk->drained;
	h->w[2 * h->n] = a;
	h->w[2 * h->n + 1] = b;
	h->n++;
	h->ns += b - a;
	h->steady_ns += wk->ph ? ia_phases_time_in(wk->ph, IA_PHASE_STEADY, a, b) : b - a;
	h->launches += launches;
	h->calls += last - first + 1;
	h->in_calls_ns += in;
	h->in_launch_ns += in_launch;
	uint64_t prev_launch = 0;
	for (size_t k = first; k < last; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (ia_api_queues_work(c->api) || c->dur <= IA_SYNC_FLOOR_NS)
			continue;
		uint64_t e = c->start + c->dur < b ? c->start + c->dur : b;
		if (h->ncalls_w && c->start <= h->calls_w[2 * h->ncalls_w - 1]) {   /* overlaps the last (another thread) */
			if (e > h->calls_w[2 * h->ncalls_w - 1])
				h->calls_w[2 * h->ncalls_w - 1] = e;
			continue;
		}
		if (ia_grow((void **)&h->calls_w, &wk->cwcap, 2 * (h->ncalls_w + 1), sizeof *h->calls_w) < 0)
			return -1;
		h->calls_w[2 * h->ncalls_w] = c->start;
		h->calls_w[2 * h->ncalls_w + 1] = e;
		h->ncalls_w++;
	}
	for (size_t k = first; k <= last; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (ingero_api_class(c->api) == INGERO_CLASS_COPY) {
			h->copies++;
			h->copy_bytes += c->bytes;
		}
		if (is_launch(c->api)) {
			wk->th_launches[c->th]++;
			if (prev_launch) {
				h->launch_gap_ns += c->start - prev_launch;
				h->launch_gaps++;
			}
			prev_launch = c->start;
		}
		if (count_lines(t, names, h, &wk->lcap, &wk->ucap, wk->th_generate, c) < 0)
			return -1;
	}
	/* in a relay, the stretch is read on the thread that drove the GPU then:
	 * the one whose call closes it */
	uint32_t drv = wk->g->nrelay && ia_gaps_in_relay(wk->g, close->th) ? close->th : pp->main_thread;
	if (drv != UINT32_MAX) {
		uint64_t off = 0, rq = 0;
		ia_thread_off_in(t, drv, a, b, &off, &rq, NULL);
		h->main_off_ns += off;
		h->main_runq_ns += rq;
	}
	if (close->dur > IA_SYNC_FLOOR_NS)
		h->busy_close_n++;
	if (close->dur > h->close_max_ns)
		h->close_max_ns = close->dur;
	if (b - a > h->long_end - h->long_start) {
		h->long_start = a;
		h->long_end = b;
		h->long_launches = launches;
		h->long_calls = last - first + 1;
		h->long_close = ix[last];
	}
	return 0;
}

/* The period of the longest stretch's call sequence (steps.h). */
static int stretch_period(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_hostbound *h,
			  char *err, size_t errlen)
{
	struct ia_steps st;
	if (ia_steps_find(t, t->procs[pp->p[pp->main].proc].pid, h->long_start, h->long_end, IA_HOSTBOUND_PERIOD_MAX,
			  IA_STEPS_MAX_CALLS, &st, err, errlen) < 0)
		return -1;
	h->period_calls = st.calls;
	h->period_launches = st.launches;
	return 0;
}

/* The main thread's launches (a relay's threads': gaps.h), and the CPU time
 * of the other threads of the main process that launched in the stretches. */
static void issuing_threads(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_hostbound *h,
			    const struct walk *wk)
{
	for (size_t th = 0; th < t->nthreads; th++) {
		uint64_t n = wk->th_launches[th];
		if (!n)
			continue;
		if (th == pp->main_thread || ia_gaps_in_relay(wk->g, (uint32_t)th)) {
			h->main_launches += n;
			continue;
		}
		h->nothers++;
		h->others_oncpu_ns += ia_thread_oncpu_windows(t, (uint32_t)th, h->w, h->n);
		if (n > h->top_other_launches) {
			h->top_other_launches = n;
			h->top_other = (uint32_t)th;
		}
	}
}

/* The threads that run Transformers' generate.  The library keeps a
 * launch's innermost Python frames only, and a deep model's forward hides
 * what called it (c75: 13 of 53 sampled launches of generate's threads
 * showed generate): a launch whose stack is cut (its outermost frame does
 * not begin a thread, stacks.h ia_stack_py_whole) counts as generate's when
 * most of its thread's launch stacks that tell — under generate, or whole —
 * are under generate. */
static int generate_threads(const struct ia_trace *t, struct ia_stack_names *names, const uint32_t *ix, size_t n,
			    uint8_t *out)
{
	int32_t *vote = calloc(t->nthreads + 1, sizeof *vote);
	if (!vote)
		return -1;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (!is_launch(c->api) || !c->stack)
			continue;
		uint64_t id = t->stack_ids[c->stack];
		if (ia_stack_hf_generate(names, id))
			vote[c->th]++;
		else if (ia_stack_py_whole(names, id))
			vote[c->th]--;
	}
	for (size_t th = 0; th < t->nthreads; th++)
		out[th] = vote[th] > 0;
	free(vote);
	return 0;
}

/* Adds v to the set k[0..*n) (capped at IA_TOP_LINE_KINDS). */
static void add_kind(uint32_t *k, uint32_t *n, uint32_t v)
{
	for (uint32_t i = 0; i < *n; i++)
		if (k[i] == v)
			return;
	if (*n < IA_TOP_LINE_KINDS)
		k[(*n)++] = v;
}

/* top_funcs and top_works: the kernels of lines[0]'s sampled launches, and
 * their geometries (hostbound.h). */
static void top_line_kinds(const struct ia_trace *t, struct ia_stack_names *names, const uint32_t *ix, size_t n,
			   struct ia_hostbound *h)
{
	uint32_t funcs[IA_TOP_LINE_KINDS], works[IA_TOP_LINE_KINDS];
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (!is_launch(c->api) || !c->stack || !c->work)
			continue;
		const char *py = ia_stack_python(names, t->stack_ids[c->stack]);
		if (!py || strcmp(py, h->lines[0].line))
			continue;
		add_kind(funcs, &h->top_funcs, c->func);
		add_kind(works, &h->top_works, c->work);
	}
}

int ia_hostbound_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			 const struct ia_phases *ph, const struct ia_gaps *g, struct ia_hostbound *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	if (pp->main < 0)
		return 0;
	const uint32_t *ix = g->main_calls;
	size_t n = g->nmain_calls;
	int gpu_estimate = g->gpu.nest[1] != 0;
	h->has_offcpu = pp->main_thread != UINT32_MAX && t->threads[pp->main_thread].off_n > 0;
	for (size_t i = 0; i < g->nrelay; i++)
		h->has_offcpu |= t->threads[g->relay[i]].off_n > 0;
	h->relay_threads = g->nrelay;
	size_t first = SIZE_MAX;
	struct walk wk = { 0 };
	wk.ph = ph;
	wk.g = g;
	wk.th_launches = calloc(t->nthreads + 1, sizeof *wk.th_launches);
	wk.th_generate = calloc(t->nthreads + 1, 1);
	if (!wk.th_launches || !wk.th_generate || generate_threads(t, names, ix, n, wk.th_generate) < 0)
		goto oom;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (first == SIZE_MAX && ia_api_queues_work(c->api))
			first = k;
		if (!ia_call_completes_work(c))
			continue;
		if (first != SIZE_MAX && (c->dur <= IA_SYNC_FLOOR_NS || gpu_estimate) &&
		    add_stretch(t, pp, names, h, &wk, ix, first, k) < 0)
			goto oom;
		first = SIZE_MAX;   /* whatever it waited, the queue is drained now */
		wk.drained = c->dur > IA_SYNC_FLOOR_NS ? c->dur - IA_SYNC_FLOOR_NS : 0;
	}
	issuing_threads(t, pp, h, &wk);
	free(wk.th_launches);
	free(wk.th_generate);
	if (h->nlines) {
		qsort(h->lines, h->nlines, sizeof *h->lines, ia_gap_line_by_count);
		top_line_kinds(t, names, ix, n, h);
	}
	if (h->nuser_lines)
		qsort(h->user_lines, h->nuser_lines, sizeof *h->user_lines, ia_gap_line_by_count);
	return h->n ? stretch_period(t, pp, h, err, errlen) : 0;
oom:
	free(wk.th_launches);
	free(wk.th_generate);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_hostbound_free(struct ia_hostbound *h)
{
	free(h->lines);
	free(h->user_lines);
	free(h->w);
	free(h->calls_w);
	free(h->drain_wait);
	memset(h, 0, sizeof *h);
}
