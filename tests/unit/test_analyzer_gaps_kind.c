/*
 * test_analyzer_gaps_kind.c — which gaps chain the main thread's states in
 * the gaps make (analyzer/rules/chain_gaps.c): a state held for most of
 * the gaps names it; where none is a majority and the CPU wait is under
 * MAIN_PREEMPTED, the larger of blocked and on a CPU does — a thread
 * blocked 45 % of the gaps (on storage, say) and on a CPU 25 % is blocked,
 * not busy (the fake-runtime fsync loop of tests/e2e/analyzer_io.sh sits
 * there on a fast disk: blocked 28 %, waiting 13 %, on a CPU 11 % of a
 * window whose gaps were 52 %); and when the main thread's samples say it
 * collated batches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/chain_build.h"
#include "../../analyzer/rules/chain_gaps.h"

#include <stdio.h>

struct row {
	double on, blk, rq;
	int loading;
	enum ia_kind want;
};

static void each_share_names_its_kind(void **state)
{
	(void)state;
	const struct row rows[] = {
		/* a majority */
		{ 0.60, 0.30, 0.10, 0, IA_KIND_GAPS_HOST_BUSY },
		{ 0.60, 0.30, 0.10, 1, IA_KIND_GAPS_HOST_BUSY },   /* busy itself: not the workers */
		{ 0.20, 0.70, 0.10, 0, IA_KIND_GAPS_HOST_BLOCKED },
		{ 0.20, 0.70, 0.10, 1, IA_KIND_GAPS_WAITING_WORKERS },
		{ 0.10, 0.55, 0.35, 0, IA_KIND_GAPS_HOST_BLOCKED },   /* blocked the most: before the CPU wait */
		{ 0.20, 0.20, 0.60, 0, IA_KIND_GAPS_HOST_PREEMPTED },
		/* no majority: the CPU wait from MAIN_PREEMPTED on */
		{ 0.25, 0.40, 0.35, 0, IA_KIND_GAPS_HOST_PREEMPTED },
		{ 0.40, 0.25, 0.35, 0, IA_KIND_GAPS_HOST_PREEMPTED },
		/* no majority, the CPU wait under it: the larger of blocked and on a CPU */
		{ 0.21, 0.54, 0.25, 0, IA_KIND_GAPS_HOST_BLOCKED },
		{ 0.25, 0.45, 0.25, 0, IA_KIND_GAPS_HOST_BLOCKED },
		{ 0.25, 0.45, 0.25, 1, IA_KIND_GAPS_WAITING_WORKERS },
		{ 0.45, 0.30, 0.25, 0, IA_KIND_GAPS_HOST_BUSY },
		{ 0.45, 0.30, 0.25, 1, IA_KIND_GAPS_HOST_BUSY },
		{ 0.35, 0.35, 0.20, 0, IA_KIND_GAPS_HOST_BUSY },   /* a tie: the split is said as busy's */
		{ 0.00, 0.00, 0.00, 0, IA_KIND_GAPS_HOST_BUSY },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		enum ia_kind got = ia_gaps_kind(r->on, r->blk, r->rq, r->loading);
		if (got != r->want)
			fail_msg("row %zu (on %.2f, blocked %.2f, waiting %.2f, loading %d): kind %d, want %d", i, r->on,
				 r->blk, r->rq, r->loading, (int)got, (int)r->want);
	}
}

/* The main thread's gap samples read as a DataLoader's collation: a fifth
 * of them or more, and five at least — two of nine are a collation that is
 * there, not what the gaps are made of. */
static void collation_needs_samples(void **state)
{
	(void)state;
	struct ia_gap_stack st[2] = { 0 };
	snprintf(st[0].label, sizeof st[0].label, "at::_ops::stack::call()");
	snprintf(st[0].python, sizeof st[0].python, "/venv/site-packages/torch/utils/data/_utils/collate.py:275");
	snprintf(st[1].label, sizeof st[1].label, "HeterogeneousConfigMixin.__getattribute__");
	struct ia_gaps g = { 0 };
	g.stacks = st;
	g.nstacks = 2;
	static const uint64_t coll[] = { 2, 5, 5, 12 }, other[] = { 7, 15, 25, 0 };
	static const int want[] = { 0, 1, 0, 1 };
	for (int i = 0; i < 4; i++) {
		st[0].main = coll[i];
		st[1].main = other[i];
		g.samples_main = coll[i] + other[i];
		assert_int_equal(ia_stacks_show_collation(&g, IA_GAP_MAIN), want[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_share_names_its_kind),
		cmocka_unit_test(collation_needs_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
