/*
 * align.c — per-call alignment and slow tails (see align.h).
 *
 * One pass over the calls picks the slow ones (thresholds from stats);
 * each is aligned with a binary search into its thread's off-CPU index.
 * Windows of slow calls are then merged into sorted disjoint stretches so
 * that workers' CPU time in them is a linear merge per worker thread.
 * "Who took the CPU" needs off_cpu.next_pid, which the loader does not keep
 * (4 bytes x 10M rows for a handful of calls): it is queried through the
 * by-tid index for the slowest calls only.
 */
#include "measure/align.h"

#include "load/db.h"
#include "base/util.h"

#include <ingero/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ia_align_call(const struct ia_trace *t, const struct ia_evidence *e, const struct ia_call *c,
		   struct ia_call_align *out)
{
	uint64_t a = c->start, b = c->start + c->dur;
	const struct ia_thread *x = &t->threads[c->th];
	const uint32_t *ix = t->off_by_th + x->off_first;
	memset(out, 0, sizeof *out);
	uint64_t off = 0;
	for (size_t i = ia_thread_off_lower(t, c->th, a); i < x->off_n; i++) {
		const struct ia_off *o = &t->offs[ix[i]];
		if (o->start >= b)
			break;
		uint64_t ov = ia_overlap(o->start, o->end, a, b);
		if (!ov)
			continue;
		off += ov;
		out->runq_ns += ia_overlap(o->end - o->runq, o->end, a, b);
		out->nswitch++;
		if (o->th & IA_OFF_PREEMPTED)
			out->npreempt++;
	}
	out->blocked_ns = off - out->runq_ns;
	out->oncpu_ns = c->dur > off ? c->dur - off : 0;
	out->cpu_sat = e ? ia_cpu_saturation(e, a, b) : -1;
}

struct acc {
	uint64_t thr;
	struct ia_slow_api *s;
	long double sat_w;     /* sum of sat x dur over calls with evidence */
	uint64_t sat_ns;
	uint64_t *win;         /* (start, end) pairs of slow calls */
	size_t nwin, wcap;
};

static int cmp_win(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts (start, end) pairs and merges overlaps; returns the new count. */
static size_t merge_windows(uint64_t *w, size_t n)
{
	if (n)
		qsort(w, n, 2 * sizeof *w, cmp_win);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && w[2 * i] <= w[2 * k - 1]) {
			if (w[2 * i + 1] > w[2 * k - 1])
				w[2 * k - 1] = w[2 * i + 1];
		} else {
			w[2 * k] = w[2 * i];
			w[2 * k + 1] = w[2 * i + 1];
			k++;
		}
	}
	return k;
}

static int slower(const struct ia_slow_call *a, const struct ia_slow_call *b)
{
	if (a->dur != b->dur)
		return a->dur > b->dur;
	if (a->start != b->start)
		return a->start < b->start;
	return a->th < b->th;
}

static void keep_top(struct ia_slow_api *s, const struct ia_slow_call *c)
{
	int i = s->ntop < IA_SLOW_TOP ? s->ntop++ : IA_SLOW_TOP;
	if (i == IA_SLOW_TOP) {
		if (!slower(c, &s->top[IA_SLOW_TOP - 1]))
			return;
		i = IA_SLOW_TOP - 1;
	}
	while (i > 0 && slower(c, &s->top[i - 1])) {
		s->top[i] = s->top[i - 1];
		i--;
	}
	s->top[i] = *c;
}

/* Who took the CPU while the slowest calls waited: preempted intervals'
 * next_pid, and where the trace says who held a woken thread's CPU longest
 * while it waited (schema 9), that holder for its holder_ns, placed at the
 * wait's end (as ia_cpu_takers does).  -1 with err set when off_cpu cannot
 * be read. */
