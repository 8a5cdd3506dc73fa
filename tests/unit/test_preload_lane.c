/*
 * test_preload_lane.c — a thread's lane (preload/lane.c): calls come back in
 * order with their fields, short and full entries mixed over many laps (a
 * full entry never split over the lane's end); a full lane refuses and
 * takes again once read; claims are exclusive and a gone thread's drained
 * lane is freed, an undrained one not; scribbled memory is skipped and
 * counted; a producer thread and a consumer running at once lose nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../preload/lane.h"

static struct ingero_lane *lanes_new(uint32_t n)
{
	void *p = mmap(NULL, n * sizeof(struct ingero_lane), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	assert_true(p != MAP_FAILED);
	return p;
}

static void lanes_free(struct ingero_lane *l, uint32_t n)
{
	munmap(l, n * sizeof(struct ingero_lane));
}

/* A call numbered i: a launch (short), or one in four at random a copy
 * (bytes: full), so that full entries meet the lane's end at every offset. */
static bool is_full(uint64_t i)
{
	return ((i * 0x9e3779b97f4a7c15ull) >> 62) == 0;
}

static struct ingero_cuda_call call_of(uint64_t i)
{
	struct ingero_cuda_call ev = { .api = 7, .flags = 4, .ret = (int32_t)(i % 3), .pid = 111, .tid = 222,
				       .start_ns = i, .dur_ns = i * 2, .stream = 0x5000 + i, .kernel = 0x9000 + i,
				       .grid = { 1, 2, 3 }, .block = { 4, 5, (uint32_t)i } };
	if (is_full(i)) {
		ev.bytes = i + 1;
		ev.dir = 1;
	}
	return ev;
}

struct got {
	uint64_t next;   /* the number of the call expected next */
	uint64_t n;
	int tsc;
};

static void check_call(struct ingero_cuda_call *ev, bool tsc, void *arg)
{
	struct got *g = arg;
	struct ingero_cuda_call want = call_of(g->next);
	want.pid = 42;   /* the lane's owner's */
	want.tid = 43;
	assert_memory_equal(ev, &want, sizeof want);
	assert_int_equal(tsc, g->tsc);
	g->next++;
	g->n++;
}

static void order_over_laps(void **state)
{
	(void)state;
	struct ingero_lane *l = lanes_new(1);
	struct ingero_lane_writer w = { 0 };
	assert_true(ingero_lane_claim(l, 1, ingero_lane_owner(42, 43), &w));
	struct got g = { 0, 0, 1 };
	uint64_t bad = 0, made = 0, pads = 0;
	/* ~20 laps, in batches that do not divide the lane */
	for (int batch = 0; batch < 120; batch++) {
		for (int k = 0; k < 333; k++) {
			struct ingero_cuda_call ev = call_of(made);
			uint64_t t = w.tail;
			assert_true(ingero_lane_put(&w, &ev, true));
			/* a full entry due at the last unit: a pad there, the entry at 0 */
			if ((t & (INGERO_LANE_UNITS - 1)) == INGERO_LANE_UNITS - 1 && is_full(made)) {
				assert_int_equal(l->units[INGERO_LANE_UNITS - 1][0], INGERO_LANE_PAD);
				assert_int_equal(w.tail, t + 3);
				pads++;
			}
			made++;
		}
		uint64_t upto = atomic_load(&l->tail);
		/* at most max calls a take: the rest with the next */
		uint64_t before = g.n;
		assert_int_equal(ingero_lane_take(l, upto, 100, check_call, &g, &bad), 100);
		assert_int_equal(g.n - before, 100);
		assert_true(atomic_load(&l->head) != upto);
		ingero_lane_take(l, upto, UINT32_MAX, check_call, &g, &bad);
		assert_int_equal(atomic_load(&l->head), upto);
	}
	assert_int_equal(g.n, made);
	assert_int_equal(bad, 0);
	assert_true(pads > 0);
	lanes_free(l, 1);
}

static void full_then_room(void **state)
{
	(void)state;
	struct ingero_lane *l = lanes_new(1);
	struct ingero_lane_writer w = { 0 };
	assert_true(ingero_lane_claim(l, 1, ingero_lane_owner(42, 43), &w));
	struct ingero_cuda_call ev = call_of(1);   /* short: one unit each */
	for (uint32_t i = 0; i < INGERO_LANE_UNITS; i++)
		assert_true(ingero_lane_put(&w, &ev, false));
	assert_false(ingero_lane_put(&w, &ev, false));
	struct ingero_cuda_call full = call_of(1);
	full.bytes = 1;
	assert_false(ingero_lane_put(&w, &full, false));
	assert_int_equal(atomic_load(&l->tail), INGERO_LANE_UNITS);
	/* the sender reads ten: ten more go in, the writer having read its head again */
	struct got g = { 1, 0, 0 };
	uint64_t bad = 0;
	for (int i = 0; i < 10; i++) {
		uint64_t h = atomic_load(&l->head);
		g.next = 1;
		ingero_lane_take(l, h + 1, UINT32_MAX, check_call, &g, &bad);
	}
	assert_int_equal(g.n, 10);
	for (int i = 0; i < 10; i++)
		assert_true(ingero_lane_put(&w, &ev, false));
	assert_false(ingero_lane_put(&w, &ev, false));
	assert_int_equal(bad, 0);
	lanes_free(l, 1);
}

