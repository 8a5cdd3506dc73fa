/*
 * timeline.c — the events of a window in time order, as data (see
 * timeline.h); `ingero-analyze timeline` prints them (cmd_timeline.c).
 *
 * Streams instead of loading: one query per table over the time index
 * (ORDER BY start_ns follows the index, so no sort), merged by time, with
 * at most --limit events printed.  The CUDA calls of a version-2 file come
 * from the cuda_calls virtual table in block order, so ORDER BY start_ns
 * sorts what the query covers before its first row (1.8 s for 2M calls, for
 * 50 lines): they are read in time slices that start at 10 ms and double,
 * each sorted on its own, so the first lines cost the first slices only.  CUDA calls show their Python line;
 * off-CPU intervals show whether the thread was preempted or blocked, how
 * long it then waited for a CPU, and who took the CPU.
 */
#include "load/trace_status.h"
#include "load/syscalls.h"
#include "load/timeline.h"

#include "load/db.h"
#include "base/json_out.h"
#include "load/stacks.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <string.h>

struct ev {
	int valid;
	int rc;              /* the last sqlite3_step(): an error ends the stream, and is reported */
	uint64_t ts;
	sqlite3_stmt *st;
	int sliced;          /* read [lo, hi), then the next slice, up to end */
	uint64_t lo, hi, end, span;
};

#define FIRST_SLICE_NS 10000000ull

static sqlite3_int64 as_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

/* The stream's query over [lo, hi). */
static void bind_window(struct ev *e, uint64_t lo, uint64_t hi)
{
	sqlite3_reset(e->st);
	sqlite3_bind_int64(e->st, 1, as_i64(lo));
	sqlite3_bind_int64(e->st, 2, as_i64(hi));
}

/* A sliced stream of [from, end) starts with its first slice. */
static void slice_first(struct ev *e, uint64_t from, uint64_t end)
{
	e->sliced = 1;
	e->lo = from;
	e->end = end > from ? end : from;
	e->span = FIRST_SLICE_NS;
	e->hi = e->end - e->lo > e->span ? e->lo + e->span : e->end;
	bind_window(e, e->lo, e->hi);
}

const char *ia_tl_dir_name(int d)
{
	static const char *const n[] = { "", "HtoD", "DtoH", "DtoD", "HtoH", "default", "peer" };
	return d >= 0 && d < 7 ? n[d] : "";
}

static void next(struct ev *e)
{
	for (;;) {
		e->rc = sqlite3_step(e->st);
		e->valid = e->rc == SQLITE_ROW;
		if (e->valid)
			e->ts = (uint64_t)sqlite3_column_int64(e->st, 2);
		if (e->rc != SQLITE_DONE || !e->sliced || e->hi >= e->end)
			return;
		e->lo = e->hi;
		e->span = e->span < e->end / 2 ? 2 * e->span : e->end;
		e->hi = e->end - e->lo > e->span ? e->lo + e->span : e->end;
		bind_window(e, e->lo, e->hi);
	}
}

static int selected(const struct ia_trace *t, int pid)
{
	int i = ia_proc_index(t, pid);
	return i >= 0 ? t->procs[i].selected : !t->filter.pid;
}

static const char *comm_of(const struct ia_trace *t, uint32_t tid, int pid)
{
	int th = ia_thread_index(t, tid);
	if (th >= 0 && t->threads[th].comm[0])
		return t->threads[th].comm;
	int p = ia_proc_index(t, pid);
	return p >= 0 ? t->procs[p].comm : "?";
}

const char *ia_tl_memory(int flags)
{
	return flags & INGERO_FLAG_HOST_PINNED ? "pinned" : flags & INGERO_FLAG_HOST_PAGEABLE ? "pageable" : "";
}

