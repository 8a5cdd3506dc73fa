/*
 * test_preload_gpu_anchor.c — an anchor's stamp from its tries' bounds
 * (preload/gpu_anchor.c): one try is the middle of its [record returned,
 * seen done]; tries whose bounds, carried back by the GPU's elapsed
 * times, overlap narrow it to their intersection, wherever each one's
 * pickup fell; bounds that do not meet fall back to the narrowest try.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../preload/gpu_anchor.h"

static void one_try_is_its_middle(void **state)
{
	(void)state;
	uint64_t t1[] = { 1000 }, t2[] = { 5000 }, at, half;
	int64_t e[] = { 0 };
	ingero_anchor_fit(t1, t2, e, 1, &at, &half);
	assert_int_equal(at, 3000);
	assert_int_equal(half, 2000);
}

/* try 0 stamped at 10,000 (the GPU's pickup 3 us after the record call
 * returned, seen 1 us after); try 1 at 20,000 (pickup 0.2 us, seen 4 us
 * after); try 2 at 30,000 (pickup 2 us, seen 0.5 us after).  Carried back
 * onto try 0: [7000, 11000], [9800, 14000], [8000, 10500] -> [9800, 10500]. */
static void tries_intersect(void **state)
{
	(void)state;
	uint64_t t1[] = { 7000, 19800, 28000 }, t2[] = { 11000, 24000, 30500 }, at, half;
	int64_t e[] = { 0, 10000, 20000 };
	ingero_anchor_fit(t1, t2, e, 3, &at, &half);
	assert_int_equal(at, 10150);
	assert_int_equal(half, 350);
	/* the old reading — try 0's record call returning — was 3 us early */
	assert_true(at - 10000 < 10000 - 7000);
}

static void disjoint_bounds_take_the_narrowest(void **state)
{
	(void)state;
	uint64_t t1[] = { 1000, 50000 }, t2[] = { 9000, 51000 }, at, half;
	int64_t e[] = { 0, 10000 };   /* try 1 carried back: [40000, 41000], after try 0's bounds */
	ingero_anchor_fit(t1, t2, e, 2, &at, &half);
	assert_int_equal(at, 40500);
	assert_int_equal(half, 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_try_is_its_middle),
		cmocka_unit_test(tries_intersect),
		cmocka_unit_test(disjoint_bounds_take_the_narrowest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
