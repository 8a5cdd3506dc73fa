/*
 * test_collector_decode.c — the wire decoder (common/wire_decode.c): every
 * record type round-trips, and everything malformed is refused whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingero/api.h"
#include "ingero/wire_decode.h"
#include "../helpers/collector_wire.h"

static int decode(struct tw *w, struct ingero_wire_batch *b)
{
	return ingero_wire_decode(w->sb.data, w->sb.size, b);
}

static void every_record_type(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 100, 101, 5000);
	struct ingero_cuda_call l = tw_sample_call(INGERO_API_CU_LAUNCH_KERNEL, 100, 100, 6000);

	(void)state;
	c.ret = -3;
	c.stack_id = 0xfedcba9876543210ull;
	l.grid[0] = 64; l.grid[1] = 2; l.grid[2] = 1;
	l.block[0] = 256; l.block[1] = 1; l.block[2] = 1;
	l.kernel = 0x7000;
	tw_begin(&w, 100, 8);
	tw_hello(&w, 100, 1, 42, "python3", "/usr/bin/python3", "python3 train.py");
	tw_call(&w, &c);
	tw_call(&w, &l);
	tw_counts(&w, 100, 2, 5);
	tw_stack(&w, 100, 77, 3, "libtorch.so", 2);
	tw_kernel(&w, 100, 0x7000, "gemm_kernel");
	tw_bye(&w, 100, 9999);
	tw_orphan(&w, 101);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.sender_pid, 100);
	assert_int_equal(b.n_records, 8);
	assert_int_equal(b.n_calls, 2);
	assert_int_equal(b.n_unknown, 0);

	assert_int_equal(b.records[0].type, INGERO_REC_HELLO);
	assert_int_equal(b.records[0].u.hello.ppid, 1);
	assert_int_equal(b.records[0].u.hello.start_ns, 42);
	assert_int_equal(b.records[0].u.hello.comm.len, 7);
	assert_memory_equal(b.records[0].u.hello.comm.ptr, "python3", 7);

	assert_int_equal(b.records[1].type, INGERO_REC_CALL);
	assert_memory_equal(&b.records[1].u.call, &c, sizeof c);
	assert_memory_equal(&b.records[2].u.call, &l, sizeof l);

	assert_int_equal(b.records[3].u.counts.made, 2);
	assert_int_equal(b.records[3].u.counts.dropped, 5);

	const struct ingero_wire_stack *k = &b.records[4].u.stack;
	assert_int_equal(k->id, 77);
	assert_int_equal(k->n_native, 3);
	assert_int_equal(k->n_python, 2);
	assert_int_equal(k->native[1].ip, 0x400010);
	assert_memory_equal(k->native[1].symbol.ptr, "sym1", 4);
	assert_null(k->native[2].symbol.ptr);   /* nil symbol */
	assert_int_equal(k->python[1].line, 58);

	assert_memory_equal(b.records[5].u.kernel.name.ptr, "gemm_kernel", 11);
	assert_int_equal(b.records[6].u.bye.end_ns, 9999);
	assert_int_equal(b.records[7].type, INGERO_REC_ORPHAN);
	assert_int_equal(b.records[7].u.orphan.pid, 101);
	ingero_wire_batch_free(&b);
	tw_free(&w);
}

static void unknown_records_are_skipped_and_counted(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_STREAM_SYNCHRONIZE, 7, 7, 1);

	(void)state;
	tw_begin(&w, 7, 3);
	tw_unknown(&w);
	tw_call(&w, &c);
	tw_unknown(&w);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.n_records, 1);
	assert_int_equal(b.n_unknown, 2);
	ingero_wire_batch_free(&b);
	tw_free(&w);
}

static void empty_batch(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;

	(void)state;
	tw_begin(&w, 7, 0);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.n_records, 0);
	ingero_wire_batch_free(&b);
	tw_free(&w);
}

static void wrong_version(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;

	(void)state;
	tw_begin_v(&w, INGERO_WIRE_VERSION + 1, 7, 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_VERSION);
	assert_null(b.records);
	tw_free(&w);
}

