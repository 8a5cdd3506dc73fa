/*
 * test_analyzer_steps.c — the loop's step from its call sequence
 * (analyzer/measure/steps.c), on hand-built report.dbs: a loop of five kernels and a
 * sync a step after three set-up launches.  A plain loop: the calls repeat,
 * the step is six calls.  The same loop reading its loss every tenth step (a
 * copy and a sync more): the calls repeat only every ten steps, and the
 * launches give the step — five launches, six calls on average — and where
 * the loop began.  A training loop of `layers` layers (forward on the main
 * thread, backward on autograd's) stopped every 20 steps by an evaluation
 * pass: the step, not the cycle of 20 and the pass, and never one layer —
 * nor in an inference loop, whose layers all run on one thread.  A
 * stretch that begins with other work, a loop after a run of alike
 * launches, a GAN's iteration of five critic updates and a generator
 * update, and a step longer than the first look's bounds (steps.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/db.h"
#include "../../analyzer/measure/steps.h"
#include "../../analyzer/load/trace.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define US 1000ull
#define STEPS 200
#define STEP_NS (1000 * US)
#define LOOP_START (500 * US)   /* after the set-up's launches */

static char path[64];

static struct ingero_cuda_call launch_on(int tid, uint64_t t, uint64_t kernel)
{
	struct ingero_cuda_call c = tb_call(100, tid, INGERO_API_CU_LAUNCH_KERNEL, t, 5 * US);
	c.kernel = kernel;
	return c;
}

static struct ingero_cuda_call launch(uint64_t t, uint64_t kernel)
{
	return launch_on(100, t, kernel);
}

static sqlite3 *create(void)
{
	snprintf(path, sizeof path, "/tmp/ia-steps-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 4, "python3 train.py");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3')");
	rf_exec(db, "INSERT INTO threads VALUES(100, 100, 'python3')");
	rf_exec(db, "INSERT INTO threads VALUES(101, 100, 'pt_autograd_0')");
	return db;
}

#define LAYER 4          /* launches a layer, each way */
#define EVAL_EVERY 20    /* steps between evaluation passes */
#define EVAL_CALLS 30    /* an evaluation pass: forward launches and a copy */

/* Each step: `layers` layers forward on the main thread, with `backward`
 * their backward on autograd's thread and an optimizer launch; a loss
 * launch at the end.  With `evaluate`, every EVAL_EVERY steps a pass of
 * other kernels and a copy, as long as two steps. */
