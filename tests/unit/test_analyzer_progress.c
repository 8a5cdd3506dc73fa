/*
 * test_analyzer_progress.c — the terminal progress line: what it draws,
 * that it erases itself, that it stays silent off a terminal, and that
 * SQLite's progress handler drives it during a long statement.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/base/progress.h"

static char *buf;
static size_t len;
static FILE *mem;

static int setup(void **state)
{
	(void)state;
	mem = open_memstream(&buf, &len);
	ia_progress_output(mem, 1);
	return mem ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	ia_progress_end();
	ia_progress_output(NULL, 0);
	fclose(mem);
	free(buf);
	buf = NULL;
	return 0;
}

static void test_counts(void **state)
{
	(void)state;
	ia_progress_begin("reading cuda_calls", 10000000);
	ia_progress_update(4500000);
	fflush(mem);
	assert_non_null(strstr(buf, "\rreading cuda_calls  45%  4.5M/10M"));
	assert_non_null(strstr(buf, "\033[K"));
	ia_progress_update(20000000);   /* more than the total: capped */
	fflush(mem);
	assert_non_null(strstr(buf, "100%  10M/10M"));
	ia_progress_end();
	fflush(mem);
	assert_int_equal(strcmp(buf + len - 4, "\r\033[K"), 0);   /* the line is erased */
}

static void test_phase_spinner(void **state)
{
	(void)state;
	ia_progress_begin("loading", 0);
	ia_progress_phase("gaps");
	ia_progress_update(1);
	fflush(mem);
	assert_non_null(strstr(buf, "\rloading |"));
	assert_non_null(strstr(buf, "\rgaps /"));   /* same line, renamed, spinner turning */
	assert_non_null(strstr(buf, "\rgaps -"));
}

static void test_sqlite_ticks(void **state)
{
	(void)state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	ia_progress_begin("scanning", 0);
	ia_progress_attach(db);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db,
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) "
		"SELECT sum(i) FROM n", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_true(sqlite3_column_int64(st, 0) == 300000LL * 300001 / 2);   /* never interrupted */
	sqlite3_finalize(st);
	fflush(mem);
	assert_non_null(strstr(buf, "\rscanning "));
	ia_progress_end();
	sqlite3_close(db);
}

static void *adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5000; i++)
		ia_progress_add(1);
	return NULL;
}

static void test_threads_add(void **state)
{
	(void)state;
	pthread_t a, b;
	ia_progress_begin("scan", 10000);
	assert_int_equal(pthread_create(&a, NULL, adder, NULL), 0);
	assert_int_equal(pthread_create(&b, NULL, adder, NULL), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	ia_progress_update(10000);   /* the count the threads reached, drawn once more */
	fflush(mem);
	assert_non_null(strstr(buf, "\rscan 100%  10k/10k"));
}

static void test_silent_when_off(void **state)
{
	(void)state;
	ia_progress_output(NULL, 0);   /* back to the terminal check: stderr is not one under the test runner */
	setenv("INGERO_PROGRESS", "0", 1);
	ia_progress_begin("x", 10);
	ia_progress_update(5);
	ia_progress_end();
	fflush(mem);
	assert_int_equal(len, 0);
	unsetenv("INGERO_PROGRESS");
}

static void test_nothing_drawn_nothing_erased(void **state)
{
	(void)state;
	ia_progress_output(mem, 0);   /* real timing: nothing in the first half second */
	ia_progress_begin("quick", 100);
	for (int i = 0; i < 100; i++)
		ia_progress_update((uint64_t)i);
	ia_progress_end();
	fflush(mem);
	assert_int_equal(len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phase_spinner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sqlite_ticks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_add, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_when_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_drawn_nothing_erased, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
