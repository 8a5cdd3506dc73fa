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
/* ... and the main thread's run before it (its forward) half the second
 * longest such run or more, which is itself a fifth of the longest pass
 * or more: a forward a micro-batch (a backward issues about twice its
 * forward's launches), not a second loss's few calls between two
 * backward() over one graph */
#define ACCUM_FORWARD_SHARE 0.5
#define ACCUM_FORWARD_MIN 0.2
#define ACCUM_MAX_RUNS 64   /* runs a step looked at: passes beyond are not told apart */
/* Passes that add into the gradients are longer than the one that wrote
 * them (after zero_grad, which drops them) by an add a parameter tensor:
 * c74's 303 against 251, its 52 tensors.  A later pass this much longer
 * than the step's shortest (and 2 launches at least) is one that adds.  A
 * GAN's critic steps or SAM's two passes zero the gradients before each
 * pass: their passes are one length, and are not accumulation. */
#define ACCUM_ADDS_SHARE 0.05

struct run {
	int autograd;
	uint32_t n;
};

/* The passes of one step from its runs, in order.  The step's first and
 * last runs are one where they are of one kind: a step's start (where its
 * signature matched) may fall inside a run. */
static uint32_t passes_of(struct run *r, size_t n)
{
	if (n >= 2 && r[0].autograd == r[n - 1].autograd)
		r[0].n += r[--n].n;
	if (n < 2)
		return 0;   /* one kind of call alone: no pass after a forward */
	uint32_t longest = 0, fwd[ACCUM_MAX_RUNS], pass[ACCUM_MAX_RUNS], nf = 0;
	for (size_t i = 0; i < n; i++)
		if (r[i].autograd && r[i].n > longest)
			longest = r[i].n;
	/* the forward before each whole pass (the run before it, the step's
	 * last before its first) */
	for (size_t i = 0; i < n; i++)
		if (r[i].autograd && r[i].n >= ACCUM_RUN_SHARE * longest) {
			pass[nf] = r[i].n;
			fwd[nf++] = r[i ? i - 1 : n - 1].n;
		}
	if (nf < 2)
		return nf;
	uint32_t first = 0, second = 0;
	for (uint32_t i = 0; i < nf; i++) {
		if (fwd[i] > first) {
			second = first;
			first = fwd[i];
		} else if (fwd[i] > second) {
			second = fwd[i];
		}
	}
	if (second < ACCUM_FORWARD_MIN * longest)
		return 1;
	/* the passes after a forward, kept in place (the first and second
	 * largest forwards always are: two at least) */
	uint32_t passes = 0, shortest = UINT32_MAX;
	for (uint32_t i = 0; i < nf; i++)
		if (fwd[i] >= ACCUM_FORWARD_SHARE * second) {
			pass[passes++] = pass[i];
			shortest = pass[i] < shortest ? pass[i] : shortest;
		}
	/* one pass wrote the gradients, every other added into them */
	uint32_t adds = (uint32_t)(ACCUM_ADDS_SHARE * shortest);
	adds = adds < 2 ? 2 : adds;
	uint32_t adding = 0;
	for (uint32_t i = 0; i < passes; i++)
		adding += pass[i] >= shortest + adds;
	return adding == passes - 1 ? passes : 1;
}

/* Adds one call of kind autograd to the step's runs. */
static void add_call(struct run *r, size_t *n, int autograd)
{
	if (*n && r[*n - 1].autograd == autograd)
		r[*n - 1].n++;
	else if (*n < ACCUM_MAX_RUNS)
		r[(*n)++] = (struct run){ autograd, 1 };
}

uint32_t ia_backward_passes(const struct ia_trace *t, const struct ia_gaps *g, uint32_t main_thread,
			    const struct ia_step_times *s)
{
	if (!s->n || !g->nmain_calls)
		return 0;
	uint64_t *per_step = calloc(s->n, sizeof *per_step);
	if (!per_step)
		return 0;   /* (a figure the fixes' wording reads: none rather than a failed analysis) */
	struct run run[ACCUM_MAX_RUNS];
	size_t nrun = 0, step = 0, k = 0, nautograd = 0;
	/* the main process's calls are in time order, and so are the steps */
	while (k < g->nmain_calls && t->calls[g->main_calls[k]].start < s->start[0])
		k++;
	for (; k < g->nmain_calls && step < s->n; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		while (step < s->n && c->start >= s->start[step] + s->ns[step]) {
			per_step[step++] = passes_of(run, nrun);
			nrun = 0;
		}
		if (step == s->n || c->start < s->start[step])
			continue;   /* between steady steps (a phase): not a step's */
		int autograd = ia_is_autograd_thread(t->threads[c->th].comm);
		/* the main thread's calls part the passes; another thread's (a
		 * pin-memory thread's, gloo's, a prefetcher's) are neither */
		if (!autograd && main_thread != UINT32_MAX && c->th != main_thread)
			continue;
		nautograd += autograd;
		add_call(run, &nrun, autograd);
	}
	if (step < s->n)
		per_step[step++] = passes_of(run, nrun);
	/* the lower median (nearest rank: an even split is not a majority) */
	uint32_t median = nautograd ? (uint32_t)ia_percentile(per_step, step, 50) : 0;
	free(per_step);
	return median;
}
