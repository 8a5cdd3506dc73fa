/*
 * test_analyzer_calls_vtab.c — the cuda_calls virtual table
 * (analyzer/load/calls_vtab.c) over a version-2 report.db: it shows exactly the
 * calls that were stored, one row each, with version 1's columns and NULLs
 * and rowid = block id * 1,024 + index; every WHERE it pushes down (start_ns
 * bounds, pid =, rowid bounds, given as integers, floats or text) gives the
 * rows SQLite's own filter gives over a real table holding the same rows;
 * ORDER BY and joins likewise; a damaged block is an SQLite error naming
 * its call_blocks row, and bounds that exclude it never read it; no blocks
 * is no rows; and a version-1 file's real cuda_calls table answers instead.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ingero/api.h>
#include <ingero/schema.h>

#include "../../analyzer/load/calls_vtab.h"
#include "../../analyzer/load/db.h"
#include "call_blocks.h"

#define COLS "rowid, pid, tid, api, start_ns, dur_ns, stream, bytes, dir, flags, ret, " \
	     "stack_id, kernel, grid_x, grid_y, grid_z, block_x, block_y, block_z"
#define NCOLS 19

/* --- the fixture ------------------------------------------------------------------------ */

/* Five blocks (ids 2..6: block 1 was dropped, as --max-size does):
 *   2  pid 10, 1,024 calls of three threads, starts out of order
 *   3  pid 20, 1 call
 *   4  pid 10, 300 calls overlapping block 2 in time
 *   5  pid 30, 500 calls, later
 *   6  pid 10, 2 calls, the first a launch with every value at its widest */
#define NBLOCKS 5
static const size_t block_calls[NBLOCKS] = { 1024, 1, 300, 500, 2 };
static const uint32_t block_pid[NBLOCKS] = { 10, 20, 10, 30, 10 };
#define FIRST_ID 2
#define NCALLS (1024 + 1 + 300 + 500 + 2)

struct row {
	sqlite3_int64 rowid;
	struct ingero_cuda_call c;
};
static struct row rows[NCALLS];

static void make_calls(void)
{
	size_t r = 0;
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (int b = 0; b < NBLOCKS; b++) {
		for (size_t i = 0; i < block_calls[b]; i++, r++) {
			struct ingero_cuda_call *c = &rows[r].c;
			uint64_t base = b == 3 ? 5000000 : b == 2 ? 1050000 : b == 4 ? 9000000 : 1000000;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			rows[r].rowid = (sqlite3_int64)(FIRST_ID + b) * INGERO_BLOCK_MAX_CALLS + (sqlite3_int64)i;
			*c = tb_call(block_pid[b], block_pid[b] + (uint32_t)(i % 3),
				     (uint16_t)(i % 4 == 1 ? INGERO_API_CUDA_LAUNCH_KERNEL : INGERO_API_CUDA_MEMCPY_ASYNC),
				     /* three threads, each 250 ns behind the one before */
				     base + i * 100 - (i % 3) * 250 + 500, 50 + x % 5000);
			c->stream = i % 5 ? 0x7f0000001000ull + i % 7 : 0;
			c->bytes = i % 4 == 1 ? 0 : x >> 40;
			c->dir = (uint8_t)(i % 4 == 1 ? 0 : 1 + i % 2);
			c->flags = (uint8_t)(i % 4 == 1 ? 0 : INGERO_FLAG_ASYNC);
			c->ret = i % 97 == 3 ? -(int32_t)(i % 1000) : 0;
			c->stack_id = i % 3 == 0 ? 0 : 100 + i % 11;
			if (i % 4 == 1) {
				c->kernel = 0x7f0000200000ull + (i % 5) * 64;
				c->grid[0] = (uint32_t)(1 + i % 100);
				c->grid[1] = i % 8 == 1 ? 0 : 2;   /* some dimensions 0, still a launch */
				c->grid[2] = 1;
				c->block[0] = 256;
				c->block[1] = c->block[2] = 1;
			}
		}
	}
	/* block 6: the widest values; then a call with no stack, kernel or grid */
	struct ingero_cuda_call *w = &rows[NCALLS - 2].c;
	w->ret = INT32_MIN;
	w->stream = UINT64_MAX;
	w->stack_id = 0x8000000000000001ull;
	w->kernel = 0xffffffff00000000ull;
	w->grid[0] = w->block[2] = UINT32_MAX;
	w->api = INGERO_API_CU_LAUNCH_KERNEL;
	w = &rows[NCALLS - 1].c;
	w->api = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
	w->stack_id = w->kernel = 0;
	memset(w->grid, 0, sizeof w->grid);
	memset(w->block, 0, sizeof w->block);
}

