/*
 * report_copy.c — one report.db's rows into another, moved (report_copy.h).
 *
 * Each table is one statement built from the columns both files have,
 * each column's expression chosen by what it holds (the rules below: a
 * time is shifted, a pid based, a CPU renumbered, a stack id looked up in
 * the fresh ids given to those the output had already).  The call blocks'
 * blobs go through ia_copy_block, a SQL function of this file, so that
 * they too are one INSERT ... SELECT.  The statements are built with
 * SQLite's own string builder (sqlite3_str, %w for names, %Q for
 * strings; its printf knows no %zu: sizes as int) from integers and the
 * schema's names only: nothing of the source's contents is ever pasted
 * into SQL.
 */
#include "load/report_copy.h"

#include "load/db.h"

#include <ingero/call_block.h>
#include <ingero/schema.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a column holds, and so how it moves. */
enum how {
	KEEP,        /* as it is */
	TIME,        /* CLOCK_MONOTONIC ns: + shift */
	TIME_KNOWN,  /* the same, 0 (unknown) kept */
	PID,         /* a pid or tid: + delta, 0 (none, the idle task) kept */
	PID_ALL,     /* losses.pid: + delta, 0 (the machine's) too, so that each node's stay its own */
	CPU,         /* a CPU number: + delta */
	STACK,       /* a stack id: its fresh id where it was given one */
};

static const struct rule {
	const char *table, *col;
	enum how how;
} rules[] = {
	{ "processes", "pid", PID }, { "processes", "ppid", PID },
	{ "processes", "start_ns", TIME_KNOWN }, { "processes", "exit_ns", TIME_KNOWN },
	{ "threads", "tid", PID }, { "threads", "pid", PID },
	{ "off_cpu", "pid", PID }, { "off_cpu", "tid", PID }, { "off_cpu", "start_ns", TIME },
	{ "off_cpu", "end_ns", TIME }, { "off_cpu", "runnable_ns", TIME }, { "off_cpu", "next_pid", PID },
	{ "off_cpu", "cpu", CPU }, { "off_cpu", "waker_tid", PID }, { "off_cpu", "waker_pid", PID },
	{ "off_cpu", "holder_pid", PID }, { "off_cpu", "holder_tid", PID },
	{ "page_allocs", "pid", PID }, { "page_allocs", "bucket_ns", TIME },
	{ "cpu_busy", "cpu", CPU }, { "cpu_busy", "bucket_ns", TIME },
	{ "competitors", "pid", PID }, { "competitors", "bucket_ns", TIME },
	{ "kernels", "pid", PID },
	{ "cpu_samples", "pid", PID }, { "cpu_samples", "tid", PID }, { "cpu_samples", "ts_ns", TIME },
	{ "cpu_samples", "cpu", CPU }, { "cpu_samples", "stack_id", STACK },
	{ "off_cpu_stacks", "pid", PID }, { "off_cpu_stacks", "tid", PID }, { "off_cpu_stacks", "start_ns", TIME },
	{ "off_cpu_stacks", "stack_id", STACK },
	{ "gpu_marks", "pid", PID }, { "gpu_marks", "recorded_ns", TIME }, { "gpu_marks", "done_ns", TIME },
	{ "capture", "pid", PID }, { "capture", "t_ns", TIME },
	{ "losses", "pid", PID_ALL },
	{ "process_env", "pid", PID },
	{ "collectives", "pid", PID }, { "collectives", "tid", PID }, { "collectives", "start_ns", TIME },
	{ "nvtx_ranges", "pid", PID }, { "nvtx_ranges", "tid", PID }, { "nvtx_ranges", "start_ns", TIME },
	{ "nvtx_ranges", "end_ns", TIME },
	{ "stacks", "id", STACK }, { "stacks", "pid", PID },
	{ "call_blocks", "pid", PID }, { "call_blocks", "first_ns", TIME }, { "call_blocks", "last_ns", TIME },
};

/* The tables copied column by column, in this order; owner: the column
 * the ranges filter on (cpu_busy's rows are the machine's, by CPU). */
static const struct table {
	const char *name, *owner;
} tables[] = {
	{ "apis", NULL }, { "processes", "pid" }, { "threads", "pid" }, { "off_cpu", "pid" },
	{ "page_allocs", "pid" }, { "cpu_busy", "cpu" }, { "competitors", "pid" }, { "kernels", "pid" },
	{ "cpu_samples", "pid" }, { "off_cpu_stacks", "pid" }, { "gpu_marks", "pid" }, { "capture", "pid" },
	{ "losses", "pid" }, { "process_env", "pid" }, { "collectives", "pid" }, { "nvtx_ranges", "pid" },
};
#define NTABLES (sizeof tables / sizeof tables[0])

