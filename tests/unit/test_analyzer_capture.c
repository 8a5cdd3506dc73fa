/*
 * test_analyzer_capture.c — capture windows read from the capture table:
 * per process a start opens a window and a stop closes it, repeats change
 * nothing, a window still open at the end lasts to the trace's end, and a
 * file without the table (before schema 4) has none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/capture.h"

#include <sqlite3.h>

static sqlite3 *db_with(const char *rows)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE capture(pid INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
				      " recording INTEGER NOT NULL);", NULL, NULL, NULL), SQLITE_OK);
	if (rows)
		assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

static void windows_paired_per_process(void **state)
{
	(void)state;
	/* pid 7: [100, 200) and [300, 450) with a repeated start and stop;
	 * pid 8: [150, 250) */
	sqlite3 *db = db_with("INSERT INTO capture VALUES (7,100,1),(7,120,1),(7,200,0),(7,210,0),"
			      "(7,300,1),(7,450,0),(8,150,1),(8,250,0);");
	struct ia_capture c;
	char err[128];
	assert_int_equal(ia_capture_load(db, 1000, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.first, 100);
	assert_int_equal(c.last, 450);
	assert_int_equal(c.recorded_ns, 100 + 150 + 100);
	assert_false(c.open);
	assert_false(c.applied);
	/* no process recorded in [250, 300): left out of the analysis */
	assert_int_equal(c.npaused, 1);
	assert_int_equal(c.paused[0], 250);
	assert_int_equal(c.paused[1], 300);
	assert_int_equal(c.paused_ns, 50);
	assert_int_equal(ia_capture_paused_in(&c, 0, 1000), 50);
	assert_int_equal(ia_capture_paused_in(&c, 260, 280), 20);
	assert_int_equal(ia_capture_paused_in(&c, 100, 250), 0);
	ia_capture_free(&c);
	sqlite3_close(db);
}

static void open_window_lasts_to_the_end(void **state)
{
	(void)state;
	sqlite3 *db = db_with("INSERT INTO capture VALUES (7,100,1),(7,200,0),(7,500,1);");
	struct ia_capture c;
	char err[128];
	assert_int_equal(ia_capture_load(db, 900, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 2);
	assert_true(c.open);
	assert_int_equal(c.last, 900);
	assert_int_equal(c.recorded_ns, 100 + 400);
	assert_int_equal(c.npaused, 1);
	assert_int_equal(c.paused_ns, 300);
	ia_capture_free(&c);
	sqlite3_close(db);
}

static void none_without_table_or_start(void **state)
{
	(void)state;
	sqlite3 *db = NULL;
	struct ia_capture c;
	char err[128];
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(ia_capture_load(db, 900, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 0);
	sqlite3_close(db);
	/* a stop with no start (the process never asked to record) */
	db = db_with("INSERT INTO capture VALUES (7,100,0);");
	assert_int_equal(ia_capture_load(db, 900, &c, err, sizeof err), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(c.recorded_ns, 0);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(windows_paired_per_process),
		cmocka_unit_test(open_window_lasts_to_the_end),
		cmocka_unit_test(none_without_table_or_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
