/*
 * test_collector_store.c — the report.db writer (collector/store.c): schema
 * and version, every table's rows, upsert and additive semantics, losses,
 * the size cap, and a file that stands alone after close.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "ingero/api.h"
#include "ingero/schema.h"
#include "../../collector/store.h"
#include "../helpers/collector_wire.h"
#include "call_blocks.h"

#define STORE_DB_NAME "store"
#include "store_db.h"

static void qs(const char *sql, char *out, size_t size)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	out[0] = 0;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Every CUDA call in the file, decoded from its call blocks (whose pid,
 * first_ns, last_ns and calls columns tb_read_calls checks against them). */
static struct ingero_cuda_call *read_calls(size_t *n)
{
	sqlite3 *db;
	struct ingero_cuda_call *c;
	char err[256];

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (tb_read_calls(db, &c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
	return c;
}

static const struct ingero_cuda_call *call_at(const struct ingero_cuda_call *c, size_t n, uint64_t start)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].start_ns == start)
			return &c[i];
	fail_msg("no call starts at %llu", (unsigned long long)start);
	return NULL;
}

static void schema_and_apis(void **state)
{
	struct store *s = store_open(path, NULL);
	int n = 0;

	(void)state;
	assert_non_null(s);
	store_close(s);
	/* closed cleanly: the WAL was folded back into the file */
	char wal[300];
	snprintf(wal, sizeof wal, "%s-wal", path);
	assert_true(access(wal, F_OK) != 0);
#define COUNT_(id, e, name, cls) n++;
	INGERO_API_LIST(COUNT_)
#undef COUNT_
	assert_int_equal(q("PRAGMA user_version"), INGERO_SCHEMA_VERSION);
	assert_int_equal(q("SELECT count(*) FROM apis"), n);
	assert_int_equal(q("SELECT count(*) FROM apis WHERE name='cudaStreamSynchronize' AND class='sync'"), 1);
}

static void calls_round_trip(void **state)
{
	struct store *s = store_open(path, NULL);
	struct ingero_cuda_call *c = calloc(10000, sizeof(*c));
	struct ingero_cuda_call l = tw_sample_call(INGERO_API_CU_LAUNCH_KERNEL, 10, 11, 99);

	(void)state;
	for (int i = 0; i < 10000; i++)
		c[i] = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 10, 10 + i % 3, 1000 + i);
	c[0].ret = -7;
	c[0].stack_id = 0xffffffffffffffffull;
	store_calls(s, c, 5000);
	store_calls(s, c + 5000, 5000);
	l.grid[0] = 8; l.block[0] = 128; l.block[1] = 1; l.block[2] = 1;
	store_calls(s, &l, 1);
	store_sync(s);
	assert_int_equal(store_committed_calls(s), 10001);
	/* readable while the writer is open (WAL) */
	size_t n;
	struct ingero_cuda_call *got = read_calls(&n);
	assert_int_equal(n, 10001);
	free(got);
	store_close(s);
	got = read_calls(&n);
	assert_int_equal(n, 10001);
	assert_int_equal(q("SELECT sum(calls) FROM call_blocks"), 10001);
	assert_int_equal(call_at(got, n, 1000)->ret, -7);
	assert_true(call_at(got, n, 1000)->stack_id == 0xffffffffffffffffull);
	assert_int_equal(call_at(got, n, 1000)->pid, 10);
	assert_int_equal(call_at(got, n, 1001)->grid[0], 0);   /* not a launch: no grid */
	const struct ingero_cuda_call *launch = call_at(got, n, 99);
	assert_int_equal(launch->api, INGERO_API_CU_LAUNCH_KERNEL);
	assert_int_equal(launch->grid[0] * 1000 + launch->block[0], 8128);
	/* one pid, so one run: the calls come back in the order stored, every field */
	assert_memory_equal(got, c, 10000 * sizeof *c);
	assert_memory_equal(&got[10000], &l, sizeof l);
	assert_int_equal(got[0].tid + got[1].tid + got[2].tid, 10 + 11 + 12);
	free(got);
	free(c);
}

/* A start_ns >= 2^63 (a broken sender; the wire allows any u64) reads back
 * negative in SQLite: the block's bounds follow SQLite's signed order, so
 * "last_ns >= T" still finds the block's ordinary calls. */
static void block_bounds_are_signed(void **state)
{
	struct store *s = store_open(path, NULL);
	struct ingero_cuda_call c[2] = {
		tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 100, 100, 1000),
		tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 100, 100, (1ull << 63) + 5),
	};

	(void)state;
	store_calls(s, c, 2);
	store_close(s);
	assert_int_equal(q("SELECT count(*) FROM call_blocks"), 1);
	assert_true(q("SELECT first_ns FROM call_blocks") < 0);
	assert_int_equal(q("SELECT last_ns FROM call_blocks"), 1000);
	assert_int_equal(q("SELECT count(*) FROM call_blocks WHERE last_ns >= 0"), 1);
}

