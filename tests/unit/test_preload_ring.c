/*
 * test_preload_ring.c — the shared ring (preload/ring.c): order, multi-slot
 * records, full and wrap-around, holes left by dead producers, and many
 * producers in many processes writing into one mapping while one consumer
 * reads: every record arrives exactly once, in each producer's order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../preload/ring.h"

static struct ingero_ring *ring_new(uint64_t cap)
{
	void *p = mmap(NULL, ingero_ring_bytes(cap), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	ingero_ring_init(p, cap);
	return p;
}

static void ring_free(struct ingero_ring *r)
{
	munmap(r, ingero_ring_bytes(r->cap));
}

static unsigned char buf[INGERO_RING_MAX_REC];

static void empty_then_order(void **state)
{
	(void)state;
	struct ingero_ring *r = ring_new(16);
	uint32_t len;
	assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_EMPTY);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(ingero_ring_put(r, &i, sizeof i), INGERO_RING_OK);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_GOT);
		assert_int_equal(len, sizeof i);
		uint32_t v;
		memcpy(&v, buf, sizeof v);
		assert_int_equal(v, i);
	}
	assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_EMPTY);
	ring_free(r);
}

static void full_and_wrap(void **state)
{
	(void)state;
	struct ingero_ring *r = ring_new(8);
	uint32_t len, v;
	for (uint32_t lap = 0; lap < 5; lap++) {
		for (uint32_t i = 0; i < 8; i++) {
			v = lap * 100 + i;
			assert_int_equal(ingero_ring_put(r, &v, sizeof v), INGERO_RING_OK);
		}
		v = 999;
		assert_int_equal(ingero_ring_put(r, &v, sizeof v), INGERO_RING_FULL);
		for (uint32_t i = 0; i < 8; i++) {
			assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_GOT);
			memcpy(&v, buf, sizeof v);
			assert_int_equal(v, lap * 100 + i);
		}
	}
	assert_int_equal(ingero_ring_used(r), 0);
	ring_free(r);
}

static void multi_slot_records(void **state)
{
	(void)state;
	struct ingero_ring *r = ring_new(64);
	static unsigned char big[INGERO_SLOT_DATA * 5 + 7];
	uint32_t len;
	for (int round = 0; round < 20; round++) {   /* sizes cross the wrap point */
		for (size_t i = 0; i < sizeof big; i++)
			big[i] = (unsigned char)(i * 7 + round);
		uint32_t n = (uint32_t)(round * 37 % sizeof big) + 1;
		assert_int_equal(ingero_ring_put(r, big, n), INGERO_RING_OK);
		uint32_t small = 0xabcd;
		assert_int_equal(ingero_ring_put(r, &small, sizeof small), INGERO_RING_OK);
		assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_GOT);
		assert_int_equal(len, n);
		assert_memory_equal(buf, big, n);
		assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_GOT);
		assert_int_equal(len, sizeof small);
	}
	assert_int_equal(ingero_ring_put(r, big, INGERO_RING_MAX_REC + 1), INGERO_RING_TOOBIG);
	ring_free(r);
}

/* A producer that claimed a slot and died: the consumer waits for the
 * timeout, skips it, and carries on; a producer that publishes after the
 * skip learns it lost. */
static void holes_are_skipped(void **state)
{
	(void)state;
	struct ingero_ring *r = ring_new(16);
	uint32_t len, v = 1;
	atomic_store(&r->tail, 1);   /* position 0 claimed, never published */
	assert_int_equal(ingero_ring_put(r, &v, sizeof v), INGERO_RING_OK);
	assert_int_equal(ingero_ring_get(r, buf, &len, 1000, 500), INGERO_RING_EMPTY);
	assert_int_equal(ingero_ring_get(r, buf, &len, 1200, 500), INGERO_RING_EMPTY);
	assert_int_equal(ingero_ring_get(r, buf, &len, 1600, 500), INGERO_RING_SKIPPED);
	assert_int_equal(ingero_ring_get(r, buf, &len, 1600, 500), INGERO_RING_GOT);
	memcpy(&v, buf, sizeof v);
	assert_int_equal(v, 1);
	/* the late producer of position 0 now publishes: too late */
	uint64_t expect = 0;
	assert_false(atomic_compare_exchange_strong(&r->slots[0].stamp, &expect, 1));
	ring_free(r);
}

#define PROCS 4
#define THREADLESS_PER_PROC 200000

struct rec {
	uint32_t producer;
	uint32_t seq;
	unsigned char pad[40];
};

static void producers_in_many_processes(void **state)
{
	(void)state;
	struct ingero_ring *r = ring_new(1024);
	pid_t kids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		kids[p] = fork();
		if (kids[p] == 0) {
			struct rec x = { (uint32_t)p, 0, { 0 } };
			while (x.seq < THREADLESS_PER_PROC) {
				int rc = ingero_ring_put(r, &x, sizeof x);
				if (rc == INGERO_RING_OK)
					x.seq++;
				else if (rc != INGERO_RING_FULL)
					_exit(3);
			}
			_exit(0);
		}
	}
	uint32_t next[PROCS] = { 0 };
	uint64_t got = 0;
	uint32_t len;
	while (got < (uint64_t)PROCS * THREADLESS_PER_PROC) {
		int rc = ingero_ring_get(r, buf, &len, 0, UINT64_MAX);
		if (rc == INGERO_RING_EMPTY)
			continue;
		assert_int_equal(rc, INGERO_RING_GOT);
		assert_int_equal(len, sizeof(struct rec));
		struct rec x;
		memcpy(&x, buf, sizeof x);
		assert_true(x.producer < PROCS);
		assert_int_equal(x.seq, next[x.producer]);   /* each producer in order, none lost */
		next[x.producer]++;
		got++;
	}
	for (int p = 0; p < PROCS; p++) {
		int st;
		waitpid(kids[p], &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(ingero_ring_get(r, buf, &len, 0, 1000), INGERO_RING_EMPTY);
	ring_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_then_order),
		cmocka_unit_test(full_and_wrap),
		cmocka_unit_test(multi_slot_records),
		cmocka_unit_test(holes_are_skipped),
		cmocka_unit_test(producers_in_many_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
