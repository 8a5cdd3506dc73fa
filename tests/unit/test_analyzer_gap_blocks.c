/*
 * test_analyzer_gap_blocks.c — where the main thread blocked in the gaps
 * (analyzer/measure/gap_blocks.c), on a hand-built trace and an in-memory file: a
 * stack weighs its block's blocked time inside its gap over the chance it
 * had, so one rarely drawn short block can outweigh a certain long one;
 * stacks of blocks begun outside the gaps, of blocks whose interval is lost
 * and of preemptions count for nothing; the line is named only from three
 * stacks on, and never "(no Python frame)".  A DataLoader worker's blocks
 * count over every gap they span, and only those under the fetch (or in
 * code of the user's own outside torch's worker loop) are loading; the
 * loading time is the measured blocked time times their share.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/gaps.h"
#include "../../analyzer/measure/per_process.h"
#include "../../analyzer/load/stacks.h"
#include "../../analyzer/load/trace.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAIN_TID 100
#define A 11   /* stack ids: a sleep at train.py:10 */
#define B 12   /* a queue.get at train.py:20, inside queue.py */
#define N 13   /* no Python frame */

static struct ia_thread threads[1];
static struct ia_off offs[10];
static uint32_t off_by_th[10];   /* (the worker's four at 5-8, its other thread's at 9) */
static struct ia_gap gaps[2];