/* Any prefix of a valid message, and the message with a trailing byte, is refused. */
static void truncations_and_trailing_bytes(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY, 9, 9, 123);
	char *longer;

	(void)state;
	tw_begin(&w, 9, 3);
	tw_hello(&w, 9, 1, 1, "a", "b", "c");
	tw_call(&w, &c);
	tw_stack(&w, 9, 1, 2, "m", 1);
	for (size_t n = 0; n < w.sb.size; n++)
		assert_int_not_equal(ingero_wire_decode(w.sb.data, n, &b), 0);
	longer = malloc(w.sb.size + 1);
	memcpy(longer, w.sb.data, w.sb.size);
	longer[w.sb.size] = 0x00;
	assert_int_equal(ingero_wire_decode(longer, w.sb.size + 1, &b), INGERO_WIRE_E_MSGPACK);
	free(longer);
	tw_free(&w);
}

/* A five-byte message claiming 2^32-1 elements must not make anyone allocate. */
static void huge_counts_are_refused_cheaply(void **state)
{
	static const unsigned char bombs[][16] = {
		{ 0xdd, 0xff, 0xff, 0xff, 0xff },
		{ 0x93, 0x01, 0x05, 0xdd, 0xff, 0xff, 0xff, 0xff },
		{ 0x93, 0x01, 0x05, 0x91, 0xdd, 0x7f, 0xff, 0xff, 0xff, 0x02 },
		{ 0xdb, 0xff, 0xff, 0xff, 0xff, 'x' },
		{ 0xc6, 0x7f, 0xff, 0xff, 0xff, 'x' },
	};
	static const size_t lens[] = { 5, 8, 10, 6, 6 };
	struct ingero_wire_batch b;

	(void)state;
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
		assert_int_equal(ingero_wire_decode(bombs[i], lens[i], &b), INGERO_WIRE_E_MSGPACK);
}

static void maps_and_deep_nesting_are_refused(void **state)
{
	unsigned char map[] = { 0x81, 0x01, 0x02 };
	unsigned char deep[64];
	struct ingero_wire_batch b;

	(void)state;
	assert_int_equal(ingero_wire_decode(map, sizeof map, &b), INGERO_WIRE_E_MSGPACK);
	memset(deep, 0x91, sizeof deep);
	deep[sizeof deep - 1] = 0x01;
	assert_int_equal(ingero_wire_decode(deep, sizeof deep, &b), INGERO_WIRE_E_MSGPACK);
}

static void size_limits(void **state)
{
	struct ingero_wire_batch b;
	unsigned char one = 0x90;
	struct tw w;
	char *big = malloc(INGERO_WIRE_MAX_STR + 2);

	(void)state;
	assert_int_equal(ingero_wire_decode(&one, 0, &b), INGERO_WIRE_E_SIZE);
	assert_int_equal(ingero_wire_decode(&one, INGERO_WIRE_MAX_MSG_BYTES + 1, &b), INGERO_WIRE_E_SIZE);

	memset(big, 'a', INGERO_WIRE_MAX_STR + 1);
	big[INGERO_WIRE_MAX_STR + 1] = 0;
	tw_begin(&w, 5, 1);
	tw_kernel(&w, 5, 1, big);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_LIMIT);
	tw_free(&w);
	big[INGERO_WIRE_MAX_STR] = 0;   /* exactly the limit is fine */
	tw_begin(&w, 5, 1);
	tw_kernel(&w, 5, 1, big);
	assert_int_equal(decode(&w, &b), 0);
	ingero_wire_batch_free(&b);
	tw_free(&w);
	free(big);

	tw_begin(&w, 5, 1);
	tw_stack(&w, 5, 1, INGERO_WIRE_MAX_NATIVE + 1, "m", 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_LIMIT);
	tw_free(&w);
	tw_begin(&w, 5, 1);
	tw_stack(&w, 5, 1, 0, "m", INGERO_WIRE_MAX_PYTHON + 1);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_LIMIT);
	tw_free(&w);
}

