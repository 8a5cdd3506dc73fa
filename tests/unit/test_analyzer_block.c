/*
 * test_analyzer_block.c — the call-block codec (common/call_block.c, the
 * format in include/ingero/call_block.h), which the analyzer reads every
 * version-2 report.db through: varied calls round-trip field for field
 * (constant columns as one integer, start as signed deltas, 64-bit values
 * past 2^63, blocks of 1 and 1,024 calls), encode refuses 0 and 1,025
 * calls, and every malformed blob is refused with a reason and no calls.
 *
 * `test_analyzer_block --seeds DIR` writes the fuzz seeds instead
 * (tests/fuzz/corpus/fuzz_analyzer_block/), so that they are the
 * encoder's own output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include <ingero/api.h>
#include <ingero/call_block.h>

/* The blob's columns, in their order (call_block.h); the top array holds
 * the format and the count before them. */
enum {
	K_TID, K_API, K_START, K_DUR, K_STREAM, K_BYTES, K_DIR, K_FLAGS, K_RET,
	K_STACK, K_KERNEL, K_GX, K_GY, K_GZ, K_BX, K_BY, K_BZ
};
#define TOP(k) (2 + (k))

static struct ingero_cuda_call out[INGERO_BLOCK_MAX_CALLS];

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A block's worth of calls that differ in every column, threads interleaved. */
static void varied(struct ingero_cuda_call *c, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof c[i]);
		c[i].pid = pid;
		c[i].tid = pid + (uint32_t)(i % 3);
		c[i].api = (uint16_t)(i % 2 ? INGERO_API_CUDA_LAUNCH_KERNEL : INGERO_API_CUDA_MEMCPY_ASYNC);
		/* three threads whose calls reach the collector slightly out of order */
		c[i].start_ns = 1000000000ull + i * 1000 - (i % 3) * 1500;
		c[i].dur_ns = 100 + i * 7;
		c[i].stream = i % 4 ? 0x7f0000001000ull + i : 0;
		c[i].bytes = i % 2 ? 0 : (uint64_t)1 << (i % 40);
		c[i].dir = (uint8_t)(i % 2 ? INGERO_DIR_NONE : INGERO_DIR_HTOD);
		c[i].flags = (uint8_t)(i % 2 ? 0 : INGERO_FLAG_ASYNC | INGERO_FLAG_HOST_PINNED);
		c[i].ret = i % 5 == 4 ? -(int32_t)i : 0;
		c[i].stack_id = i % 3 ? 0 : 0x8000000000000000ull | i;
		if (i % 2) {
			c[i].kernel = 0x7f1234560000ull + (i % 7) * 0x100;
			c[i].grid[0] = (uint32_t)i;
			c[i].grid[1] = c[i].grid[2] = 1;
			c[i].block[0] = 256;
			c[i].block[1] = c[i].block[2] = 1;
		}
	}
}

