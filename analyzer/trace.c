/*
 * trace.c — reads a report.db into the compact arrays of trace.h.
 *
 * Order of work: session (for the time origin and the window), apis,
 * processes (the -p subtree is resolved here), threads, then the two big
 * tables by one sequential scan each.  A scan without a time filter says
 * NOT INDEXED: walking the table b-tree in rowid order is several times
 * faster than walking the time index and looking every row up.  With a
 * window, the time index bounds the scan instead.  Rows are then sorted by
 * (start, thread, ...) unless they already are (the collector writes them
 * nearly in time order, so the check usually saves the sort).
 */
#include "trace.h"

#include "db.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct maps {
	struct ia_map tid, pid, stack;
	char **skeys, **svals;
	size_t nsess;
};

const char *ia_session(const struct ia_trace *t, const char *key)
{
	const struct maps *m = t->maps;
	for (size_t i = 0; m && i < m->nsess; i++)
		if (!strcmp(m->skeys[i], key))
			return m->svals[i];
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

static char *dupstr(const unsigned char *s)
{
	return s ? strdup((const char *)s) : NULL;
}

static void copy_comm(char *dst, size_t len, const unsigned char *s)
{
	snprintf(dst, len, "%s", s ? (const char *)s : "");
}

static int add_proc(struct ia_trace *t, int pid, size_t *cap)
{
	struct maps *m = t->maps;
	if (ia_grow((void **)&t->procs, cap, t->nprocs + 1, sizeof *t->procs) < 0)
		return -1;
	struct ia_proc *p = &t->procs[t->nprocs];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->ppid = -1;
	p->parent = -1;
	if (ia_map_put(&m->pid, (uint32_t)pid, (uint32_t)t->nprocs) < 0)
		return -1;
	return (int)t->nprocs++;
}

static int add_thread(struct ia_trace *t, uint32_t tid, int pid, size_t *cap, size_t *pcap)
{
	struct maps *m = t->maps;
	int pi = ia_proc_index(t, pid);
	if (pi < 0) {
		pi = add_proc(t, pid, pcap);
		if (pi < 0)
			return -1;
		t->procs[pi].selected = t->filter.pid == 0;
	}
	if (ia_grow((void **)&t->threads, cap, t->nthreads + 1, sizeof *t->threads) < 0)
		return -1;
	struct ia_thread *th = &t->threads[t->nthreads];
	memset(th, 0, sizeof *th);
	th->tid = tid;
	th->proc = (uint32_t)pi;
	th->first_ns = UINT64_MAX;
	if (ia_map_put(&m->tid, tid, (uint32_t)t->nthreads) < 0)
		return -1;
	return (int)t->nthreads++;
}

static int load_small(struct ia_trace *t, char *err, size_t errlen, size_t *pcap, size_t *tcap)
{
	sqlite3 *db = t->db;
	struct maps *m = t->maps;
	sqlite3_stmt *st;
	int rc;
	size_t scap = 0;

	if (!(st = ia_db_prepare(db, "SELECT key, value FROM session", err, errlen)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t vcap = scap;
		if (ia_grow((void **)&m->skeys, &scap, m->nsess + 1, sizeof *m->skeys) < 0 ||
		    ia_grow((void **)&m->svals, &vcap, m->nsess + 1, sizeof *m->svals) < 0)
			goto oom;
		m->skeys[m->nsess] = dupstr(sqlite3_column_text(st, 0));
		m->svals[m->nsess] = dupstr(sqlite3_column_text(st, 1));
		if (!m->skeys[m->nsess])
			m->skeys[m->nsess] = strdup("");
		if (!m->svals[m->nsess])
			m->svals[m->nsess] = strdup("");
		m->nsess++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	const char *v = ia_session(t, "cpus");
	t->cpus = v ? atoi(v) : 0;

	if (!(st = ia_db_prepare(db, "SELECT id, name FROM apis", err, errlen)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id > 0 && id < INGERO_API_MAX && !t->api_names[id] && sqlite3_column_text(st, 1))
			t->api_names[id] = dupstr(sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;

	if (!(st = ia_db_prepare(db, "SELECT pid, ppid, comm, exe, cmdline, start_ns, exit_ns, exit_code, "
				 "announced, made, dropped FROM processes", err, errlen)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		if (ia_proc_index(t, pid) >= 0)
			continue;
		int i = add_proc(t, pid, pcap);
		if (i < 0)
			goto oom;
		struct ia_proc *p = &t->procs[i];
		p->ppid = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
		copy_comm(p->comm, sizeof p->comm, sqlite3_column_text(st, 2));
		p->exe = dupstr(sqlite3_column_text(st, 3));
		p->cmdline = dupstr(sqlite3_column_text(st, 4));
		p->start_ns = (uint64_t)sqlite3_column_int64(st, 5);
		p->exit_ns = (uint64_t)sqlite3_column_int64(st, 6);
		p->has_exit_code = sqlite3_column_type(st, 7) != SQLITE_NULL;
		p->exit_code = sqlite3_column_int(st, 7);
		p->announced = (uint64_t)sqlite3_column_int64(st, 8);
		p->made = (uint64_t)sqlite3_column_int64(st, 9);
		p->dropped = (uint64_t)sqlite3_column_int64(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	for (size_t i = 0; i < t->nprocs; i++)
		t->procs[i].parent = ia_proc_index(t, t->procs[i].ppid);
	/* The -p subtree: a process is selected when it or an ancestor is PID. */
	for (size_t i = 0; i < t->nprocs; i++) {
		if (!t->filter.pid) {
			t->procs[i].selected = 1;
			continue;
		}
		int j = (int)i, hops = 0;
		while (j >= 0 && hops++ < 1000) {
			if (t->procs[j].pid == t->filter.pid) {
				t->procs[i].selected = 1;
				break;
			}
			j = t->procs[j].parent;
		}
	}

	if (!(st = ia_db_prepare(db, "SELECT tid, pid, comm FROM threads", err, errlen)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 0);
		if (ia_thread_index(t, tid) >= 0)
			continue;
		int i = add_thread(t, tid, sqlite3_column_int(st, 1), tcap, pcap);
		if (i < 0)
			goto oom;
		copy_comm(t->threads[i].comm, sizeof t->threads[i].comm, sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto steperr;
	return 0;
oom:
	sqlite3_finalize(st);
	snprintf(err, errlen, "out of memory");
	return -1;
steperr:
	ia_db_step_error(db, rc, err, errlen);
	return -1;
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

static int resolve_window(struct ia_trace *t, char *err, size_t errlen)
{
	const char *s = ia_session(t, "start_mono_ns");
	uint64_t c0, o0, c1, o1;
	if (query_u64(t->db, "SELECT min(start_ns) FROM cuda_calls", UINT64_MAX, &c0, err, errlen) < 0 ||
	    query_u64(t->db, "SELECT min(start_ns) FROM off_cpu", UINT64_MAX, &o0, err, errlen) < 0 ||
	    query_u64(t->db, "SELECT max(start_ns) FROM cuda_calls", 0, &c1, err, errlen) < 0 ||
	    query_u64(t->db, "SELECT max(start_ns) FROM off_cpu", 0, &o1, err, errlen) < 0)
		return -1;
	uint64_t first = c0 < o0 ? c0 : o0;
	t->t0 = s ? strtoull(s, NULL, 10) : 0;
	if (!t->t0 || (first != UINT64_MAX && first < t->t0))
		t->t0 = first == UINT64_MAX ? 0 : first;
	const char *e = ia_session(t, "end_mono_ns");
	uint64_t end = e ? strtoull(e, NULL, 10) : 0;
	uint64_t last = c1 > o1 ? c1 : o1;
	if (end < last)
		end = last;

	const struct ia_filter *f = &t->filter;
	t->from = 0;
	t->to = UINT64_MAX;
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
	return 0;
}

static inline int thread_of(struct ia_trace *t, uint32_t tid, int pid, uint32_t *last_tid, int *last_th,
			    size_t *tcap, size_t *pcap)
{
	if (tid == *last_tid && *last_th >= 0)
		return *last_th;
	int th = ia_thread_index(t, tid);
	if (th < 0)
		th = add_thread(t, tid, pid, tcap, pcap);
	*last_tid = tid;
	*last_th = th;
	return th;
}

static int cmp_call(const void *a, const void *b)
{
	const struct ia_call *x = a, *y = b;
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
	return (int)x->stack - (int)y->stack;
}

static int cmp_off(const void *a, const void *b)
{
	const struct ia_off *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->th != y->th)
		return x->th < y->th ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->runq < y->runq ? -1 : x->runq > y->runq;
}

/* Thread ids are assigned in the order threads were first seen, which
 * depends on row order; renumber them by tid so sorting and every output
 * are independent of it. */
static int renumber_threads(struct ia_trace *t)
{
	size_t n = t->nthreads;
	uint32_t *order = malloc((n + 1) * sizeof *order), *newid = malloc((n + 1) * sizeof *newid);
	struct ia_thread *sorted = malloc((n + 1) * sizeof *sorted);
	if (!order || !newid || !sorted) {
		free(order);
		free(newid);
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	/* insertion sort is fine for thousands of threads; use qsort-like shell sort for more */
	for (size_t gap = n / 2; gap > 0; gap /= 2)
		for (size_t i = gap; i < n; i++)
			for (size_t j = i; j >= gap && t->threads[order[j - gap]].tid > t->threads[order[j]].tid; j -= gap) {
				uint32_t x = order[j];
				order[j] = order[j - gap];
				order[j - gap] = x;
			}
	struct maps *m = t->maps;
	for (size_t i = 0; i < n; i++) {
		newid[order[i]] = (uint32_t)i;
		sorted[i] = t->threads[order[i]];
		ia_map_put(&m->tid, sorted[i].tid, (uint32_t)i);
	}
	for (size_t i = 0; i < t->ncalls; i++)
		t->calls[i].th = newid[t->calls[i].th];
	for (size_t i = 0; i < t->noffs; i++) {
		uint32_t pre = t->offs[i].th & IA_OFF_PREEMPTED;
		t->offs[i].th = newid[t->offs[i].th & ~IA_OFF_PREEMPTED] | pre;
	}
	free(t->threads);
	t->threads = sorted;
	free(order);
	free(newid);
	return 0;
}

/* Same for stacks: dense indexes in order of first appearance → by stack id. */
static int renumber_stacks(struct ia_trace *t)
{
	size_t n = t->nstacks;
	if (n <= 1)
		return 0;
	uint32_t *order = malloc(n * sizeof *order), *newid = malloc(n * sizeof *newid);
	uint64_t *ids = malloc(n * sizeof *ids);
	if (!order || !newid || !ids) {
		free(order);
		free(newid);
		free(ids);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t gap = n / 2; gap > 0; gap /= 2)
		for (size_t i = gap; i < n; i++)
			for (size_t j = i; j >= gap && t->stack_ids[order[j - gap]] > t->stack_ids[order[j]]; j -= gap) {
				uint32_t x = order[j];
				order[j] = order[j - gap];
				order[j - gap] = x;
			}
	for (size_t i = 0; i < n; i++) {
		newid[order[i]] = (uint32_t)i;
		ids[i] = t->stack_ids[order[i]];
	}
	for (size_t i = 0; i < t->ncalls; i++)
		t->calls[i].stack = newid[t->calls[i].stack];
	free(t->stack_ids);
	t->stack_ids = ids;
	free(order);
	free(newid);
	return 0;
}

static int load_calls(struct ia_trace *t, char *err, size_t errlen, size_t *tcap, size_t *pcap)
{
	struct maps *m = t->maps;
	uint64_t maxrow;
	if (query_u64(t->db, "SELECT max(rowid) FROM cuda_calls", 0, &maxrow, err, errlen) < 0)
		return -1;
	int windowed = t->from > 0 || t->to != UINT64_MAX;
	const char *sql = windowed
		? "SELECT tid, pid, api, start_ns, dur_ns, bytes, dir, flags, stack_id FROM cuda_calls "
		  "WHERE start_ns >= ?1 AND start_ns < ?2"
		: "SELECT tid, pid, api, start_ns, dur_ns, bytes, dir, flags, stack_id FROM cuda_calls NOT INDEXED";
	sqlite3_stmt *st = ia_db_prepare(t->db, sql, err, errlen);
	if (!st)
		return -1;
	if (windowed) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)t->from);
		sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	}
	/* max(rowid) is an upper bound on the row count: the array is allocated
	 * once, and pages never written are never resident. */
	size_t cap = windowed ? 0 : (size_t)maxrow + 1;
	if (cap && !(t->calls = malloc(cap * sizeof *t->calls)))
		cap = 0;
	t->stack_ids = malloc(sizeof *t->stack_ids);
	if (!t->stack_ids)
		goto oom;
	t->stack_ids[0] = 0;
	t->nstacks = 1;
	size_t scap = 1;
	uint32_t last_tid = UINT32_MAX;
	int last_th = -1;
	uint64_t last_stack = 0;
	uint32_t last_stack_idx = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 0);
		int th = thread_of(t, tid, sqlite3_column_int(st, 1), &last_tid, &last_th, tcap, pcap);
		if (th < 0)
			goto oom;
		struct ia_thread *thr = &t->threads[th];
		struct ia_proc *p = &t->procs[thr->proc];
		if (!p->selected)
			continue;
		if (t->ncalls == cap && ia_grow((void **)&t->calls, &cap, t->ncalls + 1, sizeof *t->calls) < 0)
			goto oom;
		struct ia_call *c = &t->calls[t->ncalls++];
		sqlite3_int64 api = sqlite3_column_int64(st, 2);
		c->api = api > 0 && api < INGERO_API_MAX ? (uint16_t)api : 0;
		c->start = (uint64_t)sqlite3_column_int64(st, 3);
		sqlite3_int64 d = sqlite3_column_int64(st, 4);
		c->dur = d > 0 ? (uint64_t)d : 0;
		c->bytes = (uint64_t)sqlite3_column_int64(st, 5);
		c->dir = (uint8_t)sqlite3_column_int(st, 6);
		c->flags = (uint8_t)sqlite3_column_int(st, 7);
		c->th = (uint32_t)th;
		uint64_t sid = (uint64_t)sqlite3_column_int64(st, 8);
		if (sid == 0) {
			c->stack = 0;
		} else if (sid == last_stack) {
			c->stack = last_stack_idx;
		} else {
			uint32_t idx = ia_map_get(&m->stack, sid);
			if (idx == UINT32_MAX) {
				if (ia_grow((void **)&t->stack_ids, &scap, t->nstacks + 1, sizeof *t->stack_ids) < 0 ||
				    ia_map_put(&m->stack, sid, (uint32_t)t->nstacks) < 0)
					goto oom;
				idx = (uint32_t)t->nstacks;
				t->stack_ids[t->nstacks++] = sid;
			}
			c->stack = idx;
			last_stack = sid;
			last_stack_idx = idx;
		}
		thr->ncalls++;
		if (c->start < thr->first_ns)
			thr->first_ns = c->start;
		if (c->start + c->dur > thr->last_ns)
			thr->last_ns = c->start + c->dur;
		if (!p->calls && !(p->calls = calloc(INGERO_API_MAX, sizeof *p->calls)))
			goto oom;
		p->calls[c->api]++;
		p->ncalls++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
oom:
	sqlite3_finalize(st);
	snprintf(err, errlen, "out of memory reading cuda_calls");
	return -1;
}

/* How far back an interval may start and still overlap a window. */
#define OFF_SLACK_NS (600ull * 1000000000ull)

static int load_offs(struct ia_trace *t, char *err, size_t errlen, size_t *tcap, size_t *pcap)
{
	uint64_t maxrow;
	if (query_u64(t->db, "SELECT max(rowid) FROM off_cpu", 0, &maxrow, err, errlen) < 0)
		return -1;
	int windowed = t->from > 0 || t->to != UINT64_MAX;
	const char *sql = windowed
		? "SELECT tid, pid, start_ns, end_ns, runnable_ns, preempted FROM off_cpu "
		  "WHERE start_ns >= ?1 AND start_ns < ?2 AND end_ns > ?3"
		: "SELECT tid, pid, start_ns, end_ns, runnable_ns, preempted FROM off_cpu NOT INDEXED";
	sqlite3_stmt *st = ia_db_prepare(t->db, sql, err, errlen);
	if (!st)
		return -1;
	if (windowed) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)(t->from > OFF_SLACK_NS ? t->from - OFF_SLACK_NS : 0));
		sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)t->from);
	}
	size_t cap = windowed ? 0 : (size_t)maxrow + 1;
	if (cap && !(t->offs = malloc(cap * sizeof *t->offs)))
		cap = 0;
	uint32_t last_tid = UINT32_MAX;
	int last_th = -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 0);
		int th = thread_of(t, tid, sqlite3_column_int(st, 1), &last_tid, &last_th, tcap, pcap);
		if (th < 0)
			goto oom;
		struct ia_thread *thr = &t->threads[th];
		if (!t->procs[thr->proc].selected)
			continue;
		uint64_t s = (uint64_t)sqlite3_column_int64(st, 2);
		uint64_t e = (uint64_t)sqlite3_column_int64(st, 3);
		uint64_t r = (uint64_t)sqlite3_column_int64(st, 4);
		if (e < s)   /* malformed row: never let it produce a negative duration */
			e = s;
		if (r < s)
			r = s;
		if (r > e)
			r = e;
		if (t->noffs == cap && ia_grow((void **)&t->offs, &cap, t->noffs + 1, sizeof *t->offs) < 0)
			goto oom;
		struct ia_off *o = &t->offs[t->noffs++];
		o->start = s;
		o->end = e;
		o->runq = e - r > UINT32_MAX ? UINT32_MAX : (uint32_t)(e - r);
		o->th = (uint32_t)th | (sqlite3_column_int(st, 5) ? IA_OFF_PREEMPTED : 0);
		if (s < thr->first_ns)
			thr->first_ns = s;
		if (e > thr->last_ns)
			thr->last_ns = e;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
oom:
	sqlite3_finalize(st);
	snprintf(err, errlen, "out of memory reading off_cpu");
	return -1;
}

static int index_offs_by_thread(struct ia_trace *t)
{
	t->off_by_th = malloc((t->noffs + 1) * sizeof *t->off_by_th);
	if (!t->off_by_th)
		return -1;
	for (size_t i = 0; i < t->nthreads; i++)
		t->threads[i].off_n = 0;
	for (size_t i = 0; i < t->noffs; i++)
		t->threads[t->offs[i].th & ~IA_OFF_PREEMPTED].off_n++;
	uint32_t pos = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		t->threads[i].off_first = pos;
		pos += t->threads[i].off_n;
		t->threads[i].off_n = 0;
	}
	for (size_t i = 0; i < t->noffs; i++) {
		struct ia_thread *th = &t->threads[t->offs[i].th & ~IA_OFF_PREEMPTED];
		t->off_by_th[th->off_first + th->off_n++] = (uint32_t)i;
	}
	return 0;
}