static void exec(sqlite3 *db, const char *sql)
{
	char *e = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
		fail_msg("%s: %s", sql, e);
}

/* A connection to a fresh in-memory report.db holding the fixture, with
 * cuda_calls registered. */
static sqlite3 *fixture(void)
{
	struct ingero_cuda_call c[INGERO_BLOCK_MAX_CALLS];
	char err[256];
	sqlite3 *db;
	size_t r = 0;

	make_calls();
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(ia_calls_vtab_register(db), SQLITE_OK);
	exec(db, TB_SCHEMA_SQL);
	c[0] = tb_call(1, 1, 1, 1, 1);
	if (tb_insert_block(db, c, 1, NULL, err, sizeof err))
		fail_msg("%s", err);
	for (int b = 0; b < NBLOCKS; b++) {
		sqlite3_int64 id;

		for (size_t i = 0; i < block_calls[b]; i++)
			c[i] = rows[r + i].c;
		if (tb_insert_block(db, c, block_calls[b], &id, err, sizeof err))
			fail_msg("%s", err);
		assert_int_equal(id, FIRST_ID + b);
		r += block_calls[b];
	}
	exec(db, "DELETE FROM call_blocks WHERE id = 1");
	return db;
}

static sqlite3_int64 q(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	sqlite3_int64 v = -999;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1000 : sqlite3_column_int64(st, 0);
	else
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return v;
}

/* --- what a full scan shows -------------------------------------------------------------- */

/* Column `col` of COLS for a stored call, as version 1 stored it: 0 and
 * NULL where it stored NULL. */
static int expected(const struct row *r, int col, sqlite3_int64 *v)
{
	const struct ingero_cuda_call *c = &r->c;
	int launch = c->grid[0] | c->grid[1] | c->grid[2] | c->block[0] | c->block[1] | c->block[2];

	switch (col) {
	case 0:  *v = r->rowid; return 1;
	case 1:  *v = c->pid; return 1;
	case 2:  *v = c->tid; return 1;
	case 3:  *v = c->api; return 1;
	case 4:  *v = (sqlite3_int64)c->start_ns; return 1;
	case 5:  *v = (sqlite3_int64)c->dur_ns; return 1;
	case 6:  *v = (sqlite3_int64)c->stream; return 1;
	case 7:  *v = (sqlite3_int64)c->bytes; return 1;
	case 8:  *v = c->dir; return 1;
	case 9:  *v = c->flags; return 1;
	case 10: *v = c->ret; return 1;
	case 11: *v = (sqlite3_int64)c->stack_id; return c->stack_id != 0;
	case 12: *v = (sqlite3_int64)c->kernel; return c->kernel != 0;
	case 13: case 14: case 15: *v = c->grid[col - 13]; return launch;
	default: *v = c->block[col - 16]; return launch;
	}
}