/* Encodes c[0..n), decodes it as pid and checks every field came back. */
static void round_trip(const struct ingero_cuda_call *c, size_t n, uint32_t pid)
{
	msgpack_sbuffer sb;
	char err[160] = "";
	size_t got = 7;

	msgpack_sbuffer_init(&sb);
	assert_int_equal(ingero_block_encode(&sb, c, n), 0);
	if (ingero_block_decode(sb.data, sb.size, pid, out, &got, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++) {
		struct ingero_cuda_call want = c[i];

		want.pid = pid;
		if (memcmp(&out[i], &want, sizeof want))
			fail_msg("call %zu of %zu differs after the round trip", i, n);
	}
	msgpack_sbuffer_destroy(&sb);
}

/* The blob of c[0..n), unpacked: top->via.array.ptr[TOP(k)] is column k. */
struct unpacked {
	msgpack_sbuffer sb;
	msgpack_zone zone;
	msgpack_object top;
};

static const msgpack_object *unpack(struct unpacked *u, const struct ingero_cuda_call *c, size_t n)
{
	size_t off = 0;

	msgpack_sbuffer_init(&u->sb);
	assert_int_equal(ingero_block_encode(&u->sb, c, n), 0);
	assert_non_null(msgpack_zone_init(&u->zone, 4096));
	assert_int_equal(msgpack_unpack(u->sb.data, u->sb.size, &off, &u->zone, &u->top), MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, u->sb.size);
	assert_int_equal(u->top.type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(u->top.via.array.size, 2 + INGERO_BLOCK_COLUMNS);
	return u->top.via.array.ptr;
}

static void unpacked_free(struct unpacked *u)
{
	msgpack_zone_destroy(&u->zone);
	msgpack_sbuffer_destroy(&u->sb);
}

/* --- round trips ------------------------------------------------------------------ */

static void varied_calls_round_trip(void **state)
{
	static struct ingero_cuda_call c[64];

	(void)state;
	varied(c, 64, 4242);
	round_trip(c, 64, 4242);
	round_trip(c, 64, 7);   /* the pid is the row's, not the blob's */
	round_trip(c, 5, UINT32_MAX);
}

static void constant_columns_are_one_integer(void **state)
{
	struct ingero_cuda_call c[100];
	struct unpacked u;
	const msgpack_object *f;

	(void)state;
	for (size_t i = 0; i < 100; i++) {
		memset(&c[i], 0, sizeof c[i]);
		c[i].pid = 10;
		c[i].tid = 10;
		c[i].api = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
		c[i].start_ns = 5000 + i * 10;
		c[i].dur_ns = i == 99 ? 1 : 2;                 /* differs in the last call only */
		c[i].stream = 0xffffffffffffffffull;           /* constant, above 2^63 */
		c[i].ret = -2;                                 /* constant, negative */
	}
	f = unpack(&u, c, 100);
	assert_int_equal(f[0].type, MSGPACK_OBJECT_POSITIVE_INTEGER);
	assert_int_equal(f[0].via.u64, INGERO_BLOCK_FORMAT);
	assert_int_equal(f[1].via.u64, 100);
	for (int k = 0; k < INGERO_BLOCK_COLUMNS; k++) {
		int array = k == K_START || k == K_DUR;

		if (array != (f[TOP(k)].type == MSGPACK_OBJECT_ARRAY))
			fail_msg("column %d: %s expected", k, array ? "an array" : "one integer");
	}
	assert_int_equal(f[TOP(K_API)].via.u64, INGERO_API_CUDA_STREAM_SYNCHRONIZE);
	assert_true(f[TOP(K_STREAM)].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    f[TOP(K_STREAM)].via.u64 == 0xffffffffffffffffull);
	assert_true(f[TOP(K_RET)].type == MSGPACK_OBJECT_NEGATIVE_INTEGER && f[TOP(K_RET)].via.i64 == -2);
	/* start: the first start, then differences */
	assert_int_equal(f[TOP(K_START)].via.array.ptr[0].via.u64, 5000);
	assert_int_equal(f[TOP(K_START)].via.array.ptr[1].via.u64, 10);
	/* 100 calls in a few hundred bytes: what blocks are for */
	assert_true(u.sb.size < 400);
	unpacked_free(&u);
	round_trip(c, 100, 10);
}

static void starts_going_back_are_negative_deltas(void **state)
{
	struct ingero_cuda_call c[6];
	static const uint64_t start[6] = { 2000, 1000, 3000, 2999, 1ull << 62, 0 };
	struct unpacked u;
	const msgpack_object *s;

	(void)state;
	for (int i = 0; i < 6; i++) {
		c[i] = (struct ingero_cuda_call){ .pid = 1, .tid = 1 + (uint32_t)i % 2, .api = 13,
						  .start_ns = start[i], .dur_ns = 5 };
	}
	s = &unpack(&u, c, 6)[TOP(K_START)];
	assert_int_equal(s->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(s->via.array.ptr[1].type, MSGPACK_OBJECT_NEGATIVE_INTEGER);
	assert_int_equal(s->via.array.ptr[1].via.i64, -1000);
	assert_int_equal(s->via.array.ptr[3].via.i64, -1);
	assert_int_equal(s->via.array.ptr[5].via.i64, -(int64_t)(1ull << 62));
	unpacked_free(&u);
	round_trip(c, 6, 1);
}

static void extreme_values_round_trip(void **state)
{
	struct ingero_cuda_call c[4];

	(void)state;
	memset(c, 0, sizeof c);
	for (int i = 0; i < 4; i++) {
		c[i].pid = 1;
		c[i].tid = i % 2 ? INT_MAX : 1;                 /* the tid range's ends */
		c[i].api = i % 2 ? UINT16_MAX : 0;
		c[i].dir = i % 2 ? UINT8_MAX : 0;
		c[i].flags = i % 2 ? UINT8_MAX : 0;
		c[i].ret = i == 0 ? INT32_MIN : i == 1 ? INT32_MAX : i == 2 ? -1 : 0;
		c[i].stream = i % 2 ? UINT64_MAX : 1ull << 63;
		c[i].bytes = UINT64_MAX - (uint64_t)i;
		c[i].dur_ns = i % 2 ? UINT64_MAX : 0;
		c[i].stack_id = 0x8000000000000000ull + (uint64_t)i;
		c[i].kernel = UINT64_MAX - 1;
		for (int d = 0; d < 3; d++) {
			c[i].grid[d] = i % 2 ? UINT32_MAX : 1;
			c[i].block[d] = UINT32_MAX - (uint32_t)d;
		}
	}
	/* starts at both ends of 64 bits: the deltas wrap and come back */
	c[0].start_ns = UINT64_MAX - 5;
	c[1].start_ns = 3;
	c[2].start_ns = UINT64_MAX;
	c[3].start_ns = 1ull << 63;
	round_trip(c, 4, 99);
}

static void one_and_full_blocks(void **state)
{
	static struct ingero_cuda_call c[INGERO_BLOCK_MAX_CALLS + 1];
	msgpack_sbuffer sb;

	(void)state;
	varied(c, INGERO_BLOCK_MAX_CALLS + 1, 300);
	round_trip(c, 1, 300);
	round_trip(c + 7, 1, 300);
	round_trip(c, INGERO_BLOCK_MAX_CALLS, 300);
	msgpack_sbuffer_init(&sb);
	assert_int_equal(ingero_block_encode(&sb, c, 0), -1);
	assert_int_equal(ingero_block_encode(&sb, c, INGERO_BLOCK_MAX_CALLS + 1), -1);
	/* the buffer is reused: a small block after a big one is only itself */
	assert_int_equal(ingero_block_encode(&sb, c, INGERO_BLOCK_MAX_CALLS), 0);
	size_t big = sb.size, n;
	char err[160];
	assert_int_equal(ingero_block_encode(&sb, c, 2), 0);
	assert_true(sb.size < big);
	assert_int_equal(ingero_block_decode(sb.data, sb.size, 300, out, &n, err, sizeof err), 0);
	assert_int_equal(n, 2);
	msgpack_sbuffer_destroy(&sb);
}

/* Random blocks: each column constant or not, any size. */
static void random_blocks_round_trip(void **state)
{
	static struct ingero_cuda_call c[INGERO_BLOCK_MAX_CALLS];

	(void)state;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + next_rand() % INGERO_BLOCK_MAX_CALLS;
		uint64_t varies = next_rand();   /* bit k: column k differs between calls */

		for (size_t i = 0; i < n; i++) {
			uint64_t r[12];

			for (int k = 0; k < 12; k++)
				r[k] = varies >> k & 1 ? next_rand() : 0x5a5a5a5a5a5a5a5aull;
			memset(&c[i], 0, sizeof c[i]);
			c[i].tid = (uint32_t)(r[0] % INT_MAX) + 1;
			c[i].api = (uint16_t)r[1];
			c[i].start_ns = r[2] >> (r[2] % 64);     /* deltas of every size */
			c[i].dur_ns = r[3] >> (r[3] % 64);
			c[i].stream = r[4];
			c[i].bytes = r[5] >> 20;
			c[i].dir = (uint8_t)r[6];
			c[i].flags = (uint8_t)(r[6] >> 8);
			c[i].ret = (int32_t)r[7];
			c[i].stack_id = r[8];
			c[i].kernel = r[9];
			for (int d = 0; d < 3; d++) {
				c[i].grid[d] = (uint32_t)(r[10] >> (8 * d));
				c[i].block[d] = (uint32_t)(r[11] >> (8 * d));
			}
		}
		round_trip(c, n, (uint32_t)next_rand());
	}
}

/* --- malformed blobs ------------------------------------------------------------------- */

/* Refused: -1, no calls, and a reason naming `why`. */
static void refused_(const void *p, size_t len, const char *why, int line)
{
	char err[160] = "";
	size_t n = 99;

	if (ingero_block_decode(p, len, 1, out, &n, err, sizeof err) != -1)
		fail_msg("line %d: a malformed blob (%zu bytes) decoded", line, len);
	if (n != 0)
		fail_msg("line %d: refused, yet n = %zu", line, n);
	if (strncmp(err, "call block: ", 12) || !strstr(err, why))
		fail_msg("line %d: reason \"%s\", expected one with \"%s\"", line, err, why);
}
#define refused(p, len, why) refused_(p, len, why, __LINE__)

/* A valid blob of c[0..n), unpacked for editing, then packed again. */
struct edit {
	struct unpacked u;
	msgpack_object *f;
	msgpack_sbuffer sb;
};

static msgpack_object *edit_begin(struct edit *e, const struct ingero_cuda_call *c, size_t n)
{
	unpack(&e->u, c, n);
	e->f = e->u.top.via.array.ptr;
	msgpack_sbuffer_init(&e->sb);
	return e->f;
}

/* Packs the edited object; the blob is e->sb. */
static void edit_pack(struct edit *e)
{
	msgpack_packer pk;

	e->sb.size = 0;
	msgpack_packer_init(&pk, &e->sb, msgpack_sbuffer_write);
	assert_int_equal(msgpack_pack_object(&pk, e->u.top), 0);
}

static void edit_end(struct edit *e)
{
	msgpack_sbuffer_destroy(&e->sb);
	unpacked_free(&e->u);
}

static msgpack_object uint_obj(uint64_t v)
{
	msgpack_object o = { .type = MSGPACK_OBJECT_POSITIVE_INTEGER };
	o.via.u64 = v;
	return o;
}

static msgpack_object int_obj(int64_t v)
{
	msgpack_object o = { .type = MSGPACK_OBJECT_NEGATIVE_INTEGER };
	if (v >= 0)
		return uint_obj((uint64_t)v);
	o.via.i64 = v;
	return o;
}

/* A block of 4 calls: tid, start, dur and stream arrays, the rest constant. */
static void four(struct ingero_cuda_call *c)
{
	for (int i = 0; i < 4; i++)
		c[i] = (struct ingero_cuda_call){ .pid = 1, .tid = 10 + (uint32_t)i, .api = 3,
						  .start_ns = 100 + (uint64_t)i, .dur_ns = (uint64_t)i,
						  .stream = (uint64_t)i, .ret = -1 };
}

static void truncated_and_padded(void **state)
{
	struct ingero_cuda_call c[4];
	msgpack_sbuffer sb;
	char err[160];
	size_t n;

	(void)state;
	four(c);
	msgpack_sbuffer_init(&sb);
	assert_int_equal(ingero_block_encode(&sb, c, 4), 0);
	for (size_t len = 0; len < sb.size; len++)
		refused(sb.data, len, "msgpack");
	refused(NULL, 0, "msgpack");
	msgpack_sbuffer_write(&sb, "\xc0", 1);   /* one value more after the block */
	refused(sb.data, sb.size, "msgpack");
	sb.size--;
	assert_int_equal(ingero_block_decode(sb.data, sb.size, 1, out, &n, err, sizeof err), 0);
	msgpack_sbuffer_destroy(&sb);
}

static void wrong_shape(void **state)
{
	struct ingero_cuda_call c[4];
	struct edit e;
	msgpack_object *f;

	(void)state;
	four(c);
	/* format 2, format -1, format "1" */
	f = edit_begin(&e, c, 4);
	f[0] = uint_obj(INGERO_BLOCK_FORMAT + 1);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "unknown format");
	f[0] = int_obj(-1);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "unknown format");
	f[0] = (msgpack_object){ .type = MSGPACK_OBJECT_STR, .via.str = { 1, "1" } };
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "unknown format");
	f[0] = uint_obj(INGERO_BLOCK_FORMAT);
	/* counts that are not the columns' length, or no count at all */
	f[1] = uint_obj(3);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "wrong length in column tid");
	f[1] = uint_obj(5);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "wrong length in column tid");
	f[1] = uint_obj(0);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "bad call count");
	f[1] = int_obj(-4);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "bad call count");
	f[1] = uint_obj(INGERO_BLOCK_MAX_CALLS + 1);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "bad call count");
	f[1] = uint_obj(4);
	/* one column a call short, or a call long */
	e.f[TOP(K_STREAM)].via.array.size = 3;
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "wrong length in column stream");
	e.f[TOP(K_STREAM)].via.array.size = 4;
	/* a column missing (18 elements), one too many (20) */
	e.u.top.via.array.size = 1 + INGERO_BLOCK_COLUMNS;
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "not an array of the block's columns");
	e.u.top.via.array.size = 2 + INGERO_BLOCK_COLUMNS;
	edit_pack(&e);
	assert_int_equal(e.sb.size, e.u.sb.size);   /* edits undone: the original blob */
	assert_memory_equal(e.sb.data, e.u.sb.data, e.sb.size);
	edit_end(&e);
	/* a map instead of the array; a map as a column; the block inside an array */
	refused("\x81\x01\x02", 3, "msgpack");
	refused("\x80", 1, "msgpack");
	f = edit_begin(&e, c, 4);
	f[TOP(K_DUR)] = (msgpack_object){ .type = MSGPACK_OBJECT_MAP };
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "msgpack");
	edit_end(&e);
	f = edit_begin(&e, c, 4);
	msgpack_object wrap = { .type = MSGPACK_OBJECT_ARRAY, .via.array = { 1, &e.u.top } };
	msgpack_packer pk;
	msgpack_packer_init(&pk, &e.sb, msgpack_sbuffer_write);
	assert_int_equal(msgpack_pack_object(&pk, wrap), 0);
	refused(e.sb.data, e.sb.size, "msgpack");
	edit_end(&e);
	refused("\x01", 1, "not an array of the block's columns");
	refused("\x90", 1, "not an array of the block's columns");
}

