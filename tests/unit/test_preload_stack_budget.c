/*
 * test_preload_stack_budget.c — the stack-time budget (preload/stack_budget.c):
 * starting credit, earning at ppm of wall time up to the cap, sampled launch
 * stacks held back below half the cap, no limit at 1000000, no overflow
 * after a long idle time, a clock that does not move, time spent paused
 * (INGERO_CAPTURE) earning nothing, and the one-time reserve that pays for
 * a thread's cold first stacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../preload/stack_budget.h"

#define MS 1000000ull
#define S  1000000000ull

/* 5000 ppm of 10 s: 50 ms of credit at most, and to start with */
static void starts_full_and_spends(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	assert_true(ingero_stack_budget_allows(&b, 5000, false, 1 * S));
	assert_int_equal(b.credit_ns, 50 * MS);
	ingero_stack_budget_spend(&b, 150 * MS);   /* one very slow stack: the credit and the reserve */
	assert_int_equal(b.credit_ns, 0);
	assert_int_equal(b.reserve_ns, 0);
	assert_false(ingero_stack_budget_allows(&b, 5000, false, 1 * S));
	/* 1 s earns 5 ms */
	assert_true(ingero_stack_budget_allows(&b, 5000, false, 2 * S));
	assert_int_equal(b.credit_ns, 5 * MS);
}

static void earning_is_capped(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	ingero_stack_budget_allows(&b, 5000, false, 1 * S);
	ingero_stack_budget_spend(&b, 10 * MS);
	ingero_stack_budget_allows(&b, 5000, false, 100 * S);
	assert_int_equal(b.credit_ns, 50 * MS);
	/* an idle day and the largest ppm below "no limit": no overflow */
	ingero_stack_budget_allows(&b, 999999, false, 100 * S + 86400 * S);
	assert_int_equal(b.credit_ns, (int64_t)(10 * S / 1000000 * 999999));
}

static void samples_need_half(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	assert_true(ingero_stack_budget_allows(&b, 5000, true, 1 * S));
	ingero_stack_budget_spend(&b, 25 * MS);   /* exactly half left */
	assert_false(ingero_stack_budget_allows(&b, 5000, true, 1 * S));
	assert_true(ingero_stack_budget_allows(&b, 5000, false, 1 * S));
	/* 200 ms earns 1 ms: above half again */
	assert_true(ingero_stack_budget_allows(&b, 5000, true, 1 * S + 200 * MS));
}

/* 2 s paused out of 3: only the 1 s recording earns (5 ms), so a capture
 * window does not spend what the pauses before it would have earned. */
static void paused_time_earns_nothing(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	ingero_stack_budget_pause(&b, 0);
	ingero_stack_budget_allows(&b, 5000, false, 1 * S);
	ingero_stack_budget_spend(&b, 50 * MS);
	ingero_stack_budget_pause(&b, 2 * S);
	assert_true(ingero_stack_budget_allows(&b, 5000, false, 4 * S));
	assert_int_equal(b.credit_ns, 5 * MS);
	/* the same total again moves nothing */
	ingero_stack_budget_pause(&b, 2 * S);
	ingero_stack_budget_allows(&b, 5000, false, 4 * S);
	assert_int_equal(b.credit_ns, 5 * MS);
	/* a budget first used after pauses starts from its first use */
	struct ingero_stack_budget c = { 0 };
	ingero_stack_budget_pause(&c, 7 * S);
	assert_true(ingero_stack_budget_allows(&c, 5000, false, 9 * S));
	assert_int_equal(c.credit_ns, 50 * MS);
	assert_int_equal(c.last_ns, 9 * S);
}

/* Over a long run of stacks that cost 80 us each, offered 340 times a
 * second (the H200 loop), the time spent stays near ppm of the wall time. */
static void long_run_spends_about_ppm(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	uint64_t spent = 0, t = 1 * S, end = t + 600 * S;
	unsigned taken = 0, offered = 0;
	for (; t < end; t += S / 340) {
		offered++;
		if (ingero_stack_budget_allows(&b, 5000, true, t)) {
			ingero_stack_budget_spend(&b, 80000);
			spent += 80000;
			taken++;
		}
	}
	/* 0.5 % of 600 s = 3 s, plus at most the starting half-cap of 25 ms */
	assert_true(spent <= 3 * S + 25 * MS + 80000);
	assert_true(spent >= 3 * S - 80000 * 2);
	assert_true(taken < offered / 2);
}

/* Calls far closer than 1e6/ppm ns apart still earn their share (the
 * rounding is not thrown away at every call). */
static void frequent_calls_earn(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	ingero_stack_budget_allows(&b, 100, false, 1 * S);
	ingero_stack_budget_spend(&b, (uint64_t)b.credit_ns);   /* 0 left */
	for (uint64_t t = 1 * S; t <= 6 * S; t += 5000)           /* a call every 5 us for 5 s */
		ingero_stack_budget_allows(&b, 100, false, t);
	/* 100 ppm of 5 s = 500 us (the most is 1 ms) */
	assert_true(b.credit_ns >= (int64_t)(MS / 2) - 1000 && b.credit_ns <= (int64_t)(MS / 2));
}