static enum how how_of(const char *table, const char *col)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (!strcmp(rules[i].table, table) && !strcmp(rules[i].col, col))
			return rules[i].how;
	return KEEP;
}

/* The fresh ids of stacks the output had already (sorted by old), for the
 * blobs; the same pairs are in temp.ia_copy_stacks for the SQL. */
struct stack_ids {
	int64_t *old, *new;
	size_t n, cap;
};

struct ctx {
	sqlite3 *out;
	const char *src;
	struct ia_copy *m;
	struct stack_ids fresh;
	/* ia_copy_block's state */
	msgpack_sbuffer sb;
	struct ingero_cuda_call *calls;
	int bad_block;
	char block_err[200];
};

static int64_t fresh_lookup(const struct stack_ids *f, int64_t id)
{
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->old[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->old[lo] == id ? f->new[lo] : id;
}

/* ia_copy_block(id, data): the block's calls with their tid, start and
 * stack moved, encoded again. */
static void copy_block(sqlite3_context *cx, int argc, sqlite3_value **v)
{
	struct ctx *c = sqlite3_user_data(cx);
	const struct ia_copy *m = c->m;
	size_t n;
	char why[160];
	(void)argc;
	if (ingero_block_decode(sqlite3_value_blob(v[1]), (size_t)sqlite3_value_bytes(v[1]), 0, c->calls, &n, why,
				sizeof why) < 0) {
		c->bad_block = 1;
		snprintf(c->block_err, sizeof c->block_err, "call block %lld: %s", (long long)sqlite3_value_int64(v[0]), why);
		sqlite3_result_error(cx, c->block_err, -1);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct ingero_cuda_call *k = &c->calls[i];
		if (k->tid)
			k->tid = (uint32_t)((int64_t)k->tid + m->pid_delta);
		k->start_ns = (uint64_t)((int64_t)k->start_ns + m->shift_ns);
		if (k->stack_id)
			k->stack_id = (uint64_t)fresh_lookup(&c->fresh, (int64_t)k->stack_id);
	}
	if (ingero_block_encode(&c->sb, c->calls, n) < 0) {
		sqlite3_result_error_nomem(cx);
		return;
	}
	sqlite3_result_blob(cx, c->sb.data, (int)c->sb.size, SQLITE_TRANSIENT);
}

/* Runs SQL (no rows wanted); a failure described as the source's or the output's. */
static int run(struct ctx *c, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc = sqlite3_exec(c->out, sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return 0;
	int base = sqlite3_extended_errcode(c->out) & 0xff;
	if (c->bad_block || base == SQLITE_CORRUPT || base == SQLITE_NOTADB) {
		snprintf(err, errlen, "%s is corrupted: %s", c->src, c->bad_block ? c->block_err : msg ? msg : "?");
		ia_db_blame_input();
	} else {
		snprintf(err, errlen, "%s: %s", c->src, msg ? msg : sqlite3_errstr(rc));
	}
	sqlite3_free(msg);
	return -1;
}

/* Runs a statement built with sqlite3_str (finished and freed here). */
static int run_str(struct ctx *c, sqlite3_str *q, char *err, size_t errlen)
{
	char *sql = sqlite3_str_finish(q);
	if (!sql) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = run(c, sql, err, errlen);
	sqlite3_free(sql);
	return rc;
}

/* One integer of a query, def when none. */
static int64_t query_i64(sqlite3 *db, const char *sql, int64_t def)
{
	sqlite3_stmt *st = NULL;
	int64_t v = def;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* 1 when schema `db` ("main", "src") has the table (or the table has the column). */
static int has(sqlite3 *out, const char *db, const char *table, const char *col)
{
	char *sql = col ? sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q, %Q) WHERE name = %Q", table, db, col)
			: sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type = 'table' AND name = %Q", db, table);
	int r = sql ? (int)query_i64(out, sql, 0) : 0;
	sqlite3_free(sql);
	return r;
}

/* Column col's expression in its moved form, `x` its name qualified as needed. */
static void expr(sqlite3_str *q, const struct ctx *c, const char *x, enum how how)
{
	const struct ia_copy *m = c->m;
	long long s = (long long)m->shift_ns, d = (long long)m->pid_delta;
	if ((how == TIME || how == TIME_KNOWN) && !s)
		how = KEEP;
	if ((how == PID || how == PID_ALL) && !d)
		how = KEEP;
	if (how == CPU && !m->cpu_delta)
		how = KEEP;
	if (how == STACK && !c->fresh.n)
		how = KEEP;
	switch (how) {
	case KEEP: sqlite3_str_appendf(q, "%s", x); break;
	case TIME: sqlite3_str_appendf(q, "%s + %lld", x, s); break;
	case TIME_KNOWN: sqlite3_str_appendf(q, "CASE WHEN %s = 0 THEN 0 ELSE %s + %lld END", x, x, s); break;
	case PID: sqlite3_str_appendf(q, "CASE WHEN %s = 0 THEN 0 ELSE %s + %lld END", x, x, d); break;
	case PID_ALL: sqlite3_str_appendf(q, "%s + %lld", x, d); break;
	case CPU: sqlite3_str_appendf(q, "%s + %lld", x, (long long)m->cpu_delta); break;
	case STACK:
		sqlite3_str_appendf(q, "coalesce((SELECT new FROM temp.ia_copy_stacks WHERE old = %s), %s)", x, x);
		break;
	}
}

/* " WHERE owner in [lo, hi)" for the ranges that apply */
static void where(sqlite3_str *q, const struct ia_copy *m, const char *owner, int or_null)
{
	int cpu = !strcmp(owner, "cpu");
	int64_t lo = cpu ? m->cpu_lo : m->pid_lo, hi = cpu ? m->cpu_hi : m->pid_hi;
	if (m->ranged)
		sqlite3_str_appendf(q, " WHERE (\"%w\" >= %lld AND \"%w\" < %lld%s)", owner, (long long)lo, owner,
				    (long long)hi, or_null ? " OR pid IS NULL" : "");
}

/* One table of tables[]: the columns both have, each moved. */
static int copy_table(struct ctx *c, const struct table *tb, char *err, size_t errlen)
{
	if (!has(c->out, "src", tb->name, NULL)) {
		snprintf(c->m->absent + strlen(c->m->absent), sizeof c->m->absent - strlen(c->m->absent), "%s%s",
			 c->m->absent[0] ? " " : "", tb->name);
		return 0;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(c->out, "SELECT name FROM pragma_table_info(?1, 'main') ORDER BY cid", -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(c->out));
		return -1;
	}
	sqlite3_bind_text(st, 1, tb->name, -1, SQLITE_STATIC);
	sqlite3_str *cols = sqlite3_str_new(c->out), *vals = sqlite3_str_new(c->out);
	int n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 0);
		if (!col)
			continue;
		if (!has(c->out, "src", tb->name, col)) {
			size_t used = strlen(c->m->absent);
			snprintf(c->m->absent + used, sizeof c->m->absent - used, "%s%s.%s", used ? " " : "", tb->name, col);
			continue;
		}
		char *x = sqlite3_mprintf("\"%w\"", col);
		sqlite3_str_appendf(cols, "%s%s", n ? ", " : "", x);
		sqlite3_str_appendf(vals, "%s", n ? ", " : "");
		expr(vals, c, x, how_of(tb->name, col));
		sqlite3_free(x);
		n++;
	}
	sqlite3_finalize(st);
	char *cl = sqlite3_str_finish(cols), *vl = sqlite3_str_finish(vals);
	sqlite3_str *q = sqlite3_str_new(c->out);
	sqlite3_str_appendf(q, "INSERT %sINTO main.\"%w\"(%s) SELECT %s FROM src.\"%w\"", tb->owner ? "" : "OR IGNORE ",
			    tb->name, cl ? cl : "", vl ? vl : "", tb->name);
	if (tb->owner)
		where(q, c->m, tb->owner, 0);
	sqlite3_free(cl);
	sqlite3_free(vl);
	return n ? run_str(c, q, err, errlen) : (sqlite3_free(sqlite3_str_finish(q)), 0);
}