static void full_scan_shows_every_call(void **state)
{
	sqlite3 *db = fixture();
	sqlite3_stmt *st;
	size_t r = 0;

	(void)state;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT " COLS " FROM cuda_calls", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		assert_true(r < NCALLS);
		for (int col = 0; col < NCOLS; col++) {
			sqlite3_int64 v;
			int set = expected(&rows[r], col, &v);

			if (!set && sqlite3_column_type(st, col) != SQLITE_NULL)
				fail_msg("row %zu column %s: %lld, NULL expected", r, sqlite3_column_name(st, col),
					 (long long)sqlite3_column_int64(st, col));
			if (set && (sqlite3_column_type(st, col) != SQLITE_INTEGER || sqlite3_column_int64(st, col) != v))
				fail_msg("row %zu column %s: %s, %lld expected", r, sqlite3_column_name(st, col),
					 sqlite3_column_text(st, col) ? (const char *)sqlite3_column_text(st, col) : "NULL",
					 (long long)v);
		}
		r++;
	}
	assert_int_equal(r, NCALLS);
	sqlite3_finalize(st);

	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), NCALLS);
	/* the fixture has each kind of value it should */
	assert_true(q(db, "SELECT count(*) FROM cuda_calls WHERE stack_id IS NULL") > 0);
	assert_true(q(db, "SELECT count(*) FROM cuda_calls WHERE kernel IS NULL AND grid_x IS NULL") > 0);
	assert_true(q(db, "SELECT count(*) FROM cuda_calls WHERE grid_y = 0") > 0);
	assert_true(q(db, "SELECT count(*) FROM cuda_calls WHERE ret < 0") > 0);
	assert_int_equal(q(db, "SELECT ret FROM cuda_calls WHERE stream = -1"), INT32_MIN);
	assert_int_equal(q(db, "SELECT stack_id FROM cuda_calls WHERE stream = -1"), (sqlite3_int64)0x8000000000000001ull);
	assert_int_equal(q(db, "SELECT block_z FROM cuda_calls WHERE stream = -1"), UINT32_MAX);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE rowid % 1024 = 1023"), 1);
	assert_int_equal(q(db, "SELECT min(rowid) FROM cuda_calls"), FIRST_ID * INGERO_BLOCK_MAX_CALLS);
	sqlite3_close(db);
}

/* --- constraints ------------------------------------------------------------------------ */

/* A real table with the same rows (through a full scan, checked above):
 * SQLite's own filtering over it is what every query must give. */
static void make_reference(sqlite3 *db)
{
	exec(db, "CREATE TEMP TABLE ref(rid INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, api INTEGER, "
		 "start_ns INTEGER, dur_ns INTEGER, stream INTEGER, bytes INTEGER, dir INTEGER, flags INTEGER, "
		 "ret INTEGER, stack_id INTEGER, kernel INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, "
		 "block_x INTEGER, block_y INTEGER, block_z INTEGER)");
	exec(db, "INSERT INTO ref SELECT " COLS " FROM cuda_calls");
	assert_int_equal(q(db, "SELECT count(*) FROM ref"), NCALLS);
}

