/*
 * chain_instruments.c — a debugging instrument left on (mechanisms.h:
 * autograd's anomaly detection, PyTorch's profiler) told where it costs:
 * in the finding about the host's time that leads, with turning it off as
 * its first fix.  Its cost is the work it adds to every operation, so it
 * shows as host-bound launches or a busy host (c65, c66), never as a
 * finding of its own kind; a share of the main thread's own samples in the
 * steady state inside the instrument's frames names it.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "load/mechanisms.h"
#include "load/stacks.h"

#include <stdio.h>
#include <string.h>

#define INSTRUMENT_MIN_SAMPLES 20   /* main-thread samples in the steady state, at least */
#define INSTRUMENT_SHARE 0.10       /* of them inside one instrument's frames */

struct tally {
	struct ia_stack_names *names;
	uint64_t n[IA_INSTR_N];
};

static void count(uint64_t stack, void *arg)
{
	struct tally *t = arg;
	int i = ia_stack_instrument(t->names, stack);
	if (i > IA_INSTR_NONE && i < IA_INSTR_N)
		t->n[i]++;
}

/* The kinds whose cost is the host's own time in the steady state. */
static int host_kind(enum ia_kind k)
{
	return k == IA_KIND_HOST_BOUND_LAUNCHES || k == IA_KIND_GAPS_HOST_BUSY || k == IA_KIND_SYNC_PER_STEP ||
	       k == IA_KIND_CPU_CONTENTION || k == IA_KIND_SLOW_CALLS;
}

uint64_t ia_instruments_in(const struct ia_analysis *a, uint64_t from, uint64_t to, int steady,
			   enum ia_instrument *top, uint64_t *top_n)
{
	struct tally t = { .names = a->names };
	uint64_t total = ia_phases_main_samples(&a->ph, from, to, steady, count, &t);
	*top = IA_INSTR_NONE;
	for (int i = IA_INSTR_NONE + 1; i < IA_INSTR_N; i++)
		if (t.n[i] > t.n[*top])
			*top = (enum ia_instrument)i;
	*top_n = t.n[*top];
	return total;
}

void ia_instruments_lead(struct ia_analysis *a)
{
	enum ia_instrument top;
	uint64_t n;
	uint64_t total = ia_instruments_in(a, a->gaps.win_start, a->gaps.win_end, 1, &top, &n);
	if (top == IA_INSTR_NONE || total < INSTRUMENT_MIN_SAMPLES || n < INSTRUMENT_SHARE * (double)total)
		return;
	struct ia_chain *c = NULL;
	for (size_t i = 0; i < a->nchains && !c; i++)
		if (host_kind(a->chains[i].kind))
			c = &a->chains[i];
	if (!c)
		return;
	double pct = ia_pct(n, total);
	ia_addf(c->root_cause, sizeof c->root_cause,
		" %s is on: %.0f%% of the main thread's samples in the steady state are inside it, because %s — "
		"the host's time per operation is the instrument's, not the model's.",
		ia_instrument_name(top), pct, ia_instrument_cost(top));
	if (c->nfixes == IA_CHAIN_MAX_LINES)
		c->nfixes--;   /* its last fix gives way: this one comes first */
	ia_chain_fix(c, "%s", ia_instrument_fix(top));
	ia_chain_fix_move(c, c->nfixes - 1, 0);
	cJSON *ev = c->evidence ? cJSON_AddObjectToObject(c->evidence, "instrument") : NULL;
	if (!ev)
		return;
	cJSON_AddStringToObject(ev, "name", ia_instrument_name(top));
	ia_json_u64(ev, "main_samples", n);
	ia_json_u64(ev, "main_steady_samples", total);
}
