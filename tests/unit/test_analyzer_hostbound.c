/*
 * test_analyzer_hostbound.c — exact numbers for the host-bound stretches
 * from a hand-built report.db: which stretches qualify (closing sync at or
 * below the floor, launch rate high enough), the time inside calls and
 * between them, launches by thread, the main thread's off-CPU time; and
 * that too few launches fire no chain; which sampled launches count as
 * Transformers' generate's when the library cut their Python stacks; the
 * top line's kernels and their sizes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/analysis.h"
#include "../../analyzer/rules/chains.h"
#include "../../analyzer/load/db.h"
#include "../../analyzer/measure/hostbound.h"
#include "../../analyzer/load/trace.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static struct ingero_cuda_call calls[16];
static size_t ncalls;

/* A report.db at path (NAME and this pid) with process 100 and the given
 * threads rows (SQL VALUES); the calls are stored after (tb_insert_calls). */
static sqlite3 *fixture(const char *name, const char *threads)
{
	ncalls = 0;
	snprintf(path, sizeof path, "/tmp/ia-%s-%d.db", name, (int)getpid());
	sqlite3 *db = rf_create(path, 2, "fixture");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3')");
	char sql[256];
	snprintf(sql, sizeof sql, "INSERT INTO threads VALUES%s", threads);
	rf_exec(db, sql);
	return db;
}

/* One call of pid 100; build() stores them all as call blocks. */
static void call(int tid, int api, long start, long dur)
{
	assert_true(ncalls < sizeof calls / sizeof calls[0]);
	calls[ncalls++] = tb_call(100, (uint32_t)tid, (uint16_t)api, (uint64_t)start, (uint64_t)dur);
}

/* Three stretches of pid 100; only the first is host-bound:
 *   [1000, 11300)  3 launches (one from thread 101), sync waits 10 us (<= floor)
 *   [20000, 71000) 1 launch, sync waits 50 us: the GPU was still busy
 *   [100000, 2005000) 1 launch in 1.9 ms: 525 launches/s, below the rate */
static void build(void)
{
	const int L = INGERO_API_CUDA_LAUNCH_KERNEL_STUB, S = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
	sqlite3 *db = fixture("hb", "(100, 100, 'python3'), (101, 100, 'pt_autograd_0')");
	call(100, L, 1000, 10);
	call(101, L, 1100, 10);
	call(100, L, 1200, 10);
	call(100, S, 1300, 10000);
	call(100, L, 20000, 10);
	call(100, S, 21000, 50000);
	call(100, L, 100000, 10);
	call(100, S, 2000000, 5000);
	char err[256];
	if (tb_insert_calls(db, calls, ncalls, err, sizeof err) < 0)
		fail_msg("%s", err);
	/* main thread blocked [1050, 1250) inside the first stretch, runnable its last 50 ns */
	rf_exec(db, "INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu) VALUES(100, 100, 1050, 1250, 1200, 0, 0, 0)");
	sqlite3_close(db);
}

static void analyze(struct ia_trace *t, struct ia_analysis *a)
{
	char err[256];
	rf_load(path, 0, t);
	if (ia_analyze(t, a, err, sizeof err) < 0)
		fail_msg("%s", err);
}