/* sql with every @T replaced by table */
static char *with_table(const char *sql, const char *table)
{
	static char out[2048];
	size_t o = 0;

	for (const char *p = sql; *p && o + 32 < sizeof out; p++) {
		if (p[0] == '@' && p[1] == 'T') {
			o += (size_t)snprintf(out + o, sizeof out - o, "%s", table);
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = 0;
	return out;
}

/* Runs sql over cuda_calls and over ref; the same rows in the same order.
 * Returns the number of rows. */
static size_t same_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *a, *b;
	size_t n = 0;
	int ra, rb;

	if (sqlite3_prepare_v2(db, with_table(sql, "cuda_calls"), -1, &a, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_prepare_v2(db, with_table(sql, "ref"), -1, &b, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	for (;;) {
		ra = sqlite3_step(a);
		rb = sqlite3_step(b);
		if (ra != rb)
			fail_msg("%s: row %zu: step %d over cuda_calls, %d over the table (%s)", sql, n, ra, rb,
				 sqlite3_errmsg(db));
		if (ra != SQLITE_ROW)
			break;
		assert_int_equal(sqlite3_column_count(a), sqlite3_column_count(b));
		for (int col = 0; col < sqlite3_column_count(a); col++) {
			if (sqlite3_column_type(a, col) != sqlite3_column_type(b, col) ||
			    sqlite3_column_int64(a, col) != sqlite3_column_int64(b, col))
				fail_msg("%s: row %zu column %d: %lld over cuda_calls, %lld over the table", sql, n, col,
					 (long long)sqlite3_column_int64(a, col), (long long)sqlite3_column_int64(b, col));
		}
		n++;
	}
	assert_int_equal(ra, SQLITE_DONE);
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	return n;
}

static void constraints_give_the_filtered_rows(void **state)
{
	/* "W" cases are WHERE clauses: each runs as SELECT COLS FROM @T WHERE W ORDER BY rowid.
	 * Bounds fall inside blocks, on block edges, between blocks and outside
	 * the data; blocks 2 and 3 start with a call at 1,000,500, which is not
	 * block 2's smallest start (threads interleave). */
	static const char *const where[] = {
		"start_ns >= 1050000", "start_ns > 1050000", "start_ns < 1050000", "start_ns <= 1050000",
		"start_ns = 1050000", "start_ns = 1000500", "start_ns = 1000250", "start_ns = 7",
		"start_ns BETWEEN 1100000 AND 1250000", "start_ns > 1100000 AND start_ns < 1100400",
		"start_ns >= 1102350 AND start_ns <= 1102350", "start_ns = 1102350 AND start_ns < 1102351",
		"start_ns > 1102350 AND start_ns = 1102350", "start_ns < 1102350 AND start_ns > 1102350",
		"start_ns >= 1300000 AND start_ns < 5000000", "start_ns >= 9000000", "start_ns > 9000600",
		"start_ns < 0", "start_ns > -5", "start_ns < 9223372036854775807", "start_ns > 9223372036854775807",
		"start_ns >= -9223372036854775808",
		/* floats, text, things that are no number */
		"start_ns >= 1050000.5", "start_ns > 1050000.0", "start_ns <= 1050000.5", "start_ns < 1050000.5",
		"start_ns = 1050000.0", "start_ns = 1050000.5", "start_ns BETWEEN 1.1e6 AND 1.25e6",
		"start_ns < 1e30", "start_ns > -1e30", "start_ns < -1e30", "start_ns > 9.3e18", "start_ns < 9.3e18",
		"start_ns >= '1050000'", "start_ns < '1050000.5'", "start_ns > ' 1050000 '", "start_ns < '1.1e6'",
		"start_ns = '1050000'", "start_ns > 'abc'", "start_ns < 'abc'", "start_ns < x'00'", "start_ns > NULL",
		"start_ns = NULL", "start_ns IS NULL", "start_ns IS NOT NULL", "start_ns IN (1050000, 5000100, 8)",
		/* pid */
		"pid = 10", "pid = 20", "pid = 30", "pid = 31", "pid = '10'", "pid = 10.0", "pid = 10.5",
		"pid = 'x'", "pid = -10", "pid IN (20, 30)", "pid IN ('20', 30.0, 31)", "pid > 10", "pid <> 10",
		"pid = 10 AND start_ns >= 1150000 AND start_ns < 1250000", "pid = 30 AND start_ns < 1000000",
		/* rowid: block b holds b * 1024 onwards: 2048..3071, 3072, 4096..4395,
		 * 5120..5619, 6144..6145 */
		"rowid BETWEEN 2048 AND 3071", "rowid BETWEEN 3000 AND 4200", "rowid >= 4096", "rowid > 4096",
		"rowid < 4096", "rowid <= 4096", "rowid = 4096", "rowid = 4097", "rowid = 2048", "rowid = 3071",
		"rowid = 0", "rowid < 0", "rowid <= -1", "rowid > -1", "rowid >= -5000", "rowid <= -1.5",
		"rowid > 6144", "rowid >= 6145", "rowid > 1000000", "rowid = 9223372036854775807",
		"rowid BETWEEN 2047.5 AND 3071.5", "rowid > 3071.9", "rowid < 3072.1", "rowid = 4096.0",
		"rowid = 4096.5", "rowid BETWEEN '3000' AND '4200'", "rowid < 'abc'", "rowid > 'abc'",
		"rowid > 1e30", "rowid < 1e30", "rowid IN (2050, 4096, 6145, 1)",
		"rowid BETWEEN 2048 AND 3071 AND start_ns > 1050000 AND pid = 10",
		"rowid = 2050 AND rowid = 2051", "rowid = 2050 AND rowid > 2049",
		/* columns the table does not push down, and OR */
		"tid = 11", "api = 21 AND dur_ns > 2500", "stack_id IS NULL", "grid_x IS NOT NULL",
		"start_ns < 1000300 OR start_ns > 9000000", "pid = 20 OR rowid = 5120",
	};
	/* whole statements: ORDER BY, LIMIT, aggregates, joins */
	static const char *const stmt[] = {
		"SELECT " COLS " FROM @T ORDER BY start_ns, rowid",
		"SELECT " COLS " FROM @T ORDER BY rowid DESC",
		"SELECT " COLS " FROM @T WHERE pid = 10 ORDER BY tid, start_ns DESC, rowid",
		"SELECT rowid, start_ns FROM @T ORDER BY start_ns DESC, rowid LIMIT 5",
		"SELECT rowid, start_ns FROM @T WHERE start_ns > 1100000 ORDER BY start_ns, rowid LIMIT 10 OFFSET 3",
		"SELECT count(*), sum(dur_ns), min(start_ns), max(start_ns), count(stack_id), count(grid_x) FROM @T",
		"SELECT pid, count(*), sum(bytes), total(ret) FROM @T GROUP BY pid ORDER BY pid",
		"SELECT api, count(*) FROM @T WHERE start_ns BETWEEN 1000000 AND 1100000 GROUP BY api ORDER BY api",
		"SELECT v.column1, c.rowid FROM (VALUES (10), (30), (99)) v JOIN @T c ON c.pid = v.column1 "
		"ORDER BY 1, 2",
		"SELECT v.column1, count(*) FROM (VALUES (1000000), (1100000), (9000400)) v "
		"JOIN @T c ON c.start_ns >= v.column1 AND c.start_ns < v.column1 + 1000 GROUP BY 1 ORDER BY 1",
		"SELECT v.column1, c.start_ns FROM (VALUES (2048), (3071), (5120)) v JOIN @T c ON c.rowid = v.column1 "
		"ORDER BY 1",
		"SELECT a.rowid, b.rowid FROM @T a JOIN @T b ON b.rowid = a.rowid + 1 AND b.start_ns < a.start_ns "
		"WHERE a.pid = 10 AND a.rowid < 2100 ORDER BY 1",
	};
	sqlite3 *db = fixture();
	char sql[1024];
	size_t n, nonempty = 0;

	(void)state;
	make_reference(db);
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
		snprintf(sql, sizeof sql, "SELECT " COLS " FROM @T WHERE %s ORDER BY rowid", where[i]);
		n = same_rows(db, sql);
		nonempty += n > 0 && n < NCALLS;
	}
	for (size_t i = 0; i < sizeof stmt / sizeof stmt[0]; i++)
		same_rows(db, stmt[i]);
	/* most bounds select some calls but not all */
	assert_true(nonempty > sizeof where / sizeof where[0] / 2);
	/* a few counts by hand, over the fixture's own array */
	size_t in_range = 0, of_10 = 0, in_rowids = 0;
	for (size_t r = 0; r < NCALLS; r++) {
		in_range += rows[r].c.start_ns >= 1100000 && rows[r].c.start_ns <= 1250000;
		of_10 += rows[r].c.pid == 10;
		in_rowids += rows[r].rowid >= 3000 && rows[r].rowid <= 4200;
	}
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE start_ns BETWEEN 1100000 AND 1250000"), in_range);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE pid = 10"), of_10);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE rowid BETWEEN 3000 AND 4200"), in_rowids);
	/* bound parameters reach the filter as the literals do */
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM cuda_calls WHERE start_ns >= ?1 AND "
					    "start_ns <= ?2 AND pid = ?3", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_double(st, 1, 1099999.5);
	sqlite3_bind_text(st, 2, "1250000", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, 10);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(st, 0),
			 q(db, "SELECT count(*) FROM ref WHERE start_ns BETWEEN 1100000 AND 1250000 AND pid = 10"));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The plan SQLite chose: idxNum of "SCAN cuda_calls VIRTUAL TABLE INDEX n:" */
static int idx_num(sqlite3 *db, const char *where)
{
	char sql[512];
	sqlite3_stmt *st;
	int idx = -1;

	snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN SELECT * FROM cuda_calls WHERE %s", where);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);
		const char *p = d ? strstr(d, "VIRTUAL TABLE INDEX ") : NULL;

		if (p)
			idx = atoi(p + 20);
	}
	sqlite3_finalize(st);
	return idx;
}

