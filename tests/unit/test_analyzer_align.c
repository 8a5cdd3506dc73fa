/*
 * test_analyzer_align.c — exact numbers from a hand-built report.db:
 * per-call alignment (runnable vs blocked vs on-CPU inside one call), CPU
 * saturation from cpu_busy buckets, gap detection and the main thread's
 * state in a gap, roles, the -p filter, and independence from row order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/render/explain_json.h"
#include "../../analyzer/rules/analysis.h"
#include "../../analyzer/measure/align.h"
#include "../../analyzer/rules/chains.h"
#include "../../analyzer/load/db.h"
#include "../../analyzer/measure/gaps.h"
#include "../../analyzer/measure/per_process.h"
#include "../../analyzer/load/series.h"
#include "../../analyzer/measure/stats.h"
#include "../../analyzer/load/trace.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

/* Rows of the fixture; `reverse` inserts the big tables backwards. */
static void build(int reverse)
{
	const struct ingero_cuda_call calls[] = {
		/* pid, tid, api, start, dur: launch, sync, launch (gap 120..620), the aligned call */
		tb_call(100, 100, 21, 0, 10),
		tb_call(100, 100, 13, 20, 100),
		tb_call(100, 100, 21, 620, 10),
		tb_call(100, 100, 13, 1000, 1000),
		tb_call(200, 200, 21, 5000, 10),   /* a worker that makes one call */
	};
	static const char *offs[] = {
		/* pid, tid, start, end, runnable, preempted, next_pid, cpu */
		"(100, 100, 200, 400, 350, 0, 0, 0)",
		"(100, 100, 1100, 1300, 1250, 0, 0, 0)",
		"(100, 100, 1800, 2500, 1800, 1, 200, 1)",
		"(200, 200, 100, 150, 150, 0, 0, 0)",
	};
	snprintf(path, sizeof path, "/tmp/ia-unit-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 2, "fixture");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3'), (200, 100, 'worker')");
	/* a child of a Python program is a worker on evidence: PyTorch names a
	 * DataLoader worker's thread so (per_process.h) */
	rf_exec(db, "INSERT INTO threads VALUES(200, 200, 'pt_data_worker')");
	rf_exec(db, "INSERT INTO cpu_busy VALUES(0, 1000, 500), (1, 1000, 250), (0, 1500, 500), (1, 1500, 500)");
	/* backwards, the blocks hold their calls latest first */
	struct ingero_cuda_call in[5];
	char sql[256];
	for (int i = 0; i < 5; i++)
		in[i] = calls[reverse ? 4 - i : i];
	if (tb_insert_calls(db, in, 5, sql, sizeof sql) < 0)
		fail_msg("%s", sql);
	for (int i = 0; i < 4; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu) VALUES %s", offs[reverse ? 3 - i : i]);
		rf_exec(db, sql);
	}
	sqlite3_close(db);
}

static void load(struct ia_trace *t, int pid)
{
	rf_load(path, pid, t);
}

static const struct ia_call *call_at(const struct ia_trace *t, uint64_t start)
{
	for (size_t i = 0; i < t->ncalls; i++)
		if (t->calls[i].start == start)
			return &t->calls[i];
	fail_msg("no call at %llu", (unsigned long long)start);
	return NULL;
}

