/*
 * stack_budget.c — the stack-time budget of one thread (stack_budget.h).
 */
#include "stack_budget.h"

#define WINDOW_NS 10000000000ull   /* the most credit is ppm of this */

static inline int64_t most_credit(uint32_t ppm)
{
	return (int64_t)(WINDOW_NS / 1000000u * ppm);
}

/* A sampled stack (a launch's) needs more than this much credit. */
static inline int64_t sampled_floor(int64_t most)
{
	return most / 2;
}

bool ingero_stack_budget_allows(struct ingero_stack_budget *b, uint32_t ppm, bool sampled,
				uint64_t now)
{
	if (ppm >= INGERO_STACK_BUDGET_UNLIMITED)
		return true;
	if (ppm == 0)
		return false;
	int64_t most = most_credit(ppm);
	if (!b->last_ns) {
		b->credit_ns = most;
		b->reserve_ns = 20 * most < INGERO_STACK_RESERVE_NS ? 20 * most : INGERO_STACK_RESERVE_NS;
		b->last_ns = now ? now : 1;
	} else if (now > b->last_ns) {
		uint64_t dt = now - b->last_ns;
		if (dt >= WINDOW_NS) {   /* the cap is reached anyway; keeps dt * ppm from overflow */
			b->credit_ns = most;
			b->last_ns = now;
		} else {
			/* only the time turned into whole nanoseconds of credit is used
			 * up: calls closer than 1e6/ppm ns apart still earn */
			uint64_t gained = dt * ppm / 1000000u;
			b->credit_ns += (int64_t)gained;
			b->last_ns += ppm ? gained * 1000000u / ppm : dt;
			if (b->credit_ns >= most) {
				b->credit_ns = most;
				b->last_ns = now;
			}
		}
	}
	if (sampled)
		return b->credit_ns > sampled_floor(most);
	/* the credit is never below 0 while the reserve lasts (spend) */
	return b->credit_ns > 0 || b->reserve_ns > 0;
}

uint64_t ingero_stack_budget_sampled_after(const struct ingero_stack_budget *b, uint32_t ppm)
{
	if (ppm == 0 || ppm >= INGERO_STACK_BUDGET_UNLIMITED || !b->last_ns)
		return 0;
	int64_t floor_ = sampled_floor(most_credit(ppm));
	if (b->credit_ns > floor_)
		return 0;
	/* allows() adds floor(dt * ppm / 1e6) for dt since last_ns: the first
	 * dt that lifts the credit above the sampled floor */
	uint64_t need = (uint64_t)(floor_ - b->credit_ns) + 1;
	return b->last_ns + (need * 1000000u + ppm - 1) / ppm;
}