/* What reaches the filter: the bits of calls_vtab.c's idxNum (start lower
 * and upper, pid, rowid lower and upper). */
static void bounds_are_pushed_down(void **state)
{
	sqlite3 *db = fixture();

	(void)state;
	assert_int_equal(idx_num(db, "1"), 0);
	assert_int_equal(idx_num(db, "tid = 3"), 0);
	assert_int_equal(idx_num(db, "start_ns > 5"), 1);
	assert_int_equal(idx_num(db, "start_ns <= 5"), 2);
	assert_int_equal(idx_num(db, "start_ns BETWEEN 5 AND 9"), 3);
	assert_int_equal(idx_num(db, "pid = 5"), 4);
	assert_int_equal(idx_num(db, "pid > 5"), 0);
	assert_int_equal(idx_num(db, "rowid >= 5"), 8);
	assert_int_equal(idx_num(db, "rowid < 5"), 16);
	assert_int_equal(idx_num(db, "rowid BETWEEN 5 AND 9 AND pid = 3 AND start_ns > 1 AND start_ns < 9"), 31);
	/* an EQ bounds both sides with its one value (+32 start, +64 rowid) */
	assert_int_equal(idx_num(db, "start_ns = 5"), 1 + 2 + 32);
	assert_int_equal(idx_num(db, "rowid = 5"), 8 + 16 + 64);
	assert_int_equal(idx_num(db, "rowid = 5 AND start_ns = 7 AND pid = 1"), 127);
	assert_int_equal(idx_num(db, "start_ns = 5 AND start_ns < 9"), 1 + 2 + 32);
	assert_int_equal(idx_num(db, "start_ns < 9 AND start_ns = 5"), 1 + 2);
	sqlite3_close(db);
}