static void processes_upsert(void **state)
{
	struct store *s = store_open(path, NULL);
	struct proc_row r = { .pid = 50, .ppid = 1, .comm = "sh", .start_ns = 100, .exit_ns = -1,
			      .exit_code = -1, .made = -1, .dropped = -1 };
	char buf[64];

	(void)state;
	store_process(s, &r);                       /* fork */
	r = (struct proc_row){ .pid = 50, .ppid = -1, .comm = "python3", .exe = "/usr/bin/python3",
			       .cmdline = "python3 x.py", .start_ns = -1, .exit_ns = -1,
			       .exit_code = -1, .made = -1, .dropped = -1 };
	store_process(s, &r);                       /* exec */
	r = (struct proc_row){ .pid = 50, .ppid = 7, .start_ns = 555, .exit_ns = -1, .exit_code = -1,
			       .made = 10, .dropped = 2, .announced = 1 };
	store_process(s, &r);                       /* HELLO + COUNTS */
	r.made = 8;                                 /* an older COUNTS arriving late */
	r.dropped = 1;
	store_process(s, &r);
	r = (struct proc_row){ .pid = 50, .ppid = -1, .start_ns = -1, .exit_ns = 900, .exit_code = 3,
			       .made = -1, .dropped = -1 };
	store_process(s, &r);                       /* exit */
	store_thread(s, 51, 50, "worker");
	store_thread(s, 51, 50, NULL);              /* keeps the name */
	store_close(s);
	qs("SELECT comm||'|'||exe||'|'||cmdline FROM processes WHERE pid=50", buf, sizeof buf);
	assert_string_equal(buf, "python3|/usr/bin/python3|python3 x.py");
	assert_int_equal(q("SELECT ppid FROM processes WHERE pid=50"), 7);
	assert_int_equal(q("SELECT start_ns FROM processes WHERE pid=50"), 100);   /* first wins */
	assert_int_equal(q("SELECT made*100+dropped FROM processes WHERE pid=50"), 1002);
	assert_int_equal(q("SELECT exit_ns*10+exit_code FROM processes WHERE pid=50"), 9003);
	assert_int_equal(q("SELECT announced FROM processes WHERE pid=50"), 1);
	qs("SELECT comm FROM threads WHERE tid=51", buf, sizeof buf);
	assert_string_equal(buf, "worker");
}

static void kernel_rows_and_aggregates(void **state)
{
	struct store *s = store_open(path, NULL);
	struct off_cpu_row o = { .pid = 5, .tid = 6, .next_pid = 0, .cpu = 1, .start_ns = 10,
				 .runnable_ns = 15, .end_ns = 20, .preempted = 0, .holder_pid = 9, .holder_ns = 4,
				 .holder_tid = 11 };
	struct sample_row sr = { .pid = 5, .tid = 6, .cpu = 0, .ts_ns = 12, .stack_id = -5 };
	struct frame_row f[2] = {
		{ .kind = "native", .depth = 0, .ip = 0x1000, .symbol = "gather_rows",
		  .module = "/bin/starve", .offset = 4, .line = -1 },
		{ .kind = "kernel", .depth = 0, .ip = 0xffff0000, .symbol = "do_syscall_64",
		  .module = "[kernel]", .offset = 9, .line = -1 },
	};

	(void)state;
	store_off_cpu(s, &o);
	store_cpu_busy(s, 0, 100, 30);
	store_cpu_busy(s, 0, 100, 12);              /* the same bucket in two parts */
	store_page_allocs(s, 5, 100, 8, 2, 1);
	store_page_allocs(s, 5, 100, 4, 1, 0);
	store_competitor(s, 9, "kworker", 100, 1000, 1, 0);
	store_competitor(s, 9, NULL, 100, 500, 2, 4);   /* held a woken thread's CPU 4 ns */
	store_sample(s, &sr);
	store_stack(s, -5, 5, f, 2);
	store_stack(s, -5, 5, f, 2);                /* interned: stored once */
	store_kernel(s, 5, 0x7000, "gemm_kernelXXX", 11);
	store_kernel(s, 5, 0x7000, "other", 5);     /* a name stays */
	store_kernel(s, 5, 0x7100, "", 0);          /* defined without a name first ... */
	store_kernel(s, 5, 0x7100, "reduce_kernel", 13);   /* ... named by a later definition */
	store_kernel(s, 5, 0x7100, "", 0);          /* and not unnamed again */
	store_session(s, "mode", "full");
	store_session(s, "mode", "cuda-only");      /* latest wins */
	store_close(s);
	assert_int_equal(q("SELECT end_ns - runnable_ns FROM off_cpu"), 5);
	assert_int_equal(q("SELECT busy_ns FROM cpu_busy"), 42);
	assert_int_equal(q("SELECT pages*100+allocs*10+faults FROM page_allocs"), 1231);
	assert_int_equal(q("SELECT cpu_ns+preemptions FROM competitors"), 1503);
	assert_int_equal(q("SELECT held_ns FROM competitors"), 4);
	assert_int_equal(q("SELECT holder_pid * 100 + holder_ns FROM off_cpu"), 904);
	assert_int_equal(q("SELECT holder_tid FROM off_cpu"), 11);
	assert_int_equal(q("SELECT count(*) FROM stacks"), 1);
	assert_int_equal(q("SELECT count(*) FROM stack_frames WHERE stack_id=-5"), 2);
	assert_int_equal(q("SELECT count(*) FROM cpu_samples s JOIN stack_frames f ON f.stack_id=s.stack_id "
			   "WHERE f.symbol='gather_rows'"), 1);
	char buf[64];
	qs("SELECT name FROM kernels WHERE addr=28672", buf, sizeof buf);
	assert_string_equal(buf, "gemm_kernel");
	qs("SELECT name FROM kernels WHERE addr=28928", buf, sizeof buf);
	assert_string_equal(buf, "reduce_kernel");
	qs("SELECT value FROM session WHERE key='mode'", buf, sizeof buf);
	assert_string_equal(buf, "cuda-only");
	qs("SELECT comm FROM competitors", buf, sizeof buf);
	assert_string_equal(buf, "kworker");
}