/* The calls stored into db, which is closed, then the file analyzed. */
static void store_and_analyze(sqlite3 *db, struct ia_trace *t, struct ia_analysis *a)
{
	char err[256];
	if (tb_insert_calls(db, calls, ncalls, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
	analyze(t, a);
}

static void release(struct ia_trace *t, struct ia_analysis *a)
{
	ia_analysis_free(a);
	rf_unload(t, path);
}

static void stretches_and_figures(void **state)
{
	(void)state;
	build();
	struct ia_trace t;
	struct ia_analysis a;
	analyze(&t, &a);
	const struct ia_hostbound *h = &a.hb;
	assert_int_equal(h->n, 1);
	assert_int_equal(h->ns, 11300 - 1000);
	assert_int_equal(h->launches, 3);
	assert_int_equal(h->calls, 4);
	assert_int_equal(h->in_calls_ns, 3 * 10 + 10000);
	assert_int_equal(h->in_launch_ns, 30);
	assert_int_equal(h->launch_gaps, 2);
	assert_int_equal(h->launch_gap_ns, 200);
	assert_int_equal(h->main_off_ns, 200);
	assert_int_equal(h->main_runq_ns, 50);
	assert_int_equal(h->main_launches, 2);
	assert_int_equal(h->nothers, 1);
	assert_int_equal(h->top_other_launches, 1);
	assert_string_equal(t.threads[h->top_other].comm, "pt_autograd_0");
	assert_int_equal(h->close_max_ns, 10000);
	assert_int_equal(t.calls[h->long_close].start, 1300);
	assert_int_equal(h->period_calls, 0);   /* 4 calls: too few to see a repeat */
	/* 3 launches are too few for a rate to mean anything: no chain */
	for (size_t i = 0; i < a.nchains; i++)
		assert_string_not_equal(a.chains[i].kind, "host_bound_launches");
	release(&t, &a);
}

/* Launch stacks (innermost first), as the library cuts them at their
 * innermost Python frames: 1 whole, under generate, begun by threading's
 * bootstrap; 2 cut inside the model (no frame that begins a thread, no
 * generate); 3 whole, the main thread's own loop. */
#define HF "/venv/lib/python3.12/site-packages/transformers/"
static void generate_stacks(sqlite3 *db)
{
	rf_exec(db, "INSERT INTO stacks(id, pid) VALUES(1, 100), (2, 100), (3, 100)");
	rf_exec(db, "INSERT INTO stack_frames(stack_id, depth, kind, symbol, file, line) VALUES"
		 "(1, 0, 'python', 'GPT2LMHeadModel.forward', '" HF "models/gpt2/modeling_gpt2.py', 682),"
		 "(1, 1, 'python', 'GenerationMixin._sample', '" HF "generation/utils.py', 3030),"
		 "(1, 2, 'python', 'GenerationMixin.generate', '" HF "generation/utils.py', 2802),"
		 "(1, 3, 'python', 'Thread.run', '/usr/lib/python3.12/threading.py', 1012),"
		 "(1, 4, 'python', 'Thread._bootstrap', '/usr/lib/python3.12/threading.py', 1032),"
		 "(2, 0, 'python', 'Conv1D.forward', '" HF "pytorch_utils.py', 119),"
		 "(2, 1, 'python', 'GPT2Attention.forward', '" HF "models/gpt2/modeling_gpt2.py', 230),"
		 "(3, 0, 'python', 'Linear.forward', '/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py', 134),"
		 "(3, 1, 'python', '<module>', 'serve.py', 12)");
}

/* One host-bound stretch of launches with stacks: thread 101 (stacks 1, 2,
 * 2: generate's thread, its cut stacks counted as generate's), thread 102
 * (2, 2: nothing says what called them: not counted), the main thread (3). */
static void generate_votes(void **state)
{
	(void)state;
	const int L = INGERO_API_CUDA_LAUNCH_KERNEL_STUB, S = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
	sqlite3 *db = fixture("hb-gen", "(100, 100, 'python3'), (101, 100, 'python3'), (102, 100, 'python3')");
	generate_stacks(db);
	static const int tid[] = { 101, 101, 101, 102, 102, 100 }, stack[] = { 1, 2, 2, 2, 2, 3 };
	for (int i = 0; i < 6; i++) {
		call(tid[i], L, 1000 + 100 * i, 10);
		calls[ncalls - 1].stack_id = (uint64_t)stack[i];
	}
	call(100, S, 1700, 10000);
	struct ia_trace t;
	struct ia_analysis a;
	store_and_analyze(db, &t, &a);
	assert_int_equal(a.hb.n, 1);
	assert_int_equal(a.hb.launch_samples, 6);
	assert_int_equal(a.hb.generate_samples, 3);
	release(&t, &a);
}

/* One host-bound stretch: six sampled launches at the user's line
 * train.py:19, two kernels each at two grids (a loop over tensors of
 * different sizes: an EMA over a model's parameters), and two at line 5:
 * the top line's kernels and kernel-and-geometry pairs are counted. */
static void top_line_sizes(void **state)
{
	(void)state;
	const int L = INGERO_API_CUDA_LAUNCH_KERNEL_STUB, S = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
	sqlite3 *db = fixture("hb-sizes", "(100, 100, 'python3')");
	rf_exec(db, "INSERT INTO stacks(id, pid) VALUES(1, 100), (2, 100)");
	rf_exec(db, "INSERT INTO stack_frames(stack_id, depth, kind, symbol, file, line) VALUES"
		 "(1, 0, 'python', '<module>', 'train.py', 19), (2, 0, 'python', '<module>', 'train.py', 5)");
	static const uint64_t kernel[] = { 0x1000, 0x1000, 0x1000, 0x2000, 0x2000, 0x2000, 0x3000, 0x3000 };
	static const uint32_t grid[] = { 1, 256, 1, 1, 4, 4, 8, 8 };
	for (int i = 0; i < 8; i++) {
		call(100, L, 1000 + 100 * i, 10);
		calls[ncalls - 1].stack_id = i < 6 ? 1 : 2;
		calls[ncalls - 1].kernel = kernel[i];
		calls[ncalls - 1].grid[0] = grid[i];
		calls[ncalls - 1].block[0] = 128;
	}
	call(100, S, 1900, 10000);
	struct ia_trace t;
	struct ia_analysis a;
	store_and_analyze(db, &t, &a);
	assert_int_equal(a.hb.launch_samples, 8);
	assert_true(a.hb.nlines >= 2);
	assert_string_equal(a.hb.lines[0].line, "train.py:19");
	assert_int_equal(a.hb.lines[0].count, 6);
	assert_int_equal(a.hb.top_funcs, 2);
	assert_int_equal(a.hb.top_works, 4);
	release(&t, &a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stretches_and_figures),
		cmocka_unit_test(generate_votes),
		cmocka_unit_test(top_line_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
