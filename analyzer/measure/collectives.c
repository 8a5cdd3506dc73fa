/*
 * collectives.c — the ranks' arrivals at their collectives (collectives.h).
 *
 * Both sources end in the same table: for each matched collective i and
 * rank k, its arrival arrive[i * nranks + k] and completion done[...]; the
 * per-rank figures are sums over it.  Sizes: a job's collectives are tens
 * a step, so a few hundred thousand at most; everything is plain arrays.
 */
#include "measure/collectives.h"

#include "load/db.h"

#include <ingero/api.h>
#include <ingero/event.h>
#include <ingero/nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ia_coll_source_name(enum ia_coll_source s)
{
	return s == IA_COLL_NCCL ? "nccl" : s == IA_COLL_GLOO ? "gloo" : "none";
}

struct table {
	size_t n, cap, nr;
	uint64_t *arrive, *done;   /* [n * nr] */
};

static int table_add(struct table *tb)
{
	if (tb->n == tb->cap) {
		size_t cap = tb->cap ? tb->cap * 2 : 256;
		uint64_t *a = realloc(tb->arrive, cap * tb->nr * sizeof *a);
		if (!a)
			return -1;
		tb->arrive = a;
		uint64_t *d = realloc(tb->done, cap * tb->nr * sizeof *d);
		if (!d)
			return -1;
		tb->done = d;
		tb->cap = cap;
	}
	memset(tb->arrive + tb->n * tb->nr, 0, tb->nr * sizeof *tb->arrive);
	memset(tb->done + tb->n * tb->nr, 0, tb->nr * sizeof *tb->done);
	return (int)tb->n++;
}

/* The index in rk->r of the rank process p belongs to (itself or an ancestor's), -1 none. */
static int rank_slot(const struct ia_trace *t, const struct ia_ranks *rk, int p)
{
	if (p < 0)
		return -1;
	int rank = rk->p[p].rank;
	for (size_t k = 0; rank >= 0 && k < rk->nranks; k++)
		if (rk->r[k].rank == rank)
			return (int)k;
	(void)t;
	return -1;
}

/* --- nccl ---------------------------------------------------------------------------- */

/* The first and the last GPU mark recorded on (pid, stream) inside [a, b]: their completions. */
static int marks_in(const struct ia_trace *t, sqlite3_stmt *st, int pid, int64_t stream, uint64_t a, uint64_t b,
		    uint64_t *first_done, uint64_t *last_done, char *err, size_t errlen)
{
	*first_done = *last_done = 0;
	sqlite3_reset(st);
	sqlite3_bind_int(st, 1, pid);
	sqlite3_bind_int64(st, 2, stream);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)a);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)b);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t d = (uint64_t)sqlite3_column_int64(st, 0);
		if (!*first_done)
			*first_done = d;
		*last_done = d;
	}
	(void)t;
	return ia_db_done(st, rc, err, errlen);
}

#define COLL_OPS "('ncclAllReduce','ncclReduceScatter','ncclAllGather','ncclBroadcast','ncclBcast','ncclReduce')"

