/*
 * test_analyzer_merge.c — a merged report.db (analyzer/load/merged.h, its
 * rows moved by load/report_copy.h) from two hand-made nodes with equal
 * pids, tids, CPUs, frame ids and one equal stack id, merged with a known
 * offset: node 1's pids and tids (and its next_pid, waker, ppid; not the
 * idle task's 0) moved by 10^7, its CPUs after node 0's, every time moved
 * by the offset (a process start of 0, unknown, kept), its losses kept
 * apart (the machine's under pid 10^7), its frames and the shared stack
 * renumbered so that its calls (in their blocks) and samples reach its own
 * frames; the session kept under node.1. with the merge's figures beside
 * it.  The merged file loads, its node-1 tids (over 2^22) with their
 * off-CPU flags, system calls and wakers intact; node 1 read back is the
 * file it was.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"

#include "../../analyzer/load/merged.h"
#include "../../analyzer/load/rows.h"
#include "../../analyzer/load/syscalls.h"

#include <ingero/api.h>

#define STACK 4242   /* a call stack id both nodes use */
#define SHIFT (-4000000000ll)

static char p0[64], p1[64], pm[64], ps[64];

/* Node k: pid 100 (threads 100, 105) and its child 101, from T = 1 s + 4 s * k. */
static void node(const char *path, int k)
{
	sqlite3 *db = rf_create(path, 2, "job");
	int64_t t = 1000000000ll + 4000000000ll * k;
	char sql[4096];
	snprintf(sql, sizeof sql,
		 "UPDATE session SET value = '%lld' WHERE key = 'start_mono_ns';"
		 "INSERT INTO session VALUES('end_mono_ns', '%lld'), ('host', 'host%d'), ('boot_id', 'boot%d'),"
		 " ('clock_anchor_mono_ns', '%lld'), ('clock_anchor_realtime_ns', '%lld');"
		 "INSERT INTO processes(pid, ppid, comm, start_ns, exit_ns) VALUES(100, 1, 'main', %lld, %lld),"
		 " (101, 100, 'worker', 0, NULL);"
		 "INSERT INTO threads VALUES(100, 100, 'main'), (105, 100, 'helper'), (101, 101, 'worker');"
		 /* preempted (by 777), blocked in futex (woken by 101), D state (idle CPU next) */
		 "INSERT INTO off_cpu VALUES(100, 105, %lld, %lld, %lld, 1, 777, 1, NULL, NULL, NULL, 777, 20, 778),"
		 " (100, 105, %lld, %lld, %lld, 0, 0, 0, 202, 101, 101, 101, 10, 101),"
		 " (100, 105, %lld, %lld, %lld, 2, 0, 1, -1, NULL, NULL, 0, 0, 0);"
		 "INSERT INTO cpu_busy VALUES(0, %lld, 50), (1, %lld, 60);"
		 "INSERT INTO stack_frames(stack_id, depth, kind, ip, symbol, module, offset) VALUES"
		 " (%d, 0, 'native', 16, 'call_of_node%d', 'lib%d.so', 1), (%d, 1, 'native', 32, 'main', 'app', 2),"
		 " (%d, 0, 'python', NULL, 'sample_of_node%d', NULL, NULL);"
		 "INSERT INTO cpu_samples VALUES(101, 101, %lld, 1, %d);"
		 "INSERT INTO losses VALUES('bpf_ringbuf_unclosed', 0, %d), ('preload_dropped', 100, %d);",
		 (long long)t, (long long)(t + 2000000000), k, k, (long long)t, (long long)(t + 7000000000ll * (k + 1)),
		 (long long)t, (long long)(t + 2000000000), (long long)(t + 10), (long long)(t + 30), (long long)(t + 10),
		 (long long)(t + 40), (long long)(t + 90), (long long)(t + 70), (long long)(t + 100), (long long)(t + 150),
		 (long long)(t + 150), (long long)t, (long long)t, STACK, k, k, STACK, 7000 + k, k, (long long)(t + 5),
		 7000 + k, 3 + k, 2 + k);
	rf_exec(db, sql);
	struct ingero_cuda_call c[3] = {
		tb_call(100, 100, INGERO_API_CUDA_LAUNCH_KERNEL, (uint64_t)t + 1, 5),
		tb_call(100, 105, INGERO_API_CUDA_STREAM_SYNCHRONIZE, (uint64_t)t + 20, 50),
		tb_call(100, 100, INGERO_API_CUDA_LAUNCH_KERNEL, (uint64_t)t + 80, 5),
	};
	c[0].stack_id = c[2].stack_id = STACK;
	char err[256];
	if (tb_insert_calls(db, c, 3, err, sizeof err))
		fail_msg("%s", err);
	sqlite3_close(db);
}

