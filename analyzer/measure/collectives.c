/*
 * collectives.c — the ranks' arrivals at their collectives (collectives.h).
 *
 * Both sources end in the same table: for each matched collective i and
 * rank k, its arrival arrive[i * nranks + k] and completion done[...]; the
 * per-rank figures are sums over it.  Sizes: a job's collectives are tens
 * a step, so a few hundred thousand at most; everything is plain arrays.
 */
#include "measure/collectives.h"
#include "measure/collectives_internal.h"

#include "base/util.h"
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

/* Rows up to n (zeroed), for collectives numbered 0..n-1. */
static int table_grow(struct ia_coll_table *tb, size_t n)
{
	if (n > tb->cap) {
		size_t cap = tb->cap ? tb->cap : 256;
		while (cap < n)
			cap *= 2;
		uint64_t *a = realloc(tb->arrive, cap * tb->nr * sizeof *a);
		if (!a)
			return -1;
		tb->arrive = a;
		uint64_t *d = realloc(tb->done, cap * tb->nr * sizeof *d);
		if (!d)
			return -1;
		tb->done = d;
		uint8_t *m = realloc(tb->marked, cap * tb->nr * sizeof *m);
		if (!m)
			return -1;
		tb->marked = m;
		tb->cap = cap;
	}
	if (n > tb->n) {
		memset(tb->arrive + tb->n * tb->nr, 0, (n - tb->n) * tb->nr * sizeof *tb->arrive);
		memset(tb->done + tb->n * tb->nr, 0, (n - tb->n) * tb->nr * sizeof *tb->done);
		memset(tb->marked + tb->n * tb->nr, 0, (n - tb->n) * tb->nr * sizeof *tb->marked);
		tb->n = n;
	}
	return 0;
}

static int table_add(struct ia_coll_table *tb)
{
	size_t row = tb->n;
	return table_grow(tb, row + 1) < 0 ? -1 : (int)row;
}

/* Keeps the rows every rank took part in, in order. */
static void table_compact(struct ia_coll_table *tb)
{
	size_t w = 0;
	for (size_t i = 0; i < tb->n; i++) {
		size_t k;
		for (k = 0; k < tb->nr && tb->arrive[i * tb->nr + k]; k++)
			;
		if (k < tb->nr)
			continue;
		if (w != i) {
			memmove(tb->arrive + w * tb->nr, tb->arrive + i * tb->nr, tb->nr * sizeof *tb->arrive);
			memmove(tb->done + w * tb->nr, tb->done + i * tb->nr, tb->nr * sizeof *tb->done);
			memmove(tb->marked + w * tb->nr, tb->marked + i * tb->nr, tb->nr * sizeof *tb->marked);
		}
		w++;
	}
	tb->n = w;
}

/* The column of the rank process p of node n belongs to (itself or its ancestor's), -1 none. */
static int col_of(const struct ia_coll_col *cols, size_t nr, const struct ia_ranks *rk, int node, int p)
{
	if (p < 0)
		return -1;
	int rank = rk->p[p].rank;
	for (size_t k = 0; rank >= 0 && k < nr; k++)
		if (cols[k].rank == rank && cols[k].node == node)
			return (int)k;
	return -1;
}

/* --- nccl ---------------------------------------------------------------------------- */

/* The first and the last GPU mark recorded on (pid, stream) inside [a, b]: their completions. */
static int marks_in(sqlite3_stmt *st, int pid, int64_t stream, uint64_t a, uint64_t b, uint64_t *first_done,
		    uint64_t *last_done, char *err, size_t errlen)
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
	return ia_db_done(st, rc, err, errlen);
}

/* (collectives_internal.h) */
int ia_nccl_times(sqlite3_stmt *mk, int pid, int64_t stream, uint64_t start, uint64_t dur, unsigned flags,
		  uint64_t *arrive, uint64_t *done, int *marked_before, int *marked_after, char *err, size_t errlen)
{
	uint64_t before = 0, after = 0;
	*arrive = start;
	*done = start + dur;
	if ((flags & (INGERO_COLL_MARK_BEFORE | INGERO_COLL_MARK_AFTER)) &&
	    marks_in(mk, pid, stream, start, start + dur, &before, &after, err, errlen) < 0)
		return -1;
	*marked_before = (flags & INGERO_COLL_MARK_BEFORE) && before > *arrive;
	if (*marked_before)
		*arrive = before;
	*marked_after = (flags & INGERO_COLL_MARK_AFTER) && after && after > *arrive;
	if (*marked_after)
		*done = after;
	if (*done < *arrive)
		*done = *arrive;
	return 0;
}

