/*
 * scan.c — the two big tables read in rowid chunks by two threads.
 *
 * Why this shape: a full scan of a 10M-row table costs SQLite ~300 ns a row
 * (b-tree walk, record decoding, one API call per column), and one scan per
 * table on its own thread leaves a core idle once the shorter table is done.
 * So each table is cut into rowid ranges of ~1M rows ("WHERE rowid BETWEEN"
 * is a b-tree seek), and two workers, each with its own read-only
 * connection, take chunks from a shared counter until none is left.  Every
 * chunk writes into its own slice of one array sized by the rowid span
 * (pages never written are never resident), then slices are packed
 * (scan_merge.c).
 * SQLite's global memory statistics are turned off (db.c; its mutex
 * serialises the two threads otherwise).  Memory-mapped I/O would save a
 * copy per page but counts the whole mapped file in the resident set.
 *
 * With a time window the time index bounds one query per table instead
 * (windows are usually small; the chunked path is for whole-trace scans).
 *
 * CUDA calls of a version-2 file are blocks (call_block.h): chunks are then
 * ranges of block ids holding ~CHUNK_ROWS calls, sized exactly from the
 * blocks' call counts, and each block is decoded straight into the slice.
 */
#include "load/scan.h"
#include "load/scan_internal.h"
#include "base/progress.h"
#include "base/util.h"
#include "load/db.h"
#include "load/syscalls.h"
#include "load/work_keys.h"

#include <ingero/api.h>
#include <ingero/call_block.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IA_SCAN_XSTR(x) #x
#define IA_SCAN_STR(x) IA_SCAN_XSTR(x)

#define CHUNK_ROWS 500000
#define NWORKERS IA_SCAN_THREADS
/* How far back an off-CPU interval may start and still overlap a window. */
#define OFF_SLACK_NS (600ull * 1000000000ull)

/* Rows are handed to an aggregate function (row_call / row_off) instead of
 * being returned one sqlite3_step() at a time: the per-row step and
 * column-API overhead goes away (~15 % of the scan).  The pid is not read
 * per row; a tid the threads table does not know is looked up afterwards. */
static const char *sql_for(int calls, int windowed, int blocks, const char *off_sql)
{
	if (calls && blocks)
		return windowed
			? "SELECT ia_row_block(id, pid, calls, data, first_ns, last_ns) FROM call_blocks "
			  "WHERE last_ns >= ?1 AND first_ns < ?2"
			: "SELECT ia_row_block(id, pid, calls, data, first_ns, last_ns) FROM call_blocks "
			  "WHERE id BETWEEN ?1 AND ?2";
	if (calls)
		return windowed
			? "SELECT ia_row_call(tid, api, start_ns, dur_ns, bytes, dir, flags, stack_id, stream) FROM cuda_calls "
			  "WHERE start_ns >= ?1 AND start_ns < ?2"
			: "SELECT ia_row_call(tid, api, start_ns, dur_ns, bytes, dir, flags, stack_id, stream) FROM cuda_calls "
			  "WHERE rowid BETWEEN ?1 AND ?2";
	return off_sql;
}

#define OFF_WINDOW " WHERE start_ns >= ?3 AND start_ns < ?2 AND end_ns > ?1"
#define OFF_ROWIDS " WHERE rowid BETWEEN ?1 AND ?2"

/* The off_cpu statements of the file's columns (row_off's arguments in
 * this order): next_pid always; syscall (version 5), waker_tid (7),
 * holder_pid and holder_ns (9), holder_tid (10), each with those before. */
static void off_statements(struct job *j)
{
	const char *cols = !j->off_syscall ? "" : !j->off_waker ? ", syscall" : !j->off_holder ? ", syscall, waker_tid"
		: j->off_holder == 1 ? ", syscall, waker_tid, holder_pid, holder_ns"
		: ", syscall, waker_tid, holder_pid, holder_ns, holder_tid";
	for (int w = 0; w < 2; w++)
		snprintf(j->off_sql[w], sizeof j->off_sql[w],
			 "SELECT ia_row_off(tid, start_ns, end_ns, runnable_ns, preempted, next_pid%s) FROM off_cpu%s", cols,
			 w ? OFF_WINDOW : OFF_ROWIDS);
}

