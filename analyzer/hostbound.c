/*
 * hostbound.c — finding the stretches where the GPU kept up with the host,
 * and measuring what the host did in them (see hostbound.h).
 *
 * Costs: one walk over the main process's calls (the merged list gaps.c
 * builds), a binary search into the main thread's off-CPU index per
 * stretch, and one bounded query (IA_HOSTBOUND_PERIOD_CALLS rows through
 * the time index) for the call-sequence period of the longest stretch.
 */
#include "hostbound.h"

#include "db.h"
#include "util.h"

#include <ingero/api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_launch(unsigned api)
{
	return ingero_api_class(api) == INGERO_CLASS_LAUNCH;
}

/* Python line of each stack-sampled launch of a stretch (1 in 64 by default:
 * the counts are samples, comparable with each other, not launch counts). */
static int count_lines(const struct ia_trace *t, struct ia_stack_names *names, struct ia_hostbound *h,
		       size_t *cap, const struct ia_call *c)
{
	if (!is_launch(c->api) || !c->stack)
		return 0;
	h->launch_samples++;
	const char *py = ia_stack_python(names, t->stack_ids[c->stack]);   /* innermost: torch/optim lines name the optimizer */
	if (!py)
		return 0;
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
	size_t lcap;                 /* of h->lines */
	uint64_t *w; size_t wcap;    /* the stretches as (start, end) pairs */
	uint64_t *th_launches;       /* per thread index */
};

static int add_stretch(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		       struct ia_hostbound *h, struct walk *wk, const uint32_t *ix, size_t first, size_t last)
{
	const struct ia_call *close = &t->calls[ix[last]];
	uint64_t a = t->calls[ix[first]].start, b = close->start + close->dur;
	uint64_t launches = 0;
	for (size_t k = first; k <= last; k++)
		launches += is_launch(t->calls[ix[k]].api);
	/* the rate is over the whole stretch: a stretch of slow host work with
	 * a few launches is host time, not launch-bound */
	if (!launches || b <= a || (double)launches * 1e9 < IA_HOSTBOUND_MIN_RATE * (double)(b - a))
		return 0;
	if (ia_grow((void **)&wk->w, &wk->wcap, 2 * (h->n + 1), sizeof *wk->w) < 0)
		return -1;
	wk->w[2 * h->n] = a;
	wk->w[2 * h->n + 1] = b;
	h->n++;
	h->ns += b - a;
	h->launches += launches;
	h->calls += last - first + 1;
	uint64_t until = a, prev_launch = 0;
	for (size_t k = first; k <= last; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		uint64_t end = c->start + c->dur, s0 = c->start > until ? c->start : until;
		if (end > s0) {   /* union: calls of two threads may overlap */
			h->in_calls_ns += end - s0;
			if (is_launch(c->api))
				h->in_launch_ns += end - s0;
			until = end;
		}
		if (is_launch(c->api)) {
			wk->th_launches[c->th]++;
			if (prev_launch) {
				h->launch_gap_ns += c->start - prev_launch;
				h->launch_gaps++;
			}
			prev_launch = c->start;
		}
		if (count_lines(t, names, h, &wk->lcap, c) < 0)
			return -1;
	}
	if (pp->main_thread != UINT32_MAX) {
		uint64_t off = 0, rq = 0;
		ia_thread_off_in(t, pp->main_thread, a, b, &off, &rq, NULL);
		h->main_off_ns += off;
		h->main_runq_ns += rq;
	}
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

struct call_key { int api; sqlite3_int64 kernel; };

/* Smallest period P >= 2 with which seq repeats for >= 95 % of the
 * comparisons over at least three repeats; 0 when none.  P = 1 passing
 * means the sequence is too uniform (one API, no kernel ids) to tell a step
 * apart: no period then.  A wrong P fails early (its mismatch budget runs
 * out), so the cost stays far below n x IA_HOSTBOUND_PERIOD_MAX. */
static uint32_t find_period(const struct call_key *seq, size_t n)
{
	for (size_t p = 1; p <= IA_HOSTBOUND_PERIOD_MAX && 3 * p <= n; p++) {
		size_t budget = (n - p) / 20, miss = 0, i;
		for (i = 0; i + p < n && miss <= budget; i++)
			miss += seq[i].api != seq[i + p].api || seq[i].kernel != seq[i + p].kernel;
		if (miss <= budget)
			return p == 1 ? 0 : (uint32_t)p;
	}
	return 0;
}

/* The period of the longest stretch's call sequence, by API and kernel
 * (the kernel column is not loaded into the trace: read it here, bounded). */
static int stretch_period(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_hostbound *h,
			  char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT api, kernel FROM cuda_calls WHERE pid = ?1 AND start_ns >= ?2 "
					 "AND start_ns < ?3 ORDER BY start_ns, tid LIMIT ?4", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, t->procs[pp->p[pp->main].proc].pid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)h->long_start);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)h->long_end);
	sqlite3_bind_int(st, 4, IA_HOSTBOUND_PERIOD_CALLS);
	struct call_key *seq = malloc(IA_HOSTBOUND_PERIOD_CALLS * sizeof *seq);
	if (!seq) {
		sqlite3_finalize(st);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < IA_HOSTBOUND_PERIOD_CALLS) {
		seq[n].api = sqlite3_column_int(st, 0);
		seq[n].kernel = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 1);
		n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		ia_db_step_error(t->db, rc, err, errlen);
		sqlite3_finalize(st);
		free(seq);
		return -1;
	}
	sqlite3_finalize(st);
	h->period_calls = find_period(seq, n);
	for (uint32_t i = 0; i < h->period_calls; i++)
		h->period_launches += is_launch((unsigned)seq[i].api);
	if (h->period_calls && !h->period_launches)
		h->period_calls = 0;   /* a repeat without launches says nothing about launches per step */
	free(seq);
	return 0;
}

