/*
 * call_block.c — CUDA calls to and from the call_blocks blob
 * (include/ingero/call_block.h has the format and why).
 *
 * Encoding and decoding go through msgpack-c; the decoder first walks the
 * raw bytes (msgpack_walk.h) because a stored blob is untrusted input: a
 * damaged or hand-edited database must give an error, never a crash.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ingero/call_block.h"
#include "ingero/msgpack_sink.h"
#include "msgpack_walk.h"

/* One column: how to read it from a call and write it back. */
enum col {
	C_TID, C_API, C_START, C_DUR, C_STREAM, C_BYTES, C_DIR, C_FLAGS, C_RET,
	C_STACK, C_KERNEL, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ
};

/* Column k of c[0..n) into v, as the 64 bits msgpack carries; start is
 * each call's difference from the previous one (two's complement).  The
 * switch runs once per column, not per value: this is the writer's hot
 * path at full ingest rate. */
static void column(const struct ingero_cuda_call *c, size_t n, enum col k, uint64_t *v)
{
#define FILL(expr) for (size_t i = 0; i < n; i++) v[i] = (expr); break
	switch (k) {
	case C_TID:    FILL(c[i].tid);
	case C_API:    FILL(c[i].api);
	case C_START:  FILL(i ? c[i].start_ns - c[i - 1].start_ns : c[i].start_ns);
	case C_DUR:    FILL(c[i].dur_ns);
	case C_STREAM: FILL(c[i].stream);
	case C_BYTES:  FILL(c[i].bytes);
	case C_DIR:    FILL(c[i].dir);
	case C_FLAGS:  FILL(c[i].flags);
	case C_RET:    FILL((uint64_t)(int64_t)c[i].ret);
	case C_STACK:  FILL(c[i].stack_id);
	case C_KERNEL: FILL(c[i].kernel);
	case C_GX: case C_GY: case C_GZ: FILL(c[i].grid[k - C_GX]);
	case C_BX: case C_BY: case C_BZ: FILL(c[i].block[k - C_BX]);
	}
#undef FILL
}

/* Columns whose values are signed: packed as msgpack signed integers. */
static int is_signed(enum col k)
{
	return k == C_RET || k == C_START;
}

static int pack_value(msgpack_packer *pk, enum col k, size_t i, uint64_t v)
{
	if (is_signed(k) && !(k == C_START && i == 0))
		return msgpack_pack_int64(pk, (int64_t)v);
	return msgpack_pack_uint64(pk, v);
}

/* Room for a column of n integers of up to 9 bytes and its header. */
static int reserve(msgpack_sbuffer *sb, size_t n)
{
	return ingero_sbuffer_reserve(sb, 9 * n + 16);
}

int ingero_block_encode(msgpack_sbuffer *sb, const struct ingero_cuda_call *c, size_t n)
{
	msgpack_packer pk;
	uint64_t v[INGERO_BLOCK_MAX_CALLS];

	if (n == 0 || n > INGERO_BLOCK_MAX_CALLS)
		return -1;
	sb->size = 0;
	msgpack_packer_init(&pk, sb, ingero_sbuffer_sink);
	if (reserve(sb, 2) || msgpack_pack_array(&pk, 2 + INGERO_BLOCK_COLUMNS) ||
	    msgpack_pack_uint32(&pk, INGERO_BLOCK_FORMAT) || msgpack_pack_uint64(&pk, n))
		return -1;
	for (int k = 0; k < INGERO_BLOCK_COLUMNS; k++) {
		int same = k != C_START;   /* start is never one value: deltas */

		column(c, n, k, v);
		for (size_t i = 1; i < n && same; i++)
			same = v[i] == v[0];
		if (reserve(sb, same ? 1 : n))
			return -1;
		/* a column of one value is that value */
		if (same) {
			if (pack_value(&pk, k, 1, v[0]))
				return -1;
			continue;
		}
		if (msgpack_pack_array(&pk, n))
			return -1;
		for (size_t i = 0; i < n; i++)
			if (pack_value(&pk, k, i, v[i]))
				return -1;
	}
	return 0;
}