static int setup(void **state)
{
	(void)state;
	snprintf(p0, sizeof p0, "/tmp/ia_merge_%d_n0.db", (int)getpid());
	snprintf(p1, sizeof p1, "/tmp/ia_merge_%d_n1.db", (int)getpid());
	snprintf(pm, sizeof pm, "/tmp/ia_merge_%d_job.db", (int)getpid());
	snprintf(ps, sizeof ps, "/tmp/ia_merge_%d_part.db", (int)getpid());
	node(p0, 0);
	node(p1, 1);
	unlink(pm);
	sqlite3 *out;
	char err[512];
	assert_int_equal(sqlite3_open_v2(pm, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL),
			 SQLITE_OK);
	struct ia_merge_node n[2] = {
		{ .path = p0, .name = "n0.db", .cpus = 2 },
		{ .path = p1, .name = "n1.db", .shift_ns = SHIFT, .anchor_offset_ns = 1000000000,
		  .correction_ns = SHIFT - 1000000000, .collectives_used = 3, .uncertainty_ns = 1234, .cpus = 2 },
	};
	if (ia_merged_create(out, err, sizeof err) < 0 || ia_merged_add(out, 0, &n[0], err, sizeof err) < 0 ||
	    ia_merged_add(out, 1, &n[1], err, sizeof err) < 0 || ia_merged_finish(out, 2, err, sizeof err) < 0)
		fail_msg("%s", err);
	assert_int_equal(sqlite3_close(out), SQLITE_OK);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(p0);
	unlink(p1);
	unlink(pm);
	unlink(ps);
	return 0;
}

/* The rows of a query on the merged file, "|" between columns, "," between rows. */
static char *q(const char *path, const char *sql)
{
	static char out[4096];
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	out[0] = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t n = strlen(out);
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);
			n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", i ? "|" : n ? "," : "", v ? v : "NULL");
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return out;
}

static void ids_and_times_moved(void **state)
{
	(void)state;
	assert_string_equal(q(pm, "SELECT pid, ppid, start_ns, exit_ns FROM processes ORDER BY pid"),
			    "100|1|1000000000|3000000000,101|100|0|NULL,10000100|10000001|1000000000|3000000000,"
			    "10000101|10000100|0|NULL");
	assert_string_equal(q(pm, "SELECT tid, pid FROM threads WHERE tid > 10000000 ORDER BY tid"),
			    "10000100|10000100,10000101|10000101,10000105|10000100");
	/* node 1's intervals: its times moved back 4 s, next_pid, waker and holder based, the idle task's 0 kept */
	assert_string_equal(q(pm, "SELECT start_ns, runnable_ns, end_ns, preempted, next_pid, cpu, syscall, waker_tid, "
				  "waker_pid, holder_pid, holder_ns, holder_tid FROM off_cpu WHERE pid = 10000100 ORDER BY start_ns"),
			    "1000000010|1000000010|1000000030|1|10000777|3|NULL|NULL|NULL|10000777|20|10000778,"
			    "1000000040|1000000070|1000000090|0|0|2|202|10000101|10000101|10000101|10|10000101,"
			    "1000000100|1000000150|1000000150|2|0|3|-1|NULL|NULL|0|0|0");
	assert_string_equal(q(pm, "SELECT cpu, bucket_ns, busy_ns FROM cpu_busy ORDER BY cpu"),
			    "0|1000000000|50,1|1000000000|60,2|1000000000|50,3|1000000000|60");
	assert_string_equal(q(pm, "SELECT pid, tid, ts_ns, cpu FROM cpu_samples ORDER BY pid"),
			    "101|101|1000000005|1,10000101|10000101|1000000005|3");
	assert_string_equal(q(pm, "SELECT pid, first_ns, last_ns, calls FROM call_blocks ORDER BY id"),
			    "100|1000000001|1000000080|3,10000100|1000000001|1000000080|3");
	/* each node's losses apart, the machine's of node 1 under pid 10^7 */
	assert_string_equal(q(pm, "SELECT source, pid, count FROM losses ORDER BY source, pid"),
			    "bpf_ringbuf_unclosed|0|3,bpf_ringbuf_unclosed|10000000|4,preload_dropped|100|2,"
			    "preload_dropped|10000100|3");
	assert_string_equal(q(pm, "SELECT node, node_pid FROM node_processes ORDER BY pid"), "0|100,0|101,1|100,1|101");
}

