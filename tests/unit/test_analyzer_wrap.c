/*
 * test_analyzer_wrap.c — terminal text (issue 39): lines fitted to a width
 * with their continuations hanging under the text (base/wrap.c), tables
 * that drop the columns a reader can spare (base/table.c), and long names
 * shortened for a terminal (render/display.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/base/table.h"
#include "../../analyzer/base/wrap.h"
#include "../../analyzer/render/display.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* text wrapped to width, into a malloc'd string */
static char *wrapped(const char *text, int width)
{
	static char *buf;   /* (open_memstream keeps its address until fclose) */
	static size_t len;
	FILE *f = open_memstream(&buf, &len);
	ia_wrap_write(f, text, strlen(text), width);
	fclose(f);
	char *out = buf;
	buf = NULL;
	return out;
}

static size_t widest(const char *s)
{
	size_t w = 0;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		size_t c = ia_text_width(s, n);
		w = c > w ? c : w;
		s += n + (nl != NULL);
	}
	return w;
}

static void short_lines_stay(void **state)
{
	(void)state;
	char *o = wrapped("one line\n  two\n", 40);
	assert_string_equal(o, "one line\n  two\n");
	free(o);
}

static void hangs_under_the_tag(void **state)
{
	(void)state;
	char *o = wrapped("    [HOST] main thread in the gaps: on-CPU 199ms, blocked 1.81s, waiting for a CPU\n", 40);
	assert_true(widest(o) <= 40);
	/* every continuation starts under the text after "[HOST] " (column 11) */
	const char *l = strchr(o, '\n') + 1;
	while (*l) {
		assert_memory_equal(l, "           ", 11);
		assert_true(l[11] != ' ');
		l = strchr(l, '\n') + 1;
	}
	free(o);
	o = wrapped("    12. a fix that is long enough to need two lines of forty\n", 40);
	assert_non_null(strstr(o, "\n        "));   /* under the fix's text, past "12. " */
	free(o);
}

static void long_words_are_cut_not_lost(void **state)
{
	(void)state;
	const char *word = "/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/conv.py:548";
	char text[256];
	snprintf(text, sizeof text, "  Source: %s\n", word);
	char *o = wrapped(text, 40);
	assert_true(widest(o) <= 40);
	/* the characters all there, in order */
	char joined[256] = "";
	for (const char *p = o; *p; p++)
		if (*p != '\n' && *p != ' ')
			strncat(joined, p, 1);
	assert_non_null(strstr(joined, word));
	free(o);
}

static void utf8_counts_characters(void **state)
{
	(void)state;
	assert_int_equal(ia_text_width("a—b…", strlen("a—b…")), 4);
	char *o = wrapped("— — — — — — — — — — — — — — — — — — — — — — — — — —\n", 40);
	assert_true(widest(o) <= 40);
	for (const char *p = o; *p; p++)   /* never cut inside a sequence */
		if (*p == '\n')
			assert_true(p == o || (p[-1] & 0xc0) != 0xc0);
	free(o);
}

static void tables_drop_what_a_reader_spares(void **state)
{
	(void)state;
	struct ia_table *t = ia_table_new(4);
	ia_table_col(t, 0, "NAME", 1, 0);
	ia_table_col(t, 1, "KEEP", 0, 0);
	ia_table_col(t, 2, "SPARE", 0, 1);
	ia_table_col(t, 3, "HIDDEN", 0, -1);
	const char *r1[] = { "a_rather_long_kernel_name_of_a_library", "1,234", "56.7ms", "x" };
	ia_table_row(t, r1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ia_table_print(t, f, 50, "");
	fclose(f);
	assert_true(widest(buf) <= 50);
	assert_null(strstr(buf, "HIDDEN"));
	assert_null(strstr(buf, "SPARE"));   /* 38 + 5 + 6 + separators > 50: the spare one goes */
	assert_non_null(strstr(buf, "KEEP"));
	assert_int_equal(ia_table_dropped(t), 1);
	free(buf);
	f = open_memstream(&buf, &len);
	ia_table_print(t, f, 30, "  ");   /* narrower still: the name is cut with an ellipsis */
	fclose(f);
	assert_true(widest(buf) <= 30);
	assert_non_null(strstr(buf, "…"));
	free(buf);
	ia_table_free(t);
}

static void display_shortens_names(void **state)
{
	(void)state;
	const char *paths[] = { "/work/p/train.py:22" };
	char *dir = ia_display_user_dir("python3 train.py --epochs 3", paths, 1);
	assert_string_equal(dir, "/work/p/");
	const char *in = "at /work/p/train.py:22 (in f (/opt/v/lib/python3.12/site-packages/torch/nn/x.py:5)), "
			 "g (/usr/lib/python3.12/selectors.py:415), c10::function_ref<void (char**, long const*)>::cb<x> 8%\n";
	size_t n = 0;
	char *o = ia_display_text(in, strlen(in), dir, &n);
	assert_string_equal(o, "at train.py:22 (in f (torch/nn/x.py:5)), g (python3.12/selectors.py:415), "
			       "c10::function_ref<…>::cb<x> 8%\n");
	free(o);
	free(dir);
	assert_null(ia_display_user_dir("python3 -c pass", paths, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_lines_stay),
		cmocka_unit_test(hangs_under_the_tag),
		cmocka_unit_test(long_words_are_cut_not_lost),
		cmocka_unit_test(utf8_counts_characters),
		cmocka_unit_test(tables_drop_what_a_reader_spares),
		cmocka_unit_test(display_shortens_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