/* The communicator the job's ranks used most: on every node, by the most
 * processes (DDP's: every rank's).  0 with *found 0 when none has them all. */
static int pick_comm(const struct ia_coll_node *nodes, size_t nn, size_t nranks, int64_t *comm, int *found, char *err,
		     size_t errlen)
{
	*found = 0;
	int64_t cand[64];
	size_t ncand = 0;
	/* candidates from the first node, the most used first */
	sqlite3_stmt *st = ia_db_prepare(nodes[0].t->db,
					 "SELECT comm_id, count(DISTINCT pid) AS n, count(*) FROM collectives WHERE comm_id IS NOT NULL "
					 "AND seq IS NOT NULL AND op IN " IA_COLL_OPS " GROUP BY comm_id ORDER BY n DESC, 3 DESC",
					 err, errlen);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ncand < 64)
		cand[ncand++] = sqlite3_column_int64(st, 0);
	rc = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < ncand && !*found; i++) {
		size_t pids = 0;
		for (size_t n = 0; n < nn; n++) {
			st = ia_db_prepare(nodes[n].t->db, "SELECT count(DISTINCT pid) FROM collectives WHERE comm_id = ?1 "
							   "AND seq IS NOT NULL AND op IN " IA_COLL_OPS, err, errlen);
			if (!st)
				return -1;
			sqlite3_bind_int64(st, 1, cand[i]);
			rc = sqlite3_step(st);
			if (rc == SQLITE_ROW)
				pids += (size_t)sqlite3_column_int64(st, 0);
			rc = ia_db_done(st, rc, err, errlen);
			sqlite3_finalize(st);
			if (rc < 0)
				return -1;
		}
		if (pids >= nranks) {
			*comm = cand[i];
			*found = 1;
		}
	}
	return 0;
}

static int nccl_node(const struct ia_coll_node *nd, int node, int64_t comm, const struct ia_coll_col *cols, struct ia_coll_table *tb,
		     uint64_t ops[8], uint64_t *bytes, int *comm_size, char *err, size_t errlen)
{
	const struct ia_trace *t = nd->t;
	sqlite3_stmt *st = ia_db_prepare(t->db,
					 "SELECT pid, op, seq, start_ns, dur_ns, stream, flags, coalesce(bytes, 0), coalesce(nranks, 0) "
					 "FROM collectives WHERE comm_id = ?1 AND seq IS NOT NULL AND op IN " IA_COLL_OPS " ORDER BY seq, pid",
					 err, errlen);
	sqlite3_stmt *mk = ia_db_prepare(t->db, IA_COLL_MARKS_SQL, err, errlen);
	int rc = -1;
	if (!st || !mk)
		goto out;
	sqlite3_bind_int64(st, 1, comm);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		int64_t seq = sqlite3_column_int64(st, 2);
		if (sqlite3_column_int(st, 8) > *comm_size)
			*comm_size = sqlite3_column_int(st, 8);
		int k = col_of(cols, tb->nr, nd->rk, node, ia_proc_index(t, pid));
		if (k < 0 || seq < 0 || seq > (1 << 26))
			continue;
		if (table_grow(tb, (size_t)seq + 1) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			goto out;
		}
		uint64_t arrive, done;
		int before, marked;
		if (ia_nccl_times(mk, pid, sqlite3_column_int64(st, 5), (uint64_t)sqlite3_column_int64(st, 3),
				  (uint64_t)sqlite3_column_int64(st, 4), (unsigned)sqlite3_column_int(st, 6), &arrive, &done,
				  &before, &marked, err, errlen) < 0) {
			rc = -1;
			goto out;
		}
		tb->arrive[(size_t)seq * tb->nr + (size_t)k] = (uint64_t)((int64_t)arrive + nd->offset_ns);
		tb->done[(size_t)seq * tb->nr + (size_t)k] = (uint64_t)((int64_t)done + nd->offset_ns);
		tb->marked[(size_t)seq * tb->nr + (size_t)k] = (uint8_t)marked;
		const char *op = (const char *)sqlite3_column_text(st, 1);
		for (unsigned o = 1; op && o < 8; o++)
			if (ingero_nccl_name(o) && !strcmp(op, ingero_nccl_name(o)))
				ops[o]++;
		if (k == 0)
			*bytes += (uint64_t)sqlite3_column_int64(st, 7);
	}
	rc = ia_db_done(st, rc, err, errlen);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(mk);
	return rc;
}

