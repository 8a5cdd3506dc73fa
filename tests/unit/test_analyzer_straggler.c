/*
 * test_analyzer_straggler.c — which rank of a job is the straggler
 * (analyzer/rules/chain_straggler.c, ia_job_find_straggler), on collectives'
 * figures built by hand: a rank last at every collective is the straggler;
 * one last at 9 of 15 that caused 85 % of the others' waiting in many
 * moderate waits is too (a loaded machine made the others last, by a hair,
 * at the rest); the same share carried by a few long waits is only a
 * suspect; and ranks that take turns are balanced.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/chain_straggler.h"

#include <string.h>

#define MS 1000000ull
#define N 15

/* A job of 3 ranks over N collectives, each rank spanning 500 ms: at
 * collective i rank last[i] arrives x[i] late for the other two (each
 * waits x[i]: imposed 2·x[i]). */
static void job_of(struct ia_job *j, struct ia_coll_rank r[3], const int last[N], const uint64_t x[N])
{
	memset(j, 0, sizeof *j);
	memset(r, 0, 3 * sizeof *r);
	for (int k = 0; k < 3; k++) {
		r[k].rank = k;
		r[k].first_ns = 1000 * MS;
		r[k].last_ns = 1500 * MS;
	}
	j->coll.r = r;
	j->coll.nranks = 3;
	j->coll.n = N;
	strcpy(j->coll.op, "ncclAllReduce");
	for (int i = 0; i < N; i++) {
		struct ia_coll_rank *l = &r[last[i]];
		l->last_count++;
		l->late_ns += x[i];
		l->imposed_ns += 2 * x[i];
		j->coll.imposed_ns += 2 * x[i];
		j->coll.imposed_sq += (double)(2 * x[i]) * (double)(2 * x[i]);
		for (int k = 0; k < 3; k++)
			if (k != last[i])
				r[k].wait_ns += x[i];
	}
	ia_job_find_straggler(j);
}

static void last_everywhere(void **state)
{
	(void)state;
	struct ia_job j;
	struct ia_coll_rank r[3];
	int last[N];
	uint64_t x[N];
	for (int i = 0; i < N; i++)
		last[i] = 1, x[i] = 10 * MS;
	job_of(&j, r, last, x);
	assert_int_equal(j.straggler, 1);
	assert_int_equal(j.suspect, -1);
	assert_true(j.last_share > 0.99 && j.imposed_share > 0.99);
}

/* rank 1 last at 9 (30 ms each), ranks 0 and 2 at 3 each (5 ms): 9 of 15 is
 * within the binomial 3σ (10.5), 85 % of the waiting on 15 nearly equal
 * parts is not */
static void most_of_the_waiting(void **state)
{
	(void)state;
	struct ia_job j;
	struct ia_coll_rank r[3];
	int last[N];
	uint64_t x[N];
	for (int i = 0; i < N; i++) {
		last[i] = i < 9 ? 1 : i < 12 ? 0 : 2;
		x[i] = i < 9 ? 30 * MS : 5 * MS;
	}
	job_of(&j, r, last, x);
	assert_int_equal(j.straggler, 1);
	assert_true(j.imposed_share > 0.85 && j.imposed_share < 0.95);
	assert_true(j.last_share < 0.61);
}

/* the same count with two long waits carrying it: not proven, a suspect */
static void few_long_waits(void **state)
{
	(void)state;
	struct ia_job j;
	struct ia_coll_rank r[3];
	int last[N];
	uint64_t x[N];
	for (int i = 0; i < N; i++) {
		last[i] = i < 9 ? 1 : i < 12 ? 0 : 2;
		x[i] = i < 2 ? 150 * MS : i < 9 ? 1 * MS : 8 * MS;
	}
	job_of(&j, r, last, x);
	assert_int_equal(j.straggler, -1);
	assert_int_equal(j.suspect, 1);
	char b[600];
	ia_job_balance_sentence(&j, b, sizeof b);
	assert_non_null(strstr(b, "No rank is the straggler beyond chance over these 15 ncclAllReduce, but rank 1 came "
				  "last at 9 of them"));
}

static void taking_turns(void **state)
{
	(void)state;
	struct ia_job j;
	struct ia_coll_rank r[3];
	int last[N];
	uint64_t x[N];
	for (int i = 0; i < N; i++)
		last[i] = i % 3, x[i] = (3 + (uint64_t)i % 4) * MS;
	job_of(&j, r, last, x);
	assert_int_equal(j.straggler, -1);
	assert_int_equal(j.suspect, -1);
	char b[600];
	ia_job_balance_sentence(&j, b, sizeof b);
	assert_non_null(strstr(b, "The ranks are balanced"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(last_everywhere),
		cmocka_unit_test(most_of_the_waiting),
		cmocka_unit_test(few_long_waits),
		cmocka_unit_test(taking_turns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