static void unlimited_and_frozen_clock(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	for (int i = 0; i < 1000; i++) {
		assert_true(ingero_stack_budget_allows(&b, INGERO_STACK_BUDGET_UNLIMITED, true, 5));
		ingero_stack_budget_spend(&b, 1 * S);
	}
	struct ingero_stack_budget c = { 0 };
	ingero_stack_budget_allows(&c, 100, false, 7 * S);
	assert_int_equal(c.reserve_ns, 20 * MS);   /* a low rate: twenty times its 1 ms of credit */
	ingero_stack_budget_spend(&c, 25 * MS);
	/* the clock does not move (or steps back): no credit earned, no wrap */
	assert_false(ingero_stack_budget_allows(&c, 100, false, 7 * S));
	assert_false(ingero_stack_budget_allows(&c, 100, false, 6 * S));
	assert_true(c.credit_ns < 0);
	/* ppm 0: never a stack */
	struct ingero_stack_budget z = { 0 };
	assert_false(ingero_stack_budget_allows(&z, 0, false, 1 * S));
}

/* 0.05 % (5 ms of credit): a cold first stack of 18 ms is paid by the
 * reserve, so the next sync's stack is still taken; sampled launches wait
 * for earned credit; once the reserve is spent only earned credit pays, and
 * the reserve is not earned back. */
static void cold_first_stacks_paid_by_reserve(void **state)
{
	(void)state;
	struct ingero_stack_budget b = { 0 };
	assert_true(ingero_stack_budget_allows(&b, 500, false, 1 * S));
	ingero_stack_budget_spend(&b, 18 * MS);
	assert_int_equal(b.credit_ns, 0);
	assert_int_equal(b.reserve_ns, 87 * MS);
	assert_true(ingero_stack_budget_allows(&b, 500, false, 1 * S));
	assert_false(ingero_stack_budget_allows(&b, 500, true, 1 * S));
	ingero_stack_budget_spend(&b, 90 * MS);   /* another cold one: 87 ms of reserve left, 3 over */
	assert_int_equal(b.reserve_ns, 0);
	assert_int_equal(b.credit_ns, -3 * (int64_t)MS);
	assert_false(ingero_stack_budget_allows(&b, 500, false, 1 * S));
	/* 6 s earn 3 ms: back to 0, still nothing; 7 s: 0.5 ms */
	assert_false(ingero_stack_budget_allows(&b, 500, false, 7 * S));
	assert_true(ingero_stack_budget_allows(&b, 500, false, 8 * S));
	/* a long idle time fills the credit, not the reserve */
	assert_true(ingero_stack_budget_allows(&b, 500, false, 100 * S));
	assert_int_equal(b.credit_ns, 5 * MS);
	assert_int_equal(b.reserve_ns, 0);
}

/* the time sampled_after names is the first at which a sampled stack is
 * allowed again: refused a nanosecond before it, allowed at it (each asked
 * of a copy: allows() moves the earning clock) — for rates that divide a
 * second and one that does not, and credits from empty to just below half */
static void sampled_after_is_the_first_yes(void **state)
{
	(void)state;
	const uint32_t rates[] = { 500, 5000, 7, 999 };
	const int64_t spends[] = { 0, 1, 3 * MS, 26 * MS, 50 * MS };
	for (unsigned r = 0; r < sizeof rates / sizeof rates[0]; r++)
		for (unsigned k = 0; k < sizeof spends / sizeof spends[0]; k++) {
			struct ingero_stack_budget b = { 0 };
			uint32_t ppm = rates[r];
			int64_t most = (int64_t)(10 * S / 1000000u * ppm);
			ingero_stack_budget_allows(&b, ppm, false, 1 * S);
			ingero_stack_budget_spend(&b, (uint64_t)(most - most / 2 + spends[k] % (most + 1)));
			struct ingero_stack_budget now = b;
			if (ingero_stack_budget_allows(&now, ppm, true, 1 * S)) {
				assert_int_equal(ingero_stack_budget_sampled_after(&b, ppm), 0);
				continue;
			}
			uint64_t t = ingero_stack_budget_sampled_after(&b, ppm);
			assert_true(t > 1 * S);
			struct ingero_stack_budget before = b, at = b;
			assert_false(ingero_stack_budget_allows(&before, ppm, true, t - 1));
			assert_true(ingero_stack_budget_allows(&at, ppm, true, t));
		}
	/* no limit, no stacks, never used: no such time */
	struct ingero_stack_budget n = { 0 };
	assert_int_equal(ingero_stack_budget_sampled_after(&n, 500), 0);
	ingero_stack_budget_allows(&n, 500, false, 1 * S);
	assert_int_equal(ingero_stack_budget_sampled_after(&n, 1000000), 0);
	assert_int_equal(ingero_stack_budget_sampled_after(&n, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(starts_full_and_spends),
		cmocka_unit_test(earning_is_capped),
		cmocka_unit_test(samples_need_half),
		cmocka_unit_test(paused_time_earns_nothing),
		cmocka_unit_test(long_run_spends_about_ppm),
		cmocka_unit_test(frequent_calls_earn),
		cmocka_unit_test(unlimited_and_frozen_clock),
		cmocka_unit_test(cold_first_stacks_paid_by_reserve),
		cmocka_unit_test(sampled_after_is_the_first_yes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