void ingero_block_span(const struct ingero_cuda_call *c, size_t n, int64_t *first, int64_t *last)
{
	int64_t lo = (int64_t)c[0].start_ns, hi = lo;

	for (size_t i = 1; i < n; i++) {
		int64_t v = (int64_t)c[i].start_ns;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	*first = lo;
	*last = hi;
}

/* --- decoding ---------------------------------------------------------------- */

/* The integer an object holds as 64 bits; signed values sign-extended. */
static int as_u64(const msgpack_object *o, uint64_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		*v = o->via.u64;
	else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		*v = (uint64_t)o->via.i64;
	else
		return -1;
	return 0;
}

/* Whether v fits column k's field. */
static int fits(enum col k, uint64_t v)
{
	switch (k) {
	case C_TID:   return v >= 1 && v <= INT_MAX;
	case C_API:   return v <= UINT16_MAX;
	case C_DIR: case C_FLAGS: return v <= UINT8_MAX;
	case C_RET:   return (int64_t)v >= INT32_MIN && (int64_t)v <= INT32_MAX;
	case C_GX: case C_GY: case C_GZ: case C_BX: case C_BY: case C_BZ:
		return v <= UINT32_MAX;
	default:      return 1;
	}
}

/* Column k of out[0..n): each call's value from a[i], or one value for all
 * (a NULL, checked by the caller); -1 when a value is not an integer or does
 * not fit the field.  The switch runs once per column, not per value, as
 * the encoder's: 17 columns of 1,024 values a block, and the analyzer
 * decodes every block of a trace. */
static int put_column(struct ingero_cuda_call *out, size_t n, enum col k, const msgpack_object *a, uint64_t one)
{
#define PUT(stmt)                                                              \
	for (size_t i = 0; i < n; i++) {                                       \
		uint64_t v = one;                                              \
		if (a && (as_u64(&a[i], &v) || (k != C_START && !fits(k, v)))) \
			return -1;                                             \
		stmt;                                                          \
	}                                                                      \
	break
	switch (k) {
	case C_TID:    PUT(out[i].tid = (uint32_t)v);
	case C_API:    PUT(out[i].api = (uint16_t)v);
	case C_START:  PUT(out[i].start_ns = i ? out[i - 1].start_ns + v : v);
	case C_DUR:    PUT(out[i].dur_ns = v);
	case C_STREAM: PUT(out[i].stream = v);
	case C_BYTES:  PUT(out[i].bytes = v);
	case C_DIR:    PUT(out[i].dir = (uint8_t)v);
	case C_FLAGS:  PUT(out[i].flags = (uint8_t)v);
	case C_RET:    PUT(out[i].ret = (int32_t)(int64_t)v);
	case C_STACK:  PUT(out[i].stack_id = v);
	case C_KERNEL: PUT(out[i].kernel = v);
	case C_GX: case C_GY: case C_GZ: PUT(out[i].grid[k - C_GX] = (uint32_t)v);
	case C_BX: case C_BY: case C_BZ: PUT(out[i].block[k - C_BX] = (uint32_t)v);
	}
#undef PUT
	return 0;
}

static const char *const col_name[INGERO_BLOCK_COLUMNS] = {
	"tid", "api", "start", "dur", "stream", "bytes", "dir", "flags", "ret",
	"stack_id", "kernel", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"
};

static int fail(char *err, size_t errlen, const char *what, const char *col)
{
	snprintf(err, errlen, "call block: %s%s%s", what, col ? " in column " : "", col ? col : "");
	return -1;
}

static int decode_columns(const msgpack_object *top, uint32_t pid, struct ingero_cuda_call *out,
			  size_t *n, char *err, size_t errlen)
{
	const msgpack_object *f = top->via.array.ptr;
	uint64_t fmt, cnt;

	if (as_u64(&f[0], &fmt) || f[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || fmt != INGERO_BLOCK_FORMAT)
		return fail(err, errlen, "unknown format", NULL);
	if (f[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER || (cnt = f[1].via.u64) == 0 ||
	    cnt > INGERO_BLOCK_MAX_CALLS)
		return fail(err, errlen, "bad call count", NULL);
	for (size_t i = 0; i < cnt; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].pid = pid;
	}
	for (int k = 0; k < INGERO_BLOCK_COLUMNS; k++) {
		const msgpack_object *o = &f[2 + k];
		uint64_t v;

		if (o->type == MSGPACK_OBJECT_ARRAY) {
			if (o->via.array.size != cnt)
				return fail(err, errlen, "wrong length", col_name[k]);
			if (put_column(out, cnt, k, o->via.array.ptr, 0))
				return fail(err, errlen, "value out of range", col_name[k]);
		} else if (k != C_START && !as_u64(o, &v) && fits(k, v)) {
			put_column(out, cnt, k, NULL, v);
		} else {
			return fail(err, errlen, "not an integer column", col_name[k]);
		}
	}
	*n = (size_t)cnt;
	return 0;
}

int ingero_block_decode(const void *data, size_t len, uint32_t pid,
			struct ingero_cuda_call *out, size_t *n, char *err, size_t errlen)
{
	msgpack_zone zone;
	msgpack_object top;
	size_t off = 0;
	int rc;

	*n = 0;
	if (!data || ingero_msgpack_walk(data, len, 2, INGERO_BLOCK_MAX_CALLS))
		return fail(err, errlen, "not a msgpack value of two levels", NULL);
	/* columns of 1,024 small integers: one zone chunk holds a block's objects */
	if (!msgpack_zone_init(&zone, 64 * 1024))
		return fail(err, errlen, "out of memory", NULL);
	if (msgpack_unpack(data, len, &off, &zone, &top) != MSGPACK_UNPACK_SUCCESS)
		rc = fail(err, errlen, "malformed msgpack", NULL);
	else if (top.type != MSGPACK_OBJECT_ARRAY || top.via.array.size != 2 + INGERO_BLOCK_COLUMNS)
		rc = fail(err, errlen, "not an array of the block's columns", NULL);
	else
		rc = decode_columns(&top, pid, out, n, err, errlen);
	msgpack_zone_destroy(&zone);
	if (rc)
		*n = 0;
	return rc;
}
