/*
 * test_collector_pyline.c — CPython's layouts and line tables as the
 * collector reads them (common/python_layout.c): both line-table formats
 * (3.10's pairs, 3.11's location table: every entry kind, varints,
 * negative deltas, "no line" entries, truncation), 3.13's _Py_DebugOffsets
 * (fields, wrong cookie, other version, nonsense offsets), and str objects
 * read through a reader (ASCII, UCS-2 transcoded, cached UTF-8, cut to the
 * tail, wrong type, non-compact).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ingero/python_layout.h"

static void table_311(void **state)
{
	(void)state;
	static const uint8_t t[] = {
		0xE9, 0x02,                   /* no column, +1, 2 units: 0-1 → 11 */
		0x82, 0x05,                   /* short form, 3 units: 2-4 → 11 */
		0xD8, 0x01, 0x02,             /* one-line +1, 1 unit: 5 → 12 */
		0xF8,                         /* no location, 1 unit: 6 → none */
		0xF0, 0x07, 0x00, 0x01, 0x02, /* long form, -3, 1 unit: 7 → 9 */
		0xE8, 0x48, 0x03,             /* no column, +100 (varint 200), 1 unit: 8 → 109 */
	};
	static const int want[][2] = { { 0, 11 }, { 2, 11 }, { 4, 11 }, { 8, 11 }, { 9, 11 }, { 10, 12 },
				       { 12, -1 }, { 14, 9 }, { 16, 109 }, { 18, -1 }, { -2, -1 } };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_int_equal(ingero_py_line(12, t, sizeof t, 10, want[i][0]), want[i][1]);
	/* cut inside the last entry's varint: what precedes still reads, it does not */
	assert_int_equal(ingero_py_line(11, t, sizeof t - 1, 10, 14), 9);
	assert_int_equal(ingero_py_line(11, t, sizeof t - 1, 10, 16), -1);
	/* not starting at an entry */
	static const uint8_t bad[] = { 0x02, 0xE9 };
	assert_int_equal(ingero_py_line(13, bad, sizeof bad, 10, 0), -1);
	assert_int_equal(ingero_py_line(13, NULL, 0, 10, 0), -1);
}

static void table_310(void **state)
{
	(void)state;
	static const uint8_t t[] = { 6, 1, 4, 0, 2, 0x80, 8, 3, 2, 0xFE };
	static const int want[][2] = { { 0, 6 }, { 5, 6 }, { 8, 6 }, { 10, -1 }, { 12, 9 }, { 19, 9 },
				       { 20, 7 }, { 22, -1 } };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_int_equal(ingero_py_line(10, t, sizeof t, 5, want[i][0]), want[i][1]);
	assert_int_equal(ingero_py_line(10, t, 3, 5, 5), 6);   /* an odd byte at the end is ignored */
	assert_int_equal(ingero_py_line(10, t, 3, 5, 7), -1);
}

static void put64(uint8_t *b, size_t at, uint64_t v)
{
	memcpy(b + at, &v, sizeof v);
}

static void debug_offsets(void **state)
{
	(void)state;
	uint8_t d[INGERO_PY_DEBUG_BYTES] = { 0 };
	struct ingero_py_layout L;
	memcpy(d, "xdebugpy", 8);
	put64(d, 8, 0x030D05F0);   /* 3.13.5 */
	/* the 3.13.0 values, one moved */
	static const size_t at[] = { 40, 72, 168, 184, 192, 232, 240, 248, 264, 280, 296, 304, 312, 344 };
	static const uint64_t v[] = { 632, 7352, 8, 72, 152, 8, 0, 56, 70, 112, 128, 136, 68, 200 };
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
		put64(d, at[i], v[i]);
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), 0);
	assert_int_equal(L.minor, 13);
	assert_int_equal(L.rt_interp_main, 640);                /* .main, right after .head */
	assert_int_equal(L.interp_threads_head, 7352);
	assert_int_equal(L.ts_frame, 72);
	assert_int_equal(L.co_bytecode, 200);
	assert_int_equal(L.cf_current, -1);                     /* not in the offsets: from the table */
	assert_int_equal(L.str_ascii, ingero_py_layout(13)->str_ascii);
	/* the collector's flag and the GIL's holder: unknown while those
	 * offsets are zeros, then interpreter → gc + gc → collecting, and
	 * interpreter → _gil.last_holder (3.13.0's, the collector's moved) */
	assert_int_equal(L.gc_collecting, -1);
	assert_int_equal(L.gil_holder_interp, -1);
	assert_int_equal(L.gil_holder_rt, -1);
	put64(d, 80, 80);      /* interpreter_state.gc */
	put64(d, 144, 7760);   /* interpreter_state.gil_runtime_state_holder */
	put64(d, 568, 352);    /* gc.size */
	put64(d, 576, 24);     /* gc.collecting */
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), 0);
	assert_int_equal(L.gc_collecting, 80 + 24);
	assert_int_equal(L.gil_holder_interp, 7760);
	assert_int_equal(L.gil_holder_rt, -1);
	put64(d, 576, 352);    /* not inside the gc state */
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), 0);
	assert_int_equal(L.gc_collecting, -1);
	assert_int_equal(L.gil_holder_interp, -1);
	put64(d, 576, 24);
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d - 1), -1);
	put64(d, 8, 0x030E00F0);   /* 3.14: its _Py_DebugOffsets differ */
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), -1);
	put64(d, 8, 0x030D00F0);
	put64(d, 248, 1ull << 40);   /* not an offset */
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), -1);
	put64(d, 248, 56);
	d[0] = 'X';
	assert_int_equal(ingero_py_layout_debug(&L, d, sizeof d), -1);
	assert_null(ingero_py_layout(9));
	assert_null(ingero_py_layout(14));
	assert_int_equal(ingero_py_layout(10)->cf_current, -1);
	assert_int_equal(ingero_py_layout(11)->cf_current, 8);
	/* scripts/python-layout: the collector's flag in the interpreter; the
	 * GIL's last holder in _PyRuntime up to 3.11, in the interpreter after */
	static const struct { int minor; int32_t gc, rt, interp; } gil[] = {
		{ 10, 816, 360, -1 }, { 11, 848, 368, -1 }, { 12, 312, -1, 1048 }, { 13, 7600, -1, 7760 },
	};
	for (size_t i = 0; i < sizeof gil / sizeof gil[0]; i++) {
		const struct ingero_py_layout *G = ingero_py_layout(gil[i].minor);
		assert_int_equal(G->gc_collecting, gil[i].gc);
		assert_int_equal(G->gil_holder_rt, gil[i].rt);
		assert_int_equal(G->gil_holder_interp, gil[i].interp);
	}
}

