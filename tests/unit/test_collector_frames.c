/*
 * test_collector_frames.c — stacks with their frames stored once
 * (collector/store_frames.c, schema version 8): the view stack_frames
 * gives exactly the rows the old table got for the same store_stack calls
 * (kinds, depths, the NULL conventions, a second frame at a depth left
 * out, a depth without a frame); each distinct frame is one row of frames
 * and a stack's lists hold as many ids as it has frames; frames that
 * differ in one column stay apart; ids carry across transactions and
 * start again in a new file; a stack stored twice keeps what it had.
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

#include "ingero/schema.h"
#include "../../collector/store.h"

#define STORE_DB_NAME "frames"
#include "store_db.h"

/* Every row of the query, one line each ("|" between columns, "~" for
 * NULL), into out. */
static void rows(const char *sql, char *out, size_t size)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	size_t o = 0;

	out[0] = 0;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);

			o += (size_t)snprintf(out + o, size - o, "%s%s", i ? "|" : "", v ? v : "~");
			assert_true(o < size);
		}
		o += (size_t)snprintf(out + o, size - o, "\n");
		assert_true(o < size);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

#define NATIVE(d_, ip_, sym_, mod_, off_) \
	{ .kind = "native", .depth = d_, .ip = ip_, .symbol = sym_, .module = mod_, .offset = off_, .line = -1 }
#define KERNEL(d_, ip_, sym_, off_) \
	{ .kind = "kernel", .depth = d_, .ip = ip_, .symbol = sym_, .module = "[kernel]", .offset = off_, .line = -1 }
#define PYTHON(d_, file_, func_, line_) \
	{ .kind = "python", .depth = d_, .ip = 0, .symbol = func_, .file = file_, .offset = 77, .line = line_ }

static void view_gives_the_old_rows(void **state)
{
	struct store *s = store_open(path, NULL);
	/* frames given out of order, a kind's frames after another's */
	struct frame_row a[] = {
		PYTHON(0, "train.py", "step", 12),
		NATIVE(0, 0x1000, "cudaStreamSynchronize", "/lib/libcudart.so.13", 16),
		KERNEL(0, 0xffff1000, "schedule", 5),
		NATIVE(1, 0x2000, NULL, "/usr/bin/python3.12", 4096),   /* no symbol */
		PYTHON(1, "train.py", "<module>", -1),                   /* no line: NULL */
		KERNEL(1, 0xffff2000, "do_syscall_64", 9),
	};
	char got[2048];

	(void)state;
	store_stack(s, 7, 42, a, sizeof a / sizeof *a);
	store_close(s);
	assert_int_equal(q("PRAGMA user_version"), INGERO_SCHEMA_VERSION);
	assert_true(INGERO_SCHEMA_VERSION >= 8);   /* frames stored once since 8 */
	/* as the old table's primary key (stack_id, kind, depth) ordered them */
	rows("SELECT * FROM stack_frames", got, sizeof got);
	assert_string_equal(got,
		"7|0|kernel|4294905856|schedule|[kernel]|5|~|~\n"
		"7|1|kernel|4294909952|do_syscall_64|[kernel]|9|~|~\n"
		"7|0|native|4096|cudaStreamSynchronize|/lib/libcudart.so.13|16|~|~\n"
		"7|1|native|8192|~|/usr/bin/python3.12|4096|~|~\n"
		"7|0|python|~|step|~|~|train.py|12\n"
		"7|1|python|~|<module>|~|~|train.py|~\n");
	rows("SELECT pid, kernel, native, python FROM stacks", got, sizeof got);
	assert_string_equal(got, "42|[1,2]|[3,4]|[5,6]\n");
	rows("SELECT * FROM stack_frames WHERE stack_id = 7 AND kind = 'python' AND depth = 1", got, sizeof got);
	assert_string_equal(got, "7|1|python|~|<module>|~|~|train.py|~\n");
}

/* WHERE stack_id = ? reads one row of stacks, by its primary key, and each
 * frame by its own. */
static void view_reads_by_primary_keys(void **state)
{
	struct store *s = store_open(path, NULL);
	char plan[1024];

	(void)state;
	store_close(s);
	rows("EXPLAIN QUERY PLAN SELECT * FROM stack_frames WHERE stack_id = 5", plan, sizeof plan);
	assert_non_null(strstr(plan, "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)"));
	assert_non_null(strstr(plan, "SEARCH f USING INTEGER PRIMARY KEY (rowid=?)"));
	assert_null(strstr(plan, "SCAN s"));
}

