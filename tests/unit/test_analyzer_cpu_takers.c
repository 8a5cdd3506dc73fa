/*
 * test_analyzer_cpu_takers.c — whom a thread waited behind for a CPU
 * (analyzer/measure/competitors.c, ia_cpu_takers), on a hand-built
 * report.db: a preempted interval is its taker's (next_pid) whole; a wait
 * after a wake-up (schema 9) is its holder's for holder_ns and "(other
 * tasks)" for the rest, "(idle)" for an idle CPU; the windows cut both; a
 * row without a holder counts nothing; a file without the column (older
 * schemas) counts only the preemptions.  From holder_tid (schema 10) a
 * holder thread of the waiter's own process, or the tracer's, is named by
 * the thread; another process's thread by its process; the collector (an
 * untraced ingero-… process) as the tracer; the waiter's own process,
 * where no thread is known, as its own process's other threads.  The unnamed rest comes last
 * however large ("others not named"), and is kept when the list is cut.
 * Both ways of reading them: from the rows the scan loaded (next_pid and
 * the holders beside the intervals) and from the file (a thread whose
 * rows were not loaded).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/db.h"
#include "../../analyzer/load/series.h"
#include "../../analyzer/load/trace.h"
#include "../../analyzer/measure/competitors.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void build(void)
{
	snprintf(path, sizeof path, "/tmp/ia-takers-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 2, "fixture");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3'), (200, 100, 'worker')");
	rf_exec(db, "INSERT INTO threads VALUES(100, 100, 'python3'), (200, 200, 'worker'), (101, 100, 'pt_autograd_0'), "
		    "(102, 100, 'ingero-sender'), (201, 200, 'worker_helper')");
	/* the untraced hog is named by the competitors table */
	rf_exec(db, "INSERT INTO competitors(pid, comm, bucket_ns, cpu_ns, preemptions, held_ns) "
		    "VALUES(300, 'hog', 0, 2000, 1, 0), (400, 'ingero-collecto', 0, 300, 0, 300)");
	/* pid, tid, start, end, runnable, preempted, next_pid, holder_pid, holder_ns */
	rf_exec(db, "INSERT INTO off_cpu(pid, tid, start_ns, end_ns, runnable_ns, preempted, next_pid, holder_pid, "
		    "holder_ns, holder_tid) VALUES"
		    "(100, 100, 1000, 3000, 1000, 1, 300, 300, 2000, NULL),"   /* preempted by the hog: 2000 */
		    "(100, 100, 5000, 10000, 6000, 0, 0, 200, 3000, 201),"     /* woken 6000, worker held 3000 of 4000 */
		    "(100, 100, 20000, 21500, 21000, 0, 0, 0, 500, 0),"        /* woken on an idle CPU: 500 */
		    "(100, 100, 30000, 31000, 30500, 0, 0, NULL, NULL, NULL)," /* no holder: nothing */
		    "(100, 100, 40000, 41000, 41000, 0, 0, 300, 0, 300),"      /* no wait: nothing */
		    "(100, 100, 50000, 50700, 50000, 0, 0, 100, 700, 101),"    /* its own autograd thread: 700 */
		    "(100, 100, 60000, 60200, 60000, 0, 0, 100, 200, 102),"    /* the tracer's sender: 200 */
		    "(100, 100, 70000, 70300, 70000, 0, 0, 400, 300, 401),"    /* the collector's thread: 300 */
		    "(200, 200, 1000, 9000, 1000, 1, 100, 100, 8000, NULL)");  /* another thread's: not asked */
	sqlite3_close(db);
}

static uint64_t group(const struct ia_comp_group *g, size_t n, const char *comm)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(g[i].comm, comm))
			return g[i].cpu_ns;
	return UINT64_MAX;
}

static void takers_max(struct ia_trace *t, const uint64_t *w, size_t nw, struct ia_comp_group *g, size_t max,
		       size_t *n, uint64_t *total, uint64_t *untraced)
{
	struct ia_evidence e;
	char err[256];
	memset(&e, 0, sizeof e);
	if (ia_evidence_load(t, &e, err, sizeof err) < 0)
		fail_msg("%s", err);
	if (ia_cpu_takers(t, NULL, &e, 100, w, nw, g, max, n, total, untraced, err, sizeof err) < 0)
		fail_msg("%s", err);
	ia_evidence_free(&e);
}

static void takers(struct ia_trace *t, const uint64_t *w, size_t nw, struct ia_comp_group *g, size_t *n,
		   uint64_t *total, uint64_t *untraced)
{
	takers_max(t, w, nw, g, 8, n, total, untraced);
}

