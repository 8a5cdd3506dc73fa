/*
 * test_analyzer_gpu_time.c — measured GPU time read from a hand-built
 * report.db (analyzer/measure/gpu_time.c): launches on one stream, each with a mark
 * right behind it that waited 100 us for it.  With GPU timestamps the marks
 * time each launch and make the stream certainly busy while they waited;
 * marks the library could not timestamp (flags 4, COARSE: done = when it saw
 * them) are bounds only — no piece timed, nothing certainly busy — yet the
 * stream still counts as marked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/db.h"
#include "../../analyzer/measure/gpu_time.h"
#include "../../analyzer/load/trace.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define US 1000ull
#define STREAM 0x7f0000001000ull
#define LAUNCHES 5

static char path[64];

/* LAUNCHES launches of one kernel, 1 ms apart, each 5 us, a mark recorded
 * 1 us after each returns and done 100 us later, with mark flags `flags`. */
static void build(unsigned flags)
{
	snprintf(path, sizeof path, "/tmp/ia-gpu-time-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 4, "python3 train.py");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3')");
	rf_exec(db, "INSERT INTO threads VALUES(100, 100, 'python3')");
	struct ingero_cuda_call c[LAUNCHES];
	for (int i = 0; i < LAUNCHES; i++) {
		uint64_t t = (uint64_t)(i + 1) * 1000 * US;
		c[i] = tb_call(100, 100, INGERO_API_CU_LAUNCH_KERNEL, t, 5 * US);
		c[i].stream = STREAM;
		c[i].kernel = 0x4000;
		c[i].grid[0] = c[i].block[0] = 1;
		char sql[200];
		snprintf(sql, sizeof sql, "INSERT INTO gpu_marks VALUES(100, %llu, %llu, %llu, %u)",
			 (unsigned long long)STREAM, (unsigned long long)(t + 6 * US),
			 (unsigned long long)(t + 106 * US), flags);
		rf_exec(db, sql);
	}
	char err[256];
	if (tb_insert_calls(db, c, LAUNCHES, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
}

static void measure(struct ia_trace *t, struct ia_gpu_time *g)
{
	char err[256];
	rf_load(path, 0, t);
	if (ia_gpu_time_compute(t, 0, (LAUNCHES + 1) * 1000 * US, NULL, g, err, sizeof err) < 0)
		fail_msg("%s", err);
}

static void done(struct ia_trace *t, struct ia_gpu_time *g)
{
	ia_gpu_time_free(g);
	rf_unload(t, path);
}

static void timestamped_marks(void **state)
{
	(void)state;
	build(0);
	struct ia_trace t;
	struct ia_gpu_time g;
	measure(&t, &g);
	assert_true(g.measured);
	assert_int_equal(g.nmarks, LAUNCHES);
	assert_int_equal(g.ntimed, LAUNCHES);   /* each from its call's end to its mark: 101 us */
	/* busy from each launch's end until its mark was done */
	assert_int_equal(g.busy_ns, LAUNCHES * 101 * US);
	done(&t, &g);
}

static void coarse_marks_bound_only(void **state)
{
	(void)state;
	build(INGERO_GPU_MARK_COARSE);
	struct ia_trace t;
	struct ia_gpu_time g;
	measure(&t, &g);
	assert_true(g.measured);
	assert_int_equal(g.nmarks, LAUNCHES);
	assert_int_equal(g.nunmarked, 0);
	assert_int_equal(g.ntimed, 0);
	assert_int_equal(g.busy_ns, 0);
	/* idle for certain only before the first launch and after each mark */
	assert_true(g.idle_low_ns < (LAUNCHES + 1) * 1000 * US);
	done(&t, &g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timestamped_marks),
		cmocka_unit_test(coarse_marks_bound_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