static int from_nccl(const struct ia_coll_node *nodes, size_t nn, const struct ia_coll_col *cols, struct ia_coll_table *tb,
		     struct ia_collectives *c, char *err, size_t errlen)
{
	for (size_t n = 0; n < nn; n++) {
		int has = ia_db_has_table(nodes[n].t->db, "collectives");
		if (has <= 0)
			return has < 0 ? -1 : 0;
	}
	int64_t comm = 0;
	int found;
	if (pick_comm(nodes, nn, tb->nr, &comm, &found, err, errlen) < 0)
		return -1;
	if (!found)
		return 0;
	uint64_t ops[8] = { 0 }, bytes = 0;
	for (size_t n = 0; n < nn; n++)
		if (nccl_node(&nodes[n], (int)n, comm, cols, tb, ops, &bytes, &c->comm_nranks, err, errlen) < 0)
			return -1;
	table_compact(tb);
	unsigned best = 1;
	for (unsigned o = 2; o < 8; o++)
		if (ops[o] > ops[best])
			best = o;
	snprintf(c->op, sizeof c->op, "%s", ingero_nccl_name(best));
	c->total_bytes = bytes;
	c->source = tb->n ? IA_COLL_NCCL : IA_COLL_NONE;
	return 0;
}

/* --- gloo ------------------------------------------------------------------------------ */

static int by_done(const void *a, const void *b)
{
	const struct ia_gloo_span *x = a, *y = b;
	return (x->done > y->done) - (x->done < y->done);
}

static int is_stream_sync(unsigned api)
{
	return api == INGERO_API_CUDA_STREAM_SYNCHRONIZE || api == INGERO_API_CUDA_STREAM_SYNCHRONIZE_PTSZ ||
	       api == INGERO_API_CU_STREAM_SYNCHRONIZE || api == INGERO_API_CU_STREAM_SYNCHRONIZE_PTSZ;
}

/* (collectives_internal.h) */
int ia_gloo_spans(const struct ia_trace *t, uint32_t proc, struct ia_gloo_span **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	/* a process of torch.distributed has its threads: gloo's transport
	 * loops (pt_gloo_runloop), the TCPStore's client (pt_tcpstore_uv).
	 * Without them the pattern below is another thread's sync and copy
	 * back (c75: Hugging Face generate in a thread per prompt, read as
	 * gloo's all-reduces) */
	int distributed = 0;
	for (size_t th = 0; th < t->nthreads && !distributed; th++)
		distributed = t->threads[th].proc == proc &&
			      (!strncmp(t->threads[th].comm, "pt_gloo", 7) || !strncmp(t->threads[th].comm, "pt_tcpstore", 11));
	if (!distributed)
		return 0;
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
	qsort(keys, nk, sizeof *keys, ia_cmp_u64);
	size_t n = 0, cap = 0;
	struct ia_gloo_span *s = NULL;
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
			if (!bsearch(&key, keys, nk, sizeof *keys, ia_cmp_u64))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				struct ia_gloo_span *p = realloc(s, cap * sizeof *p);
				if (!p) {
					free(s);
					free(keys);
					return -1;
				}
				s = p;
			}
			s[n++] = (struct ia_gloo_span){ a->start + a->dur, b->start, b->bytes, x->tid };
		}
	}
	free(keys);
	if (n)
		qsort(s, n, sizeof *s, by_done);
	*out = s;
	*nout = n;
	return 0;
}