static void check_fixture(int reverse)
{
	struct ia_trace t;
	struct ia_evidence e;
	struct ia_call_align al;
	char err[256];
	build(reverse);
	load(&t, 0);
	assert_int_equal(t.ncalls, 5);
	assert_int_equal(t.noffs, 4);
	assert_int_equal(ia_evidence_load(&t, &e, err, sizeof err), 0);
	ia_align_call(&t, &e, call_at(&t, 1000), &al);
	/* [1100,1300) woken at 1250: 50 runnable + 150 blocked; [1800,2500)
	 * preempted: its 200 ns inside the call are runnable */
	assert_int_equal(al.runq_ns, 250);
	assert_int_equal(al.blocked_ns, 150);
	assert_int_equal(al.oncpu_ns, 600);
	assert_int_equal(al.nswitch, 2);
	assert_int_equal(al.npreempt, 1);
	/* (500 + 250 + 500 + 500) / (2 CPUs x 1000 ns) */
	assert_true(al.cpu_sat > 0.874 && al.cpu_sat < 0.876);

	struct ia_per_process pp;
	assert_int_equal(ia_per_process_compute(&t, &pp, err, sizeof err), 0);
	assert_int_equal(pp.n, 2);
	assert_int_equal(t.procs[pp.p[pp.main].proc].pid, 100);
	assert_int_equal(t.threads[pp.main_thread].tid, 100);
	assert_int_equal(pp.nworkers, 1);
	const struct ia_proc_stats *m = &pp.p[pp.main];
	assert_int_equal(m->context_switches, 3);
	assert_int_equal(m->voluntary, 2);
	assert_int_equal(m->involuntary, 1);
	assert_int_equal(m->off_cpu_ns, 200 + 200 + 700);
	assert_int_equal(m->worst_stall_ns, 700);

	struct ia_gaps g;
	struct ia_stack_names *names = ia_stack_names_new(t.db);
	assert_int_equal(ia_gaps_compute(&t, &pp, names, NULL, NULL, &g, err, sizeof err), 0);
	/* sync ends at 120, next launch at 620; the sync at 1000 ends the trace */
	assert_int_equal(g.n, 1);
	assert_int_equal(g.g[0].start, 120);
	assert_int_equal(g.g[0].end, 620);
	assert_int_equal(g.main_blocked_ns, 150);
	assert_int_equal(g.main_runq_ns, 50);
	assert_int_equal(g.main_oncpu_ns, 300);
	assert_int_equal(g.idle_low_ns, 500);
	ia_gaps_free(&g);
	ia_stack_names_free(names);
	ia_per_process_free(&pp);
	ia_evidence_free(&e);

	struct ia_stats s;
	assert_int_equal(ia_stats_compute(&t, &s), 0);
	assert_non_null(s.by_id[INGERO_API_CUDA_STREAM_SYNCHRONIZE]);
	assert_int_equal(s.by_id[INGERO_API_CUDA_STREAM_SYNCHRONIZE]->count, 2);
	assert_int_equal(s.by_id[INGERO_API_CUDA_STREAM_SYNCHRONIZE]->p50_ns, 100);
	assert_int_equal(s.by_id[INGERO_API_CUDA_STREAM_SYNCHRONIZE]->max_ns, 1000);
	assert_int_equal(s.by_id[INGERO_API_CUDA_LAUNCH_KERNEL]->count, 3);
	ia_stats_free(&s);
	rf_unload(&t, path);
}

static void alignment_and_gaps(void **state)
{
	(void)state;
	check_fixture(0);
}

static void row_order_does_not_matter(void **state)
{
	(void)state;
	check_fixture(1);
}

static void pid_filter_keeps_the_subtree(void **state)
{
	(void)state;
	struct ia_trace t;
	build(0);
	load(&t, 200);
	assert_int_equal(t.ncalls, 1);
	assert_int_equal(t.noffs, 1);
	rf_unload(&t, path);
	build(0);
	load(&t, 100);   /* the worker descends from 100 */
	assert_int_equal(t.ncalls, 5);
	rf_unload(&t, path);
}

static void explain_is_deterministic(void **state)
{
	(void)state;
	char *out[2];
	for (int r = 0; r < 2; r++) {
		struct ia_trace t;
		struct ia_analysis a;
		char err[256];
		build(r);
		load(&t, 0);
		assert_int_equal(ia_analyze(&t, &a, err, sizeof err), 0);
		cJSON *j = ia_explain_json(&a);
		out[r] = cJSON_PrintUnformatted(j);
		cJSON_Delete(j);
		ia_analysis_free(&a);
		rf_unload(&t, path);
	}
	assert_string_equal(out[0], out[1]);
	free(out[0]);
	free(out[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(alignment_and_gaps),
		cmocka_unit_test(row_order_does_not_matter),
		cmocka_unit_test(pid_filter_keeps_the_subtree),
		cmocka_unit_test(explain_is_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
