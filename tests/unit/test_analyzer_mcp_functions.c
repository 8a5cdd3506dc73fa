/*
 * test_analyzer_mcp_functions.c — run_sql against every SQL function the
 * linked SQLite offers (issue 14, item 1).
 *
 * The names come from run_sql itself (PRAGMA function_list), so a newer
 * SQLite's additions are covered without editing this file.  Each is
 * called with its arity (0 to 3 arguments when variadic) in the plain,
 * aggregate and window forms, with NULL, integer and JSON-text arguments.
 * Every call must come back (no crash: under the sanitizers too), either
 * as rows or as an SQL error; a function off the allow-list must be
 * refused by name.  The dangerous ones are checked by name as well: they
 * must be in the list this SQLite gives (so the loop met them) and refused.
 * Last, the crash the issue found: a tokenizer registered from a pointer
 * and an FTS3 table in the trace file that would call through it.
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

#include "../../analyzer/load/db.h"
#include "../../analyzer/mcp/mcp_internal.h"
#include "call_blocks.h"

static char dbpath[64];

static int setup(void **st)
{
	(void)st;
	strcpy(dbpath, "/tmp/ingero-mcp-fn.XXXXXX");
	int fd = mkstemp(dbpath);
	assert_true(fd >= 0);
	close(fd);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	char *e = NULL;
	/* an FTS3 table in the trace file: the target of a forged tokenizer */
	int rc = sqlite3_exec(db, TB_SCHEMA_SQL
		"INSERT INTO session VALUES('start_mono_ns','1000000000');"
		"CREATE VIRTUAL TABLE ft USING fts3(x);"
		"INSERT INTO ft VALUES('hello world');", NULL, NULL, &e);
	if (rc != SQLITE_OK)
		fail_msg("%s", e);
	char err[256];
	if (tb_insert_mcp_calls(db, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	unlink(dbpath);
	return 0;
}

static struct mcp_sql *open_sql(void)
{
	char err[256];
	struct mcp_sql *q = mcp_sql_open(dbpath, 0, err, sizeof err);
	if (!q)
		fail_msg("%s", err);
	return q;
}

/* Runs sql; returns 1 when it gave rows, 0 on an SQL error, and fails the
 * test when it was refused although `allowed`, or not refused although not. */
static int run_one(struct mcp_sql *q, const char *sql, const char *fn, int allowed)
{
	char err[512] = "";
	cJSON *r = mcp_sql_run(q, sql, 10, 2000, err, sizeof err);
	if (r) {
		cJSON_Delete(r);
		if (!allowed)
			fail_msg("%s ran, but %s() is not on the allow-list", sql, fn);
		return 1;
	}
	int refused = strncmp(err, "refused: function ", 18) == 0;
	if (allowed && refused)
		fail_msg("%s: refused although %s() is allowed: %s", sql, fn, err);
	if (!allowed) {
		char want[160];
		snprintf(want, sizeof want, "function %s() is not allowed", fn);
		if (!refused || !strstr(err, want))
			fail_msg("%s: expected a refusal naming %s(), got: %s", sql, fn, err);
	}
	return 0;
}

static void every_function_is_called(void **st)
{
	(void)st;
	struct mcp_sql *q = open_sql();
	char err[512];
	cJSON *list = mcp_sql_run(q, "PRAGMA function_list", 5000, 2000, err, sizeof err);
	if (!list)
		fail_msg("PRAGMA function_list: %s", err);
	const cJSON *cols = cJSON_GetObjectItem(list, "columns");
	int c_name = -1, c_type = -1, c_narg = -1;
	for (int i = 0; i < cJSON_GetArraySize(cols); i++) {
		const char *n = cJSON_GetArrayItem(cols, i)->valuestring;
		if (!strcmp(n, "name")) c_name = i;
		if (!strcmp(n, "type")) c_type = i;
		if (!strcmp(n, "narg")) c_narg = i;
	}
	assert_true(c_name >= 0 && c_type >= 0 && c_narg >= 0);
	static const char *const args[] = { "NULL", "1", "'{\"a\":[1,2]}'" };
	int seen_tokenizer = 0, seen_load = 0, ran = 0, refused = 0, calls = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItem(list, "rows")) {
		const char *name = cJSON_GetArrayItem(row, c_name)->valuestring;
		const char *type = cJSON_GetArrayItem(row, c_type)->valuestring;
		int narg = cJSON_GetArrayItem(row, c_narg)->valueint;
		int allowed = mcp_sql_function_allowed(name);
		seen_tokenizer |= !strcmp(name, "fts3_tokenizer");
		seen_load |= !strcmp(name, "load_extension");
		refused += !allowed;
		int lo = narg < 0 ? 0 : narg, hi = narg < 0 ? 3 : narg;
		for (int n = lo; n <= hi; n++)
			for (size_t a = 0; a < sizeof args / sizeof *args; a++) {
				char call[512];
				int w = snprintf(call, sizeof call, "\"%s\"(", name);
				for (int k = 0; k < n; k++)
					w += snprintf(call + w, sizeof call - (size_t)w, "%s%s", k ? "," : "", args[a]);
				snprintf(call + w, sizeof call - (size_t)w, ")");
				char sql[700];
				snprintf(sql, sizeof sql, "SELECT %s", call);
				ran += run_one(q, sql, name, allowed);
				snprintf(sql, sizeof sql, "SELECT %s FROM (SELECT 1 UNION ALL SELECT 2)", call);
				ran += run_one(q, sql, name, allowed);
				if (!strcmp(type, "w")) {
					snprintf(sql, sizeof sql, "SELECT %s OVER (ORDER BY 1) FROM (SELECT 1)", call);
					ran += run_one(q, sql, name, allowed);
				}
				calls += 2;
			}
	}
	cJSON_Delete(list);
	/* this SQLite (Debian's) has both; a build without FTS3 would not */
	assert_true(seen_tokenizer);
	assert_true(seen_load);
	assert_true(refused >= 2);
	assert_true(calls > 300);
	assert_true(ran > 100);   /* the pure ones really ran */
	/* the connection still works */
	cJSON *r = mcp_sql_run(q, "SELECT count(*) FROM cuda_calls", 10, 2000, err, sizeof err);
	assert_non_null(r);
	cJSON_Delete(r);
	mcp_sql_close(q);
}