/* Whether the heads h[] of every rank's spans are one collective: as many
 * bytes on every rank, and no rank done before another arrived (a rank's
 * collective cannot complete before every rank has brought its part). */
static int gloo_same(struct ia_gloo_span *const *sp, const size_t *h, size_t nr)
{
	uint64_t last_arrive = 0, first_done = UINT64_MAX;
	for (size_t k = 0; k < nr; k++) {
		const struct ia_gloo_span *x = &sp[k][h[k]];
		if (x->bytes != sp[0][h[0]].bytes)
			return 0;
		if (x->arrive > last_arrive)
			last_arrive = x->arrive;
		if (x->done < first_done)
			first_done = x->done;
	}
	return last_arrive <= first_done;
}

/* (collectives_internal.h) */
int ia_gloo_align(struct ia_gloo_span *const *sp, const size_t *ns, size_t nr, int (*match)(void *ctx, const size_t *h),
		  void *ctx)
{
	size_t *h = calloc(nr ? nr : 1, sizeof *h);
	if (!h)
		return -1;
	/* Every rank calls a process group's collectives in one order, but
	 * not every one of them shows on every rank as a sync and a copy
	 * back: a broadcast does on its root only (the others' tensors are
	 * not sent), so a rank may have more spans than another (rank 0 of
	 * a DDP job: the module's states broadcast at its start).  So the
	 * ranks' spans are aligned in completion order: the heads are one
	 * collective when gloo_same says so; else the head done first is no
	 * collective of every rank's (every other rank's head, and all that
	 * follows it there, is later) and is passed over. */
	int rc = 0;
	while (!rc && nr) {
		size_t k, first = 0;
		for (k = 0; k < nr && h[k] < ns[k]; k++)
			if (sp[k][h[k]].done < sp[first][h[first]].done)
				first = k;
		if (k < nr)
			break;
		if (!gloo_same(sp, h, nr)) {
			h[first]++;
			continue;
		}
		rc = match(ctx, h) < 0 ? -1 : 0;
		for (k = 0; k < nr; k++)
			h[k]++;
	}
	free(h);
	return rc;
}

struct gloo_row {
	struct ia_coll_table *tb;
	struct ia_gloo_span **sp;
};

/* One collective of every rank: a row of the table. */
static int gloo_row(void *ctx, const size_t *h)
{
	struct gloo_row *g = ctx;
	int row = table_add(g->tb);
	if (row < 0)
		return -1;
	for (size_t k = 0; k < g->tb->nr; k++) {
		g->tb->arrive[row * g->tb->nr + k] = g->sp[k][h[k]].arrive;
		g->tb->done[row * g->tb->nr + k] = g->sp[k][h[k]].done;
	}
	return 0;
}

int ia_coll_tids_has(const struct ia_coll_tids *s, uint32_t tid)
{
	for (uint32_t i = 0; s && i < s->n; i++)
		if (s->tid[i] == tid)
			return 1;
	return 0;
}

static void tids_add(struct ia_coll_tids *s, uint32_t tid)
{
	if (!ia_coll_tids_has(s, tid) && s->n < IA_COLL_TIDS)
		s->tid[s->n++] = tid;
}

