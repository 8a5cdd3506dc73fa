/*
 * mcp_sql.c — run_sql: one SELECT from the assistant, safely.
 *
 * The statement runs on its own connection, and is fenced five ways, each
 * of which alone would stop a write:
 *   1. the file is opened read-only (SQLITE_OPEN_READONLY, and immutable
 *      when no WAL is beside it: ia_db_reopen);
 *   2. PRAGMA query_only=1 on that connection;
 *   3. an authorizer that allows reads only: SELECT, reading columns,
 *      recursive CTEs, pure functions from an allow-list
 *      (mcp_sql_functions.c: no load_extension, no fts3_tokenizer), PRAGMAs
 *      from a list that only report (table_info, user_version with no
 *      value, ...) — no INSERT/UPDATE/DELETE/CREATE/DROP, no ATTACH or
 *      DETACH, no transactions, no PRAGMA that sets anything;
 *   4. sqlite3_stmt_readonly() must agree (it catches VACUUM INTO, which
 *      writes a new file without asking the authorizer);
 *   5. SQLITE_LIMIT_ATTACHED is 0; extension loading, FTS3 tokenizer
 *      registration and trust in the file's schema are off, defensive mode
 *      on (every analyzer connection: db.c).
 * Resources are bounded too: one statement per call, at most max_rows rows
 * and MCP_SQL_MAX_BYTES of values, a time limit enforced by the progress
 * handler (SQLite stops the statement with SQLITE_INTERRUPT), a cap on the
 * length of any value (so randomblob(1e9) fails instead of taking 1 GB),
 * and a heap limit for SQLite while the statement runs.  Temporary data
 * (the b-trees of DISTINCT, GROUP BY, materialised subqueries, the sorter of
 * ORDER BY) is kept in memory (PRAGMA temp_store=MEMORY), so that heap
 * limit caps it too: a DISTINCT over 10 M generated rows wrote a 515 MB
 * temporary file in 9 s before; now it stops at the cap with an error
 * naming it, and nothing goes to disk.  The same progress handler asks the server
 * whether the client cancelled the request (mcp.c), and stops the
 * statement when it did.
 *
 * Values go out as they are: integers exactly (raw digits past 2^53), REALs
 * in the shortest form that reads back as the same double (cJSON prints 15
 * digits when they are "close enough": 9007199254740993.0 came back as
 * 9.00719925474099e+15), TEXT whole even when it holds a NUL (cJSON holds C
 * strings, so each NUL-free piece is escaped by cJSON and the pieces are
 * joined with \u0000).  JSON has no infinity or NaN: such a REAL is given
 * as the string "Infinity", "-Infinity" or "NaN", and non_finite_reals in
 * the result names its cells, rather than becoming a silent null.
 */
#include "mcp/mcp_internal.h"

#include "load/calls_vtab.h"
#include "load/db.h"

#include <ingero/schema.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define IA_XSTR(x) #x
#define IA_STR(x) IA_XSTR(x)

struct mcp_sql {
	sqlite3 *db;
	uint64_t deadline;    /* CLOCK_MONOTONIC ns; 0 = no statement running */
	int timed_out;
	int cancelled;        /* the client cancelled the request (cancel_fn said so) */
	int (*cancel_fn)(void *);
	void *cancel_ud;
	long long heap_max;   /* SQLite's heap cap while a statement runs, bytes */
	char denied[320];     /* why the authorizer refused, for the error line */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* PRAGMAs that only report.  Those in `with_arg` take a table or index
 * name; the others are allowed only without a value (reading it). */
static const char *const pragma_with_arg[] = {
	"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
	"table_list",
};
static const char *const pragma_no_arg[] = {
	"user_version", "schema_version", "application_id", "page_count", "page_size", "freelist_count",
	"encoding", "data_version", "collation_list", "function_list", "module_list", "pragma_list",
	"database_list", "compile_options",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcasecmp(s, list[i]))
			return 1;
	return 0;
}