static int who_took(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_slow_api *s,
		    char *err, size_t errlen)
{
	sqlite3_stmt *q = ia_db_prepare(t->db, t->off_holder
		? "SELECT next_pid, start_ns, end_ns FROM off_cpu WHERE tid = ?1 AND start_ns >= ?2 AND start_ns < ?3 "
		  "AND end_ns > ?4 AND preempted = 1 UNION ALL "
		  "SELECT holder_pid, max(end_ns - holder_ns, runnable_ns), end_ns FROM off_cpu WHERE tid = ?1 "
		  "AND start_ns >= ?2 AND start_ns < ?3 AND end_ns > ?4 AND preempted = 0 AND holder_pid > 0 "
		  "AND end_ns > runnable_ns"
		: "SELECT next_pid, start_ns, end_ns FROM off_cpu WHERE tid = ?1 "
		  "AND start_ns >= ?2 AND start_ns < ?3 AND end_ns > ?4 AND preempted = 1",
		err, errlen);
	if (!q)
		return -1;
	struct { int pid; uint64_t ns; } acc[16];
	int nacc = 0;
	for (int k = 0; k < s->ntop; k++) {
		const struct ia_slow_call *c = &s->top[k];
		const struct ia_thread *x = &t->threads[c->th];
		const struct ia_proc_stats *ps = ia_pp_of_proc(pp, x->proc);
		uint64_t slack = ps ? ps->worst_stall_ns : 0;
		uint64_t a = c->start, b = c->start + c->dur;
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, x->tid);
		sqlite3_bind_int64(q, 2, (sqlite3_int64)(a > slack ? a - slack : 0));
		sqlite3_bind_int64(q, 3, (sqlite3_int64)b);
		sqlite3_bind_int64(q, 4, (sqlite3_int64)a);
		int rc;
		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			int pid = sqlite3_column_int(q, 0);
			uint64_t ov = ia_overlap((uint64_t)sqlite3_column_int64(q, 1), (uint64_t)sqlite3_column_int64(q, 2), a, b);
			int i;
			for (i = 0; i < nacc && acc[i].pid != pid; i++)
				;
			if (i == nacc) {
				if (nacc == 16)
					continue;
				acc[nacc].pid = pid;
				acc[nacc++].ns = 0;
			}
			acc[i].ns += ov;
		}
		if (ia_db_done(q, rc, err, errlen) < 0) {
			sqlite3_finalize(q);
			return -1;
		}
	}
	sqlite3_finalize(q);
	for (int r = 0; r < 3; r++) {
		int best = -1;
		for (int i = 0; i < nacc; i++)
			if (acc[i].ns && (best < 0 || acc[i].ns > acc[best].ns ||
					  (acc[i].ns == acc[best].ns && acc[i].pid < acc[best].pid)))
				best = i;
		if (best < 0)
			break;
		s->took[s->ntook].pid = acc[best].pid;
		s->took[s->ntook++].ns = acc[best].ns;
		acc[best].ns = 0;
	}
	return 0;
}

static int cmp_excess(const void *a, const void *b)
{
	const struct ia_slow_api *x = a, *y = b;
	if (x->excess_ns != y->excess_ns)
		return x->excess_ns > y->excess_ns ? -1 : 1;
	return (int)x->api - (int)y->api;
}