/* One bad record spoils the whole message: nothing is delivered. */
static void bad_fields(void **state)
{
	struct ingero_wire_batch b;
	struct tw w;
	struct ingero_cuda_call ok = tw_sample_call(INGERO_API_CUDA_MEMCPY, 5, 5, 1);
	struct ingero_cuda_call bad[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		bad[i] = ok;
	bad[0].api = 0;
	bad[1].api = INGERO_API_MAX;
	bad[2].pid = 0;
	bad[3].dir = 200;
	for (int i = 0; i < 4; i++) {
		tw_begin(&w, 5, 2);
		tw_call(&w, &ok);
		tw_call(&w, &bad[i]);
		assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
		assert_int_equal(b.n_records, 0);
		assert_null(b.records);
		tw_free(&w);
	}
	/* 14 fields: neither a plain call nor a launch */
	tw_begin(&w, 5, 1);
	msgpack_pack_array(&w.pk, 14);
	for (int i = 0; i < 14; i++)
		msgpack_pack_unsigned_int(&w.pk, i == 0 ? INGERO_REC_CALL : 1);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
	/* a string where a number belongs */
	tw_begin(&w, 5, 1);
	msgpack_pack_array(&w.pk, 4);
	msgpack_pack_unsigned_int(&w.pk, INGERO_REC_COUNTS);
	tw_str(&w, "5");
	msgpack_pack_unsigned_int(&w.pk, 1);
	msgpack_pack_unsigned_int(&w.pk, 1);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
	/* a record that is not an array; a type that is not a number */
	tw_begin(&w, 5, 1);
	msgpack_pack_unsigned_int(&w.pk, 2);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
	tw_begin(&w, 5, 1);
	msgpack_pack_array(&w.pk, 1);
	tw_str(&w, "CALL");
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
	/* negative sender; sender 0 */
	tw_begin(&w, 0, 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_SHAPE);
	tw_free(&w);
}

static void capture_records(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	(void)state;
	tw_begin(&w, 7, 2);
	tw_capture(&w, 7, 1000, 1);
	tw_capture(&w, 7, 2000, 0);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.n_records, 2);
	assert_int_equal(b.records[0].type, INGERO_REC_CAPTURE);
	assert_int_equal(b.records[0].u.capture.pid, 7);
	assert_int_equal(b.records[0].u.capture.t_ns, 1000);
	assert_int_equal(b.records[0].u.capture.recording, 1);
	assert_int_equal(b.records[1].u.capture.recording, 0);
	ingero_wire_batch_free(&b);
	tw_free(&w);
	/* recording is 0 or 1: anything else refuses the message whole */
	tw_begin(&w, 7, 2);
	tw_capture(&w, 7, 1000, 1);
	tw_capture(&w, 7, 2000, 2);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	assert_int_equal(b.n_records, 0);
	tw_free(&w);
	/* a field short */
	tw_begin(&w, 7, 1);
	msgpack_pack_array(&w.pk, 3);
	msgpack_pack_unsigned_int(&w.pk, INGERO_REC_CAPTURE);
	msgpack_pack_unsigned_int(&w.pk, 7);
	msgpack_pack_uint64(&w.pk, 1000);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
}

static void range_records(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	(void)state;
	tw_begin(&w, 7, 2);
	tw_range(&w, 7, 8, 1000, 250, 1, INGERO_RANGE_PUSH, "data", 0);
	tw_range(&w, 7, 8, 2000, 0, 0, INGERO_RANGE_MARK, "", 3);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.n_records, 2);
	const struct ingero_wire_range *r = &b.records[0].u.range;
	assert_int_equal(b.records[0].type, INGERO_REC_RANGE);
	assert_int_equal(r->pid, 7);
	assert_int_equal(r->tid, 8);
	assert_int_equal(r->start_ns, 1000);
	assert_int_equal(r->dur_ns, 250);
	assert_int_equal(r->depth, 1);
	assert_int_equal(r->kind, INGERO_RANGE_PUSH);
	assert_int_equal(r->name.len, 4);
	assert_memory_equal(r->name.ptr, "data", 4);
	assert_int_equal(b.records[1].u.range.kind, INGERO_RANGE_MARK);
	assert_int_equal(b.records[1].u.range.name.len, 0);
	assert_int_equal(b.records[1].u.range.lost, 3);
	ingero_wire_batch_free(&b);
	tw_free(&w);
	/* a kind this version has no name for refuses the message whole */
	tw_begin(&w, 7, 2);
	tw_range(&w, 7, 8, 1000, 250, 1, INGERO_RANGE_PUSH, "data", 0);
	tw_range(&w, 7, 8, 1000, 250, 1, INGERO_RANGE_KIND_MAX, "data", 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	assert_int_equal(b.n_records, 0);
	tw_free(&w);
	/* the losses sent as the process stops */
	tw_begin(&w, 7, 1);
	msgpack_pack_array(&w.pk, 3);
	msgpack_pack_unsigned_int(&w.pk, INGERO_REC_RANGE_STATS);
	msgpack_pack_unsigned_int(&w.pk, 7);
	msgpack_pack_uint64(&w.pk, 10);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.records[0].type, INGERO_REC_RANGE_STATS);
	assert_int_equal(b.records[0].u.range_stats.pid, 7);
	assert_int_equal(b.records[0].u.range_stats.lost, 10);
	ingero_wire_batch_free(&b);
	tw_free(&w);
	/* no thread, and a field short */
	tw_begin(&w, 7, 1);
	tw_range(&w, 7, 0, 1000, 250, 1, INGERO_RANGE_PUSH, "data", 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
	tw_begin(&w, 7, 1);
	msgpack_pack_array(&w.pk, 8);
	msgpack_pack_unsigned_int(&w.pk, INGERO_REC_RANGE);
	for (int i = 0; i < 7; i++)
		msgpack_pack_unsigned_int(&w.pk, 1);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
}