static sqlite3 *db_with(const char *rows)
{
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	const char *schema =
		"CREATE TABLE stack_frames(stack_id INTEGER, depth INTEGER, kind TEXT, ip INTEGER, symbol TEXT,"
		" module TEXT, offset INTEGER, file TEXT, line INTEGER);"
		"CREATE TABLE off_cpu_stacks(pid INTEGER, tid INTEGER, start_ns INTEGER, stack_id INTEGER, chance REAL);"
		"INSERT INTO stack_frames VALUES(11, 0, 'python', 0, 'serve', NULL, 0, '/home/u/train.py', 10);"
		"INSERT INTO stack_frames VALUES(12, 0, 'python', 0, 'Queue.get', NULL, 0, '/usr/lib/python3.12/queue.py', 171);"
		"INSERT INTO stack_frames VALUES(12, 1, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 20);"
		"INSERT INTO stack_frames VALUES(13, 0, 'native', 1, 'poll', '/usr/lib/libc.so.6', 4, NULL, -1);";
	assert_int_equal(sqlite3_exec(db, schema, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

/* The main thread blocked [1000,1100) and [1200,1210) in the first gap
 * [1000,1500), [2000,2050) in the second [2000,2600) — 20 of it waiting
 * for a CPU — preempted at 2100, and blocked at 900, before the gaps. */
static void build(struct ia_trace *t, struct ia_per_process *pp, struct ia_gaps *g, sqlite3 *db)
{
	memset(t, 0, sizeof *t);
	memset(pp, 0, sizeof *pp);
	memset(g, 0, sizeof *g);
	const struct ia_off o[] = {
		{ .start = 900, .end = 950 },
		{ .start = 1000, .end = 1100 },
		{ .start = 1200, .end = 1210 },
		{ .start = 2000, .end = 2050, .runq = 20 },
		{ .start = 2100, .end = 2150, .runq = 50, .th = IA_OFF_PREEMPTED },
	};
	for (uint32_t i = 0; i < 5; i++) {
		offs[i] = o[i];
		off_by_th[i] = i;
	}
	threads[0] = (struct ia_thread){ .tid = MAIN_TID, .off_first = 0, .off_n = 5 };
	t->threads = threads;
	t->nthreads = 1;
	t->offs = offs;
	t->noffs = 5;
	t->off_by_th = off_by_th;
	t->db = db;
	pp->main_thread = 0;
	gaps[0] = (struct ia_gap){ .start = 1000, .end = 1500 };
	gaps[1] = (struct ia_gap){ .start = 2000, .end = 2600 };
	g->g = gaps;
	g->n = 2;
}

static void compute(struct ia_trace *t, struct ia_per_process *pp, struct ia_gaps *g, struct ia_stack_names **names)
{
	char err[256] = "";
	*names = ia_stack_names_new(t->db);
	assert_non_null(*names);
	assert_int_equal(ia_gap_blocks_compute(t, pp, *names, g, err, sizeof err), 0);
}

static void done(struct ia_trace *t, struct ia_gaps *g, struct ia_stack_names *names)
{
	ia_stack_names_free(names);
	ia_gap_blocks_free(&g->main_blocks);
	ia_gap_blocks_free(&g->worker_blocks);
	sqlite3_close(t->db);
}

static void weighed_by_time_over_chance(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	struct ia_stack_names *names;
	/* A: the 100 of [1000,1100), certain; B: the 10 of [1200,1210) drawn
	 * with a chance of 1/50 (500), and the 30 blocked of [2000,2050) with
	 * 1/2 (60); not counted: the block at 900 (before the gaps), the
	 * preemption at 2100, a stack of a block the trace lost (1300) */
	build(&t, &pp, &g, db_with(
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 900, 11, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 1000, 11, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 1200, 12, 0.02);"
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 1300, 12, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 2000, 12, 0.5);"
		"INSERT INTO off_cpu_stacks VALUES(1, 100, 2100, 11, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(1, 999, 1000, 11, 1.0);"));   /* another thread */
	compute(&t, &pp, &g, &names);
	assert_true(g.blocks_known);
	assert_int_equal(g.main_blocks.sampled, 3);
	assert_true(g.main_blocks.weight > 659.99 && g.main_blocks.weight < 660.01);
	assert_int_equal(g.main_blocks.n, 2);
	assert_string_equal(g.main_blocks.lines[0].line, "/home/u/train.py:20");
	assert_string_equal(g.main_blocks.lines[0].inner, "Queue.get (/usr/lib/python3.12/queue.py:171)");
	assert_int_equal(g.main_blocks.lines[0].count, 2);
	assert_true(g.main_blocks.lines[0].weight > 559.99 && g.main_blocks.lines[0].weight < 560.01);
	assert_string_equal(g.main_blocks.lines[1].line, "/home/u/train.py:10");
	assert_string_equal(g.main_blocks.lines[1].inner, "");
	const struct ia_gap_line *l = ia_gap_block_line(&g.main_blocks);
	assert_non_null(l);
	assert_string_equal(l->line, "/home/u/train.py:20");
	done(&t, &g, names);
}

static void too_few_or_no_python(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	struct ia_stack_names *names;
	/* two stacks: too few to name a line */
	build(&t, &pp, &g, db_with("INSERT INTO off_cpu_stacks VALUES(1, 100, 1000, 11, 1.0);"
				   "INSERT INTO off_cpu_stacks VALUES(1, 100, 1200, 11, 1.0);"));
	compute(&t, &pp, &g, &names);
	assert_int_equal(g.main_blocks.sampled, 2);
	assert_null(ia_gap_block_line(&g.main_blocks));
	done(&t, &g, names);
	/* three, the heaviest without a Python frame: none named; a chance out
	 * of (0, 1] counts as certain */
	build(&t, &pp, &g, db_with("INSERT INTO off_cpu_stacks VALUES(1, 100, 1000, 13, 0);"
				   "INSERT INTO off_cpu_stacks VALUES(1, 100, 1200, 11, 1.0);"
				   "INSERT INTO off_cpu_stacks VALUES(1, 100, 2000, 11, 1.0);"));
	compute(&t, &pp, &g, &names);
	assert_int_equal(g.main_blocks.sampled, 3);
	assert_string_equal(g.main_blocks.lines[0].line, "(no Python frame)");
	assert_true(g.main_blocks.lines[0].weight > 99.99 && g.main_blocks.lines[0].weight < 100.01);
	assert_null(ia_gap_block_line(&g.main_blocks));
	done(&t, &g, names);
}

static void older_file(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	struct ia_stack_names *names;
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE stack_frames(stack_id INTEGER, depth INTEGER, kind TEXT, "
					  "ip INTEGER, symbol TEXT, module TEXT, offset INTEGER, file TEXT, line INTEGER);",
				      NULL, NULL, NULL), SQLITE_OK);
	build(&t, &pp, &g, db);
	compute(&t, &pp, &g, &names);   /* version 5: no off_cpu_stacks, nothing known */
	assert_false(g.blocks_known);
	assert_int_equal(g.main_blocks.sampled, 0);
	assert_null(ia_gap_block_line(&g.main_blocks));
	done(&t, &g, names);
}