static int from_nccl(const struct ia_trace *t, const struct ia_ranks *rk, struct table *tb, struct ia_collectives *c,
		     char *err, size_t errlen)
{
	int has = ia_db_has_table(t->db, "collectives");
	if (has <= 0)
		return has < 0 ? -1 : 0;
	/* the communicator every rank used most: the job's (DDP's) */
	sqlite3_stmt *st = ia_db_prepare(t->db,
					 "SELECT comm_id, count(DISTINCT pid) AS n, count(*) FROM collectives WHERE comm_id IS NOT NULL "
					 "AND seq IS NOT NULL AND op IN " COLL_OPS " GROUP BY comm_id ORDER BY n DESC, 3 DESC",
					 err, errlen);
	if (!st)
		return -1;
	int64_t comm = 0;
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !found) {
		if ((size_t)sqlite3_column_int64(st, 1) >= rk->nranks) {
			comm = sqlite3_column_int64(st, 0);
			found = 1;
		}
	}
	rc = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	if (rc < 0 || !found)
		return rc;
	st = ia_db_prepare(t->db,
			   "SELECT pid, op, seq, start_ns, dur_ns, stream, flags, coalesce(bytes, 0) FROM collectives "
			   "WHERE comm_id = ?1 AND seq IS NOT NULL AND op IN " COLL_OPS " ORDER BY seq, pid",
			   err, errlen);
	sqlite3_stmt *mk = ia_db_prepare(t->db,
					 "SELECT done_ns FROM gpu_marks WHERE pid = ?1 AND stream = ?2 AND recorded_ns BETWEEN ?3 AND ?4 "
					 "ORDER BY recorded_ns",
					 err, errlen);
	if (!st || !mk) {
		sqlite3_finalize(st);
		sqlite3_finalize(mk);
		return -1;
	}
	sqlite3_bind_int64(st, 1, comm);
	int64_t cur_seq = -1;
	int row = -1;
	size_t have = 0;
	uint64_t ops[8] = { 0 }, bytes = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		int64_t seq = sqlite3_column_int64(st, 2);
		int k = rank_slot(t, rk, ia_proc_index(t, pid));
		if (k < 0)
			continue;
		if (seq != cur_seq) {
			if (row >= 0 && have != rk->nranks)
				tb->n--;   /* not every rank: left out */
			if ((row = table_add(tb)) < 0)
				goto oom;
			cur_seq = seq;
			have = 0;
		}
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 3), dur = (uint64_t)sqlite3_column_int64(st, 4);
		unsigned flags = (unsigned)sqlite3_column_int(st, 6);
		uint64_t arrive = start, done = start + dur, before = 0, after = 0;
		if ((flags & (INGERO_COLL_MARK_BEFORE | INGERO_COLL_MARK_AFTER)) &&
		    marks_in(t, mk, pid, sqlite3_column_int64(st, 5), start, start + dur, &before, &after, err, errlen) < 0) {
			sqlite3_finalize(st);
			sqlite3_finalize(mk);
			return -1;
		}
		if ((flags & INGERO_COLL_MARK_BEFORE) && before > arrive)
			arrive = before;
		if ((flags & INGERO_COLL_MARK_AFTER) && after && after > arrive)
			done = after;
		if (!tb->arrive[row * tb->nr + k])
			have++;
		tb->arrive[row * tb->nr + k] = arrive;
		tb->done[row * tb->nr + k] = done > arrive ? done : arrive;
		const char *op = (const char *)sqlite3_column_text(st, 1);
		for (unsigned o = 1; op && o < 8; o++)
			if (ingero_nccl_name(o) && !strcmp(op, ingero_nccl_name(o)))
				ops[o]++;
		if (k == 0)
			bytes += (uint64_t)sqlite3_column_int64(st, 7);
	}
	if (row >= 0 && have != rk->nranks)
		tb->n--;
	rc = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	sqlite3_finalize(mk);
	if (rc < 0)
		return -1;
	unsigned best = 1;
	for (unsigned o = 2; o < 8; o++)
		if (ops[o] > ops[best])
			best = o;
	snprintf(c->op, sizeof c->op, "%s", ingero_nccl_name(best));
	c->total_bytes = bytes;
	c->source = tb->n ? IA_COLL_NCCL : IA_COLL_NONE;
	return 0;
oom:
	sqlite3_finalize(st);
	sqlite3_finalize(mk);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* --- gloo ------------------------------------------------------------------------------ */

struct span { uint64_t arrive, done; };

static int by_done(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return (x->done > y->done) - (x->done < y->done);
}