/* The calls: blocks in their order, each blob moved unless nothing moves. */
static int copy_calls(struct ctx *c, char *err, size_t errlen)
{
	const struct ia_copy *m = c->m;
	int moved = m->pid_delta || m->shift_ns || c->fresh.n;
	sqlite3_str *q = sqlite3_str_new(c->out);
	sqlite3_str_appendf(q, "INSERT INTO main.call_blocks(pid, first_ns, last_ns, calls, data) SELECT ");
	expr(q, c, "pid", PID);
	sqlite3_str_appendf(q, ", ");
	expr(q, c, "first_ns", TIME);
	sqlite3_str_appendf(q, ", ");
	expr(q, c, "last_ns", TIME);
	sqlite3_str_appendf(q, ", calls, %s FROM src.call_blocks", moved ? "ia_copy_block(id, data)" : "data");
	where(q, m, "pid", 0);
	sqlite3_str_appendf(q, " ORDER BY id");
	return run_str(c, q, err, errlen);
}

/* A list of frame ids (JSON) with frame_delta added to each. */
static void relist(sqlite3_str *q, const struct ia_copy *m, const char *col)
{
	if (!m->frame_delta) {
		sqlite3_str_appendf(q, "%s", col);
		return;
	}
	sqlite3_str_appendf(q,
			    "CASE WHEN %s IS NULL THEN NULL ELSE (SELECT json_group_array(CASE WHEN j.type = 'null' THEN "
			    "NULL ELSE j.value + %lld END) FROM json_each(%s) j) END",
			    col, (long long)m->frame_delta, col);
}

