/*
 * test_analyzer_util.c — the analyzer's small helpers: percentiles by
 * selection against a full sort, human formatting, duration parsing, the
 * u64 map, and JSON string escaping for hand-streamed JSON.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/base/json_out.h"
#include "../../analyzer/load/mechanisms.h"
#include "../../analyzer/load/phase_rules.h"
#include "../../analyzer/load/stacks.h"
#include "../../analyzer/base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check_against_sort(uint64_t *v, size_t n)
{
	uint64_t *s = malloc(n * sizeof *s), *w = malloc(n * sizeof *w);
	memcpy(s, v, n * sizeof *s);
	memcpy(w, v, n * sizeof *w);
	qsort(s, n, sizeof *s, cmp_u64);
	static const double p[] = { 99, 50, 100, 90, 1 };
	uint64_t out[5];
	ia_percentiles(w, n, p, out, 5);
	for (int k = 0; k < 5; k++) {
		size_t rank = (size_t)((p[k] * (double)n + 99.999999) / 100);   /* ceil(p n / 100) */
		if (rank < 1)
			rank = 1;
		if (rank > n)
			rank = n;
		assert_int_equal(out[k], s[rank - 1]);
	}
	free(s);
	free(w);
}

static void percentiles_match_sorting(void **state)
{
	(void)state;
	for (size_t n = 1; n < 300; n += 7) {
		uint64_t *v = malloc(n * sizeof *v);
		for (size_t i = 0; i < n; i++)
			v[i] = next() % 1000;   /* many ties */
		check_against_sort(v, n);
		for (size_t i = 0; i < n; i++)
			v[i] = i;               /* sorted input */
		check_against_sort(v, n);
		for (size_t i = 0; i < n; i++)
			v[i] = n - i;           /* reverse */
		check_against_sort(v, n);
		free(v);
	}
	uint64_t one[] = { 42 };
	assert_int_equal(ia_percentile(one, 1, 50), 42);
	assert_int_equal(ia_percentile(NULL, 0, 99), 0);
}

static void nearest_rank_definition(void **state)
{
	(void)state;
	uint64_t v[] = { 40, 10, 30, 20 };
	assert_int_equal(ia_percentile(v, 4, 50), 20);   /* rank ceil(2) = 2 */
	uint64_t w[100];
	for (int i = 0; i < 100; i++)
		w[i] = (uint64_t)(100 - i);
	assert_int_equal(ia_percentile(w, 100, 99), 99);
	assert_int_equal(ia_percentile(w, 100, 100), 100);
}

static void formatting(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(ia_fmt_dur(b, sizeof b, 850), "850ns");
	assert_string_equal(ia_fmt_dur(b, sizeof b, 25000), "25us");
	assert_string_equal(ia_fmt_dur(b, sizeof b, 42100000), "42.1ms");
	assert_string_equal(ia_fmt_dur(b, sizeof b, 2900000000ull), "2.90s");
	assert_string_equal(ia_fmt_count(b, sizeof b, 1638), "1,638");
	assert_string_equal(ia_fmt_count(b, sizeof b, 191000000), "191,000,000");
	assert_string_equal(ia_fmt_count(b, sizeof b, 7), "7");
	assert_string_equal(ia_fmt_ratio(b, sizeof b, 1638.2), "1,638x");
	assert_string_equal(ia_fmt_ratio(b, sizeof b, 3.44), "3.4x");
	assert_string_equal(ia_fmt_bytes(b, sizeof b, 12), "12 B");
	assert_string_equal(ia_fmt_bytes(b, sizeof b, 1536ull << 20), "1.5 GiB");
}