static void columns_of_the_wrong_type(void **state)
{
	struct ingero_cuda_call c[4];
	struct edit e;
	msgpack_object *f, saved;
	static const msgpack_object bad[] = {
		{ .type = MSGPACK_OBJECT_NIL },
		{ .type = MSGPACK_OBJECT_BOOLEAN, .via.boolean = true },
		{ .type = MSGPACK_OBJECT_FLOAT64, .via.f64 = 1.0 },
		{ .type = MSGPACK_OBJECT_STR, .via.str = { 2, "10" } },
		{ .type = MSGPACK_OBJECT_BIN, .via.bin = { 1, "\x01" } },
	};

	(void)state;
	four(c);
	f = edit_begin(&e, c, 4);
	for (int k = 0; k < INGERO_BLOCK_COLUMNS; k++) {
		for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
			saved = f[TOP(k)];
			f[TOP(k)] = bad[b];                  /* the whole column */
			edit_pack(&e);
			refused(e.sb.data, e.sb.size, "not an integer column");
			f[TOP(k)] = saved;
		}
	}
	/* one value of an array column; start can only be an array */
	saved = f[TOP(K_TID)].via.array.ptr[2];
	f[TOP(K_TID)].via.array.ptr[2] = bad[3];
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "value out of range in column tid");
	f[TOP(K_TID)].via.array.ptr[2] = saved;
	f[TOP(K_START)] = uint_obj(100);
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "in column start");
	edit_end(&e);
}