static void gpu_records(void **state)
{
	struct tw w;
	struct ingero_wire_batch b;
	(void)state;
	tw_begin(&w, 7, 2);
	tw_gpu(&w, 7, 0x7f00deadbeef00ull, 1000, 2500, 1);
	tw_gpu_stats(&w, 7, 40, 3);
	assert_int_equal(decode(&w, &b), 0);
	assert_int_equal(b.n_records, 2);
	assert_int_equal(b.n_calls, 0);
	assert_int_equal(b.records[0].type, INGERO_REC_GPU);
	assert_int_equal(b.records[0].u.gpu.pid, 7);
	assert_true(b.records[0].u.gpu.stream == 0x7f00deadbeef00ull);
	assert_int_equal(b.records[0].u.gpu.recorded_ns, 1000);
	assert_int_equal(b.records[0].u.gpu.done_ns, 2500);
	assert_int_equal(b.records[0].u.gpu.flags, 1);
	assert_int_equal(b.records[1].type, INGERO_REC_GPU_STATS);
	assert_int_equal(b.records[1].u.gpu_stats.made, 40);
	assert_int_equal(b.records[1].u.gpu_stats.lost, 3);
	ingero_wire_batch_free(&b);
	tw_free(&w);
	/* done before recorded cannot be (the sender clamps): refused whole */
	tw_begin(&w, 7, 2);
	tw_gpu_stats(&w, 7, 1, 0);
	tw_gpu(&w, 7, 0, 2000, 1999, 0);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	assert_int_equal(b.n_records, 0);
	tw_free(&w);
	/* a field short */
	tw_begin(&w, 7, 1);
	msgpack_pack_array(&w.pk, 5);
	for (int i = 0; i < 5; i++)
		msgpack_pack_unsigned_int(&w.pk, i == 0 ? INGERO_REC_GPU : 7);
	assert_int_equal(decode(&w, &b), INGERO_WIRE_E_RECORD);
	tw_free(&w);
}

static void strerror_names_every_error(void **state)
{
	(void)state;
	for (int e = 0; e >= INGERO_WIRE_E_NOMEM; e--)
		assert_string_not_equal(ingero_wire_strerror(e), "unknown error");
	assert_string_equal(ingero_wire_strerror(-100), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_record_type),
		cmocka_unit_test(unknown_records_are_skipped_and_counted),
		cmocka_unit_test(empty_batch),
		cmocka_unit_test(wrong_version),
		cmocka_unit_test(truncations_and_trailing_bytes),
		cmocka_unit_test(huge_counts_are_refused_cheaply),
		cmocka_unit_test(maps_and_deep_nesting_are_refused),
		cmocka_unit_test(size_limits),
		cmocka_unit_test(bad_fields),
		cmocka_unit_test(gpu_records),
		cmocka_unit_test(capture_records),
		cmocka_unit_test(range_records),
		cmocka_unit_test(strerror_names_every_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