static void parse_durations(void **state)
{
	(void)state;
	uint64_t ns;
	assert_int_equal(ia_parse_dur("12.5", &ns), 0);
	assert_int_equal(ns, 12500000000ull);
	assert_int_equal(ia_parse_dur("1500ms", &ns), 0);
	assert_int_equal(ns, 1500000000ull);
	assert_int_equal(ia_parse_dur("30us", &ns), 0);
	assert_int_equal(ns, 30000);
	assert_int_equal(ia_parse_dur("2m", &ns), 0);
	assert_int_equal(ns, 120000000000ull);
	assert_int_equal(ia_parse_dur("-1s", &ns), -1);
	assert_int_equal(ia_parse_dur("abc", &ns), -1);
	assert_int_equal(ia_parse_dur("5 parsecs", &ns), -1);
	assert_int_equal(ia_parse_dur("", &ns), -1);
	/* strict (issue 38): strtod's other forms are not times; "0x10" was 16 s */
	static const char *const bad[] = {
		"0x10", "0X10", "0x1p4", "inf", "Infinity", "nan", "NAN", "1e3", "1E3", "1e3ms", " 5", "5 ", "+5",
		"-0", ".", "s", "ms", "1.2.3", "5sx", "5S", "1,5", "5\tms", "99999999999999999999", "3000000000h",
		"2562047.8h", "9300000000",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (ia_parse_dur(bad[i], &ns) != -1)
			fail_msg("'%s' read as %llu ns", bad[i], (unsigned long long)ns);
	/* exact in integers: fractions of any unit, rounded half up past the nanosecond */
	static const struct { const char *s; uint64_t ns; } good[] = {
		{ "0", 0 }, { "0.3s", 300000000ull }, { ".25", 250000000ull }, { "5.", 5000000000ull },
		{ "1.000000001", 1000000001ull }, { "0.0000000005", 1 }, { "0.0000000004999", 0 }, { "1.5ns", 2 },
		{ "0.5us", 500 }, { "1.5min", 90000000000ull }, { "1h", 3600000000000ull },
		{ "9200000000", 9200000000000000000ull }, { "0.12345678901234567890123s", 123456789ull },
		{ "007s", 7000000000ull },
	};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		if (ia_parse_dur(good[i].s, &ns) != 0)
			fail_msg("'%s' refused", good[i].s);
		if (ns != good[i].ns)
			fail_msg("'%s' read as %llu ns, not %llu", good[i].s, (unsigned long long)ns,
				 (unsigned long long)good[i].ns);
	}
}

static void map_grows_and_finds(void **state)
{
	(void)state;
	struct ia_map m = { 0 };
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(ia_map_put(&m, (uint64_t)i * 2654435761u, i), 0);
	for (uint32_t i = 0; i < 5000; i++)
		assert_int_equal(ia_map_get(&m, (uint64_t)i * 2654435761u), i);
	assert_int_equal(ia_map_get(&m, 1), UINT32_MAX);
	assert_int_equal(ia_map_put(&m, 0, 7), 0);   /* key 0 is a key like any other */
	assert_int_equal(ia_map_get(&m, 0), 7);
	ia_map_free(&m);
}

static char *escaped(const char *s)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	ia_json_write_string(f, s);
	fclose(f);
	return buf;
}

