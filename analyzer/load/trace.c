/*
 * trace.c — reads a report.db into the compact arrays of trace.h.
 *
 * Order of work: session (for the time origin and the window), apis,
 * processes (the -p subtree is resolved here), threads (trace_small.c),
 * then the two big
 * tables by one sequential scan each, the two scans on two threads with a
 * connection each (NOMUTEX: no per-call locking).  A scan without a time
 * filter says NOT INDEXED: walking the table b-tree in rowid order is
 * several times faster than walking the time index and looking every row
 * up.  With a window, the time index bounds the scan instead.
 *
 * Rows stay in storage order; a per-thread index (a counting sort by
 * thread, then each thread's run checked and sorted by a total order only
 * if needed) gives every analysis time order per thread.  A thread's rows
 * are written in time order by the collector, so the check usually saves
 * the sort, and no global 10M-row sort is ever needed.
 */
#include "load/trace.h"

#include "base/util.h"
#include "load/check.h"
#include "load/db.h"
#include "load/scan.h"
#include "load/trace_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *ia_session(const struct ia_trace *t, const char *key)
{
	const struct maps *m = t->maps;
	for (size_t i = 0; m && i < m->nsess; i++)
		if (!strcmp(m->skeys[i], key))
			return m->svals[i];
	return NULL;
}

const char *ia_session_next(const struct ia_trace *t, const char *prefix, size_t *i, const char **val)
{
	const struct maps *m = t->maps;
	size_t n = strlen(prefix);
	for (; m && *i < m->nsess; (*i)++)
		if (!strncmp(m->skeys[*i], prefix, n)) {
			*val = m->svals[*i];
			return m->skeys[(*i)++] + n;
		}
	return NULL;
}

const char *ia_api_name(const struct ia_trace *t, unsigned api)
{
	const char *n = ingero_api_name(api);
	if (n)
		return n;
	if (api < INGERO_API_MAX && t->api_names[api])
		return t->api_names[api];
	static char buf[INGERO_API_MAX][12];
	if (api >= INGERO_API_MAX)
		return "unknown";
	snprintf(buf[api], sizeof buf[api], "api#%u", api);
	return buf[api];
}

int ia_proc_index(const struct ia_trace *t, int pid)
{
	const struct maps *m = t->maps;
	uint32_t v = ia_map_get(&m->pid, (uint32_t)pid);
	return v == UINT32_MAX ? -1 : (int)v;
}

int ia_thread_index(const struct ia_trace *t, uint32_t tid)
{
	const struct maps *m = t->maps;
	uint32_t v = ia_map_get(&m->tid, tid);
	return v == UINT32_MAX ? -1 : (int)v;
}

/* One integer query (min/max through an index); def when NULL or no row. */
static int query_u64(sqlite3 *db, const char *sql, uint64_t def, uint64_t *out, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(db, sql, err, errlen);
	if (!st)
		return -1;
	int rc = sqlite3_step(st);
	*out = def;
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		ia_db_step_error(db, rc, err, errlen);
		return -1;
	}
	return 0;
}

/* How the trace ended (trace_end.h), from the session, the evidence's
 * extent and the file (db.h); trace_status.h says it. */
static void trace_status_set(struct ia_trace *t, int has_end, uint64_t end, uint64_t last_evidence, int evidence)
{
	struct ia_trace_status *s = &t->status;
	memset(s, 0, sizeof *s);
	s->why = ia_session(t, "store_error");
	s->no_evidence = !evidence;
	s->stopped_at = has_end ? end : last_evidence;
	if (s->why)
		s->end = IA_END_WRITE_FAILED;
	else if (!has_end)
		s->end = ia_db_writer_alive() ? IA_END_STILL_WRITING : IA_END_NONE;
	s->wal = ia_db_wal_read() && !ia_db_writer_alive();
	if (s->stopped_at < t->t0)
		s->stopped_at = t->t0;
}