/* A DataLoader worker (tid 200): blocked [950,1050) reading in the user's
 * Dataset (50 in the first gap), [1400,2100) in D state under the fetcher
 * but no user frame (a torchvision dataset: 100 in each gap), and
 * [2200,2300) waiting for its next index in the worker loop. */
static void worker_loading_from_waiting(void **state)
{
	(void)state;
	struct ia_trace t;
	struct ia_per_process pp;
	struct ia_gaps g;
	struct ia_stack_names *names;
	static struct ia_thread th2[3];
	static struct ia_proc procs[2];
	static struct ia_proc_stats ps[2];
	sqlite3 *db = db_with(
		/* a forked worker's stacks end in the main script's frame at the fork */
		"INSERT INTO stack_frames VALUES(14, 0, 'python', 0, 'read', NULL, 0, '/usr/lib/python3.12/io.py', 3);"
		"INSERT INTO stack_frames VALUES(14, 1, 'python', 0, '__getitem__', NULL, 0, '/home/u/data.py', 7);"
		"INSERT INTO stack_frames VALUES(14, 2, 'python', 0, 'fetch', NULL, 0,"
		" '/v/site-packages/torch/utils/data/_utils/fetch.py', 52);"
		"INSERT INTO stack_frames VALUES(14, 3, 'python', 0, '_worker_loop', NULL, 0,"
		" '/v/site-packages/torch/utils/data/_utils/worker.py', 349);"
		"INSERT INTO stack_frames VALUES(14, 4, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 30);"
		"INSERT INTO stack_frames VALUES(15, 0, 'python', 0, '_worker_loop', NULL, 0,"
		" '/v/site-packages/torch/utils/data/_utils/worker.py', 300);"
		"INSERT INTO stack_frames VALUES(15, 1, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 30);"
		"INSERT INTO stack_frames VALUES(16, 0, 'python', 0, 'load', NULL, 0, '/v/site-packages/PIL/ImageFile.py', 9);"
		"INSERT INTO stack_frames VALUES(16, 1, 'python', 0, 'fetch', NULL, 0,"
		" '/v/site-packages/torch/utils/data/_utils/fetch.py', 52);"
		"INSERT INTO stack_frames VALUES(16, 2, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 30);"
		/* a worker of the user's own (no torch loop): its code is loading */
		"INSERT INTO stack_frames VALUES(17, 0, 'python', 0, 'pull', NULL, 0, '/home/u/feed.py', 12);"
		"INSERT INTO off_cpu_stacks VALUES(2, 200, 2400, 17, 1.0);"
		/* the worker's other thread (a feeder): not where it loads */
		"INSERT INTO off_cpu_stacks VALUES(2, 201, 1000, 14, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(2, 200, 950, 14, 0.5);"
		"INSERT INTO off_cpu_stacks VALUES(2, 200, 1400, 16, 1.0);"
		"INSERT INTO off_cpu_stacks VALUES(2, 200, 2200, 15, 1.0);");
	build(&t, &pp, &g, db);
	offs[5] = (struct ia_off){ .start = 950, .end = 1050, .th = 1 };
	offs[6] = (struct ia_off){ .start = 1400, .end = 2100, .th = 1 | IA_OFF_IOWAIT };
	offs[7] = (struct ia_off){ .start = 2200, .end = 2300, .th = 1 };
	offs[8] = (struct ia_off){ .start = 2400, .end = 2450, .th = 1 };
	offs[9] = (struct ia_off){ .start = 1000, .end = 1400, .th = 2 };
	for (uint32_t i = 5; i < 10; i++)
		off_by_th[i] = i;
	th2[0] = threads[0];
	th2[1] = (struct ia_thread){ .tid = 200, .proc = 1, .off_first = 5, .off_n = 4 };
	t.threads = th2;
	th2[2] = (struct ia_thread){ .tid = 201, .proc = 1, .off_first = 9, .off_n = 1 };
	t.nthreads = 3;
	t.noffs = 10;
	procs[0].pid = 1;
	procs[1].pid = 200;
	t.procs = procs;
	t.nprocs = 2;
	ps[0] = (struct ia_proc_stats){ .proc = 0, .role = IA_ROLE_MAIN };
	ps[1] = (struct ia_proc_stats){ .proc = 1, .role = IA_ROLE_WORKER };
	pp.p = ps;
	pp.n = 2;
	pp.nworkers = 1;
	compute(&t, &pp, &g, &names);
	/* every block counts in the weight: 50/0.5 + 200 + 100 + 50 */
	assert_int_equal(g.worker_blocks.sampled, 4);
	assert_true(g.worker_blocks.weight > 449.99 && g.worker_blocks.weight < 450.01);
	/* the wait for an index is not loading (the user's frame from before
	 * the fork notwithstanding), and has no line */
	assert_true(g.worker_blocks.loading_weight > 349.99 && g.worker_blocks.loading_weight < 350.01);
	assert_int_equal(g.worker_blocks.loading_sampled, 3);
	assert_true(g.worker_blocks.loading_iowait > 199.99 && g.worker_blocks.loading_iowait < 200.01);
	assert_int_equal(g.worker_blocks.n, 3);
	/* a library Dataset's read: the innermost frame; the user's
	 * __getitem__ inside the fetch, not the loop's line outside it */
	assert_string_equal(g.worker_blocks.lines[0].line, "/v/site-packages/PIL/ImageFile.py:9");
	assert_string_equal(g.worker_blocks.lines[1].line, "/home/u/data.py:7");
	assert_string_equal(g.worker_blocks.lines[1].inner, "read (/usr/lib/python3.12/io.py:3)");
	assert_string_equal(g.worker_blocks.lines[2].line, "/home/u/feed.py:12");
	/* the measured side: 50 + 200 + 100 + 50 blocked in the gaps (the
	 * index wait at 2200 too), 200 of it in D state; none of the other
	 * thread's, sampled or not */
	ia_gap_workers_off(&t, &pp, &g);
	assert_int_equal(g.workers_blocked_ns, 400);
	assert_int_equal(g.workers_iowait_ns, 200);
	/* loading: the measured blocked time times the loading share of the
	 * weight (350 of 450) */
	assert_int_equal(ia_gap_workers_loading_ns(&g), 311);
	g.workers_blocked_ns = 1000;
	assert_int_equal(ia_gap_workers_loading_ns(&g), 777);
	/* three stacks of loading, the heaviest line 200 of their 350 */
	const struct ia_gap_line *l = ia_gap_block_line(&g.worker_blocks);
	assert_non_null(l);
	assert_string_equal(l->line, "/v/site-packages/PIL/ImageFile.py:9");
	/* the main thread's blocks are apart: none of these */
	assert_int_equal(g.main_blocks.sampled, 0);
	done(&t, &g, names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(weighed_by_time_over_chance),
		cmocka_unit_test(too_few_or_no_python),
		cmocka_unit_test(older_file),
		cmocka_unit_test(worker_loading_from_waiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
