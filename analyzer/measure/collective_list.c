/*
 * collective_list.c — every collective one by one, matched across the
 * ranks (collective_list.h).
 *
 * Three passes: the parts are read (NCCL rows from each node's
 * collectives table, gloo spans from each rank's calls), each timed as
 * collectives.c times it; the parts of one collective get one group
 * (NCCL: sorted by communicator and sequence number, runs of two or more;
 * gloo: collectives.c's alignment, one node); then, the items sorted for
 * drawing, each group's first and last arrival and its last part, and
 * each part's lateness and wait.  Plain arrays: a job's collectives are
 * tens a step.
 */
#include "measure/collective_list.h"

#include "base/util.h"
#include "load/db.h"
#include "measure/collectives_internal.h"

#include <ingero/nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct build {
	struct ia_coll_list *l;
	size_t cap, gcap;
	char *err;
	size_t errlen;
};

static struct ia_coll_item *add_item(struct build *b)
{
	if (ia_grow((void **)&b->l->it, &b->cap, b->l->n + 1, sizeof *b->l->it) < 0) {
		snprintf(b->err, b->errlen, "out of memory");
		return NULL;
	}
	struct ia_coll_item *x = &b->l->it[b->l->n++];
	memset(x, 0, sizeof *x);
	x->group = IA_COLL_ALONE;
	x->seq = -1;
	x->rank = -1;
	return x;
}

static size_t add_group(struct build *b)
{
	if (ia_grow((void **)&b->l->g, &b->gcap, b->l->ng + 1, sizeof *b->l->g) < 0) {
		snprintf(b->err, b->errlen, "out of memory");
		return IA_COLL_ALONE;
	}
	b->l->g[b->l->ng] = (struct ia_coll_group){ 0, IA_COLL_ALONE, 0, 0 };
	return b->l->ng++;
}

static uint64_t shifted(uint64_t t, int64_t shift)
{
	return shift >= 0 || t >= (uint64_t)-shift ? t + (uint64_t)shift : 0;
}

/* The process's rank in the job, as the export's process names say it; -1 none. */
static int job_rank(const struct ia_ranks *rk, uint32_t proc)
{
	if (!rk || !rk->p)
		return -1;
	const struct ia_rank_proc *p = &rk->p[proc];
	return p->rank >= 0 && p->role != IA_RANK_NONE && p->role != IA_RANK_AGENT ? p->rank : -1;
}

/* NCCL's name for op, as a static string (the row's text is not kept). */
static const char *nccl_op(const char *op)
{
	for (unsigned o = 0; op && o < INGERO_NCCL_MAX; o++)
		if (ingero_nccl_name(o) && !strcmp(op, ingero_nccl_name(o)))
			return ingero_nccl_name(o);
	return "nccl collective";
}

/* Node n's NCCL collectives; has_nccl[proc] set for each process that made one. */
static int read_nccl(struct build *b, const struct ia_coll_list_node *nd, int n, char *has_nccl)
{
	const struct ia_trace *t = nd->t;
	int has = ia_db_has_table(t->db, "collectives");
	if (has <= 0)
		return has < 0 ? -1 : 0;
	sqlite3_stmt *st = ia_db_prepare(t->db,
					 "SELECT pid, tid, op, comm_id, seq, rank, nranks, coalesce(bytes, 0), stream, start_ns, "
					 "dur_ns, flags FROM collectives WHERE op IN " IA_COLL_OPS " AND start_ns < ?2 "
					 "AND start_ns + dur_ns > ?1 ORDER BY pid, start_ns",
					 b->err, b->errlen);
	sqlite3_stmt *mk = ia_db_prepare(t->db, IA_COLL_MARKS_SQL, b->err, b->errlen);
	int rc = -1;
	if (!st || !mk)
		goto out;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		int proc = ia_proc_index(t, pid);
		if (proc < 0 || !t->procs[proc].selected)
			continue;
		struct ia_coll_item *x = add_item(b);
		if (!x) {
			rc = -1;
			goto out;
		}
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 9), dur = (uint64_t)sqlite3_column_int64(st, 10);
		uint64_t a, d;
		if (ia_nccl_times(mk, pid, sqlite3_column_int64(st, 8), start, dur, (unsigned)sqlite3_column_int(st, 11), &a,
				  &d, &x->marked_before, &x->marked_after, b->err, b->errlen) < 0) {
			rc = -1;
			goto out;
		}
		has_nccl[proc] = 1;
		x->node = n;
		x->proc = (uint32_t)proc;
		x->pid = pid;
		x->tid = (uint32_t)sqlite3_column_int64(st, 1);
		x->job_rank = job_rank(nd->rk, (uint32_t)proc);
		x->source = IA_COLL_NCCL;
		x->op = nccl_op((const char *)sqlite3_column_text(st, 2));
		x->has_comm = sqlite3_column_type(st, 3) != SQLITE_NULL;
		x->comm_id = (uint64_t)sqlite3_column_int64(st, 3);
		if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_int64(st, 4) >= 0)
			x->seq = sqlite3_column_int64(st, 4);
		if (sqlite3_column_type(st, 5) != SQLITE_NULL)
			x->rank = sqlite3_column_int(st, 5);
		x->nranks = sqlite3_column_int(st, 6);
		x->bytes = (uint64_t)sqlite3_column_int64(st, 7);
		x->call_ns = shifted(start, nd->shift_ns);
		x->call_dur_ns = dur;
		x->a = shifted(a, nd->shift_ns);
		x->b = shifted(d, nd->shift_ns);
	}
	rc = ia_db_done(st, rc, b->err, b->errlen);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(mk);
	return rc;
}