/* A value past its field's range, as the one constant or as one call's. */
static void out_of_range(void **state)
{
	static const struct { int col; int64_t v; int neg; const char *name; } bad[] = {
		{ K_TID, 0, 0, "tid" },
		{ K_TID, (int64_t)INT_MAX + 1, 0, "tid" },
		{ K_TID, -1, 1, "tid" },
		{ K_API, UINT16_MAX + 1, 0, "api" },
		{ K_API, -1, 1, "api" },
		{ K_DIR, UINT8_MAX + 1, 0, "dir" },
		{ K_FLAGS, UINT8_MAX + 1, 0, "flags" },
		{ K_RET, (int64_t)INT32_MAX + 1, 0, "ret" },
		{ K_RET, (int64_t)INT32_MIN - 1, 1, "ret" },
		{ K_GX, (int64_t)UINT32_MAX + 1, 0, "grid_x" },
		{ K_GZ, -1, 1, "grid_z" },
		{ K_BY, (int64_t)UINT32_MAX + 1, 0, "block_y" },
	};
	struct ingero_cuda_call c[4];
	struct edit e;
	msgpack_object *f, saved;
	char why[64];

	(void)state;
	four(c);
	f = edit_begin(&e, c, 4);
	for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
		msgpack_object v = bad[b].neg ? int_obj(bad[b].v) : uint_obj((uint64_t)bad[b].v);
		msgpack_object col[4];

		snprintf(why, sizeof why, "in column %s", bad[b].name);
		saved = f[TOP(bad[b].col)];
		f[TOP(bad[b].col)] = v;                          /* as the column's one value */
		edit_pack(&e);
		refused(e.sb.data, e.sb.size, why);
		for (int i = 0; i < 4; i++)                      /* as the last call's */
			col[i] = i == 3 ? v : uint_obj(bad[b].col == K_TID ? 10 : 1);
		f[TOP(bad[b].col)] = (msgpack_object){ .type = MSGPACK_OBJECT_ARRAY, .via.array = { 4, col } };
		edit_pack(&e);
		refused(e.sb.data, e.sb.size, why);
		f[TOP(bad[b].col)] = saved;
	}
	/* the unsigned 64-bit columns take any integer, negative ones as two's complement */
	f[TOP(K_STREAM)] = int_obj(-1);
	edit_pack(&e);
	char err[160];
	size_t n;
	assert_int_equal(ingero_block_decode(e.sb.data, e.sb.size, 1, out, &n, err, sizeof err), 0);
	assert_true(out[0].stream == UINT64_MAX);
	edit_end(&e);
}