int ia_trace_load(struct ia_trace *t, sqlite3 *db, const struct ia_filter *f, int what,
		  char *err, size_t errlen)
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
	if (load_small(t, err, errlen, &pcap, &tcap) < 0 || resolve_window(t, err, errlen) < 0)
		return -1;
	if (t->filter.pid && ia_proc_index(t, t->filter.pid) < 0) {
		snprintf(err, errlen, "%s: no process %d in this trace", ia_db_path(), t->filter.pid);
		return -1;
	}
	t->command = (char *)ia_session(t, "command");
	t->host = (char *)ia_session(t, "host");
	t->gpu = (char *)ia_session(t, "gpu");
	t->mode = (char *)ia_session(t, "mode");
	if ((what & IA_LOAD_CALLS) && load_calls(t, err, errlen, &tcap, &pcap) < 0)
		return -1;
	if ((what & IA_LOAD_OFFCPU) && load_offs(t, err, errlen, &tcap, &pcap) < 0)
		return -1;
	if (renumber_threads(t) < 0 || renumber_stacks(t) < 0)
		goto oom;
	int sorted = 1;
	for (size_t i = 1; i < t->ncalls && sorted; i++)
		if (cmp_call(&t->calls[i - 1], &t->calls[i]) > 0)
			sorted = 0;
	if (!sorted)
		qsort(t->calls, t->ncalls, sizeof *t->calls, cmp_call);
	sorted = 1;
	for (size_t i = 1; i < t->noffs && sorted; i++)
		if (cmp_off(&t->offs[i - 1], &t->offs[i]) > 0)
			sorted = 0;
	if (!sorted)
		qsort(t->offs, t->noffs, sizeof *t->offs, cmp_off);
	if (index_offs_by_thread(t) < 0)
		goto oom;
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
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_trace_free(struct ia_trace *t)
{
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
	for (size_t i = 0; i < INGERO_API_MAX; i++)
		free(t->api_names[i]);
	free(t->procs);
	free(t->threads);
	free(t->calls);
	free(t->offs);
	free(t->off_by_th);
	free(t->stack_ids);
	memset(t, 0, sizeof *t);
}