static void dangerous_ones_are_refused(void **st)
{
	(void)st;
	struct mcp_sql *q = open_sql();
	static const struct { const char *sql, *why; } cases[] = {
		{ "SELECT fts3_tokenizer('simple')", "function fts3_tokenizer() is not allowed" },
		{ "SELECT fts3_tokenizer('simple', x'4141414141414141')", "function fts3_tokenizer() is not allowed" },
		{ "SELECT load_extension('/tmp/x.so')", "function load_extension() is not allowed" },
		{ "SELECT snippet(ft) FROM ft WHERE ft MATCH 'hello'", "not allowed" },
		{ "SELECT x FROM ft", "virtual tables other than cuda_calls" },
		{ "SELECT * FROM dbstat", "virtual tables other than cuda_calls" },
		{ "SELECT * FROM sqlite_stmt", "virtual tables other than cuda_calls" },
		{ "SELECT * FROM json_each('[1]')", "virtual tables other than cuda_calls" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char err[512] = "";
		cJSON *r = mcp_sql_run(q, cases[i].sql, 10, 2000, err, sizeof err);
		if (r)
			fail_msg("%s: ran", cases[i].sql);
		if (strncmp(err, "refused: ", 9) || !strstr(err, cases[i].why))
			fail_msg("%s: %s", cases[i].sql, err);
	}
	/* functions the SQLite shell adds, and the page-level table: absent or refused, never run */
	static const char *const absent[] = {
		"SELECT readfile('/etc/passwd')", "SELECT writefile('/tmp/ingero-x', 'y')", "SELECT edit('x')",
		"SELECT * FROM sqlite_dbpage", "SELECT sqlite_log(1, 'x')",
	};
	for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
		char err[512] = "";
		cJSON *r = mcp_sql_run(q, absent[i], 10, 2000, err, sizeof err);
		if (r)
			fail_msg("%s: ran", absent[i]);
		assert_true(err[0]);
	}
	assert_int_equal(access("/tmp/ingero-x", F_OK), -1);
	mcp_sql_close(q);
}

/* Every connection the analyzer opens (db.c), with no authorizer at all:
 * the two-argument form cannot register a pointer
 * (SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER 0), so the FTS3 table keeps its
 * real tokenizer, and extensions cannot be loaded. */
static void connection_refuses_tokenizer_pointers(void **st)
{
	(void)st;
	char err[256];
	sqlite3 *db = ia_db_reopen(dbpath, err, sizeof err);
	if (!db)
		fail_msg("%s", err);
	int on = -1;
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, -1, &on);
	assert_int_equal(on, 0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &on);
	assert_int_equal(on, 0);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &on);
	assert_int_equal(on, 1);
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT fts3_tokenizer('simple', x'4141414141414141')", -1, &s, NULL),
			 SQLITE_OK);
	assert_int_not_equal(sqlite3_step(s), SQLITE_ROW);
	assert_non_null(strstr(sqlite3_errmsg(db), "fts3tokenize disabled"));
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM ft WHERE ft MATCH 'hello'", -1, &s, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 1);
	sqlite3_finalize(s);
	ia_db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_function_is_called),
		cmocka_unit_test(dangerous_ones_are_refused),
		cmocka_unit_test(connection_refuses_tokenizer_pointers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
