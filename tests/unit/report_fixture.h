/*
 * report_fixture.h — a report.db built by hand for an analyzer unit test:
 * the collector's schema and a session, then the test's own rows (its calls
 * through call_blocks.h); and the trace loaded back as the analyzer reads
 * it, and unloaded.  Header-only, for cmocka tests (include after cmocka.h); a failure
 * fails the test with the reason.
 */
#ifndef INGERO_TEST_REPORT_FIXTURE_H
#define INGERO_TEST_REPORT_FIXTURE_H

#include <unistd.h>

#include "../../analyzer/load/db.h"
#include "../../analyzer/load/trace.h"
#include "call_blocks.h"

static inline void rf_exec(sqlite3 *db, const char *sql)
{
	char *e = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK)
		fail_msg("%s: %s", sql, e);
}

/* A new report at path (one left there removed): the schema and a session
 * of `cpus` CPUs that ran `command`, from CLOCK_MONOTONIC 0. */
static inline sqlite3 *rf_create(const char *path, int cpus, const char *command)
{
	unlink(path);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	rf_exec(db, TB_SCHEMA_SQL);
	char sql[512];
	snprintf(sql, sizeof sql, "INSERT INTO session VALUES('cpus','%d'),('start_mono_ns','0'),('command','%s')",
		 cpus, command);
	rf_exec(db, sql);
	return db;
}

/* The report at path opened and its trace loaded (every table), for pid
 * and its descendants (0: every process); t->db is the open database. */
static inline void rf_load(const char *path, int pid, struct ia_trace *t)
{
	char err[256];
	sqlite3 *db = ia_db_open(path, err, sizeof err);
	if (!db)
		fail_msg("%s", err);
	struct ia_filter f = { 0 };
	f.pid = pid;
	if (ia_trace_load(t, db, &f, IA_LOAD_ALL, err, sizeof err) < 0)
		fail_msg("%s", err);
}

/* rf_load undone: the trace freed, its database closed, and the report at
 * path removed (NULL: kept, for the next load). */
static inline void rf_unload(struct ia_trace *t, const char *path)
{
	sqlite3 *db = t->db;
	ia_trace_free(t);
	ia_db_close(db);
	if (path)
		unlink(path);
}

#endif