static int is_stream_sync(unsigned api)
{
	return api == INGERO_API_CUDA_STREAM_SYNCHRONIZE || api == INGERO_API_CUDA_STREAM_SYNCHRONIZE_PTSZ ||
	       api == INGERO_API_CU_STREAM_SYNCHRONIZE || api == INGERO_API_CU_STREAM_SYNCHRONIZE_PTSZ;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* One rank's host collectives (collectives.h, gloo), sorted by completion. */
static int gloo_spans(const struct ia_trace *t, uint32_t proc, struct span **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	/* the device-to-host copies of the process: (stream, bytes) keys */
	size_t nk = 0, ck = 0;
	uint64_t *keys = NULL;
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		if (x->proc != proc)
			continue;
		for (uint32_t i = 0; i < x->call_n; i++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + i]];
			if (ingero_api_class(c->api) != INGERO_CLASS_COPY || c->dir != INGERO_DIR_DTOH)
				continue;
			if (nk == ck) {
				ck = ck ? ck * 2 : 64;
				uint64_t *k = realloc(keys, ck * sizeof *k);
				if (!k) {
					free(keys);
					return -1;
				}
				keys = k;
			}
			keys[nk++] = (uint64_t)c->stream << 32 ^ c->bytes;
		}
	}
	if (!nk)
		return 0;
	qsort(keys, nk, sizeof *keys, cmp_u64);
	size_t n = 0, cap = 0;
	struct span *s = NULL;
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		if (x->proc != proc || x->tid == (uint32_t)t->procs[proc].pid)
			continue;
		for (uint32_t i = 0; i + 1 < x->call_n; i++) {
			const struct ia_call *a = &t->calls[t->call_by_th[x->call_first + i]];
			const struct ia_call *b = &t->calls[t->call_by_th[x->call_first + i + 1]];
			if (!is_stream_sync(a->api) || ingero_api_class(b->api) != INGERO_CLASS_COPY || b->dir != INGERO_DIR_HTOD ||
			    b->stream != a->stream)
				continue;
			uint64_t key = (uint64_t)b->stream << 32 ^ b->bytes;
			if (!bsearch(&key, keys, nk, sizeof *keys, cmp_u64))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				struct span *p = realloc(s, cap * sizeof *p);
				if (!p) {
					free(s);
					free(keys);
					return -1;
				}
				s = p;
			}
			s[n++] = (struct span){ a->start + a->dur, b->start };
		}
	}
	free(keys);
	if (n)
		qsort(s, n, sizeof *s, by_done);
	*out = s;
	*nout = n;
	return 0;
}

static int from_gloo(const struct ia_trace *t, const struct ia_ranks *rk, struct table *tb, struct ia_collectives *c)
{
	struct span **sp = calloc(rk->nranks, sizeof *sp);
	size_t *ns = calloc(rk->nranks, sizeof *ns), nmin = SIZE_MAX;
	int rc = 0;
	if (!sp || !ns)
		rc = -1;
	for (size_t k = 0; !rc && k < rk->nranks; k++) {
		rc = gloo_spans(t, rk->r[k].proc, &sp[k], &ns[k]);
		if (ns[k] < nmin)
			nmin = ns[k];
	}
	/* matched in completion order, only while every rank has as many (a
	 * rank with more — one more bucket a step, a collective outside the
	 * training loop — cannot be lined up by order alone) */
	int equal = 1;
	for (size_t k = 1; !rc && k < rk->nranks; k++)
		equal &= ns[k] == ns[0];
	for (size_t i = 0; !rc && equal && i < nmin; i++) {
		int row = table_add(tb);
		if (row < 0) {
			rc = -1;
			break;
		}
		for (size_t k = 0; k < rk->nranks; k++) {
			tb->arrive[row * tb->nr + k] = sp[k][i].arrive;
			tb->done[row * tb->nr + k] = sp[k][i].done;
		}
	}
	for (size_t k = 0; sp && k < rk->nranks; k++)
		free(sp[k]);
	free(sp);
	free(ns);
	if (!rc && tb->n) {
		c->source = IA_COLL_GLOO;
		snprintf(c->op, sizeof c->op, "gloo all-reduce");
	}
	return rc;
}

/* --- per rank --------------------------------------------------------------------------- */