static void frames_stored_once(void **state)
{
	struct store *s = store_open(path, NULL);
	struct frame_row leaf[] = {
		NATIVE(0, 0x1000, "gather_rows", "/bin/starve", 4),
		NATIVE(1, 0x2000, "main", "/bin/starve", 8),
	};
	struct frame_row other[] = {
		NATIVE(0, 0x1010, "gather_rows", "/bin/starve", 20),   /* another ip: another frame */
		NATIVE(1, 0x2000, "main", "/bin/starve", 8),
	};
	/* frames that differ in one column only */
	struct frame_row apart[] = {
		NATIVE(0, 0x2000, "main", "/bin/starve", 9),
		NATIVE(1, 0x2000, "main", "/bin/other", 8),
		NATIVE(2, 0x2000, "", "/bin/starve", 8),
		NATIVE(3, 0x2000, NULL, "/bin/starve", 8),
		PYTHON(0, "a.py", "f", 0),
		PYTHON(1, "a.py", "f", -1),
		PYTHON(2, "a.py", "f", -5),   /* negative: NULL, the same frame as the one above */
		KERNEL(0, 0x2000, "main", 8),
	};

	(void)state;
	for (int64_t id = 1; id <= 100; id++) {
		store_stack(s, id, 5, id % 2 ? leaf : other, 2);
		if (id == 50)
			store_sync(s);   /* ids carry across transactions */
	}
	apart[7].module = "/bin/starve";   /* a kernel frame with a native one's columns */
	store_stack(s, 101, 5, apart, sizeof apart / sizeof *apart);
	store_close(s);
	assert_int_equal(q("SELECT count(*) FROM stacks"), 101);
	assert_int_equal(q("SELECT count(*) FROM frames"), 3 + 7);
	assert_int_equal(q("SELECT count(*) FROM (SELECT DISTINCT kind, ip, symbol, module, offset, file, line "
			   "FROM frames)"), q("SELECT count(*) FROM frames"));
	assert_int_equal(q("SELECT count(*) FROM stack_frames"), 200 + 8);
	assert_int_equal(q("SELECT sum(coalesce(json_array_length(kernel), 0) + coalesce(json_array_length(native), 0) "
			   "+ coalesce(json_array_length(python), 0)) FROM stacks"), 208);
	assert_int_equal(q("SELECT count(*) FROM stack_frames WHERE symbol = 'gather_rows' AND depth = 0"), 100);
	assert_int_equal(q("SELECT count(*) FROM stack_frames WHERE symbol = 'main' AND depth = 1 AND stack_id <= 100"),
			 100);
	assert_int_equal(q("SELECT count(*) FROM stack_frames WHERE stack_id = 101 AND kind = 'python' AND line IS NULL"),
			 2);
	assert_int_equal(q("SELECT count(*) FROM stack_frames WHERE stack_id = 101 AND kind = 'native' AND symbol = ''"),
			 1);
	/* every id in the lists names a frame of its kind */
	assert_int_equal(q("SELECT count(*) FROM stacks s, json_each(s.native) j LEFT JOIN frames f ON f.id = j.value "
			   "WHERE f.kind IS NOT 'native'"), 0);
	assert_int_equal(q("SELECT count(*) FROM stacks s, json_each(s.python) j LEFT JOIN frames f ON f.id = j.value "
			   "WHERE f.kind IS NOT 'python'"), 0);
}

/* A second frame at a depth is left out (the old primary key left it out);
 * a depth without a frame is a null in the list, and no row in the view. */
static void depths_as_the_old_key(void **state)
{
	struct store *s = store_open(path, NULL);
	struct frame_row f[] = {
		NATIVE(0, 0x1000, "first", "/m", 1),
		NATIVE(0, 0x1100, "second", "/m", 1),
		NATIVE(2, 0x1200, "after_a_gap", "/m", 1),
		NATIVE(5000, 0x1300, "too_deep", "/m", 1),
	};
	char got[512];

	(void)state;
	store_stack(s, 9, 1, f, sizeof f / sizeof *f);
	store_close(s);
	rows("SELECT depth, symbol FROM stack_frames", got, sizeof got);
	assert_string_equal(got, "0|first\n2|after_a_gap\n");
	rows("SELECT native FROM stacks", got, sizeof got);
	assert_string_equal(got, "[1,null,2]\n");
	assert_int_equal(q("SELECT count(*) FROM frames"), 2);
}

/* The same stack id again (another process's stack of the same hash, a
 * resent record) keeps its pid and lists, and takes a kind it lacked. */
static void stack_stored_twice(void **state)
{
	struct store *s = store_open(path, NULL);
	struct frame_row nat[] = { NATIVE(0, 0x1000, "a", "/m", 1) };
	struct frame_row both[] = { NATIVE(0, 0x2000, "b", "/m", 1), PYTHON(0, "x.py", "g", 3) };
	char got[512];

	(void)state;
	store_stack(s, 3, 10, nat, 1);
	store_sync(s);
	store_stack(s, 3, 11, both, 2);
	store_close(s);
	rows("SELECT stack_id, kind, symbol FROM stack_frames", got, sizeof got);
	assert_string_equal(got, "3|native|a\n3|python|g\n");
	assert_int_equal(q("SELECT pid FROM stacks"), 10);
}

/* A new file starts its ids again: each file's lists name its own frames. */
static void new_file_new_ids(void **state)
{
	struct frame_row one[] = { NATIVE(0, 0x1000, "one", "/m", 1) };
	struct frame_row two[] = { NATIVE(0, 0x2000, "two", "/m", 1), NATIVE(1, 0x1000, "one", "/m", 1) };
	char got[512];
	struct store *s = store_open(path, NULL);

	(void)state;
	store_stack(s, 1, 1, one, 1);
	store_close(s);
	teardown(NULL);
	s = store_open(path, NULL);
	store_stack(s, 2, 1, two, 2);
	store_close(s);
	rows("SELECT id, symbol FROM frames", got, sizeof got);
	assert_string_equal(got, "1|two\n2|one\n");
	rows("SELECT stack_id, depth, symbol FROM stack_frames", got, sizeof got);
	assert_string_equal(got, "2|0|two\n2|1|one\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(view_gives_the_old_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(view_reads_by_primary_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(frames_stored_once, setup, teardown),
		cmocka_unit_test_setup_teardown(depths_as_the_old_key, setup, teardown),
		cmocka_unit_test_setup_teardown(stack_stored_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(new_file_new_ids, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