static void holders(int from_file)
{
	build();
	struct ia_trace t;
	rf_load(path, 0, &t);
	uint32_t *by_th = t.off_by_th;   /* without it: read from the file */
	assert_non_null(by_th);
	if (from_file)
		t.off_by_th = NULL;
	assert_true(t.off_holder);
	assert_true(t.off_holder_tid);
	struct ia_comp_group g[8];
	size_t n;
	uint64_t total, untraced;
	const uint64_t all[2] = { 0, 100000 };
	takers(&t, all, 1, g, &n, &total, &untraced);
	assert_int_equal(n, 7);
	assert_string_equal(g[0].comm, "worker");   /* most time first; another process's thread: by its process */
	assert_int_equal(group(g, n, "worker"), 3000);
	assert_int_equal(group(g, n, "hog"), 2000);
	assert_int_equal(group(g, n, "(other tasks)"), 1000);
	assert_int_equal(group(g, n, "(idle)"), 500);
	assert_int_equal(group(g, n, "pt_autograd_0"), 700);   /* its own process's thread, by its name */
	assert_int_equal(group(g, n, "ingero-sender"), 200);   /* the tracer's */
	assert_int_equal(group(g, n, "ingero-collecto"), 300);
	assert_int_equal(group(g, n, "python3"), UINT64_MAX);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(g[i].role == IA_TAKER_OWN_THREAD, !strcmp(g[i].comm, "pt_autograd_0"));
		assert_int_equal(g[i].role == IA_TAKER_TRACER, !strcmp(g[i].comm, "ingero-sender"));
		assert_int_equal(g[i].role == IA_TAKER_TRACER_PROC, !strcmp(g[i].comm, "ingero-collecto"));
	}
	assert_int_equal(total, 7700);
	assert_int_equal(untraced, 2800);   /* the hog, the collector and the idle CPU; not the unnamed rest */
	char text[300];
	ia_competitors_text(text, sizeof text, g, n);
	assert_non_null(strstr(text, "pt_autograd_0 (its own process's thread) 700ns"));
	assert_non_null(strstr(text, "ingero-sender (the tracer's thread) 200ns"));
	assert_non_null(strstr(text, "ingero-collecto (the tracer) 300ns"));
	/* the unnamed rest (1000) after the named ones however small (200) */
	assert_string_equal(g[n - 1].comm, "(other tasks)");
	assert_int_equal(g[n - 1].role, IA_TAKER_UNNAMED);
	assert_int_equal(g[n - 2].cpu_ns, 200);
	size_t tl = strlen(text), want = strlen(", others not named 1us");
	assert_true(tl > want && !strcmp(text + tl - want, ", others not named 1us"));
	/* a list cut to 3: the two named with the most, then the unnamed rest */
	takers_max(&t, all, 1, g, 3, &n, &total, &untraced);
	assert_int_equal(n, 3);
	assert_string_equal(g[0].comm, "worker");
	assert_string_equal(g[1].comm, "hog");
	assert_string_equal(g[2].comm, "(other tasks)");
	assert_int_equal(total, 7700);

	/* a schema 9 file (no holder_tid): those waits are their process's */
	t.off_holder_tid = 0;
	takers(&t, all, 1, g, &n, &total, &untraced);
	assert_int_equal(group(g, n, "python3"), 900);
	assert_int_equal(group(g, n, "pt_autograd_0"), UINT64_MAX);
	/* the waiter's own process, its thread not known: not "main process" */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(g[i].role == IA_TAKER_OWN_PROC, !strcmp(g[i].comm, "python3"));
	ia_competitors_text(text, sizeof text, g, n);
	assert_non_null(strstr(text, "python3 (its own process's other threads) 900ns"));
	t.off_holder_tid = 1;

	/* a window to 8000: the hog's 2000; of the woken wait, the rest before
	 * the holder's tail (6000..7000) and that tail's first 1000 */
	const uint64_t early[2] = { 0, 8000 };
	takers(&t, early, 1, g, &n, &total, &untraced);
	assert_int_equal(group(g, n, "hog"), 2000);
	assert_int_equal(group(g, n, "(other tasks)"), 1000);
	assert_int_equal(group(g, n, "worker"), 1000);
	assert_int_equal(group(g, n, "(idle)"), UINT64_MAX);
	assert_int_equal(total, 4000);

	/* without the column (a schema 8 file): the preemptions alone */
	t.off_holder = 0;
	t.off_holder_tid = 0;
	takers(&t, all, 1, g, &n, &total, &untraced);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].comm, "hog");
	assert_int_equal(total, 2000);
	t.off_by_th = by_th;
	rf_unload(&t, path);
}

static void test_holders_loaded(void **state)
{
	(void)state;
	holders(0);
}

static void test_holders_from_file(void **state)
{
	(void)state;
	holders(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holders_loaded),
		cmocka_unit_test(test_holders_from_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