/* --- damage, emptiness, version 1 ------------------------------------------------------- */

/* sql fails when stepped, with an error that says needle. */
static void fails_naming(sqlite3 *db, const char *sql, const char *needle)
{
	sqlite3_stmt *st;
	int rc;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc == SQLITE_DONE)
		fail_msg("%s: no error", sql);
	if (!strstr(sqlite3_errmsg(db), needle))
		fail_msg("%s: \"%s\" does not say \"%s\"", sql, sqlite3_errmsg(db), needle);
	sqlite3_finalize(st);
}

static void damaged_block_is_an_error(void **state)
{
	static const char *const damage[] = {
		"x'dc0013'",                  /* truncated */
		"x''",                        /* empty */
		"'not msgpack at all'",       /* text */
		"x'81a17801'",                /* a map */
		"x'dd7fffffff01'",            /* an array claiming 2^31 elements */
	};
	char sql[256];
	sqlite3 *db = fixture();

	(void)state;
	for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
		/* block 4: pid 10, rowids 4096..4395, starts from 1,050,000 */
		snprintf(sql, sizeof sql, "UPDATE call_blocks SET data = %s WHERE id = 4", damage[i]);
		exec(db, sql);
		fails_naming(db, "SELECT count(*) FROM cuda_calls", "call block 4: ");
		fails_naming(db, "SELECT * FROM cuda_calls WHERE pid = 10", "call block 4: ");
		fails_naming(db, "SELECT * FROM cuda_calls WHERE rowid = 4200", "call block 4: ");
		/* bounds that exclude the block never read it (strict ones are
		 * taken as inclusive: rowid < 4096 would still read block 4) */
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE pid = 30"), 500);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE pid IN (20, 30)"), 501);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE rowid <= 4095"), 1025);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE rowid >= 5120"), 502);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE start_ns >= 5000000"), 502);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE rowid = 3000"), 1);
		assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE start_ns = 1000500"), 3);
	}
	/* a call_blocks row whose blob holds values no call can have */
	struct ingero_cuda_call c = tb_call(10, 10, 1, 1, 1);
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(ingero_block_encode(&sb, &c, 1), 0);
	assert_true(((uint8_t *)sb.data)[5] == 10);   /* [fmt, n, tid = 10, ...] */
	((uint8_t *)sb.data)[5] = 0;                   /* tid 0 */
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE call_blocks SET data = ? WHERE id = 4", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, sb.data, (int)sb.size, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	msgpack_sbuffer_destroy(&sb);
	fails_naming(db, "SELECT max(dur_ns) FROM cuda_calls", "call block 4: not an integer column in column tid");
	/* ids whose rowids (id * 1,024 + index) do not exist: negative, or past 2^63 */
	exec(db, "DELETE FROM call_blocks WHERE id = 4");
	exec(db, "UPDATE call_blocks SET id = -2 WHERE id = 2");
	fails_naming(db, "SELECT rowid FROM cuda_calls", "call block -2: id out of range");
	exec(db, "UPDATE call_blocks SET id = 9007199254740992 WHERE id = -2");   /* 2^53 */
	fails_naming(db, "SELECT max(rowid) FROM cuda_calls", "call block 9007199254740992: id out of range");
	exec(db, "UPDATE call_blocks SET id = 9007199254740991 WHERE id = 9007199254740992");
	assert_int_equal(q(db, "SELECT max(rowid) FROM cuda_calls"), INT64_MAX);   /* 1,024 calls: the last rowid there is */
	sqlite3_close(db);
}