int ia_slow_apis(const struct ia_trace *t, const struct ia_evidence *e, const struct ia_stats *s,
		 const struct ia_per_process *pp, struct ia_slow_api **out, size_t *nout, char *err, size_t errlen)
{
	*out = NULL;
	*nout = 0;
	struct acc *acc = calloc(INGERO_API_MAX, sizeof *acc);
	struct ia_slow_api *res = calloc(s->napis + 1, sizeof *res);
	if (!acc || !res) {
		free(acc);
		free(res);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *a = &s->apis[i];
		if (a->count < IA_SLOW_MIN_CALLS)
			continue;
		uint64_t thr = a->p50_ns * IA_SLOW_RATIO;
		if (thr < a->p50_ns + IA_SLOW_MIN_EXCESS_NS)
			thr = a->p50_ns + IA_SLOW_MIN_EXCESS_NS;
		if (a->p99_ns < thr)
			continue;
		struct ia_slow_api *x = &res[n++];
		x->api = a->api;
		x->count = a->count;
		x->p50 = a->p50_ns;
		x->p99 = a->p99_ns;
		x->max = a->max_ns;
		x->threshold = thr;
		x->cpu_sat = -1;
		acc[a->api].thr = thr;
		acc[a->api].s = x;
	}
	uint64_t win_ns = t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
	win_ns -= ia_capture_paused_in(&t->capture, t->first_ns, t->last_ns);   /* (nothing recorded there) */
	uint64_t all_pages = 0;
	if (e)
		for (size_t p = 0; p < e->npages; p++)
			all_pages += ia_series_sum(&e->pages[p], t->first_ns, t->last_ns + 1);
	for (size_t i = 0; n && i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		struct acc *ac = &acc[c->api];
		if (!ac->s || c->dur < ac->thr)
			continue;
		struct ia_slow_api *x = ac->s;
		struct ia_call_align al;
		ia_align_call(t, e, c, &al);
		x->nslow++;
		x->slow_ns += c->dur;
		x->excess_ns += c->dur - x->p50;
		x->runq_ns += al.runq_ns;
		x->blocked_ns += al.blocked_ns;
		x->oncpu_ns += al.oncpu_ns;
		x->nswitch += al.nswitch;
		x->npreempt += al.npreempt;
		if (al.cpu_sat >= 0) {
			ac->sat_w += (long double)al.cpu_sat * c->dur;
			ac->sat_ns += c->dur;
		}
		if ((c->flags & INGERO_FLAG_HOST_PAGEABLE) && c->bytes >= IA_PAGEABLE_MIN_BYTES)
			x->copy_pageable++;
		else if (c->flags & INGERO_FLAG_HOST_PINNED)
			x->copy_pinned++;
		x->copy_to_host += c->dir == INGERO_DIR_DTOH;
		if (e)
			for (size_t p = 0; p < e->npages; p++)
				x->pages += ia_series_sum(&e->pages[p], c->start, c->start + c->dur);
		struct ia_slow_call sc = { c->start, c->dur, c->bytes, al.runq_ns, al.blocked_ns, al.cpu_sat,
					   c->th, c->stack, c->flags };
		keep_top(x, &sc);
		if (ia_grow((void **)&ac->win, &ac->wcap, ac->nwin + 1, 2 * sizeof *ac->win) < 0)
			goto oom;
		ac->win[2 * ac->nwin] = c->start;
		ac->win[2 * ac->nwin + 1] = c->start + c->dur;
		ac->nwin++;
	}
	for (size_t k = 0; k < n; k++) {
		struct ia_slow_api *x = &res[k];
		struct acc *ac = &acc[x->api];
		if (ac->sat_ns)
			x->cpu_sat = (double)(ac->sat_w / ac->sat_ns);
		x->pages_per_s = x->slow_ns ? (double)x->pages * 1e9 / (double)x->slow_ns : 0;
		x->pages_per_s_all = win_ns ? (double)all_pages * 1e9 / (double)win_ns : 0;
		size_t nw = merge_windows(ac->win, ac->nwin);
		for (size_t i = 0; i < pp->n; i++) {
			if (pp->p[i].role != IA_ROLE_WORKER)
				continue;
			for (size_t th = 0; th < t->nthreads; th++)
				if (t->threads[th].proc == pp->p[i].proc)
					x->workers_oncpu_ns += ia_thread_oncpu_windows(t, (uint32_t)th, ac->win, nw);
		}
		/* untraced competitors' CPU time during the slow calls */
		for (size_t c = 0; e && c < e->ncomp; c++) {
			uint64_t ns = 0;
			for (size_t w = 0; w < nw; w++)
				ns += ia_series_sum(&e->comp[c].cpu, ac->win[2 * w], ac->win[2 * w + 1]);
			if (!ns)
				continue;
			int j = x->ncomp < 3 ? x->ncomp++ : 3;
			if (j == 3 && ns <= x->comp[2].ns)
				continue;
			if (j == 3)
				j = 2;
			while (j > 0 && ns > x->comp[j - 1].ns) {
				x->comp[j] = x->comp[j - 1];
				j--;
			}
			x->comp[j].pid = e->comp[c].pid;
			snprintf(x->comp[j].comm, sizeof x->comp[j].comm, "%s", e->comp[c].comm);
			x->comp[j].ns = ns;
		}
		if (who_took(t, pp, x, err, errlen) < 0)
			goto fail;
		/* kept: the rules read what the GPU did meanwhile (gpu_time.h) */
		x->win = ac->win;
		x->nwin = nw;
		ac->win = NULL;
	}
	for (size_t a = 0; a < INGERO_API_MAX; a++)
		free(acc[a].win);
	free(acc);
	qsort(res, n, sizeof *res, cmp_excess);
	*out = res;
	*nout = n;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	for (size_t a = 0; a < INGERO_API_MAX; a++)
		free(acc[a].win);
	free(acc);
	ia_slow_apis_free(res, n);
	return -1;
}

void ia_slow_apis_free(struct ia_slow_api *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].win);
	free(s);
}
