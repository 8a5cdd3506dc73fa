/*
 * timeline.c — `ingero-analyze timeline [--from T] [--to T]`: the events of
 * a window in time order, one line each (or --json, an array).
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
#include "cli.h"
#include "db.h"
#include "json_out.h"
#include "stacks.h"
#include "util.h"

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

static const char *dir_name(int d)
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

int ia_cmd_timeline(const struct ia_cli *c)
{
	struct ia_trace t;
	char err[512];
	if (ia_cli_load(c, &t, 0) < 0)
		return IA_EXIT_ERROR;
	struct ia_stack_names *names = ia_stack_names_new(t.db);
	struct ev calls = { 0 }, offs = { 0 };
	calls.st = ia_db_prepare(t.db, "SELECT pid, tid, start_ns, dur_ns, api, bytes, dir, flags, stack_id "
				 "FROM cuda_calls WHERE start_ns >= ?1 AND start_ns < ?2 ORDER BY start_ns", err, sizeof err);
	offs.st = calls.st ? ia_db_prepare(t.db, "SELECT pid, tid, start_ns, end_ns, runnable_ns, preempted, next_pid "
				"FROM off_cpu WHERE start_ns >= ?1 AND start_ns < ?2 ORDER BY start_ns", err, sizeof err) : NULL;
	int rc = IA_EXIT_OK;
	FILE *f = NULL;
	if (!calls.st || !offs.st) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		goto out;
	}
	if (t.blocks) {
		/* slices from the first call to the last, not over the window's open ends */
		sqlite3_stmt *q = ia_db_prepare(t.db, "SELECT min(first_ns), max(last_ns) FROM call_blocks", err, sizeof err);
		if (!q) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
			goto out;
		}
		uint64_t first = 0, last = 0;
		int s = sqlite3_step(q);
		if (s == SQLITE_ROW) {
			first = (uint64_t)sqlite3_column_int64(q, 0);
			last = (uint64_t)sqlite3_column_int64(q, 1);
		}
		int bad = ia_db_done(q, s, err, sizeof err);
		sqlite3_finalize(q);
		if (bad) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
			goto out;
		}
		slice_first(&calls, first > t.from ? first : t.from, last < t.to ? last + 1 : t.to);
	} else {
		bind_window(&calls, t.from, t.to);
	}
	bind_window(&offs, t.from, t.to);
	if (!(f = ia_cli_output(c, NULL))) {
		rc = IA_EXIT_ERROR;
		goto out;
	}
	next(&calls);
	next(&offs);
	cJSON *arr = c->json ? cJSON_CreateArray() : NULL;
	long shown = 0, more = 0;
	char d1[32], d2[32], b1[32];
	while (calls.valid || offs.valid) {
		/* ties: the call first, so a sync and the switch inside it read in order */
		int is_call = calls.valid && (!offs.valid || calls.ts <= offs.ts);
		struct ev *e = is_call ? &calls : &offs;
		sqlite3_stmt *s = e->st;
		int pid = sqlite3_column_int(s, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(s, 1);
		if (!selected(&t, pid)) {
			next(e);
			continue;
		}
		if (c->limit && shown >= c->limit) {
			more = 1;   /* not counted: that would read the rest of a 10M-row trace */
			break;
		}
		shown++;
		uint64_t ts = e->ts, rel = ts >= t.t0 ? ts - t.t0 : 0;
		const char *comm = comm_of(&t, tid, pid);
		if (is_call) {
			uint64_t dur = (uint64_t)sqlite3_column_int64(s, 3);
			unsigned api = (unsigned)sqlite3_column_int(s, 4);
			uint64_t bytes = (uint64_t)sqlite3_column_int64(s, 5);
			int dir = sqlite3_column_int(s, 6), flags = sqlite3_column_int(s, 7);
			const char *py = ia_stack_python(names, (uint64_t)sqlite3_column_int64(s, 8));
			int copy = ingero_api_class(api) == INGERO_CLASS_COPY;
			const char *mem = flags & INGERO_FLAG_HOST_PINNED ? "pinned" : flags & INGERO_FLAG_HOST_PAGEABLE ? "pageable" : "";
			if (arr) {
				cJSON *o = cJSON_CreateObject();
				ia_json_u64(o, "ts_rel_ns", rel);
				cJSON_AddStringToObject(o, "type", "cuda");
				cJSON_AddNumberToObject(o, "pid", pid);
				cJSON_AddNumberToObject(o, "tid", tid);
				cJSON_AddStringToObject(o, "api", ia_api_name(&t, api));
				ia_json_u64(o, "dur_ns", dur);
				if (copy || bytes) {
					ia_json_u64(o, "bytes", bytes);
					cJSON_AddStringToObject(o, "dir", dir_name(dir));
					if (*mem)
						cJSON_AddStringToObject(o, "memory", mem);
				}
				ia_json_str(o, "python", py);
				cJSON_AddItemToArray(arr, o);
			} else {
				fprintf(f, "+%.6fs %7d/%-7u %-15.15s CUDA %-24s %9s", (double)rel / 1e9, pid, tid, comm,
					ia_api_name(&t, api), ia_fmt_dur(d1, sizeof d1, dur));
				if (copy)
					fprintf(f, " %s %s %s %.2f GB/s", ia_fmt_bytes(b1, sizeof b1, bytes), dir_name(dir), mem,
						dur ? (double)bytes / (double)dur : 0);
				if (py)
					fprintf(f, "  [%s]", py);
				fputc('\n', f);
			}
		} else {
			uint64_t end = (uint64_t)sqlite3_column_int64(s, 3), run = (uint64_t)sqlite3_column_int64(s, 4);
			int how = sqlite3_column_int(s, 5), np = sqlite3_column_int(s, 6);   /* off_cpu.preempted */
			int pre = how == 1;
			const char *reason = pre ? "preempted" : how == 2 ? "I/O wait (D)" : "blocked";
			if (end < ts)
				end = ts;
			if (run < ts || run > end)
				run = pre ? ts : end;
			if (arr) {
				cJSON *o = cJSON_CreateObject();
				ia_json_u64(o, "ts_rel_ns", rel);
				cJSON_AddStringToObject(o, "type", "off_cpu");
				cJSON_AddNumberToObject(o, "pid", pid);
				cJSON_AddNumberToObject(o, "tid", tid);
				cJSON_AddStringToObject(o, "reason", reason);
				ia_json_u64(o, "dur_ns", end - ts);
				ia_json_u64(o, "runq_ns", end - run);
				if (np)
					cJSON_AddNumberToObject(o, "next_pid", np);
				cJSON_AddItemToArray(arr, o);
			} else {
				fprintf(f, "+%.6fs %7d/%-7u %-15.15s OFF  %-24s %9s  waited for a CPU %s", (double)rel / 1e9, pid,
					tid, comm, reason, ia_fmt_dur(d1, sizeof d1, end - ts),
					ia_fmt_dur(d2, sizeof d2, end - run));
				if (np)
					fprintf(f, "; CPU to pid %d", np);
				fputc('\n', f);
			}
		}
		next(e);
	}
	/* each stream's own result: sqlite3_errcode() only keeps the latest
	 * call's, and the other stream's steps after a failure would hide it */
	struct ev *failed = calls.rc != SQLITE_ROW && calls.rc != SQLITE_DONE ? &calls
			  : offs.rc != SQLITE_ROW && offs.rc != SQLITE_DONE ? &offs : NULL;
	if (failed) {
		sqlite3_reset(failed->st);   /* the statement's error becomes the connection's */
		ia_db_step_error(t.db, failed->rc, err, sizeof err);
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		cJSON_Delete(arr);   /* no half answer */
	} else if (ia_stack_names_error(names, err, sizeof err) < 0) {   /* a Python line could not be read */
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		cJSON_Delete(arr);
	} else if (arr) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddItemToObject(root, "events", arr);
		/* a number (the MCP server reads it so): 1 when events past --limit exist */
		ia_json_u64(root, "more", (uint64_t)more);
		if (ia_json_print(root, f, c->pretty) < 0)
			rc = IA_EXIT_ERROR;
		cJSON_Delete(root);
	} else if (more) {
		fprintf(f, "... more events follow (--limit 0 shows all, --from/--to narrow the window)\n");
	} else if (!shown) {
		fprintf(f, "(no events in this window)\n");
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
out:
	sqlite3_finalize(calls.st);
	sqlite3_finalize(offs.st);
	ia_stack_names_free(names);
	ia_cli_unload(&t);
	return rc;
}