size_t ia_thread_off_lower(const struct ia_trace *t, uint32_t th, uint64_t a)
{
	const struct ia_thread *thr = &t->threads[th];
	const uint32_t *ix = t->off_by_th + thr->off_first;
	size_t lo = 0, hi = thr->off_n;
	/* A thread's intervals are disjoint and sorted by start, hence by end:
	 * find the first whose end is after a. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->offs[ix[mid]].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void ia_thread_off_in(const struct ia_trace *t, uint32_t th, uint64_t a, uint64_t b,
		      uint64_t *off_ns, uint64_t *runq_ns, uint64_t *nswitch)
{
	const struct ia_thread *thr = &t->threads[th];
	const uint32_t *ix = t->off_by_th + thr->off_first;
	uint64_t off = 0, rq = 0, n = 0;
	for (size_t i = ia_thread_off_lower(t, th, a); i < thr->off_n; i++) {
		const struct ia_off *o = &t->offs[ix[i]];
		if (o->start >= b)
			break;
		off += ia_overlap(o->start, o->end, a, b);
		rq += ia_overlap(o->end - o->runq, o->end, a, b);
		n++;
	}
	if (off_ns)
		*off_ns = off;
	if (runq_ns)
		*runq_ns = rq;
	if (nswitch)
		*nswitch = n;
}
