/*
 * call_blocks.h — CUDA calls in and out of a test report.db in the
 * version-2 layout: call_blocks rows (include/ingero/call_block.h).
 *
 * Fixtures used to INSERT INTO cuda_calls; that name is now a virtual
 * table (analyzer/load/calls_vtab.c), so they write blocks here the way the
 * collector does (runs of one pid, at most INGERO_BLOCK_MAX_CALLS a block,
 * first_ns/last_ns the smallest and largest start, calls the count), and
 * tests that check what the collector wrote read them back here without
 * the analyzer.  Header-only, functions static inline: a unit test links
 * only its component and common/ (GNUmakefile), and the fuzz targets that
 * build a database include it too.  Functions return 0, or -1 with a
 * reason in err.
 */
#ifndef INGERO_TEST_CALL_BLOCKS_H
#define INGERO_TEST_CALL_BLOCKS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <sqlite3.h>

#include <ingero/call_block.h>
#include <ingero/schema.h>

#include "../helpers/frame_rows.h"

#define TB_XSTR(x) #x
#define TB_STR(x) TB_XSTR(x)
/* A report.db as the collector creates it: the schema, then its version;
 * and, on this connection only, frames written as rows (frame_rows.h). */
#define TB_SCHEMA_SQL INGERO_SCHEMA_SQL "PRAGMA user_version=" TB_STR(INGERO_SCHEMA_VERSION) ";\n" \
	TEST_FRAME_ROWS_SQL

/* A call with the fields every fixture sets; the rest zero. */
static inline struct ingero_cuda_call tb_call(uint32_t pid, uint32_t tid, uint16_t api,
					      uint64_t start_ns, uint64_t dur_ns)
{
	struct ingero_cuda_call c;

	memset(&c, 0, sizeof c);
	c.pid = pid;
	c.tid = tid;
	c.api = api;
	c.start_ns = start_ns;
	c.dur_ns = dur_ns;
	return c;
}

/* c[0..n) as one call_blocks row, all given c[0]'s pid; *id gets the row's
 * id when id is not NULL. */
static inline int tb_insert_block(sqlite3 *db, const struct ingero_cuda_call *c, size_t n,
				  sqlite3_int64 *id, char *err, size_t errlen)
{
	msgpack_sbuffer sb;
	sqlite3_stmt *st = NULL;
	int64_t lo, hi;
	int rc = -1;

	msgpack_sbuffer_init(&sb);
	if (ingero_block_encode(&sb, c, n)) {
		snprintf(err, errlen, "cannot encode a block of %zu calls", n);
		goto out;
	}
	ingero_block_span(c, n, &lo, &hi);
	if (sqlite3_prepare_v2(db, "INSERT INTO call_blocks(pid, first_ns, last_ns, calls, data) "
			       "VALUES(?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		goto sql_err;
	sqlite3_bind_int64(st, 1, c[0].pid);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)n);
	sqlite3_bind_blob(st, 5, sb.data, (int)sb.size, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto sql_err;
	if (id)
		*id = sqlite3_last_insert_rowid(db);
	rc = 0;
	goto out;
sql_err:
	snprintf(err, errlen, "inserting a call block: %s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* c[0..n) in order, as the collector stores them: each run of one pid cut
 * into blocks of at most INGERO_BLOCK_MAX_CALLS. */
static inline int tb_insert_calls(sqlite3 *db, const struct ingero_cuda_call *c, size_t n,
				  char *err, size_t errlen)
{
	for (size_t i = 0; i < n;) {
		size_t k = 1;

		while (i + k < n && k < INGERO_BLOCK_MAX_CALLS && c[i + k].pid == c[i].pid)
			k++;
		if (tb_insert_block(db, &c[i], k, NULL, err, errlen))
			return -1;
		i += k;
	}
	return 0;
}

/* Every call of every block, blocks in id order, into a malloc'd *out of
 * *n calls.  A row whose pid, first_ns, last_ns or calls disagree with its
 * blob is an error too: those columns are what queries select blocks by. */
static inline int tb_read_calls(sqlite3 *db, struct ingero_cuda_call **out, size_t *n,
				char *err, size_t errlen)
{
	struct ingero_cuda_call *all = NULL;
	size_t cap = 0, len = 0;
	sqlite3_stmt *st = NULL;
	int s;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, pid, first_ns, last_ns, calls, data FROM call_blocks "
			       "ORDER BY id", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "reading call_blocks: %s", sqlite3_errmsg(db));
		return -1;
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const void *data = sqlite3_column_blob(st, 5);
		size_t bytes = (size_t)sqlite3_column_bytes(st, 5), k;
		int64_t lo, hi;

		if (len + INGERO_BLOCK_MAX_CALLS > cap) {
			struct ingero_cuda_call *p;

			cap = cap ? cap * 2 : 4 * INGERO_BLOCK_MAX_CALLS;
			if (!(p = realloc(all, cap * sizeof *all))) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			all = p;
		}
		if (ingero_block_decode(data, bytes, (uint32_t)sqlite3_column_int64(st, 1), all + len, &k,
					err, errlen))
			goto fail;
		ingero_block_span(all + len, k, &lo, &hi);
		if (sqlite3_column_int64(st, 2) != lo || sqlite3_column_int64(st, 3) != hi ||
		    sqlite3_column_int64(st, 4) != (sqlite3_int64)k) {
			snprintf(err, errlen, "call_blocks row %lld: first_ns/last_ns/calls %lld/%lld/%lld, "
				 "its calls say %lld/%lld/%zu", (long long)id,
				 (long long)sqlite3_column_int64(st, 2), (long long)sqlite3_column_int64(st, 3),
				 (long long)sqlite3_column_int64(st, 4), (long long)lo, (long long)hi, k);
			goto fail;
		}
		len += k;
	}
	if (s != SQLITE_DONE) {
		snprintf(err, errlen, "reading call_blocks: %s", sqlite3_errmsg(db));
		goto fail;
	}
	sqlite3_finalize(st);
	*out = all;
	*n = len;
	return 0;
fail:
	sqlite3_finalize(st);
	free(all);
	return -1;
}

/* The MCP fixture's calls (test_analyzer_mcp.c, fuzz_analyzer_mcp.c): pid 10,
 * two syncs with stack 7, then a pinned host-to-device copy of 1 MiB. */
static inline int tb_insert_mcp_calls(sqlite3 *db, char *err, size_t errlen)
{
	struct ingero_cuda_call calls[3] = {
		tb_call(10, 10, 13, 1100000000, 5000), tb_call(10, 10, 13, 1200000000, 900000),
		tb_call(10, 10, 3, 1300000000, 20000),
	};
	calls[0].stack_id = calls[1].stack_id = 7;
	calls[2].bytes = 1048576;
	calls[2].dir = 1;
	calls[2].flags = 1;
	return tb_insert_calls(db, calls, 3, err, errlen);
}

#endif