static void build_layers_every(int layers, int backward, int evaluate, int every, int eval_calls)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc((size_t)STEPS * (2 * LAYER * (size_t)layers + 2 + EVAL_CALLS), sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	uint64_t t = LOOP_START;
	for (int s = 0; s < STEPS; s++, t += STEP_NS) {
		uint64_t u = t;
		for (int l = 0; l < layers; l++)
			for (int k = 0; k < LAYER; k++, u += US)
				c[n++] = launch_on(100, u, 0x4000 + (uint64_t)k);
		c[n++] = launch_on(100, u, 0x4100);   /* the loss, or the head */
		u += US;
		if (backward) {
			for (int l = 0; l < layers; l++)
				for (int k = 0; k < LAYER; k++, u += US)
					c[n++] = launch_on(101, u, 0x4200 + (uint64_t)k);
			c[n++] = launch_on(100, u, 0x4300);   /* the optimizer */
		}
		if (evaluate && s % every == every - 1) {
			u = t + STEP_NS / 2;
			for (int k = 0; k < eval_calls - 1; k++, u += US)
				c[n++] = launch_on(100, u, 0x5000 + (uint64_t)(k % 7));
			c[n] = tb_call(100, 100, INGERO_API_CUDA_MEMCPY_ASYNC, u, 10 * US);
			c[n++].dir = INGERO_DIR_DTOH;
		}
	}
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

/* c82's shape: an iteration of five critic updates (forward on the main
 * thread, backward on autograd's, an optimizer launch) and a generator
 * update of other kernels as long as one */
#define CRITIC 5
static void build_gan(void)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc((size_t)STEPS * (CRITIC + 1) * 12, sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	uint64_t t = LOOP_START;
	for (int s = 0; s < STEPS; s++) {
		for (int u = 0; u <= CRITIC; u++) {
			uint64_t base = u < CRITIC ? 0x4000 : 0x8000;   /* the critic's kernels, or the generator's */
			for (int k = 0; k < 4; k++, t += 10 * US)
				c[n++] = launch_on(100, t, base + (uint64_t)k);
			for (int k = 0; k < 6; k++, t += 10 * US)
				c[n++] = launch_on(101, t, base + 0x100 + (uint64_t)k);
			c[n++] = launch_on(100, t, base + 0x200);
			t += 30 * US;
		}
	}
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

static void build_layers(int layers, int backward, int evaluate)
{
	build_layers_every(layers, backward, evaluate, EVAL_EVERY, EVAL_CALLS);
}

/* every `loss_every` steps (0: never) a device-to-host copy and a sync more */
static void build(int loss_every)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc(8 * STEPS + 8, sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	for (int i = 0; i < 3; i++)   /* set-up: other kernels */
		c[n++] = launch((uint64_t)(10 + 100 * i) * US, 0x9000 + (uint64_t)i);
	for (int s = 0; s < STEPS; s++) {
		uint64_t t = LOOP_START + (uint64_t)s * STEP_NS;
		for (int k = 0; k < 5; k++)
			c[n++] = launch(t + (uint64_t)k * 20 * US, 0x4000 + (uint64_t)k);
		c[n++] = tb_call(100, 100, INGERO_API_CUDA_STREAM_SYNCHRONIZE, t + 120 * US, 800 * US);
		if (loss_every && s % loss_every == 0) {
			c[n] = tb_call(100, 100, INGERO_API_CUDA_MEMCPY_ASYNC, t + 930 * US, 10 * US);
			c[n++].dir = INGERO_DIR_DTOH;
			c[n++] = tb_call(100, 100, INGERO_API_CUDA_STREAM_SYNCHRONIZE, t + 945 * US, 5 * US);
		}
	}
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

static void steps_within(uint32_t max_period, size_t max_calls, struct ia_steps *st)
{
	char err[256];
	struct ia_trace t;
	rf_load(path, 0, &t);
	if (ia_steps_find(&t, 100, 0, UINT64_MAX >> 2, max_period, max_calls, st, err, sizeof err) < 0)
		fail_msg("%s", err);
	rf_unload(&t, path);
}

static void steps_of(struct ia_steps *st)
{
	steps_within(IA_STEPS_MAX_PERIOD, IA_STEPS_MAX_CALLS, st);
}

#define RUNUP 340   /* launches of other work before the loop: 22 % of the stretch */

/* c79's shape: the stretch begins with other work (an evaluation pass, a
 * first step's one-time calls) before steps of six launches on one thread */
static void build_runup(void)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc(RUNUP + 6 * STEPS, sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	uint32_t x = 12345;
	for (int i = 0; i < RUNUP; i++) {   /* no period of its own */
		x = x * 1103515245u + 12345u;
		c[n++] = launch((uint64_t)i * US, 0x6000 + (x >> 16) % 23);
	}
	for (int s = 0; s < STEPS; s++)
		for (int k = 0; k < 6; k++)
			c[n++] = launch(LOOP_START + (uint64_t)s * STEP_NS + (uint64_t)k * 20 * US, 0x4000 + (uint64_t)k);
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

/* c17's shape: a set-up that ends in a run of the same kernel (eight
 * fills), other calls, then steps of a copy and a graph launch */
static void build_graph_replay(void)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc(40 + 2 * STEPS, sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	for (int i = 0; i < 8; i++)
		c[n++] = launch((uint64_t)(10 + i) * US, 0x7000);
	for (int i = 0; i < 12; i++)   /* the capture's other work */
		c[n++] = launch((uint64_t)(100 + 10 * i) * US, 0x7100 + (uint64_t)i);
	for (int s = 0; s < STEPS; s++) {
		uint64_t t = LOOP_START + (uint64_t)s * STEP_NS;
		c[n] = tb_call(100, 100, INGERO_API_CUDA_MEMCPY_ASYNC, t, 10 * US);
		c[n++].dir = INGERO_DIR_DTOD;
		c[n++] = tb_call(100, 100, INGERO_API_CUDA_GRAPH_LAUNCH, t + 20 * US, 10 * US);
	}
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

/* a step of 5,000 launches, none repeated inside it, four times */
#define LONG_STEP 5000
static void build_long_steps(void)
{
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc(4 * LONG_STEP, sizeof *c);
	assert_non_null(c);
	size_t n = 0;
	for (int s = 0; s < 4; s++)
		for (int k = 0; k < LONG_STEP; k++)
			c[n++] = launch(LOOP_START + (uint64_t)s * 10 * STEP_NS + (uint64_t)k * US, 0x10000 + (uint64_t)k);
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
}

static void plain_loop(void **state)
{
	(void)state;
	build(0);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 6);
	assert_int_equal(st.launches, 5);
	assert_int_equal(st.first_ns, LOOP_START);
	assert_true(st.ns > STEP_NS * 99 / 100 && st.ns < STEP_NS * 101 / 100);
}

static void loss_read_every_ten(void **state)
{
	(void)state;
	build(10);
	struct ia_steps st;
	steps_of(&st);
	/* the calls repeat every ten steps (62 calls); the kernels every step */
	assert_int_equal(st.launches, 5);
	assert_int_equal(st.calls, 6);   /* 6.2 on average */
	assert_int_equal(st.first_ns, LOOP_START);
	assert_true(st.ns > STEP_NS * 99 / 100 && st.ns < STEP_NS * 101 / 100);
}

/* c59's shape: the strict period would be 20 steps and the pass */
static void training_with_evaluation(void **state)
{
	(void)state;
	build_layers(2, 1, 1);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 2 * 2 * LAYER + 2);
	assert_int_equal(st.launches, 2 * 2 * LAYER + 2);
	assert_int_equal(st.first_ns, LOOP_START);
}

/* twelve layers, four launches each: one layer repeats over 12/13 of the
 * forward calls and over 12/25 of the step's — never the step */
static void deep_training_with_evaluation(void **state)
{
	(void)state;
	build_layers(12, 1, 1);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 2 * 12 * LAYER + 2);
}

static void deep_inference(void **state)
{
	(void)state;
	build_layers(12, 0, 0);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 12 * LAYER + 1);   /* the forward pass, not a layer */
	/* interrupted, it has no backward pass to tell its step from a layer
	 * by: the cycle stays the step (a limit, not a layer either) */
	build_layers(12, 0, 1);
	steps_of(&st);
	assert_int_equal(st.calls, EVAL_EVERY * (12 * LAYER + 1) + EVAL_CALLS);
}

/* the run-up breaks the comparison over the whole stretch (22 % of it
 * mismatched); without its first quarter the steps repeat */
static void begins_with_other_work(void **state)
{
	(void)state;
	build_runup();
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 6);
	assert_int_equal(st.launches, 6);
	assert_true(st.first_ns >= LOOP_START && st.first_ns < LOOP_START + 2 * STEP_NS);
	assert_true(st.ns > STEP_NS * 99 / 100 && st.ns < STEP_NS * 101 / 100);
}