static int stack_index(struct chunk *c, uint64_t sid, uint32_t *out)
{
	uint32_t idx = ia_map_get(&c->smap, sid);
	if (idx == UINT32_MAX) {
		if (ia_grow((void **)&c->sids, &c->scap, c->nsids + 1, sizeof *c->sids) < 0 ||
		    ia_map_put(&c->smap, sid, (uint32_t)c->nsids) < 0)
			return -1;
		idx = (uint32_t)c->nsids;
		c->sids[c->nsids++] = sid;
	}
	*out = idx;
	return 0;
}

/* Per-worker state the row functions reach through sqlite3_user_data(). */
struct wstate {
	struct chunk *c;
	const struct job *j;
	struct ingero_cuda_call *block;   /* a decoded call block */
	uint64_t last_sid;
	uint32_t last_idx, last_tid;
	int oom;
};

static int room(struct chunk *c, size_t sz)
{
	if (c->n < c->cap)
		return 0;
	if (!c->own)   /* a slice is sized by its rowid span: cannot overflow */
		return -1;
	return ia_grow(&c->rows, &c->cap, c->n + 1, sz);
}

/* tid met; its pid when the row says it (call blocks do), else 0. */
static void note_tid(struct wstate *w, uint32_t tid, uint32_t pid)
{
	if (tid == w->last_tid)
		return;
	w->last_tid = tid;
	if (ia_map_get(&w->c->tidpid, tid) == UINT32_MAX && ia_map_put(&w->c->tidpid, tid, pid) < 0)
		w->oom = 1;
}

/* One call into the chunk; -1 when out of memory. */
static int push_call(struct wstate *w, uint32_t pid, uint32_t tid, int64_t api, uint64_t start, int64_t d,
		     int64_t by, int dir, int flags, uint64_t sid, uint64_t stream, uint32_t work, uint32_t func)
{
	struct chunk *c = w->c;
	if (w->oom || room(c, sizeof(struct ia_call)) < 0)
		return -1;
	struct ia_call *x = (struct ia_call *)c->rows + c->n++;
	note_tid(w, tid, pid);
	x->th = tid;
	x->api = api > 0 && api < INGERO_API_MAX ? (uint16_t)api : 0;
	x->start = start;
	x->dur = d > 0 ? (uint64_t)d : 0;
	x->bytes = by > 0 ? (uint64_t)by : 0;
	x->dir = (uint8_t)dir;
	x->flags = (uint8_t)flags;
	x->stream = ia_stream_key(stream);
	x->work = work;
	x->func = func;
	if (sid == 0) {
		x->stack = 0;
	} else if (sid == w->last_sid) {
		x->stack = w->last_idx;
	} else {
		if (stack_index(c, sid, &w->last_idx) < 0)
			return -1;
		w->last_sid = sid;
		x->stack = w->last_idx;
	}
	return 0;
}

static void row_call(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	(void)argc;   /* fixed by the SELECT that calls it */
	struct wstate *w = sqlite3_user_data(ctx);
	if (push_call(w, 0, (uint32_t)sqlite3_value_int64(v[0]), sqlite3_value_int64(v[1]),
		      (uint64_t)sqlite3_value_int64(v[2]), sqlite3_value_int64(v[3]),
		      sqlite3_value_int64(v[4]), sqlite3_value_int(v[5]), sqlite3_value_int(v[6]),
		      (uint64_t)sqlite3_value_int64(v[7]), (uint64_t)sqlite3_value_int64(v[8]), 0, 0) < 0) {
		w->oom = 1;
		sqlite3_result_error_nomem(ctx);
	}
}

/* A call block (id, pid, calls, data): every call in it, or only those
 * starting in the window.  A block that does not decode, or holds another
 * number of calls than its calls column says (slices are sized by it), fails
 * the scan as a corrupted database, naming the row and the reason (as the
 * cuda_calls table does). */
static void bad_block(sqlite3_context *ctx, sqlite3_value *id, const char *why)
{
	if (!strncmp(why, "call block: ", 12))   /* the decoder's prefix: the block is named here */
		why += 12;
	char *msg = sqlite3_mprintf("call block %lld: %s", (long long)sqlite3_value_int64(id), why);
	sqlite3_result_error(ctx, msg ? msg : why, -1);
	sqlite3_result_error_code(ctx, SQLITE_CORRUPT);
	sqlite3_free(msg);
}