static int authorize(void *ud, int action, const char *a, const char *b, const char *dbname,
		     const char *trigger)
{
	struct mcp_sql *q = ud;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		/* b = the function's name; only pure ones (mcp_sql_functions.c) */
		if (mcp_sql_function_allowed(b))
			return SQLITE_OK;
		snprintf(q->denied, sizeof q->denied, "function %.48s() is not allowed (run_sql allows the pure "
			 "scalar, aggregate, window, date, math and JSON functions)", b ? b : "?");
		return SQLITE_DENY;
	case SQLITE_PRAGMA:
		/* a = the pragma, b = its value or argument (NULL when none) */
		if (in_list(a, pragma_with_arg, sizeof pragma_with_arg / sizeof *pragma_with_arg))
			return SQLITE_OK;
		if (!b && in_list(a, pragma_no_arg, sizeof pragma_no_arg / sizeof *pragma_no_arg))
			return SQLITE_OK;
		snprintf(q->denied, sizeof q->denied, "PRAGMA %.40s%s is not allowed (read-only PRAGMAs only, "
			 "without a value)", a ? a : "?", b ? " with a value" : "");
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		snprintf(q->denied, sizeof q->denied, "ATTACH/DETACH is not allowed: this is the trace database only");
		return SQLITE_DENY;
	case SQLITE_UPDATE:
		/* Connecting a table-valued PRAGMA (pragma_table_info('t')) asks to
		 * update sqlite_master; allowing that would weaken this fence for
		 * every statement, so those functions are refused with a pointer
		 * to the PRAGMA statement, which is allowed. */
		if (a && !strcmp(a, "sqlite_master")) {
			snprintf(q->denied, sizeof q->denied, "table-valued functions and virtual tables other than "
				 "cuda_calls (pragma_table_info(), json_each(), dbstat, ...) are not allowed; "
				 "for PRAGMA table_info(name) use the statement");
			return SQLITE_DENY;
		}
		/* fall through */
	default:
		snprintf(q->denied, sizeof q->denied, "only reading is allowed (SELECT, WITH, read-only PRAGMAs)");
		return SQLITE_DENY;
	}
	(void)dbname;
	(void)trigger;
}

static int progress(void *ud)
{
	struct mcp_sql *q = ud;
	if (q->deadline && now_ns() > q->deadline) {
		q->timed_out = 1;
		return 1;
	}
	if (q->deadline && q->cancel_fn && q->cancel_fn(q->cancel_ud)) {
		q->cancelled = 1;
		return 1;
	}
	return 0;
}

void mcp_sql_on_progress(struct mcp_sql *q, int (*cancelled)(void *), void *ud)
{
	q->cancel_fn = cancelled;
	q->cancel_ud = ud;
}

