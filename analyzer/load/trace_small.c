/*
 * trace_small.c — the small tables of a report.db into the trace (the
 * loader's first step, trace.c): session, apis, processes (the -p subtree
 * resolved), threads; and losses.
 */
#include "load/trace_internal.h"

#include "base/util.h"
#include "load/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int ia_trace_add_thread(struct ia_trace *t, uint32_t tid, int pid, size_t *cap, size_t *pcap)
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

int ia_trace_load_small(struct ia_trace *t, char *err, size_t errlen, size_t *pcap, size_t *tcap)
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
	v = ia_session(t, "gpus");
	t->gpus = v ? atoi(v) : 0;
	v = ia_session(t, "cpu_limit");
	t->cpu_limit = v ? strtod(v, NULL) : 0;
	if (!(t->cpu_limit > 0))
		t->cpu_limit = 0;
	v = ia_session(t, "cpu_limit_periods");
	t->cpu_limit_periods = v ? strtoull(v, NULL, 10) : 0;
	v = ia_session(t, "cpu_limit_throttled_periods");
	t->cpu_limit_throttled_periods = v ? strtoull(v, NULL, 10) : 0;
	v = ia_session(t, "cpu_limit_throttled_ns");
	t->cpu_limit_throttled_ns = v ? strtoull(v, NULL, 10) : 0;

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
		int i = ia_trace_add_thread(t, tid, sqlite3_column_int(st, 1), tcap, pcap);
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

int ia_trace_load_losses(struct ia_trace *t, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT source, sum(count) FROM losses GROUP BY source "
				      "HAVING sum(count) > 0 ORDER BY source", err, errlen);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *src = (const char *)sqlite3_column_text(st, 0);
		if (ia_grow((void **)&t->losses, &cap, t->nlosses + 1, sizeof *t->losses) < 0 ||
		    !(t->losses[t->nlosses].source = strdup(src ? src : "?"))) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		t->losses[t->nlosses++].count = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
}