static void row_block(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	(void)argc;
	struct wstate *w = sqlite3_user_data(ctx);
	char err[160];
	size_t n;
	if (!w->block && !(w->block = malloc(INGERO_BLOCK_MAX_CALLS * sizeof *w->block))) {
		w->oom = 1;
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (ingero_block_decode(sqlite3_value_blob(v[3]), (size_t)sqlite3_value_bytes(v[3]),
				(uint32_t)sqlite3_value_int64(v[1]), w->block, &n, err, sizeof err)) {
		bad_block(ctx, v[0], err);
		return;
	}
	if (sqlite3_value_int64(v[2]) != (sqlite3_int64)n) {
		bad_block(ctx, v[0], "call block: its calls column says another number of calls");
		return;
	}
	/* the row's bounds are the calls' first and last start: a blob whose
	 * bytes changed unseen (an overwritten page) rarely keeps them */
	int64_t lo, hi;
	ingero_block_span(w->block, n, &lo, &hi);
	if (sqlite3_value_int64(v[4]) != lo || sqlite3_value_int64(v[5]) != hi) {
		bad_block(ctx, v[0], "call block: its calls start outside the row's first_ns and last_ns");
		return;
	}
	if (!w->c->own && w->c->n + n > w->c->cap) {   /* cannot happen when every block agrees */
		bad_block(ctx, v[0], "call block: more calls than planned");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ingero_cuda_call *x = &w->block[i];
		if (w->j->windowed && (x->start_ns < w->j->from || x->start_ns >= w->j->to))
			continue;
		uint32_t work, func;
		ia_work_keys(x, &work, &func);
		if (push_call(w, x->pid, x->tid, x->api, x->start_ns, (int64_t)x->dur_ns, (int64_t)x->bytes,
			      x->dir, x->flags, x->stack_id, x->stream, work, func) < 0) {
			w->oom = 1;
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
}

static void row_off(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	struct wstate *w = sqlite3_user_data(ctx);
	struct chunk *c = w->c;
	if (argc < 6) {   /* (off_statements gives six or more) */
		sqlite3_result_error(ctx, "ia_row_off: too few arguments", -1);
		return;
	}
	if (w->oom || room(c, sizeof(struct ia_off)) < 0) {
		w->oom = 1;
		sqlite3_result_error_nomem(ctx);
		return;
	}
	struct ia_off *o = (struct ia_off *)c->rows + c->n++;
	uint32_t tid = (uint32_t)sqlite3_value_int64(v[0]);
	note_tid(w, tid, 0);
	uint64_t s = (uint64_t)sqlite3_value_int64(v[1]);
	uint64_t e = (uint64_t)sqlite3_value_int64(v[2]);
	uint64_t r = (uint64_t)sqlite3_value_int64(v[3]);
	if (e < s)   /* a malformed row never yields a negative duration */
		e = s;
	if (r < s)
		r = s;
	if (r > e)
		r = e;
	o->start = s;
	o->end = e;
	o->runq = e - r > UINT32_MAX ? UINT32_MAX : (uint32_t)(e - r);
	/* a node's tids are < 2^22 (pid_max): the top bits carry flags; a larger
	 * one (a merged file's) goes beside the row */
	int how = sqlite3_value_int(v[4]);   /* off_cpu.preempted: 0 slept, 1 preempted, 2 D state */
	o->th = (tid < IA_OFF_TID_ASIDE ? tid : IA_OFF_TID_ASIDE) | (how == 1 ? IA_OFF_PREEMPTED : how == 2 ? IA_OFF_IOWAIT : 0);
	/* v[5] next_pid; then (off_statements) syscall, waker_tid, holder_pid,
	 * holder_ns, holder_tid as the file has them */
	if (argc > 6)   /* version 5: what it blocked in */
		o->th |= (uint32_t)ia_syscall_code(sqlite3_value_int64(v[6]), sqlite3_value_type(v[6]) != SQLITE_NULL)
			 << IA_OFF_SYS_SHIFT;
	uint32_t waker = argc > 7 && how != 1 ? (uint32_t)sqlite3_value_int64(v[7]) : 0;   /* version 7: who woke it */
	/* version 9: whom it waited behind, when it waited after its wake-up
	 * (the raw runnable_ns, as the file says it) */
	int held = argc > 9 && how != 1 && sqlite3_value_type(v[8]) != SQLITE_NULL &&
		   sqlite3_value_int64(v[2]) > sqlite3_value_int64(v[3]);
	if ((waker && waker != tid && side_push(&c->wk, &c->nwk, &c->wkcap, c->n - 1, waker) < 0) ||
	    (tid >= IA_OFF_TID_ASIDE && side_push(&c->aside, &c->naside, &c->asidecap, c->n - 1, tid) < 0) ||
	    (how == 1 && side_push(&c->nx, &c->nnx, &c->nxcap, c->n - 1, (uint32_t)sqlite3_value_int64(v[5])) < 0) ||
	    (held && holder_push(&c->ho, &c->nho, &c->hocap, c->n - 1,
				 (struct ia_off_holder){ 0, sqlite3_value_int(v[8]),
							 argc > 10 ? (uint32_t)sqlite3_value_int64(v[10]) : 0, 0,
							 (uint64_t)sqlite3_value_int64(v[9]),
							 (uint64_t)sqlite3_value_int64(v[3]) }) < 0)) {
		w->oom = 1;
		sqlite3_result_error_nomem(ctx);
	}
}

static void row_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

static int run_chunk(struct job *j, struct chunk *c, sqlite3 *db, sqlite3_stmt *st, struct wstate *w)
{
	sqlite3_reset(st);
	if (j->windowed) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)j->from);
		sqlite3_bind_int64(st, 2, j->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)j->to);
		if (!c->calls)
			sqlite3_bind_int64(st, 3, (sqlite3_int64)(j->from > OFF_SLACK_NS ? j->from - OFF_SLACK_NS : 0));
	} else {
		sqlite3_bind_int64(st, 1, c->lo);
		sqlite3_bind_int64(st, 2, c->hi);
	}
	if (c->calls) {
		c->scap = 16;
		if (!(c->sids = malloc(c->scap * sizeof *c->sids)))
			return -1;
		c->sids[0] = 0;
		c->nsids = 1;
	}
	w->c = c;
	w->last_sid = 0;
	w->last_idx = 0;
	w->last_tid = UINT32_MAX;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (w->oom)
		return -1;
	if (rc != SQLITE_DONE) {
		ia_db_step_error(db, rc, c->err, sizeof c->err);
		c->failed = 1;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	char err[256] = "";
	sqlite3 *db = ia_db_reopen(j->path, err, sizeof err);
	sqlite3_stmt *st[2] = { NULL, NULL };
	struct wstate w = { .j = j };
	if (db && (sqlite3_create_function(db, "ia_row_call", 9, SQLITE_UTF8, &w, NULL, row_call, row_final) != SQLITE_OK ||
		   sqlite3_create_function(db, "ia_row_block", 6, SQLITE_UTF8, &w, NULL, row_block, row_final) != SQLITE_OK ||
		   sqlite3_create_function(db, "ia_row_off", -1, SQLITE_UTF8, &w, NULL, row_off, row_final) != SQLITE_OK)) {
		snprintf(err, sizeof err, "cannot register scan functions: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		db = NULL;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1);
		if (i >= j->nchunks)
			break;
		struct chunk *c = &j->chunks[i];
		if (!db) {
			snprintf(c->err, sizeof c->err, "%s", err);
			c->failed = 1;
			continue;
		}
		if (!st[c->calls] && !(st[c->calls] = ia_db_prepare(db, sql_for(c->calls, j->windowed, j->blocks, j->off_sql[j->windowed != 0]), c->err, sizeof c->err))) {
			c->failed = 1;
			continue;
		}
		int crc = run_chunk(j, c, db, st[c->calls], &w);
		ia_progress_add(c->own ? 0 : (uint64_t)c->planned);
		if (crc < 0 && !c->failed) {
			snprintf(c->err, sizeof c->err, "out of memory reading %s", c->calls ? "cuda_calls" : "off_cpu");
			c->failed = 1;
		}
	}
	sqlite3_finalize(st[0]);
	sqlite3_finalize(st[1]);
	sqlite3_close(db);
	free(w.block);
	return NULL;
}

static int rowid_span(const char *path, const char *table, sqlite3_int64 *lo, sqlite3_int64 *hi,
		      char *err, size_t errlen)
{
	sqlite3 *db = ia_db_reopen(path, err, errlen);
	if (!db)
		return -1;
	char sql[96];
	int rc = 0;
	*lo = 1;
	*hi = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		snprintf(sql, sizeof sql, "SELECT %s(rowid) FROM %s", k ? "max" : "min", table);
		sqlite3_stmt *st = ia_db_prepare(db, sql, err, errlen);
		if (!st) {
			rc = -1;
			break;
		}
		int s = sqlite3_step(st);
		if (s == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			*(k ? hi : lo) = sqlite3_column_int64(st, 0);
		else if (s != SQLITE_ROW && s != SQLITE_DONE) {
			ia_db_step_error(db, s, err, errlen);
			rc = -1;
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return rc;
}

/* Whole-trace chunks over the call blocks: runs of block ids holding about
 * CHUNK_ROWS calls, each with its exact slice of one array (*base). */
static int plan_blocks(const char *path, struct job *j, size_t *cap, void **base,
		       char *err, size_t errlen)
{
	sqlite3 *db = ia_db_reopen(path, err, errlen);
	if (!db)
		return -1;
	/* one read transaction for both queries: a collector still writing
	 * commits every ~50 ms, and the sum must cover the rows listed */
	sqlite3_stmt *st = NULL;
	int rc = -1, s;
	uint64_t total = 0;
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		ia_db_step_error(db, sqlite3_errcode(db), err, errlen);
		goto out;
	}
	/* A count out of range would size the array (a huge one: "out of
	 * memory", a negative one: an overflow): name the block instead. */
	if (!(st = ia_db_prepare(db, "SELECT id, calls FROM call_blocks WHERE calls NOT BETWEEN 1 AND "
				 IA_SCAN_STR(INGERO_BLOCK_MAX_CALLS) " ORDER BY id LIMIT 1", err, errlen)))
		goto out;
	if ((s = sqlite3_step(st)) == SQLITE_ROW) {
		ia_db_corrupt(err, errlen, "call block %lld: its calls column says %lld (1 to %d)",
			      (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 1),
			      INGERO_BLOCK_MAX_CALLS);
		goto out;
	}
	if (s != SQLITE_DONE)
		goto step_err;
	sqlite3_finalize(st);
	st = NULL;
	if (!(st = ia_db_prepare(db, "SELECT sum(calls) FROM call_blocks", err, errlen)))
		goto out;
	if ((s = sqlite3_step(st)) == SQLITE_ROW)
		total = (uint64_t)sqlite3_column_int64(st, 0);
	else
		goto step_err;
	sqlite3_finalize(st);
	st = NULL;
	if (total == 0) {
		rc = 0;
		goto out;
	}
	if (total > SIZE_MAX / sizeof(struct ia_call) || !(*base = malloc(total * sizeof(struct ia_call)))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ia_hint_huge(*base, total * sizeof(struct ia_call));
	if (!(st = ia_db_prepare(db, "SELECT id, calls FROM call_blocks ORDER BY id", err, errlen)))
		goto out;
	struct chunk *c = NULL;
	uint64_t used = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);
		if (n < 0 || (uint64_t)n > total - used) {   /* the file changed under us */
			ia_db_corrupt(err, errlen, "call block %lld: the calls columns do not add up to their sum",
				      (long long)id);
			goto out;
		}
		if (!c || c->planned >= CHUNK_ROWS) {
			if (ia_grow((void **)&j->chunks, cap, j->nchunks + 1, sizeof *j->chunks) < 0) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			c = &j->chunks[j->nchunks++];
			*c = (struct chunk){ .calls = 1, .lo = id };
			c->rows = (char *)*base + used * sizeof(struct ia_call);
		}
		c->hi = id;
		c->planned += (size_t)n;
		c->cap = c->planned;
		used += (uint64_t)n;
	}
	if (s != SQLITE_DONE)
		goto step_err;
	rc = 0;
	goto out;
step_err:
	ia_db_step_error(db, s, err, errlen);
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* The chunks the workers will read: in a window, one of each table's
 * (read by time, its rows its own); else CHUNK_ROWS rowids each, reading
 * into base[calls] (1: cuda_calls, or its call blocks; 0: off_cpu), one
 * array per table sized by its rowid span.  0, or -1 with err set. */
static int plan_chunks(const char *path, int what, struct job *j, size_t *cap, void *base[2], char *err, size_t errlen)
{
	for (int calls = 1; calls >= 0; calls--) {
		if (!(what & (calls ? IA_LOAD_CALLS : IA_LOAD_OFFCPU)))
			continue;
		if (j->windowed) {
			if (ia_grow((void **)&j->chunks, cap, j->nchunks + 1, sizeof *j->chunks) < 0)
				goto oom;
			j->chunks[j->nchunks++] = (struct chunk){ .calls = calls, .own = 1 };
			continue;
		}
		if (calls && j->blocks) {
			if (plan_blocks(path, j, cap, &base[1], err, errlen) < 0)
				return -1;
			continue;
		}
		sqlite3_int64 lo = 1, hi = 0;
		if (rowid_span(path, calls ? "cuda_calls" : "off_cpu", &lo, &hi, err, errlen) < 0)
			return -1;
		if (hi < lo)
			continue;
		size_t span = (size_t)(hi - lo + 1);
		size_t sz = calls ? sizeof(struct ia_call) : sizeof(struct ia_off);
		if (!(base[calls] = malloc(span * sz)))
			goto oom;
		ia_hint_huge(base[calls], span * sz);
		for (sqlite3_int64 a = lo; a <= hi; a += CHUNK_ROWS) {
			if (ia_grow((void **)&j->chunks, cap, j->nchunks + 1, sizeof *j->chunks) < 0)
				goto oom;
			struct chunk *c = &j->chunks[j->nchunks++];
			*c = (struct chunk){ .calls = calls, .lo = a };
			c->hi = a + CHUNK_ROWS - 1 < hi ? a + CHUNK_ROWS - 1 : hi;
			c->rows = (char *)base[calls] + (size_t)(a - lo) * sz;
			c->cap = c->planned = (size_t)(c->hi - c->lo + 1);
		}
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The chunks read by NWORKERS threads (this one among them). */
static void read_chunks(struct job *j)
{
	uint64_t total_rows = 0;
	for (size_t i = 0; i < j->nchunks; i++)
		if (!j->chunks[i].own)
			total_rows += j->chunks[i].planned;
	ia_progress_begin("reading report.db", total_rows);
	pthread_t th[NWORKERS];
	int started = 0;
	for (int i = 0; i < NWORKERS - 1 && j->nchunks > 1; i++)
		if (pthread_create(&th[started], NULL, worker, j) == 0)
			started++;
	worker(j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	ia_phase("scan");
	ia_progress_phase("analysing");
}

int ia_scan_tables(const char *path, int blocks, uint64_t from, uint64_t to, int what,
		   struct ia_scan_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	struct job j;
	memset(&j, 0, sizeof j);
	j.path = path;
	j.from = from;
	j.to = to;
	j.windowed = from > 0 || to != UINT64_MAX;
	j.blocks = blocks;
	j.off_syscall = (what & IA_LOAD_OFF_SYSCALL) != 0;
	j.off_waker = j.off_syscall && (what & IA_LOAD_OFF_WAKER);
	j.off_holder = !j.off_waker || !(what & IA_LOAD_OFF_HOLDER) ? 0 : what & IA_LOAD_OFF_HOLDER_TID ? 2 : 1;
	off_statements(&j);
	size_t cap = 0;
	void *base[2] = { NULL, NULL };
	int rc = -1;
	if (plan_chunks(path, what, &j, &cap, base, err, errlen) < 0)
		goto out;
	read_chunks(&j);
	for (size_t i = 0; i < j.nchunks; i++)
		if (j.chunks[i].failed) {
			snprintf(err, errlen, "%s", j.chunks[i].err);
			goto out;
		}
	if (ia_scan_merge(&j, base, r) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < j.nchunks; i++) {
		if (j.chunks[i].own)
			free(j.chunks[i].rows);
		free(j.chunks[i].sids);
		free(j.chunks[i].wk);
		free(j.chunks[i].aside);
		free(j.chunks[i].nx);
		free(j.chunks[i].ho);
		ia_map_free(&j.chunks[i].tidpid);
		ia_map_free(&j.chunks[i].smap);
	}
	free(j.chunks);
	free(base[0]);
	free(base[1]);
	if (rc)
		ia_scan_result_free(r);
	return rc;
}

void ia_scan_result_free(struct ia_scan_result *r)
{
	free(r->calls);
	free(r->offs);
	free(r->wakers);
	free(r->aside);
	free(r->nexts);
	free(r->holders);
	free(r->stack_ids);
	free(r->tids);
	free(r->pids);
	memset(r, 0, sizeof *r);
}