static void noop(struct ingero_cuda_call *ev, bool tsc, void *arg)
{
	(void)ev;
	(void)tsc;
	(*(uint64_t *)arg)++;
}

static void claims_and_frees(void **state)
{
	(void)state;
	struct ingero_lane *l = lanes_new(3);
	struct ingero_lane_writer w[4] = { 0 };
	pid_t kid = fork();
	if (kid == 0)
		_exit(0);
	assert_true(kid > 0);
	int st;
	waitpid(kid, &st, 0);   /* gone: tgkill(kid, kid, 0) says ESRCH */
	uint32_t me = (uint32_t)getpid();
	assert_true(ingero_lane_claim(l, 3, ingero_lane_owner(me, me), &w[0]));
	assert_true(ingero_lane_claim(l, 3, ingero_lane_owner((uint32_t)kid, (uint32_t)kid), &w[1]));
	assert_true(ingero_lane_claim(l, 3, ingero_lane_owner((uint32_t)kid, (uint32_t)kid + 1000000), &w[2]));
	assert_false(ingero_lane_claim(l, 3, ingero_lane_owner(me, me + 1), &w[3]));
	assert_true(w[0].lane != w[1].lane && w[1].lane != w[2].lane && w[0].lane != w[2].lane);
	/* the gone thread's lane still holds a call: not freed until it is taken */
	struct ingero_cuda_call ev = call_of(1);
	assert_true(ingero_lane_put(&w[1], &ev, false));
	assert_int_equal(ingero_lanes_free_gone(l, 3), 1);   /* w[2]'s: gone, empty */
	uint64_t n = 0, bad = 0;
	ingero_lane_take(w[1].lane, atomic_load(&w[1].lane->tail), UINT32_MAX, noop, &n, &bad);
	assert_int_equal(n, 1);
	assert_int_equal(ingero_lanes_free_gone(l, 3), 1);   /* now w[1]'s */
	assert_int_equal(atomic_load(&w[0].lane->owner), ingero_lane_owner(me, me));   /* alive: kept */
	/* a freed lane goes on from its last position, empty */
	struct ingero_lane_writer again = { 0 };
	assert_true(ingero_lane_claim(l, 3, ingero_lane_owner(me, me + 2), &again));
	assert_true(again.lane == w[1].lane);
	assert_int_equal(again.tail, 1);
	assert_int_equal(again.head, 1);
	lanes_free(l, 3);
}

static void scribbles_are_skipped(void **state)
{
	(void)state;
	struct ingero_lane *l = lanes_new(1);
	struct ingero_lane_writer w = { 0 };
	assert_true(ingero_lane_claim(l, 1, ingero_lane_owner(42, 43), &w));
	struct ingero_cuda_call ev = call_of(1);
	for (int i = 0; i < 4; i++)
		assert_true(ingero_lane_put(&w, &ev, false));
	l->units[2][0] = 0x55;   /* an unknown tag */
	uint64_t n = 0, bad = 0;
	ingero_lane_take(l, 4, UINT32_MAX, noop, &n, &bad);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 1);
	assert_int_equal(atomic_load(&l->head), 4);
	/* a tail no producer wrote (more than a lane ahead) */
	ingero_lane_take(l, 4 + 2 * INGERO_LANE_UNITS, UINT32_MAX, noop, &n, &bad);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 2);
	lanes_free(l, 1);
}

#define CONCURRENT_CALLS 400000

static void *produce(void *arg)
{
	struct ingero_lane_writer *w = arg;
	for (uint64_t i = 0; i < CONCURRENT_CALLS;) {
		struct ingero_cuda_call ev = call_of(i);
		if (ingero_lane_put(w, &ev, true))
			i++;
		else
			sched_yield();   /* full: the consumer is behind */
	}
	return NULL;
}

static void producer_and_consumer_at_once(void **state)
{
	(void)state;
	struct ingero_lane *l = lanes_new(1);
	struct ingero_lane_writer w = { 0 };
	assert_true(ingero_lane_claim(l, 1, ingero_lane_owner(42, 43), &w));
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, produce, &w), 0);
	struct got g = { 0, 0, 1 };
	uint64_t bad = 0;
	while (g.n < CONCURRENT_CALLS) {
		uint64_t upto = atomic_load_explicit(&l->tail, memory_order_acquire);
		if (upto == atomic_load(&l->head))
			sched_yield();
		else
			ingero_lane_take(l, upto, UINT32_MAX, check_call, &g, &bad);
	}
	pthread_join(th, NULL);
	assert_int_equal(g.n, CONCURRENT_CALLS);
	assert_int_equal(bad, 0);
	lanes_free(l, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order_over_laps),
		cmocka_unit_test(full_then_room),
		cmocka_unit_test(claims_and_frees),
		cmocka_unit_test(scribbles_are_skipped),
		cmocka_unit_test(producer_and_consumer_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
