/*
 * test_analyzer_gap_bursts.c — whether the GPU's idle comes in a few long
 * waits (analyzer/measure/gap_bursts.c): the long gaps (10x the median gap,
 * 1 ms at least), their share, whether they recur regularly in time, and
 * when they are the story — not when the loop waits once a step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../analyzer/measure/gap_bursts.h"

#define MS 1000000ull

/* n gaps a step apart (10 ms), each short (100 us) but every `every`-th
 * (from the first) `long_ms` long. */
static void make(struct ia_gaps *g, size_t n, size_t every, uint64_t long_ms)
{
	memset(g, 0, sizeof *g);
	g->g = calloc(n, sizeof *g->g);
	assert_non_null(g->g);
	g->n = n;
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = every && i % every == 0 ? long_ms * MS : 100000;
		g->g[i].start = t;
		g->g[i].end = t + len;
		g->total_ns += len;
		t += len + 10 * MS;
	}
}

static void a_phase_every_40_steps(void **state)
{
	(void)state;
	struct ia_gaps g;
	struct ia_gap_bursts b;
	make(&g, 400, 40, 250);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_int_equal(b.n, 10);
	assert_int_equal(b.min_len, 1 * MS);   /* 10x the 100 us median is under 1 ms */
	assert_int_equal(b.longest, 250 * MS);
	assert_true(b.share > 0.98);
	/* 39 short gaps and one long between two long ones' starts */
	assert_int_equal(b.every_ns, 39 * (100000 + 10 * MS) + 250 * MS + 10 * MS);
	assert_true(ia_gap_bursts_dominant(&b, g.n, 400, 0));
	assert_true(ia_gap_bursts_dominant(&b, g.n, 0, 0));   /* steps not found: the gaps alone */
	free(g.g);
}

static void irregular_bursts_have_no_period(void **state)
{
	(void)state;
	struct ia_gaps g;
	struct ia_gap_bursts b;
	make(&g, 400, 40, 250);
	/* move every other long gap's start by half a cycle: no period */
	for (size_t i = 40; i < 400; i += 80) {
		uint64_t len = g.g[i].end - g.g[i].start;
		g.g[i].end = g.g[i].start + 100000;
		g.g[i + 20].end = g.g[i + 20].start + len;
	}
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_int_equal(b.n, 10);
	assert_int_equal(b.every_ns, 0);
	assert_true(ia_gap_bursts_dominant(&b, g.n, 400, 0));
	free(g.g);
}

static void a_wait_every_step_is_not_a_burst(void **state)
{
	(void)state;
	struct ia_gaps g;
	struct ia_gap_bursts b;
	/* four gaps a step, one of them long: one a step — even idle, not
	 * bursts; without steps, a quarter of the gaps is not either */
	make(&g, 400, 4, 5);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_int_equal(b.n, 100);
	assert_false(ia_gap_bursts_dominant(&b, g.n, 100, 0));
	assert_true(ia_gap_bursts_dominant(&b, g.n, 0, 0));   /* (exactly a quarter: the limit) */
	free(g.g);
	make(&g, 400, 3, 5);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_int_equal(b.n, 134);
	assert_false(ia_gap_bursts_dominant(&b, g.n, 0, 0));
	/* a loop whose GPU stays fed between its waits has few gaps, nearly all
	 * long (c57: 60 of 148, in 7,678 steps): bursts by the steps */
	assert_true(ia_gap_bursts_dominant(&b, g.n, 5 * b.n, 0));
	/* one in 20 gaps, but the loop's steps are those gaps' (one a step) */
	free(g.g);
	make(&g, 400, 20, 5);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_true(ia_gap_bursts_dominant(&b, g.n, 400, 0));
	assert_false(ia_gap_bursts_dominant(&b, g.n, 20, 0));
	free(g.g);
}

static void even_gaps_have_none(void **state)
{
	(void)state;
	struct ia_gaps g;
	struct ia_gap_bursts b;
	make(&g, 200, 0, 0);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);
	assert_int_equal(b.n, 0);
	assert_false(ia_gap_bursts_dominant(&b, g.n, 200, 0));
	free(g.g);
	memset(&g, 0, sizeof g);
	assert_int_equal(ia_gap_bursts(&g, &b), 0);   /* no gaps at all */
	assert_int_equal(b.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_phase_every_40_steps),
		cmocka_unit_test(irregular_bursts_have_no_period),
		cmocka_unit_test(a_wait_every_step_is_not_a_burst),
		cmocka_unit_test(even_gaps_have_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