static int resolve_window(struct ia_trace *t, char *err, size_t errlen)
{
	const char *s = ia_session(t, "start_mono_ns");
	uint64_t c0, o0, c1, o1;
	/* blocks carry their first and last start: no call needs decoding */
	int blocks = t->blocks;
	if (query_u64(t->db, blocks ? "SELECT min(first_ns) FROM call_blocks" : "SELECT min(start_ns) FROM cuda_calls",
		      UINT64_MAX, &c0, err, errlen) < 0 ||
	    query_u64(t->db, "SELECT min(start_ns) FROM off_cpu", UINT64_MAX, &o0, err, errlen) < 0 ||
	    query_u64(t->db, blocks ? "SELECT max(last_ns) FROM call_blocks" : "SELECT max(start_ns) FROM cuda_calls",
		      0, &c1, err, errlen) < 0 ||
	    query_u64(t->db, "SELECT max(start_ns) FROM off_cpu", 0, &o1, err, errlen) < 0)
		return -1;
	uint64_t first = c0 < o0 ? c0 : o0;
	t->t0 = s ? strtoull(s, NULL, 10) : 0;
	if (!t->t0 || (first != UINT64_MAX && first < t->t0))
		t->t0 = first == UINT64_MAX ? 0 : first;
	const char *e = ia_session(t, "end_mono_ns");
	uint64_t end = e ? strtoull(e, NULL, 10) : 0;
	uint64_t last = c1 > o1 ? c1 : o1;
	trace_status_set(t, e != NULL, end, last, first != UINT64_MAX);
	if (end < last)
		end = last;

	if (ia_capture_load(t->db, end, &t->capture, err, errlen) < 0)
		return -1;
	const struct ia_filter *f = &t->filter;
	t->from = 0;
	t->to = UINT64_MAX;
	/* the program recorded only between its profiler start and stop: read
	 * that span, unless the user chose a window */
	if (t->capture.n && !f->has_from && !f->has_to && !f->has_since) {
		t->from = t->capture.first;
		t->to = t->capture.open ? UINT64_MAX : t->capture.last + 1;
		t->capture.applied = 1;
	}
	if (f->has_from)
		t->from = t->t0 + f->from_rel;
	if (f->has_to)
		t->to = t->t0 + f->to_rel;
	if (f->has_since)
		t->from = end > f->since ? end - f->since : 0;
	if (t->to <= t->from) {
		snprintf(err, errlen, "empty time window: --to must be after --from");
		return -1;
	}
	t->capture.paused_in_ns = ia_capture_paused_in(&t->capture, t->from, t->to);
	return 0;
}

/* Total orders on rows, so that everything downstream is independent of
 * the order rows were stored in. */
static int cmp_call(const struct ia_call *x, const struct ia_call *y)
{
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->th != y->th)
		return x->th < y->th ? -1 : 1;
	if (x->api != y->api)
		return x->api < y->api ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_off(const struct ia_off *x, const struct ia_off *y)
{
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->runq != y->runq)
		return x->runq < y->runq ? -1 : 1;
	return x->th < y->th ? -1 : x->th > y->th;
}