/* Lengths declared far beyond the bytes present are refused before
 * msgpack-c would allocate for them (an allocation that size would fail the
 * sanitizer build), as are values nested deeper than columns. */
static void huge_declared_lengths(void **state)
{
	struct ingero_cuda_call c[4];
	struct edit e;
	msgpack_object *f;
	/* array32 of 2^32-1 elements, alone and as the top array's first column */
	static const uint8_t top_huge[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01 };
	uint8_t col_huge[32] = { 0x93, 0x01, 0x04, 0xdd, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t str_huge[] = { 0xdb, 0x7f, 0xff, 0xff, 0xff, 'x' };
	static const uint8_t arr16[] = { 0xdc, 0xff, 0xff, 0x01, 0x01 };

	(void)state;
	refused(top_huge, sizeof top_huge, "msgpack");
	refused(col_huge, sizeof col_huge, "msgpack");
	refused(str_huge, sizeof str_huge, "msgpack");
	refused(arr16, sizeof arr16, "msgpack");
	/* an array with more elements than a block may hold, every element
	 * present: refused before msgpack-c builds ~24 bytes per element */
	{
		size_t n = INGERO_BLOCK_MAX_CALLS + 1, len = 3 + n;
		uint8_t *big = malloc(len);
		assert_non_null(big);
		big[0] = 0xdc;
		big[1] = (uint8_t)(n >> 8);
		big[2] = (uint8_t)n;
		memset(big + 3, 0x01, n);
		refused(big, len, "msgpack");
		free(big);
	}
	/* a 19-element top array with only some elements present */
	refused("\xdc\x00\x13\x01\x04", 5, "msgpack");
	four(c);
	f = edit_begin(&e, c, 4);
	msgpack_object inner = uint_obj(1);
	msgpack_object deep[4] = { uint_obj(1), uint_obj(1), uint_obj(1),
				   { .type = MSGPACK_OBJECT_ARRAY, .via.array = { 1, &inner } } };
	f[TOP(K_DUR)] = (msgpack_object){ .type = MSGPACK_OBJECT_ARRAY, .via.array = { 4, deep } };
	edit_pack(&e);
	refused(e.sb.data, e.sb.size, "msgpack");
	edit_end(&e);
}

/* --- seeds for tests/fuzz/fuzz_analyzer_block ------------------------------------------ */

static int write_seed(const char *dir, const char *name, const struct ingero_cuda_call *c, size_t n)
{
	msgpack_sbuffer sb;
	char path[4096];
	FILE *f;
	int rc = -1;

	msgpack_sbuffer_init(&sb);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (ingero_block_encode(&sb, c, n) == 0 && (f = fopen(path, "wb"))) {
		rc = fwrite(sb.data, 1, sb.size, f) == sb.size ? 0 : -1;
		if (fclose(f))
			rc = -1;
	}
	if (rc)
		fprintf(stderr, "test_analyzer_block: cannot write %s\n", path);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static int write_seeds(const char *dir)
{
	static struct ingero_cuda_call c[INGERO_BLOCK_MAX_CALLS];
	int rc = 0;

	varied(c, INGERO_BLOCK_MAX_CALLS, 100);
	rc |= write_seed(dir, "varied_64", c, 64);
	rc |= write_seed(dir, "varied_1024", c, INGERO_BLOCK_MAX_CALLS);
	rc |= write_seed(dir, "one_call", c + 1, 1);
	for (int i = 0; i < 32; i++)
		c[i] = (struct ingero_cuda_call){ .pid = 1, .tid = 1, .api = 13, .start_ns = 1000 + 10ull * i,
						  .dur_ns = 5, .ret = -1 };
	rc |= write_seed(dir, "constant_columns", c, 32);
	c[0] = (struct ingero_cuda_call){ .pid = 1, .tid = INT_MAX, .api = UINT16_MAX, .dir = UINT8_MAX,
					  .flags = UINT8_MAX, .ret = INT32_MIN, .start_ns = 1ull << 63,
					  .dur_ns = UINT64_MAX, .stream = 1ull << 63, .bytes = UINT64_MAX,
					  .stack_id = UINT64_MAX, .kernel = 1ull << 63,
					  .grid = { UINT32_MAX, 1, 1 }, .block = { 1, UINT32_MAX, 1 } };
	c[1] = c[0];
	c[1].start_ns = 0;   /* the most negative delta, -2^63 */
	c[1].tid = 1;
	rc |= write_seed(dir, "extremes", c, 2);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varied_calls_round_trip),
		cmocka_unit_test(constant_columns_are_one_integer),
		cmocka_unit_test(starts_going_back_are_negative_deltas),
		cmocka_unit_test(extreme_values_round_trip),
		cmocka_unit_test(one_and_full_blocks),
		cmocka_unit_test(random_blocks_round_trip),
		cmocka_unit_test(truncated_and_padded),
		cmocka_unit_test(wrong_shape),
		cmocka_unit_test(columns_of_the_wrong_type),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(huge_declared_lengths),
	};

	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