static void no_blocks_no_rows(void **state)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(ia_calls_vtab_register(db), SQLITE_OK);
	exec(db, TB_SCHEMA_SQL);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), 0);
	assert_int_equal(q(db, "SELECT min(start_ns) FROM cuda_calls"), -1000);   /* NULL */
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE pid = 1 AND start_ns > 0 AND rowid > 0"), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM cuda_calls ORDER BY start_ns", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(db);
	/* no call_blocks table at all (not a report.db: the extension in any
	 * database) is an error that says so */
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(ia_calls_vtab_register(db), SQLITE_OK);
	fails_naming(db, "SELECT count(*) FROM cuda_calls", "cuda_calls: no such table: main.call_blocks");
	sqlite3_close(db);
}

/* Version 1 stored one row per call in a real table; the file reads as it did. */
static void version_1_real_table_answers(void **state)
{
	char path[64], err[256];
	sqlite3 *db;

	(void)state;
	snprintf(path, sizeof path, "/tmp/ia-vtab-v1-%d.db", (int)getpid());
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec(db, INGERO_SCHEMA_SQL);
	exec(db, "DROP TABLE call_blocks;"
		 "CREATE TABLE cuda_calls(pid INTEGER NOT NULL, tid INTEGER NOT NULL, api INTEGER NOT NULL,"
		 "  start_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, stream INTEGER, bytes INTEGER,"
		 "  dir INTEGER, flags INTEGER, ret INTEGER, stack_id INTEGER, kernel INTEGER,"
		 "  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER);"
		 "CREATE INDEX cuda_calls_by_time ON cuda_calls(start_ns);"
		 "CREATE INDEX cuda_calls_by_tid ON cuda_calls(tid, start_ns);"
		 /* tid 0 and a text column: values no call block can hold */
		 "INSERT INTO cuda_calls(pid, tid, api, start_ns, dur_ns, kernel) VALUES"
		 "  (7, 0, 13, 100, 5, NULL), (7, 8, 21, 200, 6, 'v1'), (9, 9, 3, 300, 7, NULL);"
		 "PRAGMA user_version = 1;");
	sqlite3_close(db);
	db = ia_db_open(path, err, sizeof err);
	if (!db)
		fail_msg("%s", err);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), 3);
	assert_int_equal(q(db, "SELECT max(rowid) FROM cuda_calls"), 3);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE tid = 0"), 1);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls WHERE kernel = 'v1'"), 1);
	assert_int_equal(q(db, "SELECT sum(dur_ns) FROM cuda_calls WHERE start_ns >= 200 AND pid = 7"), 6);
	ia_db_close(db);
	unlink(path);

	/* the same on a connection with both: the real table wins over the module */
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(ia_calls_vtab_register(db), SQLITE_OK);
	exec(db, TB_SCHEMA_SQL);
	struct ingero_cuda_call c = tb_call(1, 1, 1, 1, 1);
	if (tb_insert_block(db, &c, 1, NULL, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), 1);
	exec(db, "CREATE TABLE cuda_calls(pid, tid, start_ns); INSERT INTO cuda_calls VALUES(5, 5, 5), (6, 6, 6)");
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), 2);
	assert_int_equal(q(db, "SELECT sum(pid) FROM cuda_calls"), 11);
	sqlite3_close(db);
}

