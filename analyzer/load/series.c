/*
 * series.c — loads and queries the bucketed evidence (see series.h).
 * The three tables are small next to cuda_calls/off_cpu (one row per CPU or
 * process per bucket), so they are read whole, in one pass each.
 */
#include "load/series.h"

#include "load/db.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_bucket(const void *a, const void *b)
{
	const struct ia_bucket *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* Sorts, merges equal bucket starts, infers the width. */
static void finish_series(struct ia_series *s)
{
	if (s->n)
		qsort(s->b, s->n, sizeof *s->b, cmp_bucket);
	size_t w = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (w && s->b[w - 1].t == s->b[i].t)
			s->b[w - 1].v += s->b[i].v;
		else
			s->b[w++] = s->b[i];
	}
	s->n = w;
	s->width = 0;
	for (size_t i = 1; i < s->n; i++) {
		uint64_t d = s->b[i].t - s->b[i - 1].t;
		if (d && (!s->width || d < s->width))
			s->width = d;
	}
}

static int push(struct ia_series *s, size_t *cap, uint64_t t, uint64_t v)
{
	if (ia_grow((void **)&s->b, cap, s->n + 1, sizeof *s->b) < 0)
		return -1;
	s->b[s->n].t = t;
	s->b[s->n].v = v;
	s->n++;
	return 0;
}

uint64_t ia_series_sum(const struct ia_series *s, uint64_t a, uint64_t b)
{
	if (!s->n || b <= a)
		return 0;
	uint64_t w = s->width ? s->width : 1;
	/* first bucket that may overlap: t + w > a */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->b[mid].t + w <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	long double sum = 0;
	for (size_t i = lo; i < s->n && s->b[i].t < b; i++) {
		uint64_t ov = ia_overlap(s->b[i].t, s->b[i].t + w, a, b);
		sum += (long double)s->b[i].v * (long double)ov / (long double)w;
	}
	return (uint64_t)(sum + 0.5L);
}

double ia_cpu_saturation(const struct ia_evidence *e, uint64_t a, uint64_t b)
{
	if (!e->busy.n || !e->ncpus || b <= a)
		return -1;
	/* only the part of [a, b) that buckets cover counts as evidence */
	uint64_t lo = e->busy.b[0].t, hi = e->busy.b[e->busy.n - 1].t + e->busy.width;
	uint64_t cov = ia_overlap(a, b, lo, hi);
	if (!cov)
		return -1;
	double s = (double)ia_series_sum(&e->busy, a, b) / ((double)e->ncpus * (double)cov);
	return s > 1 ? 1 : s;
}

int ia_evidence_load(const struct ia_trace *t, struct ia_evidence *e, char *err, size_t errlen)
{
	memset(e, 0, sizeof *e);
	sqlite3_stmt *st;
	int rc;
	size_t cap = 0;
	uint64_t from = t->from, to = t->to;
	/* buckets that start up to a minute before the window may overlap it */
	uint64_t from_b = from > 60000000000ull ? from - 60000000000ull : 0;

	if (!(st = ia_db_prepare(t->db, "SELECT cpu, bucket_ns, busy_ns FROM cpu_busy", err, errlen)))
		return -1;
	int maxcpu = -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t b = (uint64_t)sqlite3_column_int64(st, 1);
		if (b < from_b || b >= to)
			continue;
		int cpu = sqlite3_column_int(st, 0);
		if (cpu > maxcpu)
			maxcpu = cpu;
		if (push(&e->busy, &cap, b, (uint64_t)sqlite3_column_int64(st, 2)) < 0)
			goto oom;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	finish_series(&e->busy);
	e->ncpus = t->cpus > 0 ? t->cpus : maxcpu + 1;

	e->pages = calloc(t->nprocs + 1, sizeof *e->pages);
	e->npages = t->nprocs;
	size_t *caps = calloc(t->nprocs + 1, sizeof *caps);
	if (!e->pages || !caps) {
		free(caps);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!(st = ia_db_prepare(t->db, "SELECT pid, bucket_ns, pages FROM page_allocs", err, errlen))) {
		free(caps);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t b = (uint64_t)sqlite3_column_int64(st, 1);
		if (b < from_b || b >= to)
			continue;
		int pi = ia_proc_index(t, sqlite3_column_int(st, 0));
		if (pi < 0 || !t->procs[pi].selected)
			continue;
		if (push(&e->pages[pi], &caps[pi], b, (uint64_t)sqlite3_column_int64(st, 2)) < 0) {
			free(caps);
			goto oom;
		}
	}
	free(caps);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	for (size_t i = 0; i < t->nprocs; i++)
		finish_series(&e->pages[i]);

	if (!(st = ia_db_prepare(t->db, "SELECT pid, comm, bucket_ns, cpu_ns, preemptions FROM competitors "
				 "ORDER BY pid, bucket_ns", err, errlen)))
		return -1;
	size_t ccap = 0, scap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t b = (uint64_t)sqlite3_column_int64(st, 2);
		if (b < from_b || b >= to)
			continue;
		int pid = sqlite3_column_int(st, 0);
		if (!e->ncomp || e->comp[e->ncomp - 1].pid != pid) {
			if (ia_grow((void **)&e->comp, &ccap, e->ncomp + 1, sizeof *e->comp) < 0)
				goto oom;
			struct ia_competitor *c = &e->comp[e->ncomp++];
			memset(c, 0, sizeof *c);
			c->pid = pid;
			const unsigned char *comm = sqlite3_column_text(st, 1);
			snprintf(c->comm, sizeof c->comm, "%s", comm ? (const char *)comm : "?");
			scap = 0;
		}
		struct ia_competitor *c = &e->comp[e->ncomp - 1];
		uint64_t v = (uint64_t)sqlite3_column_int64(st, 3);
		c->total_cpu_ns += v;
		c->preemptions += (uint64_t)sqlite3_column_int64(st, 4);
		if (push(&c->cpu, &scap, b, v) < 0)
			goto oom;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	for (size_t i = 0; i < e->ncomp; i++)
		finish_series(&e->comp[i].cpu);
	return 0;
oom:
	sqlite3_finalize(st);
	snprintf(err, errlen, "out of memory");
	return -1;
steperr:
	ia_db_step_error(t->db, rc, err, errlen);
	return -1;
}

void ia_evidence_free(struct ia_evidence *e)
{
	free(e->busy.b);
	for (size_t i = 0; e->pages && i < e->npages; i++)
		free(e->pages[i].b);
	free(e->pages);
	for (size_t i = 0; i < e->ncomp; i++)
		free(e->comp[i].cpu.b);
	free(e->comp);
	memset(e, 0, sizeof *e);
}
