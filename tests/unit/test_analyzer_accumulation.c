/*
 * test_analyzer_accumulation.c — backward passes a step (accumulation.h)
 * from hand-set calls: the autograd thread's runs at least 0.7 of the
 * step's longest, each after a forward, are passes (four micro-batches: 4,
 * the first shorter pass too); passes of one length (a GAN's critic
 * steps, SAM's two passes, each after zero_grad: no adds into the
 * gradients) are not accumulation; a long run and short ones is one pass; a
 * step whose start falls inside a backward does not cut it in two; another
 * thread's call inside a backward does not part it; two backward() over
 * one graph with no forward between are one; the lower median step's
 * count; nothing without autograd threads or steps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/accumulation.h"

#include <string.h>

#define MAXC 8192

static struct ia_trace tr;
static struct ia_thread th[3];
static struct ia_call calls[MAXC];
static uint32_t ix[MAXC];
static struct ia_gaps g;
static uint64_t starts[8], lens[8];
static struct ia_step_times st;
static uint64_t now;

static void setup(void)
{
	memset(&tr, 0, sizeof tr);
	memset(&g, 0, sizeof g);
	memset(&st, 0, sizeof st);
	memset(th, 0, sizeof th);
	strcpy(th[0].comm, "python3");
	strcpy(th[1].comm, "pt_autograd_0");
	strcpy(th[2].comm, "pt_pin_memory");
	tr.threads = th;
	tr.nthreads = 3;
	tr.calls = calls;
	g.main_calls = ix;
	st.start = starts;
	st.ns = lens;
	now = 1000;
}

/* n calls of thread index thi, 10 ns apart */
static void run(uint32_t thi, int n)
{
	for (int i = 0; i < n; i++) {
		assert_true(g.nmain_calls < MAXC);
		calls[g.nmain_calls] = (struct ia_call){ .start = now, .dur = 5, .th = thi };
		ix[g.nmain_calls] = (uint32_t)g.nmain_calls;
		g.nmain_calls++;
		now += 10;
	}
}

/* one step: its runs, a forward of 100 main-thread calls before each */
static void step(const int *bw, int n)
{
	starts[st.n] = now;
	for (int i = 0; i < n; i++) {
		run(0, 100);
		run(1, bw[i]);
	}
	run(0, 5);   /* the optimizer's */
	lens[st.n] = now - starts[st.n];
	st.n++;
}

/* three steps, each the runs seq[0..n): (thread index, calls) */
static void steps_of_runs(const int (*seq)[2], int n)
{
	for (int i = 0; i < 3; i++) {
		starts[st.n] = now;
		for (int j = 0; j < n; j++)
			run((uint32_t)seq[j][0], seq[j][1]);
		lens[st.n] = now - starts[st.n];
		st.n++;
	}
}

static uint32_t passes(void)
{
	return ia_backward_passes(&tr, &g, 0, &st);
}

/* the passes of three like steps, each the runs seq[0..n) */
static uint32_t passes_of_runs(const int (*seq)[2], int n)
{
	setup();
	steps_of_runs(seq, n);
	return passes();
}

/* the passes of three like steps, each its backward runs bw[0..n) */
static uint32_t passes_of_steps(const int *bw, int n)
{
	setup();
	for (int i = 0; i < 3; i++)
		step(bw, n);
	return passes();
}

static void four_micro_batches(void **state)
{
	(void)state;
	static const int bw[] = { 251, 303, 303, 303 };
	assert_int_equal(passes_of_steps(bw, 4), 4);
}

/* passes that all write the gradients (zero_grad before each): a WGAN's
 * five critic steps and its generator's, SAM's two; and two micro-batches
 * whose second adds only one launch more than the first (noise, not an add
 * a tensor); a small pass's adds are 2 launches at least (5 % of 20 is 1) */
static void one_length_is_not_accumulation(void **state)
{
	(void)state;
	static const int wgan[] = { 150, 150, 150, 150, 150, 160 }, sam[] = { 200, 200 }, close[] = { 200, 201 };
	static const int two[] = { 251, 303 }, small_close[] = { 20, 21 }, small_two[] = { 20, 22 };
	assert_int_equal(passes_of_steps(wgan, 6), 1);
	assert_int_equal(passes_of_steps(sam, 2), 1);
	assert_int_equal(passes_of_steps(close, 2), 1);
	assert_int_equal(passes_of_steps(two, 2), 2);
	assert_int_equal(passes_of_steps(small_close, 2), 1);
	assert_int_equal(passes_of_steps(small_two, 2), 2);
}

static void ddp_cut_backward_is_one(void **state)
{
	(void)state;
	static const int bw[] = { 150, 7, 22, 25 };
	assert_int_equal(passes_of_steps(bw, 4), 1);
}

static void median_step(void **state)
{
	(void)state;
	setup();
	static const int two[] = { 100, 110 }, one[] = { 100 };
	step(two, 2);
	step(one, 1);
	step(two, 2);
	assert_int_equal(passes(), 2);
	step(one, 1);   /* two and two: the lower median */
	assert_int_equal(passes(), 1);
}

/* the steps' starts 150 calls into a backward of 350 (where a signature
 * matched): each step's last run and its first are one pass (cut in two,
 * its halves of 200 and 150 would read as two micro-batches, the second
 * adding into the gradients) */
static void start_inside_a_backward(void **state)
{
	(void)state;
	setup();
	for (int i = 0; i < 4; i++) {
		run(0, 100);
		run(1, 150);
		if (i)
			lens[st.n - 1] = now - starts[st.n - 1];
		if (i < 3)
			starts[st.n++] = now;
		run(1, 200);
		run(0, 5);
	}
	assert_int_equal(st.n, 3);
	assert_int_equal(passes(), 1);
}

/* a pin-memory thread's calls in the middle of each backward (as many as
 * a forward's: parting it, they would make two passes of 150 and 180) */
static void another_thread_does_not_part(void **state)
{
	(void)state;
	static const int seq[][2] = { { 0, 100 }, { 1, 150 }, { 2, 100 }, { 1, 180 }, { 0, 5 } };
	assert_int_equal(passes_of_runs(seq, 5), 1);
}

/* loss1.backward(retain_graph=True); loss2.backward(): a call or two of
 * the main thread between two runs (the second adding into the
 * gradients), no forward */
static void two_backwards_one_forward(void **state)
{
	(void)state;
	static const int seq[][2] = { { 0, 100 }, { 1, 200 }, { 0, 2 }, { 1, 230 }, { 0, 5 } };
	assert_int_equal(passes_of_runs(seq, 5), 1);
}

static void none_without_autograd_or_steps(void **state)
{
	(void)state;
	setup();
	run(0, 100);
	starts[0] = 1000;
	lens[0] = now - 1000;
	st.n = 1;
	assert_int_equal(passes(), 0);
	st.n = 0;
	assert_int_equal(passes(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(four_micro_batches),
		cmocka_unit_test(one_length_is_not_accumulation),
		cmocka_unit_test(ddp_cut_backward_is_one),
		cmocka_unit_test(median_step),
		cmocka_unit_test(start_inside_a_backward),
		cmocka_unit_test(another_thread_does_not_part),
		cmocka_unit_test(two_backwards_one_forward),
		cmocka_unit_test(none_without_autograd_or_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