static int from_gloo(const struct ia_trace *t, const struct ia_ranks *rk, struct ia_coll_table *tb, struct ia_collectives *c)
{
	struct ia_gloo_span **sp = calloc(rk->nranks, sizeof *sp);
	size_t *ns = calloc(rk->nranks, sizeof *ns);
	int rc = 0;
	if (!sp || !ns)
		rc = -1;
	for (size_t k = 0; !rc && k < rk->nranks; k++) {
		rc = ia_gloo_spans(t, rk->r[k].proc, &sp[k], &ns[k]);
		for (size_t i = 0; !rc && i < ns[k] && k < 64; i++)
			tids_add(&tb->gloo[k], sp[k][i].tid);
	}
	struct gloo_row g = { tb, sp };
	if (!rc)
		rc = ia_gloo_align(sp, ns, rk->nranks, gloo_row, &g);
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

/* Its program's launches and host-to-device bytes inside its span (shift:
 * its node's times onto the job's timeline).  Not the gloo threads': their
 * copies back of every all-reduce are as large on every rank and would
 * drown a difference in the data (a job's gradients are megabytes a step,
 * its batches of token ids kilobytes). */
static void rank_program(struct ia_coll_rank *r, int64_t shift)
{
	const struct ia_trace *t = r->trace;
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		if (x->proc != r->proc)
			continue;
		if (ia_coll_tids_has(&r->gloo, x->tid))
			continue;
		for (uint32_t i = 0; i < x->call_n; i++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + i]];
			int64_t at = (int64_t)c->start + shift;
			if (at < (int64_t)r->first_ns || at > (int64_t)r->last_ns)
				continue;
			if (ingero_api_class(c->api) == INGERO_CLASS_LAUNCH)
				r->launches++;
			else if (ingero_api_class(c->api) == INGERO_CLASS_COPY && c->dir == INGERO_DIR_HTOD)
				r->h2d_bytes += c->bytes;
		}
	}
}

static void aggregate(const struct ia_coll_table *tb, struct ia_collectives *c, const int64_t *shift)
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
		qsort(others, no, sizeof *others, ia_cmp_u64);
		uint64_t med = others[no / 2];
		struct ia_coll_rank *l = &c->r[last];
		l->last_count++;
		l->late_ns += a[last] - med;
		uint64_t x = 0;
		for (size_t k = 0; k < nr; k++)
			x += a[last] - a[k];
		l->imposed_ns += x;
		c->imposed_ns += x;
		c->imposed_sq += (double)x * (double)x;
	}
	for (size_t k = 0; k < nr; k++) {
		if (c->r[k].first_ns == UINT64_MAX)
			c->r[k].first_ns = 0;
		rank_program(&c->r[k], shift[c->r[k].node]);
	}
}