static void losses(void **state)
{
	struct store *s = store_open(path, NULL);

	(void)state;
	store_loss_add(s, INGERO_LOSS_MALFORMED, 7, 1);
	store_loss_add(s, INGERO_LOSS_MALFORMED, 7, 2);
	store_loss_max(s, INGERO_LOSS_PRELOAD_DROPPED, 8, 5);
	store_loss_max(s, INGERO_LOSS_PRELOAD_DROPPED, 8, 3);   /* an older report */
	store_loss_add(s, "bpf_ringbuf_fork", 0, 0);           /* watched, nothing lost */
	assert_int_equal(store_loss_get(s, INGERO_LOSS_MALFORMED, 7), 3);
	store_sync(s);
	assert_int_equal(q("SELECT count FROM losses WHERE source='malformed_message' AND pid=7"), 3);
	store_loss_add(s, INGERO_LOSS_MALFORMED, 7, 1);
	store_close(s);
	assert_int_equal(q("SELECT count FROM losses WHERE source='malformed_message' AND pid=7"), 4);
	assert_int_equal(q("SELECT count FROM losses WHERE source='preload_dropped' AND pid=8"), 5);
	assert_int_equal(q("SELECT count FROM losses WHERE source='bpf_ringbuf_fork'"), 0);
}

static void size_cap_drops_oldest(void **state)
{
	struct store_opts o = { .max_bytes = 2u << 20 };
	struct store *s = store_open(path, &o);
	struct ingero_cuda_call *c = calloc(20000, sizeof(*c));
	int64_t kept, dropped, oldest;
	uint64_t x = 88172645463325252ull;   /* xorshift64 state */

	(void)state;
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 20000; i++) {
			c[i] = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 1, 1, round * 20000 + i + 1);
			/* call blocks store columns of like values in few bytes: with
			 * streams, sizes and durations that vary as in a real trace,
			 * 200,000 calls take ~5 MB and the cap has work to do */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			c[i].stream = x;
			c[i].bytes = x >> 11;
			c[i].dur_ns = (uint32_t)x;
		}
		store_calls(s, c, 20000);
		store_sync(s);
		usleep(210000);   /* the writer checks the cap at most every 200 ms */
	}
	store_calls(s, c, 1);
	store_sync(s);
	store_close(s);
	kept = q("SELECT sum(calls) FROM call_blocks");
	dropped = q("SELECT count FROM losses WHERE source='size_cap_rows'");
	oldest = q("SELECT min(first_ns) FROM call_blocks");
	assert_true(kept < 200001);
	assert_true(dropped > 0);
	assert_int_equal(kept + dropped, 200001);
	assert_true(oldest > 1);   /* the oldest went first */
	assert_true(q("SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, "
		      "pragma_freelist_count, pragma_page_size") <= (int64_t)o.max_bytes + (1 << 20));
	free(c);
}

static void bad_path_fails_cleanly(void **state)
{
	(void)state;
	assert_null(store_open("/nonexistent-dir/x.db", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(schema_and_apis, setup, teardown),
		cmocka_unit_test_setup_teardown(calls_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(block_bounds_are_signed, setup, teardown),
		cmocka_unit_test_setup_teardown(processes_upsert, setup, teardown),
		cmocka_unit_test_setup_teardown(kernel_rows_and_aggregates, setup, teardown),
		cmocka_unit_test_setup_teardown(losses, setup, teardown),
		cmocka_unit_test_setup_teardown(size_cap_drops_oldest, setup, teardown),
		cmocka_unit_test(bad_path_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
