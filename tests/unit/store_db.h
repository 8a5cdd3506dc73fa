/*
 * store_db.h — the collector store's unit tests' file and its one-value
 * query: a report.db under /tmp named by the test (STORE_DB_NAME, defined
 * before including) and its pid, removed with its -wal and -shm after each
 * test; q(SQL) the first column of the first row (-1 no row, -2 NULL).
 */
#ifndef STORE_DB_H
#define STORE_DB_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static char path[256];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof path, "/tmp/ingero-%s-test-%d.db", STORE_DB_NAME, getpid());
	return 0;
}

static int teardown(void **state)
{
	char side[300];

	(void)state;
	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
	return 0;
}

static int64_t q(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

#endif