/* The SQLite extension (build/libingero_sqlite.so) is the same table. */
static void extension_is_the_same_table(void **state)
{
	const char *b = getenv("B") ? getenv("B") : "build";
	char so[512];
	char *e = NULL;
	sqlite3 *db, *ext;

	(void)state;
	snprintf(so, sizeof so, "%s/libingero_sqlite", b);
	db = fixture();
	assert_int_equal(sqlite3_open(":memory:", &ext), SQLITE_OK);
	assert_int_equal(sqlite3_enable_load_extension(ext, 1), SQLITE_OK);
	if (sqlite3_load_extension(ext, so, NULL, &e) != SQLITE_OK)
		fail_msg("%s: %s (run from the repository root after make)", so, e);
	exec(ext, TB_SCHEMA_SQL);
	/* the fixture's blocks, blob for blob */
	sqlite3_stmt *rd, *wr;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id, pid, first_ns, last_ns, calls, data FROM call_blocks",
					    -1, &rd, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(ext, "INSERT INTO call_blocks VALUES(?, ?, ?, ?, ?, ?)", -1, &wr, NULL),
			 SQLITE_OK);
	while (sqlite3_step(rd) == SQLITE_ROW) {
		for (int i = 0; i < 6; i++)
			sqlite3_bind_value(wr, i + 1, sqlite3_column_value(rd, i));
		assert_int_equal(sqlite3_step(wr), SQLITE_DONE);
		sqlite3_reset(wr);
	}
	sqlite3_finalize(rd);
	sqlite3_finalize(wr);
	static const char *const agg =
		"SELECT count(*) || ' ' || sum(start_ns) || ' ' || sum(rowid) || ' ' || count(stack_id) || ' ' || "
		"count(grid_x) || ' ' || sum(ret) FROM cuda_calls WHERE start_ns > 1050000 AND pid = 10";
	sqlite3_stmt *x, *y;
	assert_int_equal(sqlite3_prepare_v2(db, agg, -1, &x, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(ext, agg, -1, &y, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(x), SQLITE_ROW);
	assert_int_equal(sqlite3_step(y), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(x, 0), (const char *)sqlite3_column_text(y, 0));
	sqlite3_finalize(x);
	sqlite3_finalize(y);
	sqlite3_close(ext);
	sqlite3_close(db);
}

/* With a second report ATTACHed, its calls are a table of their own:
 * CREATE VIRTUAL TABLE temp.x USING cuda_calls(other). */
static void attached_report_by_name(void **state)
{
	struct ingero_cuda_call c[3] = { tb_call(7, 7, 13, 10, 1), tb_call(7, 7, 13, 20, 1), tb_call(7, 8, 3, 30, 1) };
	char path[] = "/tmp/ingero-vtab-other.XXXXXX", err[256], sql[128];
	sqlite3 *db = fixture(), *other;
	sqlite3_int64 mine = q(db, "SELECT count(*) FROM cuda_calls");
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
	exec(other, TB_SCHEMA_SQL);
	if (tb_insert_calls(other, c, 3, err, sizeof err))
		fail_msg("%s", err);
	sqlite3_close(other);
	snprintf(sql, sizeof sql, "ATTACH '%s' AS other", path);
	exec(db, sql);
	exec(db, "CREATE VIRTUAL TABLE temp.other_calls USING cuda_calls(other)");
	assert_int_equal(q(db, "SELECT count(*) FROM other_calls"), 3);
	assert_int_equal(q(db, "SELECT count(*) FROM other_calls WHERE pid = 7 AND start_ns >= 20"), 2);
	assert_int_equal(q(db, "SELECT sum(tid) FROM other_calls"), 22);
	assert_int_equal(q(db, "SELECT count(*) FROM cuda_calls"), mine);   /* main's, unchanged */
	exec(db, "CREATE VIRTUAL TABLE temp.quoted USING cuda_calls('other')");
	assert_int_equal(q(db, "SELECT count(*) FROM quoted"), 3);
	exec(db, "CREATE VIRTUAL TABLE temp.nowhere USING cuda_calls(nosuch)");
	fails_naming(db, "SELECT count(*) FROM nowhere", "no such table: nosuch.call_blocks");
	sqlite3_close(db);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_scan_shows_every_call),
		cmocka_unit_test(constraints_give_the_filtered_rows),
		cmocka_unit_test(bounds_are_pushed_down),
		cmocka_unit_test(damaged_block_is_an_error),
		cmocka_unit_test(no_blocks_no_rows),
		cmocka_unit_test(version_1_real_table_answers),
		cmocka_unit_test(extension_is_the_same_table),
		cmocka_unit_test(attached_report_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