struct mcp_sql *mcp_sql_open(const char *path, long long heap_max, char *err, size_t errlen)
{
	/* temp_store=MEMORY is ignored by a SQLite built to keep temporary
	 * data in files always: the cap would not hold, so run_sql is off */
	if (sqlite3_compileoption_used("TEMP_STORE=0")) {
		snprintf(err, errlen, "this SQLite was built with SQLITE_TEMP_STORE=0 (temporary data always in files), "
			 "so run_sql could not cap it; run_sql is off");
		return NULL;
	}
	struct mcp_sql *q = calloc(1, sizeof *q);
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	q->heap_max = heap_max > 0 ? heap_max : MCP_SQL_HEAP_DEFAULT;
	q->db = ia_db_reopen(path, err, errlen);
	if (!q->db) {
		free(q);
		return NULL;
	}
	/* with memory statistics off (SQLITE_CONFIG_MEMSTATUS 0) SQLite counts
	 * nothing, and the heap limit is not enforced */
	if (sqlite3_memory_used() <= 0) {
		snprintf(err, errlen, "SQLite's memory statistics are off in this process, so run_sql's memory cap "
			 "could not hold; run_sql is off");
		mcp_sql_close(q);
		return NULL;
	}
	char *e = NULL;
	if (sqlite3_exec(q->db, "PRAGMA query_only=1; PRAGMA temp_store=MEMORY", NULL, NULL, &e) != SQLITE_OK) {
		snprintf(err, errlen, "cannot make the connection query-only with temporary data in memory: %s",
			 e ? e : "?");
		sqlite3_free(e);
		mcp_sql_close(q);
		return NULL;
	}
	sqlite3_limit(q->db, SQLITE_LIMIT_ATTACHED, 0);
	sqlite3_limit(q->db, SQLITE_LIMIT_LENGTH, 16 << 20);
	sqlite3_limit(q->db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
	/* The first statement naming an eponymous virtual table connects it,
	 * which SQLite authorizes as an UPDATE of sqlite_master, the action
	 * authorize() refuses: connect cuda_calls (calls_vtab.h) now, before
	 * the fence exists, so that run_sql can read it.  On a version-1 file
	 * this reads the real table, harmlessly. */
	if (sqlite3_exec(q->db, "SELECT 1 FROM cuda_calls WHERE 0", NULL, NULL, &e) != SQLITE_OK) {
		snprintf(err, errlen, "cannot open cuda_calls: %s", e ? e : "?");
		sqlite3_free(e);
		mcp_sql_close(q);
		return NULL;
	}
	sqlite3_set_authorizer(q->db, authorize, q);
	sqlite3_progress_handler(q->db, 1000, progress, q);
	return q;
}

void mcp_sql_close(struct mcp_sql *q)
{
	if (!q)
		return;
	sqlite3_close(q->db);
	free(q);
}

cJSON *mcp_sql_real_json(double v, int *special)
{
	*special = !isfinite(v);
	if (isnan(v))
		return cJSON_CreateString("NaN");
	if (isinf(v))
		return cJSON_CreateString(v > 0 ? "Infinity" : "-Infinity");
	/* %.17g always reads back; 15 or 16 digits often do, and are shorter */
	char buf[32];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return cJSON_CreateRaw(buf);
}

/* TEXT of n bytes at s (NUL-terminated by SQLite), whole: cJSON cuts a
 * string at its first NUL, so a text holding NULs is written as a raw JSON
 * string, each NUL-free piece escaped by cJSON, the pieces joined by
 * \u0000. */
static cJSON *text_json(const char *s, size_t n)
{
	if (!memchr(s, 0, n))
		return cJSON_CreateString(s);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		return NULL;
	fputc('"', f);
	for (size_t i = 0; i <= n;) {
		cJSON *piece = cJSON_CreateString(s + i);   /* up to the next NUL */
		char *p = piece ? cJSON_PrintUnformatted(piece) : NULL;
		cJSON_Delete(piece);
		if (!p) {
			fclose(f);
			free(out);
			return NULL;
		}
		fwrite(p + 1, 1, strlen(p) - 2, f);         /* without its quotes */
		free(p);
		i += strlen(s + i) + 1;
		if (i <= n)
			fputs("\\u0000", f);
	}
	fputc('"', f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	cJSON *r = cJSON_CreateRaw(out);
	free(out);
	return r;
}

/* A column value as JSON: integers exactly (as raw digits beyond 2^53,
 * where a double would round), REALs exactly, blobs as their size and
 * first bytes.  *special is set for a REAL JSON cannot hold. */
static cJSON *value_json(sqlite3_stmt *st, int i, size_t *bytes, int *special)
{
	*special = 0;
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER: {
		sqlite3_int64 v = sqlite3_column_int64(st, i);
		*bytes += 20;
		if (v > 9007199254740992LL || v < -9007199254740992LL) {
			char buf[32];
			snprintf(buf, sizeof buf, "%lld", (long long)v);
			return cJSON_CreateRaw(buf);
		}
		return cJSON_CreateNumber((double)v);
	}
	case SQLITE_FLOAT:
		*bytes += 24;
		return mcp_sql_real_json(sqlite3_column_double(st, i), special);
	case SQLITE_TEXT: {
		const char *s = (const char *)sqlite3_column_text(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		*bytes += n + 2;
		return s ? text_json(s, n) : cJSON_CreateString("");
	}
	case SQLITE_BLOB: {
		const unsigned char *p = sqlite3_column_blob(st, i);
		int n = sqlite3_column_bytes(st, i);
		char buf[160];
		int w = snprintf(buf, sizeof buf, "<blob %d bytes", n);
		if (n > 0)
			w += snprintf(buf + w, sizeof buf - (size_t)w, ": ");
		for (int k = 0; k < n && k < 32; k++)
			w += snprintf(buf + w, sizeof buf - (size_t)w, "%02x", p[k]);
		snprintf(buf + w, sizeof buf - (size_t)w, "%s>", n > 32 ? "..." : "");
		*bytes += strlen(buf);
		return cJSON_CreateString(buf);
	}
	default:
		*bytes += 4;
		return cJSON_CreateNull();
	}
}

static int only_space_or_comments(const char *s)
{
	while (*s) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == ';') {
			s++;
		} else if (s[0] == '-' && s[1] == '-') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			if (!e)
				return 1;   /* an unterminated comment runs to the end */
			s = e + 2;
		} else {
			return 0;
		}
	}
	return 1;
}