/* The loop begins at its first copy and graph launch, not at the fills
 * (two alike launches repeat as "two steps" of two calls) */
static void loop_after_a_run_of_alike_launches(void **state)
{
	(void)state;
	build_graph_replay();
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 2);
	assert_int_equal(st.first_ns, LOOP_START);
	assert_true(st.ns > STEP_NS * 99 / 100 && st.ns < STEP_NS * 101 / 100);
}

/* the iteration, not one critic update: the generator's update every five
 * is part of each iteration, not an interruption of a loop of critic
 * updates (an evaluation every 20 steps stays one: training_with_evaluation) */
static void gan_iteration(void **state)
{
	(void)state;
	build_gan();
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, (CRITIC + 1) * 11);
	assert_int_equal(st.launches, (CRITIC + 1) * 11);
}

/* an evaluation every 5 steps as long as one (18 calls, on the main
 * thread alone) still interrupts the loop: the step stays 18 calls */
static void evaluation_every_five(void **state)
{
	(void)state;
	build_layers_every(2, 1, 1, 5, 2 * 2 * LAYER + 2);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 2 * 2 * LAYER + 2);
}

/* more calls a step than the first look holds three of: found by the
 * second look's bounds only */
static void step_longer_than_first_look(void **state)
{
	(void)state;
	build_long_steps();
	struct ia_steps st;
	steps_within(IA_STEPS_MAX_PERIOD, IA_STEPS_MAX_CALLS, &st);
	assert_int_equal(st.calls, 0);
	build_long_steps();   /* (read once, the file is removed) */
	steps_within(IA_STEPS_LONG_PERIOD, IA_STEPS_LONG_CALLS, &st);
	assert_int_equal(st.calls, LONG_STEP);
	assert_int_equal(st.launches, LONG_STEP);
	assert_int_equal(st.first_ns, LOOP_START);
	assert_true(st.ns > 10 * STEP_NS * 99 / 100 && st.ns < 10 * STEP_NS * 101 / 100);
}

/* a review's case: a set-up of 930 calls (4.8 % of the stretch, within the 5 % the
 * comparison allows) before steps of 500 launches; 20,000 calls in all */
static void setup_then_500_call_steps(void **state)
{
	(void)state;
	sqlite3 *db = create();
	struct ingero_cuda_call *c = calloc(20000, sizeof *c);
	assert_non_null(c);
	for (size_t i = 0; i < 20000; i++)
		c[i] = launch((uint64_t)i * US, i < 930 ? 0x100000 + i : 0x4000 + (i - 930) % 500);
	char err[256];
	if (tb_insert_calls(db, c, 20000, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	sqlite3_close(db);
	struct ia_steps st;
	steps_of(&st);
	assert_int_equal(st.calls, 500);
	/* the repetition's 10 % slack may start the loop up to p/10 early */
	assert_true(st.first_ns >= 880 * US && st.first_ns <= 930 * US);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_loop),
		cmocka_unit_test(loss_read_every_ten),
		cmocka_unit_test(training_with_evaluation),
		cmocka_unit_test(deep_training_with_evaluation),
		cmocka_unit_test(deep_inference),
		cmocka_unit_test(begins_with_other_work),
		cmocka_unit_test(loop_after_a_run_of_alike_launches),
		cmocka_unit_test(gan_iteration),
		cmocka_unit_test(evaluation_every_five),
		cmocka_unit_test(step_longer_than_first_look),
		cmocka_unit_test(setup_then_500_call_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