static int cmp_call_ix(const void *a, const void *b, void *ctx)
{
	const struct ia_call *c = ctx;
	int r = cmp_call(&c[*(const uint32_t *)a], &c[*(const uint32_t *)b]);
	return r ? r : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int cmp_off_ix(const void *a, const void *b, void *ctx)
{
	const struct ia_off *o = ctx;
	int r = cmp_off(&o[*(const uint32_t *)a], &o[*(const uint32_t *)b]);
	return r ? r : (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* Creates the threads the scans met that the threads table lacks (rare:
 * the collector writes a threads row for every tid it stores): their pid
 * is the call block's, or else looked up in the calls and intervals. */
static int adopt_threads(struct ia_trace *t, const struct ia_scan_result *r, size_t *tcap, size_t *pcap,
			 char *err, size_t errlen)
{
	sqlite3_stmt *q = NULL;
	for (size_t i = 0; i < r->ntids; i++) {
		if (ia_thread_index(t, r->tids[i]) >= 0)
			continue;
		if (r->pids[i] > 0) {   /* a call block named it */
			if (ia_trace_add_thread(t, r->tids[i], r->pids[i], tcap, pcap) < 0) {
				sqlite3_finalize(q);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			continue;
		}
		if (!q && !(q = ia_db_prepare(t->db,
				"SELECT coalesce((SELECT pid FROM cuda_calls WHERE tid = ?1 LIMIT 1),"
				" (SELECT pid FROM off_cpu WHERE tid = ?1 LIMIT 1), ?1)", err, errlen)))
			return -1;
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, r->tids[i]);
		int s = sqlite3_step(q);
		if (ia_db_done(q, s, err, errlen) < 0) {
			sqlite3_finalize(q);
			return -1;
		}
		int pid = s == SQLITE_ROW ? sqlite3_column_int(q, 0) : (int)r->tids[i];
		if (ia_trace_add_thread(t, r->tids[i], pid, tcap, pcap) < 0) {
			sqlite3_finalize(q);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	sqlite3_finalize(q);
	return 0;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct ia_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int sort_threads(struct ia_trace *t)
{
	struct maps *m = t->maps;
	if (t->nthreads)
		qsort(t->threads, t->nthreads, sizeof *t->threads, cmp_tid);
	for (size_t i = 0; i < t->nthreads; i++)
		if (ia_map_put(&m->tid, t->threads[i].tid, (uint32_t)i) < 0)
			return -1;
	return 0;
}

/* Thread index of a tid, through a small direct-mapped cache: rows of a few
 * threads interleave, so the hash map is consulted only on a miss. */
struct tid_cache {
	uint32_t tid[64], th[64];
};

static uint32_t cached_thread(const struct ia_trace *t, struct tid_cache *c, uint32_t tid)
{
	unsigned k = tid & 63;
	if (c->tid[k] != tid) {
		c->tid[k] = tid;
		c->th[k] = (uint32_t)ia_thread_index(t, tid);
	}
	return c->th[k];
}

/* Calls: raw tids -> thread indexes, rows of unselected processes (-p)
 * dropped, per-thread spans and per-process call counts. */
static int resolve_calls(struct ia_trace *t)
{
	struct tid_cache tc;
	memset(tc.tid, 0xff, sizeof tc.tid);
	size_t w = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		struct ia_call c = t->calls[i];
		uint32_t th_i = cached_thread(t, &tc, c.th);
		struct ia_thread *th = &t->threads[th_i];
		struct ia_proc *p = &t->procs[th->proc];
		if (!p->selected)
			continue;
		c.th = th_i;
		t->calls[w++] = c;
		th->ncalls++;
		if (c.start < th->first_ns)
			th->first_ns = c.start;
		if (c.start + c.dur > th->last_ns)
			th->last_ns = c.start + c.dur;
		if (!p->calls && !(p->calls = calloc(INGERO_API_MAX, sizeof *p->calls)))
			return -1;
		p->calls[c.api]++;
		p->ncalls++;
	}
	t->ncalls = w;
	return 0;
}

/* Off-CPU rows: the same, with spans into first/last (merged by the caller:
 * this runs beside resolve_calls, which owns the threads' own fields); the
 * tids that did not fit their rows (rows.h) taken from beside them. */
static void resolve_offs(struct ia_trace *t, const struct ia_off_waker *aside, size_t naside, uint64_t *first,
			 uint64_t *last)
{
	struct tid_cache tc;
	memset(tc.tid, 0xff, sizeof tc.tid);
	size_t w = 0, wk = 0, kept = 0, ak = 0;   /* (the wakers follow their rows: by index, both in storage order) */
	size_t nk = 0, nkept = 0, hk = 0, hkept = 0;   /* (and the next tasks, the holders) */
	for (size_t i = 0; i < t->noffs; i++) {
		struct ia_off o = t->offs[i];
		uint32_t tid = o.th & ~IA_OFF_FLAGS;
		if (tid == IA_OFF_TID_ASIDE && ak < naside && aside[ak].off == i)
			tid = aside[ak++].tid;
		uint32_t th_i = cached_thread(t, &tc, tid);
		int sel = t->procs[t->threads[th_i].proc].selected != 0;
		for (; wk < t->noff_wakers && t->off_wakers[wk].off == i; wk++)
			if (sel)
				t->off_wakers[kept++] = (struct ia_off_waker){ (uint32_t)w, t->off_wakers[wk].tid };
		for (; nk < t->noff_nexts && t->off_nexts[nk].off == i; nk++)
			if (sel)
				t->off_nexts[nkept++] = (struct ia_off_waker){ (uint32_t)w, t->off_nexts[nk].tid };
		for (; hk < t->noff_holders && t->off_holders[hk].off == i; hk++)
			if (sel) {
				t->off_holders[hkept] = t->off_holders[hk];
				t->off_holders[hkept++].off = (uint32_t)w;
			}
		if (!sel)
			continue;
		o.th = th_i | (o.th & IA_OFF_FLAGS);
		t->offs[w++] = o;
		if (o.start < first[th_i])
			first[th_i] = o.start;
		if (o.end > last[th_i])
			last[th_i] = o.end;
	}
	t->noffs = w;
	t->noff_wakers = kept;
	t->noff_nexts = nkept;
	t->noff_holders = hkept;
}

/* Per-thread index of rows (a stable counting sort by thread), each
 * thread's run then put in time order when it is not already; each
 * thread's run's start and length into span[2 * i], span[2 * i + 1].  The
 * two tables are indexed on two threads at once, so neither writes the
 * threads' own fields: with both pairs of fields in reach the compiler
 * blends the stores into a read-modify-write of the other pair (seen: GCC
 * -O2, 8-byte blends at the two pairs' offsets), which lost one table's
 * spans now and then. */
static uint32_t *index_by_thread(const struct ia_trace *t, int calls, uint32_t *span)
{
	size_t n = calls ? t->ncalls : t->noffs;
	uint32_t *ix = malloc((n + 1) * sizeof *ix);
	if (!ix)
		return NULL;
	ia_hint_huge(ix, (n + 1) * sizeof *ix);
	uint32_t *first = malloc((t->nthreads + 1) * sizeof *first), *cnt = calloc(t->nthreads + 1, sizeof *cnt);
	if (!first || !cnt) {
		free(ix);
		free(first);
		free(cnt);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		cnt[calls ? t->calls[i].th : t->offs[i].th & ~IA_OFF_FLAGS]++;
	uint32_t pos = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		first[i] = pos;
		pos += cnt[i];
		span[2 * i] = first[i];
		span[2 * i + 1] = cnt[i];
		cnt[i] = 0;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t th = calls ? t->calls[i].th : t->offs[i].th & ~IA_OFF_FLAGS;
		ix[first[th] + cnt[th]++] = (uint32_t)i;
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		uint32_t *seg = ix + first[i];
		size_t m = cnt[i];
		int sorted = 1;
		for (size_t k = 1; k < m && sorted; k++)
			sorted = calls ? cmp_call(&t->calls[seg[k - 1]], &t->calls[seg[k]]) <= 0
				       : cmp_off(&t->offs[seg[k - 1]], &t->offs[seg[k]]) <= 0;
		if (!sorted)
			qsort_r(seg, m, sizeof *seg, calls ? cmp_call_ix : cmp_off_ix,
				calls ? (void *)t->calls : (void *)t->offs);
	}
	free(first);
	free(cnt);
	return ix;
}

struct side {
	struct ia_trace *t;
	uint32_t *span;   /* the calls' runs by thread (index_by_thread) */
	int rc;
};

static void *calls_side(void *arg)
{
	struct side *s = arg;
	if (resolve_calls(s->t) < 0 || !(s->t->call_by_th = index_by_thread(s->t, 1, s->span)))
		s->rc = -1;
	return NULL;
}

/* ia_trace_load's body: the small tables, the big ones scanned, their rows
 * resolved and indexed.  check_after_scan: where to start the page check
 * once the tables are read (NULL: it was started before). */
static int trace_load(struct ia_trace *t, sqlite3 *db, const struct ia_filter *f, int what,
		      struct ia_check **check_after_scan, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	t->db = db;
	if (f)
		t->filter = *f;
	struct maps *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->maps = m;
	size_t pcap = 0, tcap = 0;
	if ((t->blocks = ia_db_has_table(db, "call_blocks")) < 0) {
		ia_db_corrupt(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	if (ia_trace_load_small(t, err, errlen, &pcap, &tcap) < 0)
		return -1;
	/* a collector that failed at start leaves no session: no trace at all */
	if (!ia_session(t, "start_mono_ns")) {
		ia_db_bad(err, errlen, "no trace in it (no session start: a collector that failed at start?)");
		return -1;
	}
	if (resolve_window(t, err, errlen) < 0)
		return -1;
	if (t->filter.pid && ia_proc_index(t, t->filter.pid) < 0) {
		snprintf(err, errlen, "%s: no process %d in this trace", ia_db_path(), t->filter.pid);
		return IA_TRACE_NO_PID;
	}
	if (ia_trace_load_losses(t, err, errlen) < 0)
		return -1;
	t->command = (char *)ia_session(t, "command");
	t->host = (char *)ia_session(t, "host");
	t->gpu = (char *)ia_session(t, "gpu");
	t->mode = (char *)ia_session(t, "mode");

	struct ia_scan_result r;
	ia_phase("small-tables");
	if ((t->off_syscall = ia_db_has_column(db, "off_cpu", "syscall")) < 0) {
		ia_db_corrupt(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	if (t->off_syscall)
		what |= IA_LOAD_OFF_SYSCALL;
	if ((t->off_waker = ia_db_has_column(db, "off_cpu", "waker_tid")) < 0) {
		ia_db_corrupt(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	if (t->off_waker)
		what |= IA_LOAD_OFF_WAKER;
	if ((t->off_holder = ia_db_has_column(db, "off_cpu", "holder_pid")) < 0 ||
	    (t->off_holder_tid = ia_db_has_column(db, "off_cpu", "holder_tid")) < 0) {
		ia_db_corrupt(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	if (t->off_holder)
		what |= IA_LOAD_OFF_HOLDER | (t->off_holder_tid ? IA_LOAD_OFF_HOLDER_TID : 0);
	if (ia_scan_tables(sqlite3_db_filename(db, "main"), t->blocks, t->from, t->to, what, &r, err, errlen) < 0)
		return -1;
	if (check_after_scan)   /* (beside the resolving below, which leaves a CPU part idle) */
		*check_after_scan = ia_check_start(sqlite3_db_filename(db, "main"));
	if (adopt_threads(t, &r, &tcap, &pcap, err, errlen) < 0 || sort_threads(t) < 0) {
		ia_scan_result_free(&r);
		if (!err[0])
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->stack_ids = r.stack_ids;
	t->nstacks = r.nstacks;
	r.stack_ids = NULL;
	t->calls = r.calls;
	t->ncalls = r.ncalls;
	r.calls = NULL;
	t->offs = r.offs;
	t->noffs = r.noffs;
	r.offs = NULL;
	t->off_wakers = r.wakers;
	t->noff_wakers = r.nwakers;
	r.wakers = NULL;
	t->off_nexts = r.nexts;
	t->noff_nexts = r.nnexts;
	r.nexts = NULL;
	t->off_holders = r.holders;
	t->noff_holders = r.nholders;
	r.holders = NULL;
	struct ia_off_waker *aside = r.aside;   /* (read by resolve_offs, then freed) */
	size_t naside = r.naside;
	r.aside = NULL;
	ia_scan_result_free(&r);
	int rc = 0;
	for (size_t i = 0; i < t->nstacks; i++)
		if (ia_map_put(&m->stack, t->stack_ids[i], (uint32_t)i) < 0)
			rc = -1;
	/* calls on a second thread, off-CPU rows here */
	uint32_t *spans = malloc((4 * t->nthreads + 2) * sizeof *spans);   /* calls' runs, then offs' */
	struct side s = { t, spans, 0 };
	pthread_t th;
	if (!spans)
		rc = -1;
	int started = !rc && pthread_create(&th, NULL, calls_side, &s) == 0;
	if (!rc && !started)
		calls_side(&s);
	uint64_t *first = malloc((t->nthreads + 1) * sizeof *first), *last = calloc(t->nthreads + 1, sizeof *last);
	if (!rc && first && last) {
		for (size_t i = 0; i < t->nthreads; i++)
			first[i] = UINT64_MAX;
		resolve_offs(t, aside, naside, first, last);
		if (!(t->off_by_th = index_by_thread(t, 0, spans + 2 * t->nthreads)))
			rc = -1;
	} else {
		rc = -1;
	}
	if (started)
		pthread_join(th, NULL);
	if (s.rc)
		rc = -1;
	for (size_t i = 0; !rc && i < t->nthreads; i++) {
		struct ia_thread *x = &t->threads[i];
		x->call_first = spans[2 * i];
		x->call_n = spans[2 * i + 1];
		x->off_first = spans[2 * (t->nthreads + i)];
		x->off_n = spans[2 * (t->nthreads + i) + 1];
		if (first[i] < x->first_ns)
			x->first_ns = first[i];
		if (last[i] > x->last_ns)
			x->last_ns = last[i];
	}
	free(spans);
	free(first);
	free(last);
	free(aside);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ia_phase("resolve+index");
	t->first_ns = UINT64_MAX;
	t->last_ns = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		if (t->threads[i].first_ns < t->first_ns)
			t->first_ns = t->threads[i].first_ns;
		if (t->threads[i].last_ns > t->last_ns && t->threads[i].last_ns != 0)
			t->last_ns = t->threads[i].last_ns;
	}
	if (t->first_ns == UINT64_MAX)
		t->first_ns = t->last_ns = t->t0;
	return 0;
}

/* The CPUs this process may run on (its affinity: taskset, a cpuset). */
static int cpus_usable(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* The pages the analysis reads are checked while it loads (check.c); a
 * damaged table is named rather than read. */
int ia_trace_load(struct ia_trace *t, sqlite3 *db, const struct ia_filter *f, int what,
		  char *err, size_t errlen)
{
	const char *path = sqlite3_db_filename(db, "main");
	int late = (what & IA_LOAD_CHECK_LATE) != 0;
	/* where the scan's threads would share their CPUs with it, a check
	 * waited for late starts after the scan, beside the analysis (mostly
	 * one thread): on two CPUs the 10 M + 10 M bench's first explain, a
	 * median 5.04 s with the check beside the scan, took 4.80 s so
	 * (docs/benchmarks.md, forty-second session).  (A load that fails
	 * checks after it, in ia_check_finish: damage is the answer then.) */
	int after_scan = late && cpus_usable() <= IA_SCAN_THREADS;
	struct ia_check *check = after_scan ? NULL : ia_check_start(path);
	int rc = trace_load(t, db, f, what, after_scan ? &check : NULL, err, errlen);
	if (rc == 0 && late && check) {
		t->check = check;
		return 0;
	}
	if (ia_check_finish(check, path, err, errlen) < 0)
		rc = -1;
	return rc;
}

int ia_trace_checked(const struct ia_trace *t, char *err, size_t errlen)
{
	return t->check ? ia_check_wait(t->check, err, errlen) : 0;
}

void ia_trace_free(struct ia_trace *t)
{
	ia_check_free(t->check);
	struct maps *m = t->maps;
	if (m) {
		ia_map_free(&m->tid);
		ia_map_free(&m->pid);
		ia_map_free(&m->stack);
		for (size_t i = 0; i < m->nsess; i++) {
			free(m->skeys[i]);
			free(m->svals[i]);
		}
		free(m->skeys);
		free(m->svals);
		free(m);
	}
	for (size_t i = 0; i < t->nprocs; i++) {
		free(t->procs[i].exe);
		free(t->procs[i].cmdline);
		free(t->procs[i].calls);
	}
	ia_capture_free(&t->capture);
	for (size_t i = 0; i < t->nlosses; i++)
		free(t->losses[i].source);
	free(t->losses);
	for (size_t i = 0; i < INGERO_API_MAX; i++)
		free(t->api_names[i]);
	free(t->procs);
	free(t->threads);
	free(t->calls);
	free(t->offs);
	free(t->off_wakers);
	free(t->off_nexts);
	free(t->off_holders);
	free(t->off_by_th);
	free(t->call_by_th);
	free(t->stack_ids);
	memset(t, 0, sizeof *t);
}