static void session_kept(void **state)
{
	(void)state;
	assert_string_equal(q(pm, "SELECT value FROM session WHERE key IN ('merged_nodes', 'cpus', 'host', 'start_mono_ns', "
				  "'end_mono_ns') ORDER BY key"),
			    "4,3000000000,host0,2,1000000000");
	assert_string_equal(q(pm, "SELECT key, value FROM session WHERE key GLOB 'node.1.*' AND key NOT GLOB "
				  "'node.1.merge.*' AND key IN ('node.1.host', 'node.1.boot_id', 'node.1.start_mono_ns', "
				  "'node.1.clock_anchor_realtime_ns') ORDER BY key"),
			    "node.1.boot_id|boot1,node.1.clock_anchor_realtime_ns|19000000000,node.1.host|host1,"
			    "node.1.start_mono_ns|5000000000");
	assert_string_equal(q(pm, "SELECT group_concat(substr(key, 14) || '=' || value, ' ') FROM (SELECT * FROM session "
				  "WHERE key GLOB 'node.1.merge.*' ORDER BY key)"),
			    "anchor_offset_ns=1000000000 collectives_used=3 correction_ns=-5000000000 cpu_base=2 cpus=2 "
			    "file=n1.db frame_base=3 frame_end=6 pid_base=10000000 schema_version=" TB_STR(INGERO_SCHEMA_VERSION) " shift_ns=-4000000000 "
			    "uncertainty_ns=1234");
}

/* Each node's calls (through their blocks) and samples reach its own frames,
 * the stack id both used renamed for node 1. */
static void stacks_resolve(void **state)
{
	(void)state;
	assert_string_equal(q(pm, "SELECT count(*), count(DISTINCT id) FROM stacks"), "4|4");
	assert_string_equal(q(pm, "SELECT count(*) FROM stacks WHERE id = 4242"), "1");   /* node 0 kept it */
	assert_string_equal(q(pm, "SELECT min(id) > (SELECT max(id) FROM frames WHERE symbol LIKE '%node0') FROM frames "
				  "WHERE symbol LIKE '%node1'"),
			    "1");
	struct ia_trace t;
	rf_load(pm, 0, &t);
	const char *want[2] = { "call_of_node0", "call_of_node1" };
	for (int k = 0; k < 2; k++) {
		int th = ia_thread_index(&t, (uint32_t)(100 + k * 10000000));
		assert_true(th >= 0);
		const struct ia_thread *x = &t.threads[th];
		assert_int_equal(x->call_n, 2);
		uint64_t sid = t.stack_ids[t.calls[t.call_by_th[x->call_first]].stack];
		assert_true(k == 0 ? sid == STACK : sid != STACK && sid != 0);
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT symbol FROM stack_frames WHERE stack_id = %lld AND depth = 0",
			 (long long)sid);
		assert_string_equal(q(pm, sql), want[k]);
	}
	sqlite3 *db = t.db;
	ia_trace_free(&t);
	ia_db_close(db);
	assert_string_equal(q(pm, "SELECT s.pid, f.symbol FROM cpu_samples s JOIN stack_frames f ON f.stack_id = s.stack_id "
				  "ORDER BY s.pid"),
			    "101|sample_of_node0,10000101|sample_of_node1");
}

