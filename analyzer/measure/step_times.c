/*
 * step_times.c — each step's time in the steady state (step_times.h).
 *
 * One pass over the main process's launches (gaps.h keeps its calls in
 * time order) builds the signature from the first full step (steps.h's
 * first_ns), a second finds the signature's places: a rolling comparison,
 * so the cost is launches x signature length at worst and about the
 * launches' count in practice (a mismatch ends a comparison early).
 */
#include "measure/step_times.h"

#include "base/util.h"

#include <ingero/api.h>

#include <stdlib.h>
#include <string.h>

static int is_launch(const struct ia_call *c)
{
	return ingero_api_class(c->api) == INGERO_CLASS_LAUNCH;
}

/* What a signature compares: a launch's kernel, or with the calls an API
 * and its kernel. */
static uint64_t step_key(const struct ia_call *c, int by_calls)
{
	return by_calls ? (uint64_t)c->api << 32 | c->func : c->func;
}

/* The steady state has [a, b) whole: no phase slice inside it. */
static int steady(const struct ia_phases *ph, uint64_t a, uint64_t b)
{
	return ia_phase_at(ph, a) == IA_PHASE_STEADY && ia_phases_time_in(ph, IA_PHASE_N, a, b) == 0;
}

static void summarize(struct ia_step_times *s)
{
	uint64_t *v = malloc(s->n * sizeof *v);
	if (!v)
		return;
	memcpy(v, s->ns, s->n * sizeof *v);
	double sum = 0;
	s->min = UINT64_MAX;
	for (size_t i = 0; i < s->n; i++) {
		sum += (double)v[i];
		if (v[i] < s->min)
			s->min = v[i];
		if (v[i] > s->max)
			s->max = v[i];
	}
	s->mean = sum / (double)s->n;
	static const double p[] = { 50, 90, 99 };
	uint64_t out[3];
	ia_percentiles(v, s->n, p, out, 3);
	s->p50 = out[0];
	s->p90 = out[1];
	s->p99 = out[2];
	free(v);
	s->hist_lo = s->min;
	s->hist_width = (s->max - s->min) / IA_STEP_HIST_BINS + 1;
	for (size_t i = 0; i < s->n; i++) {
		size_t b = (size_t)((s->ns[i] - s->hist_lo) / s->hist_width);
		s->hist[b < IA_STEP_HIST_BINS ? b : IA_STEP_HIST_BINS - 1]++;
	}
}

int ia_step_times_compute(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_phases *ph,
			  struct ia_step_times *out)
{
	memset(out, 0, sizeof *out);
	const struct ia_steps *st = &ph->steps;
	if (!st->calls || !st->launches || !st->first_ns || !g->nmain_calls)
		return 0;
	/* the signature: the first full step's first launches — or its first
	 * calls, where the calls repeat as the step: the copy and the sync that
	 * end an inference request tell it from its layers (c26) */
	uint64_t sig[IA_STEP_SIG];
	size_t per_step = st->by_calls ? st->calls : st->launches;
	size_t nsig = 0, want = per_step < IA_STEP_SIG ? per_step : IA_STEP_SIG, k0 = 0;
	while (k0 < g->nmain_calls && t->calls[g->main_calls[k0]].start < st->first_ns)
		k0++;
	/* with the calls, the second step's: the first may hold a call made
	 * once (c26: the pinned buffer of the first .item()) */
	if (st->by_calls && k0 + 2 * per_step <= g->nmain_calls)
		k0 += per_step;
	int known = 0;
	for (size_t k = k0; k < g->nmain_calls && nsig < want; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		if (!st->by_calls && !is_launch(c))
			continue;
		sig[nsig++] = step_key(c, st->by_calls);
		known |= c->func != 0;
	}
	if (nsig < want || !known)
		return 0;
	/* the launches (or calls) in order, then the signature's places among them */
	uint32_t *lx = malloc(g->nmain_calls * sizeof *lx);
	if (!lx)
		return -1;
	size_t nl = 0;
	for (size_t k = 0; k < g->nmain_calls; k++)
		if (st->by_calls || is_launch(&t->calls[g->main_calls[k]]))
			lx[nl++] = g->main_calls[k];
	size_t cap = 0, last = 0, nstart = 0;
	int have_last = 0;
	uint64_t *starts = NULL;
	for (size_t i = 0; i + nsig <= nl; i++) {
		if (have_last && 4 * (i - last) < 3 * per_step)
			continue;   /* inside the step just started: a repeated layer (c02: a transformer's
				       layers matched twice a step under half a step) */
		size_t m = 0;
		while (m < nsig && step_key(&t->calls[lx[i + m]], st->by_calls) == sig[m])
			m++;
		if (m < nsig)
			continue;
		if (ia_grow((void **)&starts, &cap, nstart + 1, sizeof *starts) < 0) {
			free(lx);
			free(starts);
			return -1;
		}
		starts[nstart++] = t->calls[lx[i]].start;
		last = i;
		have_last = 1;
	}
	free(lx);
	/* steps between consecutive starts, the steady state's only */
	out->start = malloc((nstart ? nstart : 1) * sizeof *out->start);
	out->ns = malloc((nstart ? nstart : 1) * sizeof *out->ns);
	if (!out->start || !out->ns) {
		free(starts);
		ia_step_times_free(out);
		return -1;
	}
	for (size_t i = 0; i + 1 < nstart; i++) {
		if (starts[i] < g->win_start || !steady(ph, starts[i], starts[i + 1]))
			continue;
		out->start[out->n] = starts[i];
		out->ns[out->n++] = starts[i + 1] - starts[i];
	}
	free(starts);
	if (out->n)
		summarize(out);
	return 0;
}

void ia_step_times_free(struct ia_step_times *s)
{
	free(s->start);
	free(s->ns);
	memset(s, 0, sizeof *s);
}
