/*
 * stack_budget.h — how much of a thread's time may go to taking stacks.
 *
 * A stack costs under a microsecond in a small program and far more in
 * PyTorch (libunwind's walk through libtorch and the interpreter): at one
 * launch in 64 of a launch-bound loop, stacks alone slowed it by ~3 % on
 * the H200 (docs/gpu-runs.md, section 4).  So each thread earns stack time
 * at `ppm` millionths of its wall time, holds at most 10 s worth (which is
 * also its starting credit, for the first calls of a program), and pays
 * what each stack really took.  Sampled launch stacks need more than half
 * the most credit, so they do not spend what sync and copy stacks (the
 * evidence for stalls) need — but for a cold one's overdraft, which the
 * reserve below pays whatever the stack was.
 *
 * A thread's first unwinds are cold: libunwind reads the libraries'
 * .eh_frame from disk, ~20 ms a stack in the H200's first run after boot
 * (and more for a thread whose first stack crosses more libraries).  At
 * 0.05 % the credit is 5 ms, so one such stack would withhold all the
 * stacks after it, syncs' included, for ~30 s or more: a short job would
 * have none.  So each thread also holds a one-time reserve that pays what a
 * stack cost beyond the credit: twenty times the most credit, at most
 * INGERO_STACK_RESERVE_NS (so 100 ms from 0.05 % up, and a rate far below it
 * still allows only a few stacks); it is not earned back, so what it costs
 * a run is bounded, once per thread.
 */
#ifndef INGERO_PRELOAD_STACK_BUDGET_H
#define INGERO_PRELOAD_STACK_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define INGERO_STACK_BUDGET_UNLIMITED 1000000u
#define INGERO_STACK_RESERVE_NS 100000000   /* the most reserve: 100 ms, once per thread */

struct ingero_stack_budget {
	uint64_t last_ns;   /* when credit was last earned; 0 = never */
	int64_t credit_ns;  /* stack time the thread may still spend */
	uint64_t paused_ns; /* the process's paused time as of the last look */
	int64_t reserve_ns; /* what is left of the one-time reserve (set at first use) */
};

/* Time the program had recording paused (capture.c) earns nothing:
 * `paused_ns` is the process's paused total so far; what is new since the
 * thread last looked moves its earning clock forward.  Call before
 * ingero_stack_budget_allows. */
static inline void ingero_stack_budget_pause(struct ingero_stack_budget *b, uint64_t paused_ns)
{
	if (b->paused_ns != paused_ns) {
		if (b->last_ns)
			b->last_ns += paused_ns - b->paused_ns;
		b->paused_ns = paused_ns;
	}
}

/* May a stack be taken at `now` (CLOCK_MONOTONIC ns)?  `sampled`: a launch
 * sample rather than a class that always wants stacks. */
bool ingero_stack_budget_allows(struct ingero_stack_budget *b, uint32_t ppm, bool sampled,
				uint64_t now);

/* After `allows` said no to a sampled stack: the earliest time (ns, the
 * clock `allows` was given) at which it could say yes — the credit only
 * grows at ppm until then, so every sampled stack due before it would be
 * refused too (0: no such time, ask every time). */
uint64_t ingero_stack_budget_sampled_after(const struct ingero_stack_budget *b, uint32_t ppm);

/* A stack took `ns`: the credit pays, the reserve what the credit cannot. */
static inline void ingero_stack_budget_spend(struct ingero_stack_budget *b, uint64_t ns)
{
	b->credit_ns -= (int64_t)ns;
	if (b->credit_ns < 0 && b->reserve_ns > 0) {
		int64_t take = -b->credit_ns < b->reserve_ns ? -b->credit_ns : b->reserve_ns;
		b->reserve_ns -= take;
		b->credit_ns += take;
	}
}

#endif