int ia_timeline_walk(const struct ia_trace *t, long limit, ia_tl_fn fn, void *ctx, int *more, char *err, size_t errlen)
{
	struct ia_stack_names *names = ia_stack_names_new(t->db);
	struct ev calls = { 0 }, offs = { 0 };
	int rc = -1;
	*more = 0;
	calls.st = ia_db_prepare(t->db, "SELECT pid, tid, start_ns, dur_ns, api, bytes, dir, flags, stack_id "
				 "FROM cuda_calls WHERE start_ns >= ?1 AND start_ns < ?2 ORDER BY start_ns", err, errlen);
	/* off_cpu.syscall from version 5 on; the stack of a block drawn for one
	 * (off_cpu_stacks, joined by thread and start) from version 6 on */
	int stacks = ia_db_has_table(t->db, "off_cpu_stacks");
	if (stacks < 0) {
		ia_db_step_error(t->db, sqlite3_errcode(t->db), err, errlen);
		goto out;
	}
	char sql[600];
	snprintf(sql, sizeof sql, "SELECT o.pid, o.tid, o.start_ns, o.end_ns, o.runnable_ns, o.preempted, o.next_pid, %s, %s "
		 "FROM off_cpu o%s WHERE o.start_ns >= ?1 AND o.start_ns < ?2 ORDER BY o.start_ns",
		 t->off_syscall ? "o.syscall" : "NULL", stacks ? "s.stack_id" : "NULL",
		 stacks ? " LEFT JOIN off_cpu_stacks s ON s.tid = o.tid AND s.start_ns = o.start_ns" : "");
	offs.st = calls.st ? ia_db_prepare(t->db, sql, err, errlen) : NULL;
	if (!calls.st || !offs.st)
		goto out;
	if (t->blocks) {
		/* slices from the first call to the last, not over the window's open ends */
		sqlite3_stmt *q = ia_db_prepare(t->db, "SELECT min(first_ns), max(last_ns) FROM call_blocks", err, errlen);
		if (!q)
			goto out;
		uint64_t first = 0, last = 0;
		int s = sqlite3_step(q);
		if (s == SQLITE_ROW) {
			first = (uint64_t)sqlite3_column_int64(q, 0);
			last = (uint64_t)sqlite3_column_int64(q, 1);
		}
		int bad = ia_db_done(q, s, err, errlen);
		sqlite3_finalize(q);
		if (bad)
			goto out;
		slice_first(&calls, first > t->from ? first : t->from, last < t->to ? last + 1 : t->to);
	} else {
		bind_window(&calls, t->from, t->to);
	}
	bind_window(&offs, t->from, t->to);
	next(&calls);
	next(&offs);
	long shown = 0;
	while (calls.valid || offs.valid) {
		/* ties: the call first, so a sync and the switch inside it read in order */
		int is_call = calls.valid && (!offs.valid || calls.ts <= offs.ts);
		struct ev *e = is_call ? &calls : &offs;
		sqlite3_stmt *s = e->st;
		int pid = sqlite3_column_int(s, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(s, 1);
		if (!selected(t, pid)) {
			next(e);
			continue;
		}
		if (limit && shown >= limit) {
			*more = 1;   /* not counted: that would read the rest of a 10M-row trace */
			break;
		}
		shown++;
		struct ia_tl_event x;
		memset(&x, 0, sizeof x);
		x.ts_rel = e->ts >= t->t0 ? e->ts - t->t0 : 0;
		x.pid = pid;
		x.tid = tid;
		x.comm = comm_of(t, tid, pid);
		x.is_call = is_call;
		if (is_call) {
			x.dur = (uint64_t)sqlite3_column_int64(s, 3);
			x.api = (unsigned)sqlite3_column_int(s, 4);
			x.api_name = ia_api_name(t, x.api);
			x.bytes = (uint64_t)sqlite3_column_int64(s, 5);
			x.dir = sqlite3_column_int(s, 6);
			x.flags = sqlite3_column_int(s, 7);
			x.copy = ingero_api_class(x.api) == INGERO_CLASS_COPY;
			x.python = ia_stack_python(names, (uint64_t)sqlite3_column_int64(s, 8));
		} else {
			uint64_t ts = e->ts, end = (uint64_t)sqlite3_column_int64(s, 3), run = (uint64_t)sqlite3_column_int64(s, 4);
			int how = sqlite3_column_int(s, 5);   /* off_cpu.preempted */
			int pre = how == 1;
			x.reason = pre ? "preempted" : how == 2 ? "I/O wait (D)" : "blocked";
			if (end < ts)
				end = ts;
			if (run < ts || run > end)
				run = pre ? ts : end;
			x.dur = end - ts;
			x.runq = end - run;
			x.next_pid = sqlite3_column_int(s, 6);
			uint8_t code = ia_syscall_code(sqlite3_column_int64(s, 7), sqlite3_column_type(s, 7) != SQLITE_NULL);
			x.syscall = pre ? NULL : ia_syscall_where(code);
			uint64_t sid = (uint64_t)sqlite3_column_int64(s, 8);   /* (NULL: 0) */
			x.blocked_at = sid && !pre ? ia_stack_source(names, sid) : NULL;
		}
		if (fn(&x, ctx))
			break;
		next(e);
	}
	/* each stream's own result: sqlite3_errcode() only keeps the latest
	 * call's, and the other stream's steps after a failure would hide it */
	struct ev *failed = calls.rc != SQLITE_ROW && calls.rc != SQLITE_DONE ? &calls
			  : offs.rc != SQLITE_ROW && offs.rc != SQLITE_DONE ? &offs : NULL;
	if (failed) {
		sqlite3_reset(failed->st);   /* the statement's error becomes the connection's */
		ia_db_step_error(t->db, failed->rc, err, errlen);
		goto out;
	}
	if (ia_stack_names_error(names, err, errlen) < 0) {   /* a Python line could not be read */
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(calls.st);
	sqlite3_finalize(offs.st);
	ia_stack_names_free(names);
	return rc;
}

static int add_json(const struct ia_tl_event *e, void *ctx)
{
	cJSON *o = cJSON_CreateObject();
	ia_json_u64(o, "ts_rel_ns", e->ts_rel);
	cJSON_AddStringToObject(o, "type", e->is_call ? "cuda" : "off_cpu");
	cJSON_AddNumberToObject(o, "pid", e->pid);
	cJSON_AddNumberToObject(o, "tid", e->tid);
	if (e->is_call) {
		cJSON_AddStringToObject(o, "api", e->api_name);
		ia_json_u64(o, "dur_ns", e->dur);
		if (e->copy || e->bytes) {
			ia_json_u64(o, "bytes", e->bytes);
			cJSON_AddStringToObject(o, "dir", ia_tl_dir_name(e->dir));
			if (*ia_tl_memory(e->flags))
				cJSON_AddStringToObject(o, "memory", ia_tl_memory(e->flags));
		}
		ia_json_str(o, "python", e->python);
	} else {
		cJSON_AddStringToObject(o, "reason", e->reason);
		ia_json_str(o, "syscall", e->syscall);
		ia_json_str(o, "blocked_at", e->blocked_at);
		ia_json_u64(o, "dur_ns", e->dur);
		ia_json_u64(o, "runq_ns", e->runq);
		if (e->next_pid)
			cJSON_AddNumberToObject(o, "next_pid", e->next_pid);
	}
	cJSON_AddItemToArray(ctx, o);
	return 0;
}

cJSON *ia_timeline_json(const struct ia_trace *t, long limit, char *err, size_t errlen)
{
	cJSON *arr = cJSON_CreateArray();
	int more;
	if (ia_timeline_walk(t, limit, add_json, arr, &more, err, errlen) < 0) {
		cJSON_Delete(arr);   /* no half answer */
		return NULL;
	}
	cJSON *root = cJSON_CreateObject();
	cJSON_AddItemToObject(root, "events", arr);
	/* a number (the MCP server and scripts read it so): 1 when events past the limit exist */
	ia_json_u64(root, "more", (uint64_t)more);
	ia_trace_status_json(root, t);
	return root;
}
