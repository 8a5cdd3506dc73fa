/*
 * phase_spans.c — where the phases lie, asked of a stretch of time: the
 * phase holding most of a span, a phase's (or the steady state's) windows
 * inside a range, its episodes there (see phases.h).  phases.c decides the
 * slices; these read them.
 */
#include "measure/phases.h"

#include "base/util.h"

#include <stdlib.h>

enum ia_phase ia_phases_majority(const struct ia_phases *ph, uint64_t a, uint64_t b)
{
	uint64_t best = 0;
	enum ia_phase bp = IA_PHASE_STEADY;
	/* (not "not recorded": gaps and stretches are of recorded time, cut to
	 * the capture's exact edges, while a slice half between windows is
	 * marked whole) */
	for (int p = 1; p < IA_PHASE_N; p++) {
		if (p == IA_PHASE_PAUSED)
			continue;
		uint64_t n = ia_phases_time_in(ph, (enum ia_phase)p, a, b);
		if (n > best) {
			best = n;
			bp = (enum ia_phase)p;
		}
	}
	return best * 2 > (b - a) ? bp : IA_PHASE_STEADY;
}

uint64_t *ia_phases_windows(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b, size_t *n)
{
	uint64_t *w = malloc((2 * ph->nep + 1) * sizeof *w);
	*n = 0;
	for (size_t i = 0; w && i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		uint64_t lo = e->start > a ? e->start : a, hi = e->end < b ? e->end : b;
		if (e->phase != p || lo >= hi)
			continue;
		w[2 * *n] = lo;
		w[2 * *n + 1] = hi;
		++*n;
	}
	if (!*n) {
		free(w);
		return NULL;
	}
	return w;
}

uint64_t *ia_phases_steady_windows(const struct ia_phases *ph, uint64_t a, uint64_t b, size_t *n)
{
	uint64_t *w = NULL;
	size_t cap = 0;
	*n = 0;
	uint64_t cur = a;   /* the steady state runs from cur up to the next episode */
	for (size_t i = 0; i <= ph->nep && cur < b; i++) {
		uint64_t stop = i < ph->nep ? ph->ep[i].start : b, next = i < ph->nep ? ph->ep[i].end : b;
		if (stop > b)
			stop = b;
		if (stop > cur) {
			if (ia_grow((void **)&w, &cap, 2 * (*n + 1), sizeof *w) < 0) {
				free(w);
				*n = 0;
				return NULL;
			}
			w[2 * *n] = cur;
			w[2 * *n + 1] = stop;
			(*n)++;
		}
		if (next > cur)
			cur = next;
	}
	return w;
}

size_t ia_phases_episodes(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b, size_t *repeats)
{
	size_t n = 0, r = 0;
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase != p || e->end <= a || e->start >= b)
			continue;
		n++;
		r += e->repeat != 0;
	}
	if (repeats)
		*repeats = r;
	return n;
}