static void rank_program(const struct ia_trace *t, struct ia_coll_rank *r)
{
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		if (x->proc != r->proc)
			continue;
		for (uint32_t i = 0; i < x->call_n; i++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + i]];
			if (c->start < r->first_ns || c->start > r->last_ns)
				continue;
			if (ingero_api_class(c->api) == INGERO_CLASS_LAUNCH)
				r->launches++;
			else if (ingero_api_class(c->api) == INGERO_CLASS_COPY && c->dir == INGERO_DIR_HTOD)
				r->h2d_bytes += c->bytes;
		}
	}
}

static int by_u64(const void *a, const void *b)
{
	return cmp_u64(a, b);
}

static void aggregate(const struct ia_trace *t, const struct table *tb, struct ia_collectives *c)
{
	size_t nr = tb->nr;
	uint64_t others[64];
	for (size_t k = 0; k < nr; k++)
		c->r[k].first_ns = UINT64_MAX;
	for (size_t i = 0; i < tb->n; i++) {
		const uint64_t *a = tb->arrive + i * nr, *d = tb->done + i * nr;
		size_t last = 0;
		for (size_t k = 1; k < nr; k++)
			if (a[k] > a[last])
				last = k;
		uint64_t second = 0;
		size_t no = 0;
		for (size_t k = 0; k < nr; k++) {
			struct ia_coll_rank *r = &c->r[k];
			r->wait_ns += a[last] - a[k];
			if (a[k] < r->first_ns)
				r->first_ns = a[k];
			if (d[k] > r->last_ns)
				r->last_ns = d[k];
			if (k != last) {
				if (a[k] > second)
					second = a[k];
				if (no < sizeof others / sizeof others[0])
					others[no++] = a[k];
			}
		}
		if (nr < 2 || a[last] - second < IA_COLL_TIE_NS) {
			c->ntied++;
			continue;
		}
		qsort(others, no, sizeof *others, by_u64);
		uint64_t med = others[no / 2];
		struct ia_coll_rank *l = &c->r[last];
		l->last_count++;
		l->late_ns += a[last] - med;
		for (size_t k = 0; k < nr; k++)
			l->imposed_ns += a[last] - a[k];
	}
	for (size_t k = 0; k < nr; k++) {
		if (c->r[k].first_ns == UINT64_MAX)
			c->r[k].first_ns = 0;
		rank_program(t, &c->r[k]);
	}
}

int ia_collectives_compute(const struct ia_trace *t, const struct ia_ranks *rk, struct ia_collectives *c, char *err,
			   size_t errlen)
{
	memset(c, 0, sizeof *c);
	if (rk->nranks < 2 || rk->nranks > 64)
		return 0;
	struct table tb = { .nr = rk->nranks };
	int rc = from_nccl(t, rk, &tb, c, err, errlen);
	if (rc == 0 && !tb.n) {
		tb.n = 0;
		if (from_gloo(t, rk, &tb, c) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
	}
	/* the first collective meets the ranks' start-ups (each loads its
	 * data, its model, makes its communicator): how long they took to
	 * start is not how the steps go, and is left out */
	if (rc == 0 && tb.n > 3) {
		memmove(tb.arrive, tb.arrive + tb.nr, (tb.n - 1) * tb.nr * sizeof *tb.arrive);
		memmove(tb.done, tb.done + tb.nr, (tb.n - 1) * tb.nr * sizeof *tb.done);
		tb.n--;
		c->skipped_first = 1;
	}
	if (rc == 0 && tb.n) {
		c->r = calloc(rk->nranks, sizeof *c->r);
		if (!c->r) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		} else {
			c->nranks = rk->nranks;
			c->n = tb.n;
			for (size_t k = 0; k < rk->nranks; k++) {
				c->r[k].rank = rk->r[k].rank;
				c->r[k].proc = rk->r[k].proc;
			}
			aggregate(t, &tb, c);
		}
	}
	free(tb.arrive);
	free(tb.done);
	if (rc < 0)
		ia_collectives_free(c);
	return rc;
}

void ia_collectives_free(struct ia_collectives *c)
{
	free(c->r);
	memset(c, 0, sizeof *c);
}