struct gloo_match {
	struct build *b;
	const size_t *base;        /* [rank]: the item of its first span */
	size_t nr;
	int64_t next_seq;
};

/* One collective of every rank (ia_gloo_align): one group of their items. */
static int gloo_match(void *ctx, const size_t *h)
{
	struct gloo_match *m = ctx;
	size_t g = add_group(m->b);
	if (g == IA_COLL_ALONE)
		return -1;
	for (size_t k = 0; k < m->nr; k++) {
		struct ia_coll_item *x = &m->b->l->it[m->base[k] + h[k]];
		x->group = g;
		x->seq = m->next_seq;
	}
	m->next_seq++;
	return 0;
}

/* Node n's gloo collectives: its ranks' that made no NCCL collective,
 * matched when the node is the only one and every rank has some. */
static int read_gloo(struct build *b, const struct ia_coll_list_node *nd, int n, size_t nn, const char *has_nccl)
{
	const struct ia_ranks *rk = nd->rk;
	if (!rk || !rk->nranks)
		return 0;
	size_t nr = rk->nranks;
	struct ia_gloo_span **sp = calloc(nr, sizeof *sp);
	size_t *ns = calloc(nr, sizeof *ns), *base = calloc(nr, sizeof *base);
	int rc = 0, all = 1;
	if (!sp || !ns || !base) {
		snprintf(b->err, b->errlen, "out of memory");
		rc = -1;
	}
	for (size_t k = 0; !rc && k < nr; k++) {
		uint32_t proc = rk->r[k].proc;
		const struct ia_proc *p = &nd->t->procs[proc];
		if (!p->selected || has_nccl[proc]) {
			all = 0;
			continue;
		}
		if (ia_gloo_spans(nd->t, proc, &sp[k], &ns[k]) < 0) {
			snprintf(b->err, b->errlen, "out of memory");
			rc = -1;
			break;
		}
		all &= ns[k] > 0;
		base[k] = b->l->n;
		for (size_t i = 0; i < ns[k]; i++) {
			struct ia_coll_item *x = add_item(b);
			if (!x) {
				rc = -1;
				break;
			}
			x->node = n;
			x->proc = proc;
			x->pid = p->pid;
			x->tid = sp[k][i].tid;
			x->job_rank = job_rank(rk, proc);
			x->source = IA_COLL_GLOO;
			x->op = "gloo all-reduce";
			x->rank = x->job_rank;
			x->nranks = (int)nr;
			x->bytes = sp[k][i].bytes;
			x->a = shifted(sp[k][i].arrive, nd->shift_ns);
			x->b = shifted(sp[k][i].done, nd->shift_ns);
		}
	}
	if (!rc && all && nn == 1 && nr >= 2) {
		struct gloo_match m = { b, base, nr, 0 };
		rc = ia_gloo_align(sp, ns, nr, gloo_match, &m);
		if (rc < 0)
			snprintf(b->err, b->errlen, "out of memory");
	}
	for (size_t k = 0; sp && k < nr; k++)
		free(sp[k]);
	free(sp);
	free(ns);
	free(base);
	return rc;
}