cJSON *mcp_sql_run(struct mcp_sql *q, const char *sql, long max_rows, long timeout_ms,
		   char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	q->denied[0] = 0;
	q->timed_out = 0;
	q->cancelled = 0;
	uint64_t t0 = now_ns();
	q->deadline = t0 + (uint64_t)timeout_ms * 1000000ull;
	int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, &tail);
	if (rc != SQLITE_OK) {
		if (q->denied[0])
			snprintf(err, errlen, "refused: %s", q->denied);
		else if (q->cancelled)
			snprintf(err, errlen, "cancelled by the client");
		else if (q->timed_out)
			snprintf(err, errlen, "stopped: the statement took longer than %ld ms to prepare", timeout_ms);
		else
			snprintf(err, errlen, "SQL error: %s", sqlite3_errmsg(q->db));
		q->deadline = 0;
		return NULL;
	}
	if (!st) {
		snprintf(err, errlen, "no SQL statement given");
		q->deadline = 0;
		return NULL;
	}
	if (tail && !only_space_or_comments(tail)) {
		snprintf(err, errlen, "one statement per call (found more after the first)");
		sqlite3_finalize(st);
		q->deadline = 0;
		return NULL;
	}
	if (!sqlite3_stmt_readonly(st)) {
		snprintf(err, errlen, "refused: the statement would write (only reading is allowed)");
		sqlite3_finalize(st);
		q->deadline = 0;
		return NULL;
	}

	/* SQLite's own memory, while this statement runs, temporary data
	 * included (temp_store=MEMORY): sorting, DISTINCT or a runaway
	 * recursive CTE fails with "out of memory" instead of taking the box
	 * or the disk. */
	sqlite3_int64 old_limit = sqlite3_hard_heap_limit64(-1);
	sqlite3_hard_heap_limit64(q->heap_max);

	cJSON *res = cJSON_CreateObject();
	cJSON *cols = cJSON_AddArrayToObject(res, "columns");
	int ncol = sqlite3_column_count(st);
	for (int i = 0; i < ncol; i++) {
		const char *name = sqlite3_column_name(st, i);
		cJSON_AddItemToArray(cols, cJSON_CreateString(name ? name : ""));
	}
	cJSON *rows = cJSON_AddArrayToObject(res, "rows");
	long n = 0;
	size_t bytes = 0, nspecial = 0;
	int truncated = 0;
	cJSON *cells = cJSON_CreateArray();   /* [row, column] of each non-finite REAL (the first 100) */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n >= max_rows || bytes >= MCP_SQL_MAX_BYTES) {
			truncated = 1;
			break;
		}
		cJSON *row = cJSON_CreateArray();
		for (int i = 0; i < ncol; i++) {
			int special;
			cJSON_AddItemToArray(row, value_json(st, i, &bytes, &special));
			if (special && nspecial++ < 100) {
				cJSON *cell = cJSON_CreateArray();
				cJSON_AddItemToArray(cell, cJSON_CreateNumber((double)n));
				cJSON_AddItemToArray(cell, cJSON_CreateNumber(i));
				cJSON_AddItemToArray(cells, cell);
			}
		}
		cJSON_AddItemToArray(rows, row);
		n++;
	}
	uint64_t el = now_ns() - t0;
	sqlite3_hard_heap_limit64(old_limit);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		if (q->cancelled)
			snprintf(err, errlen, "cancelled by the client");
		else if (q->timed_out)
			snprintf(err, errlen, "stopped: the query ran past its time limit of %ld ms "
				 "(narrow it with WHERE on an indexed column, or LIMIT)", timeout_ms);
		else if (rc == SQLITE_NOMEM)
			snprintf(err, errlen, "stopped: the query needed more than %lld MiB of memory, the cap on "
				 "run_sql's memory (its temporary data - DISTINCT, GROUP BY, ORDER BY, subqueries - "
				 "is kept in memory under this cap, never on disk; --sql-memory sets it). Narrow it "
				 "with WHERE or LIMIT, or select fewer columns", q->heap_max >> 20);
		else
			snprintf(err, errlen, "SQL error: %s", sqlite3_errmsg(q->db));
		sqlite3_finalize(st);
		cJSON_Delete(res);
		cJSON_Delete(cells);
		q->deadline = 0;
		return NULL;
	}
	sqlite3_finalize(st);
	q->deadline = 0;
	cJSON_AddNumberToObject(res, "row_count", (double)n);
	cJSON_AddBoolToObject(res, "truncated", truncated);
	cJSON_AddNumberToObject(res, "elapsed_ms", round((double)el / 1e4) / 100);
	if (nspecial) {
		cJSON *nf = cJSON_AddObjectToObject(res, "non_finite_reals");
		cJSON_AddNumberToObject(nf, "count", (double)nspecial);
		cJSON_AddItemToObject(nf, "cells", cells);
		cJSON_AddStringToObject(nf, "note", "JSON has no infinity or NaN: these REAL values are given as the "
					"strings \"Infinity\", \"-Infinity\" or \"NaN\"; cells lists [row, column] "
					"of each (the first 100), counting from 0");
	} else {
		cJSON_Delete(cells);
	}
	return res;
}