/* The merged file loads: node 1's tids are over 2^22, its intervals keep
 * their flags, system calls, wakers and lengths (against node 1's own file). */
static void merged_loads(void **state)
{
	(void)state;
	struct ia_trace a, b;
	rf_load(p1, 0, &a);
	rf_load(pm, 0, &b);
	assert_int_equal(b.nthreads, 2 * a.nthreads);
	assert_int_equal(b.noffs, 2 * a.noffs);
	assert_int_equal(b.noff_wakers, 2 * a.noff_wakers);
	const struct ia_thread *x = &a.threads[ia_thread_index(&a, 105)];
	int th = ia_thread_index(&b, 10000105);
	assert_true(th >= 0);
	const struct ia_thread *y = &b.threads[th];
	assert_int_equal(x->off_n, 3);
	assert_int_equal(y->off_n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		const struct ia_off *o = &a.offs[a.off_by_th[x->off_first + i]], *p = &b.offs[b.off_by_th[y->off_first + i]];
		assert_int_equal(p->start, o->start + SHIFT);
		assert_int_equal(p->end - p->start, o->end - o->start);
		assert_int_equal(p->runq, o->runq);
		assert_int_equal(p->th & IA_OFF_FLAGS, o->th & IA_OFF_FLAGS);
		assert_int_equal(p->th & ~IA_OFF_FLAGS, (uint32_t)th);
	}
	assert_int_equal(ia_off_sys(&b.offs[b.off_by_th[y->off_first + 1]]), ia_syscall_code(202, 1));
	assert_true(b.offs[b.off_by_th[y->off_first]].th & IA_OFF_PREEMPTED);
	assert_true(b.offs[b.off_by_th[y->off_first + 2]].th & IA_OFF_IOWAIT);
	for (size_t i = 0; i < b.noff_wakers; i++)
		assert_true(b.off_wakers[i].tid == 101 || b.off_wakers[i].tid == 10000101);
	sqlite3 *da = a.db, *db = b.db;
	ia_trace_free(&a);
	ia_trace_free(&b);
	ia_db_close(da);
	ia_db_close(db);
}

/* Node 1 read back is its file: every table's rows (its call stack's id
 * apart: renamed in the merge) and its session. */
static void node_read_back(void **state)
{
	(void)state;
	char err[512], name[256];
	sqlite3 *m = ia_db_open(pm, err, sizeof err);
	if (!m)
		fail_msg("%s", err);
	assert_int_equal(ia_merged_nodes(m), 2);
	unlink(ps);
	if (ia_merged_split(m, pm, 1, ps, name, sizeof name, err, sizeof err) < 0)
		fail_msg("%s", err);
	ia_db_close(m);
	assert_string_equal(name, "n1.db");
	static const char *const tables[] = { "session", "processes", "threads", "off_cpu", "cpu_busy", "cpu_samples",
					      "losses", "apis" };
	/* node 1's file against its part read back, table by table, both ways */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(p1, &db), SQLITE_OK);
	char sql[256];
	snprintf(sql, sizeof sql, "ATTACH '%s' AS b", ps);
	rf_exec(db, sql);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		sqlite3_stmt *st;
		snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM b.%s)) + "
			 "(SELECT count(*) FROM (SELECT * FROM b.%s EXCEPT SELECT * FROM main.%s))", tables[i], tables[i],
			 tables[i], tables[i]);
		assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		if (sqlite3_column_int(st, 0))
			fail_msg("%s: %d rows differ", tables[i], sqlite3_column_int(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	assert_string_equal(q(ps, "SELECT symbol FROM stack_frames ORDER BY stack_id = 7001, depth"),
			    "call_of_node1,main,sample_of_node1");
	assert_string_equal(q(ps, "PRAGMA user_version"), TB_STR(INGERO_SCHEMA_VERSION));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_and_times_moved),
		cmocka_unit_test(session_kept),
		cmocka_unit_test(stacks_resolve),
		cmocka_unit_test(merged_loads),
		cmocka_unit_test(node_read_back),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
