/*
 * step_times.c — each step's time in the steady state (step_times.h).
 *
 * One pass over the main process's launches (gaps.h keeps its calls in
 * time order) lists them; the signature is taken from the first full step
 * (steps.h's first_ns): its first run that appears once in it, by the
 * hashes of its runs sorted (a step's launches x signature length, and a
 * sort); a second pass finds the signature's places: a rolling comparison,
 * so the cost is launches x signature length at worst and about the
 * launches' count in practice (a mismatch ends a comparison early).
 */
#include "measure/step_times.h"

#include "base/util.h"

#include <ingero/api.h>
#include <ingero/fnv.h>

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

struct win {
	uint64_t hash;
	size_t off;
};

static int win_cmp(const void *a, const void *b)
{
	const struct win *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* The first offset into the step at lx[p0] whose window of n keys
 * appears at no other offset of that step (by the windows' hashes: a
 * collision only makes a window look repeated); 0 when none does, the
 * trace ends inside the step, or out of memory (the signature then is the
 * step's first window, as before). */
static size_t unique_offset(const struct ia_trace *t, const uint32_t *lx, size_t nl, size_t p0, size_t per_step,
			    size_t n, int by_calls)
{
	if (p0 + per_step + n > nl)
		return 0;
	struct win *w = malloc(per_step * sizeof *w);
	if (!w)
		return 0;
	for (size_t o = 0; o < per_step; o++) {
		uint64_t h = INGERO_FNV_SEED;
		for (size_t m = 0; m < n; m++) {
			uint64_t key = step_key(&t->calls[lx[p0 + o + m]], by_calls);
			h = ingero_fnv(h, &key, sizeof key);
		}
		w[o] = (struct win){ h, o };
	}
	qsort(w, per_step, sizeof *w, win_cmp);
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < per_step; i++) {
		int alone = (i == 0 || w[i - 1].hash != w[i].hash) && (i + 1 == per_step || w[i + 1].hash != w[i].hash);
		if (alone && w[i].off < best)
			best = w[i].off;
	}
	free(w);
	return best == SIZE_MAX ? 0 : best;
}

int ia_step_times_compute(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_phases *ph,
			  struct ia_step_times *out)
{
	memset(out, 0, sizeof *out);
	const struct ia_steps *st = &ph->steps;
	if (!st->calls || !st->launches || !st->first_ns || !g->nmain_calls)
		return 0;
	/* the launches in order — or the calls, where the calls repeat as the
	 * step: the copy and the sync that end an inference request tell it
	 * from its layers (c26) */
	size_t per_step = st->by_calls ? st->calls : st->launches;
	size_t want = per_step < IA_STEP_SIG ? per_step : IA_STEP_SIG;
	uint32_t *lx = malloc(g->nmain_calls * sizeof *lx);
	if (!lx)
		return -1;
	size_t nl = 0, p0 = SIZE_MAX;
	for (size_t k = 0; k < g->nmain_calls; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		if (!st->by_calls && !is_launch(c))
			continue;
		if (p0 == SIZE_MAX && c->start >= st->first_ns)
			p0 = nl;
		lx[nl++] = g->main_calls[k];
	}
	/* with the calls, the second step's: the first may hold a call made
	 * once (c26: the pinned buffer of the first .item()) */
	if (p0 != SIZE_MAX && st->by_calls && p0 + 2 * per_step <= nl)
		p0 += per_step;
	if (p0 == SIZE_MAX || p0 + want > nl) {
		free(lx);
		return 0;
	}
	/* the signature: the step's first run of launches that appears once in
	 * it — a loop inside the step (an optimizer's kernels per parameter,
	 * c77) repeats a run many times, and a signature from it matched again
	 * past 3/4 of the same step, cutting one step into two */
	size_t off = unique_offset(t, lx, nl, p0, per_step, want, st->by_calls);
	uint64_t sig[IA_STEP_SIG];
	size_t nsig = want;
	int known = 0;
	for (size_t m = 0; m < nsig; m++) {
		sig[m] = step_key(&t->calls[lx[p0 + off + m]], st->by_calls);
		known |= t->calls[lx[p0 + off + m]].func != 0;
	}
	if (!known) {
		free(lx);
		return 0;
	}
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