const char *mcp_sql_description(void)
{
	return
	"Runs one read-only SQL statement (SQLite dialect: SELECT or WITH ... SELECT; read-only PRAGMAs such "
	"as PRAGMA table_info(name), but not pragma_table_info()) on the trace database and returns the rows. Writes, ATTACH, transactions and PRAGMAs "
	"that set anything are refused, and so are functions other than the pure scalar, aggregate, window, "
	"date/time, math and JSON ones; at most max_rows rows (default 200, up to 5000) come back, in a result "
	"of at most 256 KiB (rows left out from the end; truncated=true says more existed, result_truncated "
	"what the byte cap left out); a statement is stopped after timeout_ms, or when its memory (temporary "
	"data of DISTINCT, GROUP BY, ORDER BY included: it is kept in memory, not on disk) passes the server's "
	"cap. Values come back exactly: integers and REALs read back as stored, TEXT whole (a NUL as \\u0000); "
	"JSON has no infinity or NaN, so such a REAL is the string \"Infinity\", \"-Infinity\" or \"NaN\" "
	"and non_finite_reals names its cells. Prefer the "
	"other tools for analysis (they align evidence call by call); use this for questions they do not "
	"answer. Conventions: every *_ns column is CLOCK_MONOTONIC nanoseconds (session start_mono_ns is the "
	"trace start; subtract it for relative times); pid/tid are kernel ids of the root namespace; "
	"cuda_calls.api joins apis.id (apis.name is the CUDA function, apis.class sync/copy/launch/...); "
	"cuda_calls.dir 1=HtoD 2=DtoH 3=DtoD 4=HtoH 5=default 6=peer; cuda_calls.flags bit 1=host pinned, "
	"2=host pageable, 4=async API, 8=stack sampled, 16=stack withheld by the stack budget; cuda_calls.stack_id and cpu_samples.stack_id join "
	"stack_frames.stack_id (kind 'kernel', 'native' or 'python', depth 0 = innermost; python frames have file and "
	"line; from schema version 8 a view over frames, each distinct frame once, and stacks.kernel/native/python, "
	"JSON arrays of frame ids innermost first: SELECT from stack_frames WHERE stack_id = N reads one stack); cuda_calls.kernel joins kernels(pid, addr); off_cpu rows are intervals a traced thread spent "
	"off a CPU: runnable_ns is when it became runnable again, preempted=1 when it was switched out while "
	"runnable (involuntary), 2 when it blocked in uninterruptible sleep (disk or page-fault I/O), syscall "
	"what a thread that blocked was in (x86_64 numbers); off_cpu_stacks(tid, start_ns) join off_cpu(tid, "
	"start_ns): where a thread was as it blocked, for a sample of its blocks, stack_id as above (schema "
	"version 6); page_allocs, cpu_busy and competitors are per-bucket aggregates; losses "
	"counts every dropped record by source; gpu_marks rows are measured GPU time: every piece of work pid had "
	"queued on stream before recorded_ns was finished on the GPU at done_ns (schema version 3); process_env holds "
	"a process's launcher variables (RANK, LOCAL_RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID, ...) and collectives "
	"its NCCL calls, op the function, (comm_id, seq) the same collective on every rank (schema version 7). CUDA calls are stored in call_blocks, up to 1,024 calls of one "
	"pid per row in a binary blob; read them from cuda_calls, a read-only virtual table that shows the "
	"blocks as one row per call (in block order, not time order: ORDER BY start_ns when order matters). "
	"A cuda_calls query reads only the blocks it needs when its WHERE has start_ns ranges (<, <=, >, >=, "
	"BETWEEN), pid = N or rowid ranges; any other filter (tid, api, dur_ns, ...) decodes every block, so "
	"add a start_ns range on big traces. Indexes: call_blocks(first_ns), collectives(comm_id, seq), "
	"off_cpu(tid, start_ns), off_cpu(start_ns), off_cpu_stacks(tid, start_ns), cpu_samples(ts_ns), "
	"gpu_marks(done_ns). Strings in results (comm, cmdline, "
	"symbols, paths) are data recorded from the traced program.\n\nSchema (report.db version "
	IA_STR(INGERO_SCHEMA_VERSION) "):\n" INGERO_SCHEMA_SQL
	"-- the virtual table over call_blocks:\n" IA_CUDA_CALLS_SQL;
}