static int by_comm_seq(const void *pa, const void *pb, void *items)
{
	const struct ia_coll_item *it = items;
	const struct ia_coll_item *x = &it[*(const size_t *)pa], *y = &it[*(const size_t *)pb];
	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

/* The NCCL parts of one (communicator, sequence number): one group each run of two or more. */
static int group_nccl(struct build *b)
{
	struct ia_coll_list *l = b->l;
	size_t *ix = malloc((l->n ? l->n : 1) * sizeof *ix), m = 0;
	if (!ix) {
		snprintf(b->err, b->errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->it[i].source == IA_COLL_NCCL && l->it[i].has_comm && l->it[i].seq >= 0)
			ix[m++] = i;
	qsort_r(ix, m, sizeof *ix, by_comm_seq, l->it);
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		while (j < m && l->it[ix[j]].comm_id == l->it[ix[i]].comm_id && l->it[ix[j]].seq == l->it[ix[i]].seq)
			j++;
		if (j - i >= 2) {
			size_t g = add_group(b);
			if (g == IA_COLL_ALONE) {
				free(ix);
				return -1;
			}
			for (size_t k = i; k < j; k++)
				l->it[ix[k]].group = g;
		}
		i = j;
	}
	free(ix);
	return 0;
}

static int by_track(const void *pa, const void *pb)
{
	const struct ia_coll_item *x = pa, *y = pb;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b > y->b ? -1 : 1;   /* the longer first: it holds the other */
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Each group's first and last arrival and its last part; each part's lateness and wait. */
static void settle(struct ia_coll_list *l)
{
	uint64_t *second = calloc(l->ng ? l->ng : 1, sizeof *second);
	for (size_t i = 0; i < l->n; i++) {
		const struct ia_coll_item *x = &l->it[i];
		if (x->group == IA_COLL_ALONE)
			continue;
		struct ia_coll_group *g = &l->g[x->group];
		if (!g->n || x->a < g->first_ns)
			g->first_ns = x->a;
		if (!g->n || x->a > g->last_ns) {
			if (g->n && second)
				second[x->group] = g->last_ns;
			g->last_ns = x->a;
			g->last = i;
		} else if (second && x->a > second[x->group]) {
			second[x->group] = x->a;
		}
		g->n++;
	}
	l->nlinked = 0;
	for (size_t k = 0; k < l->ng; k++) {
		struct ia_coll_group *g = &l->g[k];
		/* a tie: the last by less than IA_COLL_TIE_NS kept nobody waiting (without
		 * the second arrival known, out of memory, nobody is named either) */
		if (g->n < 2 || !second || g->last_ns - second[k] < IA_COLL_TIE_NS)
			g->last = IA_COLL_ALONE;
		else
			l->nlinked += g->n - 1;
	}
	free(second);
	for (size_t i = 0; i < l->n; i++) {
		struct ia_coll_item *x = &l->it[i];
		if (x->group == IA_COLL_ALONE)
			continue;
		x->late_ns = x->a - l->g[x->group].first_ns;
		x->wait_ns = l->g[x->group].last_ns - x->a;
	}
}

int ia_coll_list_build(const struct ia_coll_list_node *nodes, size_t nn, struct ia_coll_list *l, char *err,
		       size_t errlen)
{
	memset(l, 0, sizeof *l);
	struct build b = { l, 0, 0, err, errlen };
	for (size_t n = 0; n < nn; n++) {
		char *has_nccl = calloc(nodes[n].t->nprocs ? nodes[n].t->nprocs : 1, 1);
		if (!has_nccl) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		int rc = read_nccl(&b, &nodes[n], (int)n, has_nccl);
		if (rc == 0)
			rc = read_gloo(&b, &nodes[n], (int)n, nn, has_nccl);
		free(has_nccl);
		if (rc < 0)
			goto fail;
	}
	if (group_nccl(&b) < 0)
		goto fail;
	if (l->n)
		qsort(l->it, l->n, sizeof *l->it, by_track);
	settle(l);
	return 0;
fail:
	ia_coll_list_free(l);
	return -1;
}

void ia_coll_list_free(struct ia_coll_list *l)
{
	free(l->it);
	free(l->g);
	memset(l, 0, sizeof *l);
}
