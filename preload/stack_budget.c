/*
 * stack_budget.c — the stack-time budget of one thread (stack_budget.h).
 */
#include "stack_budget.h"

#define WINDOW_NS 10000000000ull   /* the most credit is ppm of this */

bool ingero_stack_budget_allows(struct ingero_stack_budget *b, uint32_t ppm, bool sampled,
				uint64_t now)
{
	if (ppm >= INGERO_STACK_BUDGET_UNLIMITED)
		return true;
	int64_t most = (int64_t)(WINDOW_NS / 1000000u * ppm);
	if (!b->last_ns) {
		b->credit_ns = most;
		b->last_ns = now ? now : 1;
	} else if (now > b->last_ns) {
		uint64_t dt = now - b->last_ns;
		if (dt > WINDOW_NS)
			dt = WINDOW_NS;   /* keeps dt * ppm far from overflow; the cap is reached anyway */
		b->credit_ns += (int64_t)(dt * ppm / 1000000u);
		if (b->credit_ns > most)
			b->credit_ns = most;
		b->last_ns = now;
	}
	return b->credit_ns > (sampled ? most / 2 : 0);
}
