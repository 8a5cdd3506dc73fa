/*
 * test_analyzer_step_times.c — each step's time (analyzer/measure/step_times.c)
 * from hand-set launches: a step of 200 launches, 10 of the model's and
 * 190 of an optimizer's loop over parameters (two kernels again and again,
 * c77's shape), the loop's period found from inside the loop.  A signature
 * taken there matched again 150 launches on, within the same step; the
 * signature is the step's first run that appears once in it, and the
 * steps come out whole.  A plain step's signature stays its first
 * launches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/step_times.h"

#include <ingero/api.h>

#include <string.h>

#define STEP 200
#define NSTEPS 8
#define MAXC (STEP * NSTEPS)

static struct ia_trace tr;
static struct ia_call calls[MAXC];
static uint32_t ix[MAXC];
static struct ia_gaps g;
static struct ia_phases ph;

/* NSTEPS steps of STEP launches 100 ns apart, launch k of a step
 * running kernel key(k); the period seen from launch `from` of the first */
static void build(uint32_t (*key)(size_t), size_t from)
{
	memset(&tr, 0, sizeof tr);
	memset(&g, 0, sizeof g);
	memset(&ph, 0, sizeof ph);
	for (size_t i = 0; i < MAXC; i++) {
		calls[i] = (struct ia_call){ .start = 1000 + 100 * i, .dur = 10,
					     .api = INGERO_API_CUDA_LAUNCH_KERNEL, .func = key(i % STEP) };
		ix[i] = (uint32_t)i;
	}
	tr.calls = calls;
	g.main_calls = ix;
	g.nmain_calls = MAXC;
	ph.steps = (struct ia_steps){ .calls = STEP, .launches = STEP, .ns = 100 * STEP, .first_ns = calls[from].start };
}

static uint32_t optimizer_loop(size_t k)
{
	return k < 10 ? (uint32_t)k + 1 : 100 + (uint32_t)(k % 2);
}

static uint32_t all_distinct(size_t k)
{
	return (uint32_t)k + 1;
}

static void check_whole_steps(size_t want)
{
	struct ia_step_times st;
	assert_int_equal(ia_step_times_compute(&tr, &g, &ph, &st), 0);
	assert_int_equal(st.n, want);
	for (size_t i = 0; i < st.n; i++)
		assert_int_equal(st.ns[i], 100 * STEP);
	ia_step_times_free(&st);
}

static void loop_inside_the_step(void **state)
{
	(void)state;
	build(optimizer_loop, 10);   /* the period seen from the loop's first launch */
	check_whole_steps(NSTEPS - 2);
}

static void plain_step(void **state)
{
	(void)state;
	build(all_distinct, 0);
	struct ia_step_times st;
	assert_int_equal(ia_step_times_compute(&tr, &g, &ph, &st), 0);
	assert_int_equal(st.n, NSTEPS - 1);
	assert_int_equal(st.start[0], calls[0].start);
	for (size_t i = 0; i < st.n; i++)
		assert_int_equal(st.ns[i], 100 * STEP);
	ia_step_times_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loop_inside_the_step),
		cmocka_unit_test(plain_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
