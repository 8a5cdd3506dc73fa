/*
 * accumulation.c — backward passes a step (see accumulation.h).
 *
 * Costs: one walk over the main process's calls of the steady steps.
 */
#include "measure/accumulation.h"

#include "base/util.h"
#include "measure/backward_line.h"

#include <stdlib.h>

/* a run of the autograd threads' calls this share of the step's longest
 * or more is a whole backward pass (c74's first pass, 251 of 303: 0.83) */
#define ACCUM_RUN_SHARE 0.7
#define ACCUM_MAX_RUNS 64   /* runs a step looked at: passes beyond are not told apart */

/* The passes of one step from its runs' sizes. */
static uint32_t passes_of(const uint32_t *run, size_t n)
{
	uint32_t longest = 0, passes = 0;
	for (size_t i = 0; i < n; i++)
		longest = run[i] > longest ? run[i] : longest;
	for (size_t i = 0; i < n; i++)
		passes += run[i] >= ACCUM_RUN_SHARE * longest;
	return passes;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

uint32_t ia_backward_passes(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_step_times *s)
{
	if (!s->n || !g->nmain_calls)
		return 0;
	uint32_t *per_step = calloc(s->n, sizeof *per_step);
	if (!per_step)
		return 0;   /* (a figure the fixes' wording reads: none rather than a failed analysis) */
	uint32_t run[ACCUM_MAX_RUNS], cur = 0;
	size_t nrun = 0, step = 0, k = 0, nautograd = 0;
	/* the main process's calls are in time order, and so are the steps */
	while (k < g->nmain_calls && t->calls[g->main_calls[k]].start < s->start[0])
		k++;
	for (; k < g->nmain_calls && step < s->n; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		while (step < s->n && c->start >= s->start[step] + s->ns[step]) {
			if (cur && nrun < ACCUM_MAX_RUNS)
				run[nrun++] = cur;
			per_step[step++] = passes_of(run, nrun);
			nrun = cur = 0;
		}
		if (step == s->n || c->start < s->start[step])
			continue;   /* between steady steps (a phase): not a step's */
		if (ia_is_autograd_thread(t->threads[c->th].comm)) {
			cur++;
			nautograd++;
		} else if (cur) {
			if (nrun < ACCUM_MAX_RUNS)
				run[nrun++] = cur;
			cur = 0;
		}
	}
	if (step < s->n) {
		if (cur && nrun < ACCUM_MAX_RUNS)
			run[nrun++] = cur;
		per_step[step++] = passes_of(run, nrun);
	}
	uint32_t median = 0;
	if (nautograd) {
		qsort(per_step, step, sizeof *per_step, cmp_u32);
		median = per_step[step / 2];
	}
	free(per_step);
	return median;
}