/* a fake process memory: addresses BASE.. map to mem[] */
#define BASE 0x100000u
static uint8_t mem[4096];

static int rd(void *ctx, uint64_t addr, void *out, size_t n)
{
	(void)ctx;
	if (addr < BASE || addr - BASE + n > sizeof mem)
		return -1;
	memcpy(out, mem + (addr - BASE), n);
	return 0;
}

static uint64_t str_obj(size_t at, uint64_t type, int64_t len, uint32_t st)
{
	put64(mem, at + 8, type);
	memcpy(mem + at + 16, &len, sizeof len);
	memcpy(mem + at + 32, &st, sizeof st);
	return BASE + at;
}

#define ST(kind, compact, ascii) ((uint32_t)((kind) << 2 | (compact) << 5 | (ascii) << 6))

static void strings(void **state)
{
	(void)state;
	const struct ingero_py_layout *L = ingero_py_layout(12);
	const uint64_t TYPE = 0xabc000;
	char out[64];
	memset(mem, 0, sizeof mem);
	uint64_t a = str_obj(0, TYPE, 11, ST(1, 1, 1));
	memcpy(mem + L->str_ascii, "/a/train.py", 11);
	assert_int_equal(ingero_py_str(L, rd, NULL, a, TYPE, out, sizeof out, 1), 11);
	assert_memory_equal(out, "/a/train.py", 11);
	assert_int_equal(ingero_py_str(L, rd, NULL, a, TYPE, out, 5, 1), 5);   /* the tail kept */
	assert_memory_equal(out, "in.py", 5);
	assert_int_equal(ingero_py_str(L, rd, NULL, a, TYPE, out, 5, 0), 5);   /* the head kept */
	assert_memory_equal(out, "/a/tr", 5);
	assert_int_equal(ingero_py_str(L, rd, NULL, a, TYPE + 1, out, sizeof out, 1), -1);   /* not a str */
	/* UCS-2, no cached UTF-8: transcoded (é = U+00E9, € = U+20AC) */
	uint64_t u = str_obj(512, TYPE, 3, ST(2, 1, 0));
	const uint16_t chars[] = { 'x', 0xE9, 0x20AC };
	memcpy(mem + 512 + L->str_compact, chars, sizeof chars);
	assert_int_equal(ingero_py_str(L, rd, NULL, u, TYPE, out, sizeof out, 0), 6);
	assert_memory_equal(out, "x\xc3\xa9\xe2\x82\xac", 6);
	assert_int_equal(ingero_py_str(L, rd, NULL, u, TYPE, out, 2, 0), 1);   /* never half a character */
	/* with cached UTF-8: read from there */
	uint64_t c = str_obj(1024, TYPE, 2, ST(2, 1, 0));
	put64(mem, 1024 + L->str_utf8, BASE + 2048);
	put64(mem, 1024 + L->str_utf8_len, 3);
	memcpy(mem + 2048, "\xc3\xa9z", 3);
	assert_int_equal(ingero_py_str(L, rd, NULL, c, TYPE, out, sizeof out, 0), 3);
	assert_memory_equal(out, "\xc3\xa9z", 3);
	/* not compact (a legacy string), a bad length, unreadable */
	assert_int_equal(ingero_py_str(L, rd, NULL, str_obj(3072, TYPE, 3, ST(1, 0, 1)), TYPE, out, 8, 0), -1);
	assert_int_equal(ingero_py_str(L, rd, NULL, str_obj(3200, TYPE, -1, ST(1, 1, 1)), TYPE, out, 8, 0), -1);
	assert_int_equal(ingero_py_str(L, rd, NULL, 16, TYPE, out, 8, 0), -1);
	assert_int_equal(ingero_py_str(L, rd, NULL, BASE + 4090, TYPE, out, 8, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_311),
		cmocka_unit_test(table_310),
		cmocka_unit_test(debug_offsets),
		cmocka_unit_test(strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