static int by_rank(const void *a, const void *b)
{
	const struct ia_coll_col *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int ia_collectives_compute_nodes(const struct ia_coll_node *nodes, size_t nn, struct ia_collectives *c,
				 struct ia_clock_fit *fit, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	for (size_t n = 0; fit && n < nn; n++)
		fit[n] = (struct ia_clock_fit){ 0, 0, 0 };
	struct ia_coll_col cols[64];
	size_t nr = 0;
	for (size_t n = 0; n < nn; n++)
		for (size_t k = 0; k < nodes[n].rk->nranks; k++) {
			if (nr == 64)
				return 0;   /* a job this large is not matched here */
			cols[nr++] = (struct ia_coll_col){ nodes[n].rk->r[k].rank, (int)n, nodes[n].rk->r[k].proc };
		}
	qsort(cols, nr, sizeof *cols, by_rank);
	for (size_t k = 1; k < nr; k++)
		if (cols[k].rank == cols[k - 1].rank) {
			snprintf(err, errlen, "rank %d is in two of the traces: not one job", cols[k].rank);
			return -1;
		}
	if (nr < 2)
		return 0;
	struct ia_coll_table tb = { .nr = nr };
	int rc = from_nccl(nodes, nn, cols, &tb, c, err, errlen);
	if (rc == 0 && !tb.n && nn == 1) {   /* (gloo: matched by order, one node's clock) */
		tb.n = 0;
		if (from_gloo(nodes[0].t, nodes[0].rk, &tb, c) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
	}
	if (rc == 0 && nn > 1 && tb.n && ia_coll_refine_clocks(&tb, cols, nn, fit) < 0) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	/* the first collective meets the ranks' start-ups (each loads its
	 * data, its model, makes its communicator): how long they took to
	 * start is not how the steps go, and is left out */
	if (rc == 0 && tb.n > 3) {
		memmove(tb.arrive, tb.arrive + tb.nr, (tb.n - 1) * tb.nr * sizeof *tb.arrive);
		memmove(tb.done, tb.done + tb.nr, (tb.n - 1) * tb.nr * sizeof *tb.done);
		memmove(tb.marked, tb.marked + tb.nr, (tb.n - 1) * tb.nr * sizeof *tb.marked);
		tb.n--;
		c->skipped_first = 1;
	}
	if (rc == 0 && tb.n) {
		c->r = calloc(nr, sizeof *c->r);
		int64_t shift[64] = { 0 };
		if (!c->r) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		} else {
			c->nranks = nr;
			c->n = tb.n;
			for (size_t k = 0; k < nr; k++) {
				c->r[k].rank = cols[k].rank;
				c->r[k].proc = cols[k].proc;
				c->r[k].node = cols[k].node;
				c->r[k].trace = nodes[cols[k].node].t;
				c->r[k].gloo = tb.gloo[k];
			}
			for (size_t n = 0; n < nn && n < 64; n++)
				shift[n] = nodes[n].offset_ns + (fit ? fit[n].correction_ns : 0);
			aggregate(&tb, c, shift);
		}
	}
	free(tb.arrive);
	free(tb.done);
	free(tb.marked);
	if (rc < 0)
		ia_collectives_free(c);
	return rc;
}

int ia_collectives_compute(const struct ia_trace *t, const struct ia_ranks *rk, struct ia_collectives *c, char *err,
			   size_t errlen)
{
	struct ia_coll_node one = { t, rk, 0 };
	return ia_collectives_compute_nodes(&one, 1, c, NULL, err, errlen);
}

void ia_collectives_free(struct ia_collectives *c)
{
	free(c->r);
	memset(c, 0, sizeof *c);
}

/* --- one process's collectives, as windows ---------------------------------------------- */

static int nccl_windows(const struct ia_trace *t, int pid, struct ia_span **w, size_t *n, size_t *cap, char *err,
			size_t errlen)
{
	int has = ia_db_has_table(t->db, "collectives");
	if (has <= 0)
		return has;
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT stream, start_ns, dur_ns, flags FROM collectives WHERE pid = ?1 "
					 "AND op IN " IA_COLL_OPS " AND start_ns < ?3 AND start_ns + dur_ns > ?2",
					 err, errlen);
	sqlite3_stmt *mk = ia_db_prepare(t->db, IA_COLL_MARKS_SQL, err, errlen);
	int rc = -1;
	if (!st || !mk)
		goto out;
	sqlite3_bind_int(st, 1, pid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 3, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t a, d;
		int before, after;
		if (ia_nccl_times(mk, pid, sqlite3_column_int64(st, 0), (uint64_t)sqlite3_column_int64(st, 1),
				  (uint64_t)sqlite3_column_int64(st, 2), (unsigned)sqlite3_column_int(st, 3), &a, &d, &before,
				  &after, err, errlen) < 0) {
			rc = -1;
			goto out;
		}
		if (d <= a)
			continue;
		if (ia_grow((void **)w, cap, *n + 1, sizeof **w) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			goto out;
		}
		(*w)[(*n)++] = (struct ia_span){ a, d };
	}
	rc = ia_db_done(st, rc, err, errlen);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(mk);
	return rc;
}

int ia_collective_windows(const struct ia_trace *t, uint32_t proc, struct ia_coll_windows *cw, char *err,
			  size_t errlen)
{
	memset(cw, 0, sizeof *cw);
	size_t cap = 0;
	if (nccl_windows(t, t->procs[proc].pid, &cw->w, &cw->n, &cap, err, errlen) < 0)
		goto fail;
	if (!cw->n) {   /* no NCCL call: gloo's, timed on its own threads */
		struct ia_gloo_span *sp;
		size_t ns;
		if (ia_gloo_spans(t, proc, &sp, &ns) < 0)
			goto oom;
		if (ns && !(cw->w = malloc(ns * sizeof *cw->w))) {
			free(sp);
			goto oom;
		}
		for (size_t i = 0; i < ns; i++) {
			cw->w[cw->n++] = (struct ia_span){ sp[i].arrive, sp[i].done };
			tids_add(&cw->gloo, sp[i].tid);
		}
		free(sp);
	}
	cw->n = ia_spans_merge(cw->w, cw->n, 0, UINT64_MAX);   /* (drops the empty ones too) */
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	ia_coll_windows_free(cw);
	return -1;
}

void ia_coll_windows_free(struct ia_coll_windows *cw)
{
	free(cw->w);
	memset(cw, 0, sizeof *cw);
}