static void json_strings_always_parse(void **state)
{
	(void)state;
	assert_string_equal(escaped("plain"), "\"plain\"");
	assert_string_equal(escaped("a\"b\\c"), "\"a\\\"b\\\\c\"");
	assert_string_equal(escaped("tab\there\n"), "\"tab\\u0009here\\u000a\"");
	assert_string_equal(escaped("caf\xc3\xa9"), "\"caf\xc3\xa9\"");          /* valid UTF-8 kept */
	assert_string_equal(escaped("bad\xff\xfe"), "\"bad\\ufffd\\ufffd\"");    /* invalid bytes replaced */
	assert_string_equal(escaped("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  /* a surrogate is invalid */
	assert_string_equal(escaped(NULL), "\"\"");
}

static void short_symbols(void **state)
{
	(void)state;
	char b[160], tiny[12];
	assert_string_equal(ia_short_symbol(b, sizeof b,
		"at::native::structured_cat_out_cpu::impl(c10::IListRef<at::Tensor> const&, long)"),
		"at::native::structured_cat_out_cpu::impl()");
	/* template arguments keep their parentheses; the parameter list goes */
	assert_string_equal(ia_short_symbol(b, sizeof b,
		"void c10::function_ref<void (char**, long)>::callback_fn<X>(long, char**)"),
		"void c10::function_ref<void (char**, long)>::callback_fn<X>()");
	assert_string_equal(ia_short_symbol(b, sizeof b, "Foo::operator()(int) const"), "Foo::operator()()");
	assert_string_equal(ia_short_symbol(b, sizeof b, "(anonymous namespace)::run(int)"),
			    "(anonymous namespace)::run()");
	assert_string_equal(ia_short_symbol(b, sizeof b, "(unnamed frames)"), "(unnamed frames)");
	assert_string_equal(ia_short_symbol(b, sizeof b, "_PyEval_EvalFrameDefault"), "_PyEval_EvalFrameDefault");
	assert_string_equal(ia_short_symbol(tiny, sizeof tiny, "a_very_long_c_symbol"), "a_very_l...");
}

static void library_files(void **state)
{
	(void)state;
	assert_true(ia_is_library_file("/usr/lib/python3.12/threading.py"));
	assert_true(ia_is_library_file("/opt/venv/lib/python3.11/site-packages/numpy/core/x.py"));
	assert_true(ia_is_library_file("/usr/local/lib/python3.12/dist-packages/torch/nn/modules/linear.py"));
	assert_true(ia_is_library_file("/home/u/src/pytorch/torch/nn/functional.py"));   /* a source checkout */
	assert_true(ia_is_library_file("<frozen importlib._bootstrap>"));
	assert_true(ia_is_library_file(NULL));
	assert_false(ia_is_library_file("/home/u/proj/train.py"));
	assert_false(ia_is_library_file("train.py"));
	assert_false(ia_is_library_file("/work/lib/dataset.py"));
}

/* torch.compile's compile-time files, not the files a compiled model runs */
static void compile_files(void **state)
{
	(void)state;
	const char *sp = "/opt/venv/lib/python3.12/site-packages/";
	char f[300];
	static const char *const yes[] = {
		"torch/_dynamo/convert_frame.py", "torch/_dynamo/symbolic_convert.py",
		"torch/_dynamo/variables/functions.py", "torch/_inductor/compile_fx.py",
		"torch/_inductor/codegen/triton.py", "torch/_inductor/compile_worker/subproc_pool.py",
		"triton/compiler/compiler.py", "torch/_functorch/partitioners.py",
	};
	static const char *const no[] = {
		"torch/_dynamo/eval_frame.py", "torch/_inductor/runtime/triton_heuristics.py",
		"torch/_functorch/_aot_autograd/runtime_wrappers.py", "triton/runtime/jit.py",
		"torch/nn/modules/linear.py", "torch/fx/graph_module.py", "torch/_functorch/aot_autograd.py",
		"torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py", "torch/_inductor/codecache.py",
		"torch/_dynamo/guards.py",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		snprintf(f, sizeof f, "%s%s", sp, yes[i]);
		assert_true(ia_is_compile_file(f));
	}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		snprintf(f, sizeof f, "%s%s", sp, no[i]);
		assert_false(ia_is_compile_file(f));
	}
	assert_false(ia_is_compile_file(NULL));
	assert_false(ia_is_compile_file("/home/u/train.py"));
}

/* stack names from stack_frames: innermost frame, the user's own frame,
 * and whether a sample ran Python code */
static void stack_names(void **state)
{
	(void)state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"CREATE TABLE stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line);"
		/* 1: a launch inside torch, called from the user's forward */
		"INSERT INTO stack_frames VALUES (1, 0, 'python', 0, 'forward', NULL, 0,"
		" '/usr/lib/python3/dist-packages/torch/nn/modules/linear.py', 125);"
		"INSERT INTO stack_frames VALUES (1, 1, 'python', 0, 'Net.forward', NULL, 0, '/home/u/train.py', 40);"
		"INSERT INTO stack_frames VALUES (1, 0, 'native', 1, 'cudaLaunchKernel', '/usr/lib/libcudart.so.13', 0, NULL, NULL);"
		/* 2: a sample in the interpreter, Python frames all in libraries */
		"INSERT INTO stack_frames VALUES (2, 0, 'native', 1, '_PyEval_EvalFrameDefault', '/usr/lib/libpython3.12.so.1.0', 0, NULL, NULL);"
		"INSERT INTO stack_frames VALUES (2, 0, 'python', 0, 'collate', NULL, 0, '/x/site-packages/torch/utils/data/_utils/collate.py', 141);"
		/* 3: a sample in libtorch code with a Python frame: not Python code */
		"INSERT INTO stack_frames VALUES (3, 0, 'native', 1, 'at::native::cat', '/x/libtorch_cpu.so', 0, NULL, NULL);"
		"INSERT INTO stack_frames VALUES (3, 0, 'python', 0, 'get', NULL, 0, '/home/u/data.py', 9);"
		/* 5: Dynamo tracing, below the user's call */
		"INSERT INTO stack_frames VALUES (5, 0, 'python', 0, 'step', NULL, 0, '/x/site-packages/torch/_dynamo/symbolic_convert.py', 900);"
		"INSERT INTO stack_frames VALUES (5, 1, 'python', 0, 'train', NULL, 0, '/home/u/train.py', 60);"
		/* 6: the collector's "<gc>" frame (a thread CPython says collects) over
		 * a stripped python3.12's unnamed frames, a free and a page fault:
		 * the collector; the lines are the frames under it */
		"INSERT INTO stack_frames VALUES (6, 0, 'kernel', 1, 'clear_page_erms', '[kernel]', 0, NULL, NULL);"
		"INSERT INTO stack_frames VALUES (6, 0, 'native', 1, 'free', '/lib/libc.so.6', 0, NULL, NULL);"
		"INSERT INTO stack_frames VALUES (6, 1, 'native', 2, NULL, '/usr/bin/python3.12', 0, NULL, NULL);"
		"INSERT INTO stack_frames VALUES (6, 0, 'python', 0, 'garbage collection', NULL, 0, '<gc>', NULL);"
		"INSERT INTO stack_frames VALUES (6, 1, 'python', 0, 'make_batch', NULL, 0, '/home/u/train.py', 52);"
		/* 7: a user's own code compiled as "<gc>" is code, not the collector */
		"INSERT INTO stack_frames VALUES (7, 0, 'python', 0, 'f', NULL, 0, '<gc>', 3);"
		/* 8: torch.compile() importing Inductor: compiling, not start-up */
		"INSERT INTO stack_frames VALUES (8, 0, 'python', 0, '<module>', NULL, 0, '/x/site-packages/torch/_inductor/compile_fx.py', 1);"
		"INSERT INTO stack_frames VALUES (8, 1, 'python', 0, '_call_with_frames_removed', NULL, 0, '<frozen importlib._bootstrap>', 488);"
		"INSERT INTO stack_frames VALUES (8, 2, 'python', 0, 'compile', NULL, 0, '/x/site-packages/torch/__init__.py', 2500);"
		"INSERT INTO stack_frames VALUES (8, 3, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 7);"
		/* 9: the optimizer's first step importing torch._dynamo, whose
		 * modules import each other (a Dynamo module's own top-level
		 * code outside the inner import): start-up */
		"INSERT INTO stack_frames VALUES (9, 0, 'python', 0, '_call_with_frames_removed', NULL, 0, '<frozen importlib._bootstrap>', 488);"
		"INSERT INTO stack_frames VALUES (9, 1, 'python', 0, '<module>', NULL, 0, '/x/site-packages/torch/_dynamo/convert_frame.py', 30);"
		"INSERT INTO stack_frames VALUES (9, 2, 'python', 0, '_call_with_frames_removed', NULL, 0, '<frozen importlib._bootstrap>', 488);"
		"INSERT INTO stack_frames VALUES (9, 3, 'python', 0, 'step', NULL, 0, '/x/site-packages/torch/optim/adam.py', 200);"
		"INSERT INTO stack_frames VALUES (9, 4, 'python', 0, '<module>', NULL, 0, '/home/u/train.py', 12);"
		/* 4: native only */
		"INSERT INTO stack_frames VALUES (4, 0, 'native', 1, 'memcpy', '/lib/libc.so.6', 0, NULL, NULL);",
		NULL, NULL, NULL), SQLITE_OK);
	struct ia_stack_names *n = ia_stack_names_new(db);
	assert_string_equal(ia_stack_python(n, 1), "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py:125");
	assert_string_equal(ia_stack_user_python(n, 1), "/home/u/train.py:40");
	assert_string_equal(ia_stack_source(n, 1), "/home/u/train.py:40");
	assert_false(ia_stack_runs_python(n, 1));
	assert_null(ia_stack_user_python(n, 2));
	assert_string_equal(ia_stack_source(n, 2), "/x/site-packages/torch/utils/data/_utils/collate.py:141");
	assert_true(ia_stack_runs_python(n, 2));
	assert_string_equal(ia_stack_python_func(n, 2), "collate");
	assert_false(ia_stack_runs_python(n, 3));
	assert_string_equal(ia_stack_source(n, 3), "/home/u/data.py:9");
	assert_null(ia_stack_source(n, 4));
	assert_false(ia_stack_runs_python(n, 4));
	assert_null(ia_stack_source(n, 99));
	assert_true(ia_stack_compiling(n, 5));
	assert_string_equal(ia_stack_source(n, 5), "/home/u/train.py:60");
	assert_false(ia_stack_compiling(n, 1));
	assert_false(ia_stack_compiling(n, 4));
	assert_int_equal(ia_stack_mech(n, 6), IA_MECH_GC);
	assert_string_equal(ia_stack_python(n, 6), "/home/u/train.py:52");
	assert_string_equal(ia_stack_python_func(n, 6), "make_batch");
	assert_string_equal(ia_stack_user_python(n, 6), "/home/u/train.py:52");
	assert_string_equal(ia_stack_source(n, 6), "/home/u/train.py:52");
	assert_int_equal(ia_stack_mech(n, 7), IA_MECH_NONE);
	assert_string_equal(ia_stack_python(n, 7), "<gc>:3");
	assert_null(ia_stack_user_python(n, 7));
	assert_int_equal(ia_stack_phase_why(n, 8), IA_WHY_TORCH_COMPILE);
	assert_int_equal(ia_stack_phase_why(n, 9), IA_WHY_IMPORT);
	ia_stack_names_free(n);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(percentiles_match_sorting),
		cmocka_unit_test(nearest_rank_definition),
		cmocka_unit_test(formatting),
		cmocka_unit_test(parse_durations),
		cmocka_unit_test(map_grows_and_finds),
		cmocka_unit_test(json_strings_always_parse),
		cmocka_unit_test(short_symbols),
		cmocka_unit_test(library_files),
		cmocka_unit_test(compile_files),
		cmocka_unit_test(stack_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