/* Frames and stacks as version 8 stores them, from either layout. */
static int copy_stacks(struct ctx *c, char *err, size_t errlen)
{
	const struct ia_copy *m = c->m;
	long long fd = (long long)m->frame_delta;
	sqlite3_str *q = sqlite3_str_new(c->out);
	if (has(c->out, "src", "frames", NULL)) {
		sqlite3_str_appendf(q, "INSERT INTO main.frames(id, kind, ip, symbol, module, offset, file, line) SELECT id + %lld, "
				    "kind, ip, symbol, module, offset, file, line FROM src.frames", fd);
		if (m->ranged)
			sqlite3_str_appendf(q, " WHERE id > %lld AND id <= %lld", (long long)m->frame_lo,
					    (long long)m->frame_hi);
		sqlite3_str_appendf(q, "; INSERT INTO main.stacks(id, pid, kernel, native, python) SELECT ");
		expr(q, c, "id", STACK);
		sqlite3_str_appendf(q, ", ");
		expr(q, c, "pid", PID);
		sqlite3_str_appendf(q, ", ");
		relist(q, m, "kernel");
		sqlite3_str_appendf(q, ", ");
		relist(q, m, "native");
		sqlite3_str_appendf(q, ", ");
		relist(q, m, "python");
		sqlite3_str_appendf(q, " FROM src.stacks");
		where(q, m, "pid", 1);
		return run_str(c, q, err, errlen);
	}
	/* version 7 and older: a row per frame of every stack (tests/helpers/frames_v8.sql converts the same way) */
	sqlite3_str_appendf(q,
			    "CREATE TEMP TABLE ia_copy_ranked AS SELECT stack_id, depth, kind, ip, symbol, module, offset, "
			    "file, line, dense_rank() OVER (ORDER BY kind, ip, symbol, module, offset, file, line) + %lld "
			    "AS frame FROM src.stack_frames;"
			    "CREATE INDEX temp.ia_copy_ranked_by_stack ON ia_copy_ranked(stack_id, kind, depth);"
			    "INSERT INTO main.frames(id, kind, ip, symbol, module, offset, file, line) SELECT DISTINCT frame, "
			    "kind, ip, symbol, module, offset, file, line FROM temp.ia_copy_ranked ORDER BY frame;"
			    "INSERT INTO main.stacks(id, pid, kernel, native, python) SELECT ",
			    fd);
	expr(q, c, "s.id", STACK);
	sqlite3_str_appendf(q, ", ");
	expr(q, c, "s.pid", PID);
	static const char *const kinds[] = { "kernel", "native", "python" };
	for (int k = 0; k < 3; k++)
		sqlite3_str_appendf(q,
				    ", (SELECT '[' || group_concat(frame, ',') || ']' FROM (SELECT frame FROM "
				    "temp.ia_copy_ranked r WHERE r.stack_id = s.id AND r.kind = '%s' ORDER BY depth))",
				    kinds[k]);
	sqlite3_str_appendf(q, " FROM src.stacks s; DROP TABLE temp.ia_copy_ranked;");
	return run_str(c, q, err, errlen);
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The source's stack ids the output holds already, each given a new one
 * that neither file has: into temp.ia_copy_stacks and c->fresh. */
static int fresh_stacks(struct ctx *c, char *err, size_t errlen)
{
	struct stack_ids *f = &c->fresh;
	if (run(c, "CREATE TEMP TABLE IF NOT EXISTS ia_copy_stacks(old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
		   "DELETE FROM temp.ia_copy_stacks",
		err, errlen) < 0)
		return -1;
	sqlite3_stmt *sel = NULL, *taken = NULL, *put = NULL;
	int rc = -1;
	if (sqlite3_prepare_v2(c->out, "SELECT id FROM src.stacks WHERE id IN (SELECT id FROM main.stacks) ORDER BY id", -1,
			       &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(c->out,
			       "SELECT EXISTS(SELECT 1 FROM main.stacks WHERE id = ?1) OR EXISTS(SELECT 1 FROM src.stacks "
			       "WHERE id = ?1) OR EXISTS(SELECT 1 FROM temp.ia_copy_stacks WHERE new = ?1) OR ?1 = 0",
			       -1, &taken, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(c->out, "INSERT INTO temp.ia_copy_stacks(old, new) VALUES(?1, ?2)", -1, &put, NULL) !=
		    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", c->src, sqlite3_errmsg(c->out));
		goto out;
	}
	int s;
	while ((s = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t old = sqlite3_column_int64(sel, 0), cand = old;
		uint64_t h = (uint64_t)old ^ c->m->fresh_salt;
		do {
			h = mix64(h);
			cand = (int64_t)h;
			sqlite3_reset(taken);
			sqlite3_bind_int64(taken, 1, cand);
		} while (sqlite3_step(taken) == SQLITE_ROW && sqlite3_column_int(taken, 0));
		sqlite3_reset(put);
		sqlite3_bind_int64(put, 1, old);
		sqlite3_bind_int64(put, 2, cand);
		if (sqlite3_step(put) != SQLITE_DONE) {
			snprintf(err, errlen, "%s: %s", c->src, sqlite3_errmsg(c->out));
			goto out;
		}
		if (f->n == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 64;
			int64_t *o = realloc(f->old, cap * sizeof *o), *nw = o ? realloc(f->new, cap * sizeof *nw) : NULL;
			if (o)
				f->old = o;
			if (!nw) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			f->new = nw;
			f->cap = cap;
		}
		f->old[f->n] = old;   /* (in order: the query sorts by id) */
		f->new[f->n++] = cand;
	}
	if (s != SQLITE_DONE) {
		ia_db_step_error(c->out, s, err, errlen);
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(taken);
	sqlite3_finalize(put);
	return rc;
}

static int copy_session(struct ctx *c, char *err, size_t errlen)
{
	const struct ia_copy *m = c->m;
	sqlite3_str *q = sqlite3_str_new(c->out);
	const char *from = m->session_from ? m->session_from : "";
	size_t n = strlen(from);
	sqlite3_str_appendf(q, "INSERT OR REPLACE INTO main.session(key, value) SELECT %Q || substr(key, %d), value "
			    "FROM src.session WHERE substr(key, 1, %d) = %Q",
			    m->session_to ? m->session_to : "", (int)n + 1, (int)n, from);
	if (m->session_from)
		sqlite3_str_appendf(q, " AND substr(key, %d, 6) <> 'merge.'", (int)n + 1);
	return run_str(c, q, err, errlen);
}

static int copy_all(struct ctx *c, char *err, size_t errlen)
{
	struct ia_copy *m = c->m;
	m->version = (int)query_i64(c->out, "PRAGMA src.user_version", 0);
	if (m->version < 2 || m->version > INGERO_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s: schema version %d: only versions 2 to %d are copied (1 is a pre-release layout)",
			 c->src, m->version, INGERO_SCHEMA_VERSION);
		ia_db_blame_input();
		return -1;
	}
	if (m->fresh_salt && fresh_stacks(c, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < NTABLES; i++)
		if (copy_table(c, &tables[i], err, errlen) < 0)
			return -1;
	if (copy_calls(c, err, errlen) < 0 || copy_stacks(c, err, errlen) < 0 || copy_session(c, err, errlen) < 0)
		return -1;
	if (m->count_cpus) {
		int64_t a = query_i64(c->out, "SELECT max(cpu) FROM src.cpu_busy", -1);
		int64_t b = has(c->out, "src", "off_cpu", "cpu") ? query_i64(c->out, "SELECT max(cpu) FROM src.off_cpu", -1) : -1;
		int64_t d = has(c->out, "src", "cpu_samples", NULL) ? query_i64(c->out, "SELECT max(cpu) FROM src.cpu_samples", -1)
								     : -1;
		m->cpu_max = a > b ? a : b;
		if (d > m->cpu_max)
			m->cpu_max = d;
	}
	return 0;
}

int ia_report_copy(sqlite3 *out, const char *src_path, struct ia_copy *m, char *err, size_t errlen)
{
	struct ctx c = { .out = out, .src = src_path, .m = m };
	m->absent[0] = 0;
	m->version = 0;
	m->cpu_max = -1;
	char *uri = ia_db_uri(src_path);
	if (!uri || !(c.calls = malloc(INGERO_BLOCK_MAX_CALLS * sizeof *c.calls))) {
		free(uri);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	msgpack_sbuffer_init(&c.sb);
	/* the source may come from anyone: its schema calls nothing (db.c's stance; ia_copy_block is
	 * SQLITE_DIRECTONLY too) */
	sqlite3_db_config(out, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(out, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_stmt *at = NULL;
	int rc = -1;
	if (sqlite3_create_function(out, "ia_copy_block", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY, &c, copy_block, NULL,
				    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(out, "ATTACH ?1 AS src", -1, &at, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(out));
		goto out;
	}
	sqlite3_bind_text(at, 1, uri, -1, SQLITE_STATIC);
	if (sqlite3_step(at) != SQLITE_DONE) {
		snprintf(err, errlen, "%s: cannot open: %s", src_path, sqlite3_errmsg(out));
		goto out;
	}
	/* one transaction, between the ATTACH and the DETACH (which a transaction holding the source refuses) */
	rc = run(&c, "BEGIN", err, errlen);
	if (!rc)
		rc = copy_all(&c, err, errlen);
	if (!rc)
		rc = run(&c, "COMMIT", err, errlen);
	else
		sqlite3_exec(out, "ROLLBACK", NULL, NULL, NULL);
	if (sqlite3_exec(out, "DETACH src", NULL, NULL, NULL) != SQLITE_OK && !rc) {
		snprintf(err, errlen, "%s: %s", src_path, sqlite3_errmsg(out));
		rc = -1;
	}
out:
	sqlite3_finalize(at);
	sqlite3_create_function(out, "ia_copy_block", 2, SQLITE_UTF8, NULL, NULL, NULL, NULL);
	msgpack_sbuffer_destroy(&c.sb);
	free(c.calls);
	free(c.fresh.old);
	free(c.fresh.new);
	free(uri);
	return rc;
}

int ia_report_create(sqlite3 *out, int version, char *err, size_t errlen)
{
	char *msg = NULL, ver[64];
	snprintf(ver, sizeof ver, "PRAGMA user_version = %d", version);
	if (sqlite3_exec(out, INGERO_SCHEMA_SQL, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(out, ver, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(out));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int ia_report_drop(sqlite3 *out, const char *absent, char *err, size_t errlen)
{
	char word[128];
	for (const char *p = absent; p && *p;) {
		size_t n = strcspn(p, " ");
		if (n && n < sizeof word) {
			memcpy(word, p, n);
			word[n] = 0;
			char *dot = strchr(word, '.');
			if (dot)
				*dot++ = 0;
			int known = 0;
			for (size_t i = 0; i < NTABLES; i++)
				known |= !strcmp(tables[i].name, word) && tables[i].owner;   /* (apis always stays) */
			if (!known || (dot && !has(out, "main", word, dot))) {
				snprintf(err, errlen, "not a table or column of this schema: %s%s%s", word, dot ? "." : "",
					 dot ? dot : "");
				return -1;
			}
			char *sql = dot ? sqlite3_mprintf("ALTER TABLE main.\"%w\" DROP COLUMN \"%w\"", word, dot)
					: sqlite3_mprintf("DROP TABLE main.\"%w\"", word);
			char *msg = NULL;
			int rc = sql ? sqlite3_exec(out, sql, NULL, NULL, &msg) : SQLITE_NOMEM;
			sqlite3_free(sql);
			if (rc != SQLITE_OK) {
				snprintf(err, errlen, "cannot drop %s: %s", word, msg ? msg : sqlite3_errstr(rc));
				sqlite3_free(msg);
				return -1;
			}
		}
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}