/* The main thread's launches, and the CPU time of the other threads of the
 * main process that launched in the stretches. */
static void issuing_threads(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_hostbound *h,
			    const struct walk *wk)
{
	for (size_t th = 0; th < t->nthreads; th++) {
		uint64_t n = wk->th_launches[th];
		if (!n)
			continue;
		if (th == pp->main_thread) {
			h->main_launches = n;
			continue;
		}
		h->nothers++;
		h->others_oncpu_ns += ia_thread_oncpu_windows(t, (uint32_t)th, wk->w, h->n);
		if (n > h->top_other_launches) {
			h->top_other_launches = n;
			h->top_other = (uint32_t)th;
		}
	}
}

int ia_hostbound_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			 const uint32_t *ix, size_t n, struct ia_hostbound *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof *h);
	if (pp->main < 0)
		return 0;
	h->has_offcpu = pp->main_thread != UINT32_MAX && t->threads[pp->main_thread].off_n > 0;
	size_t first = SIZE_MAX;
	struct walk wk = { 0 };
	wk.th_launches = calloc(t->nthreads + 1, sizeof *wk.th_launches);
	if (!wk.th_launches)
		goto oom;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (first == SIZE_MAX && ia_api_queues_work(c->api))
			first = k;
		if (!ia_call_completes_work(c))
			continue;
		if (first != SIZE_MAX && c->dur <= IA_SYNC_FLOOR_NS &&
		    add_stretch(t, pp, names, h, &wk, ix, first, k) < 0)
			goto oom;
		first = SIZE_MAX;   /* whatever it waited, the queue is drained now */
	}
	issuing_threads(t, pp, h, &wk);
	free(wk.w);
	free(wk.th_launches);
	if (h->nlines)
		qsort(h->lines, h->nlines, sizeof *h->lines, ia_gap_line_by_count);
	return h->n ? stretch_period(t, pp, h, err, errlen) : 0;
oom:
	free(wk.w);
	free(wk.th_launches);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_hostbound_free(struct ia_hostbound *h)
{
	free(h->lines);
	memset(h, 0, sizeof *h);
}
