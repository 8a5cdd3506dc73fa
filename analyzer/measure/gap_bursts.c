/*
 * gap_bursts.c — whether the GPU's idle comes in a few long waits (see
 * gap_bursts.h).
 */
#include "measure/gap_bursts.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define BURST_OVER_MEDIAN 10          /* a long gap: this many times the median gap */
#define BURST_MIN_NS 1000000ull       /* and at least this long */
#define BURST_JOIN 4                  /* a long gap joins the last one's burst: the time between under 1/4 of each */
#define BURST_SPAN 0.75               /* the bursts, first gap to last, span at most this share of the steady state */
#define BURST_STEPS 5                 /* bursts: at most one in this many of the loop's steps */
#define BURST_REGULAR 0.75            /* of the intervals within 25 % of their median time: periodic */

/* (the project's order statistic: selection, O(n) on millions of gaps) */
static uint64_t median(uint64_t *v, size_t n)
{
	return ia_percentile(v, n, 50);
}

int ia_gap_bursts(const struct ia_gaps *g, struct ia_gap_bursts *b)
{
	memset(b, 0, sizeof *b);
	if (!g->n || !g->total_ns)
		return 0;
	uint64_t *v = malloc(g->n * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < g->n; i++)
		v[i] = g->g[i].end - g->g[i].start;
	uint64_t m = median(v, g->n);
	b->min_len = m * BURST_OVER_MEDIAN > BURST_MIN_NS ? m * BURST_OVER_MEDIAN : BURST_MIN_NS;
	/* the long gaps in time order, gathered into bursts: the next joins
	 * the burst when the time since the last is under a quarter of either
	 * wait (a validation pass: one wait per batch it reads back, a short
	 * forward between); the time from one burst's start to the next's */
	size_t prev = 0, first = 0, nint = 0;
	uint64_t *dt = v;   /* (the lengths are spent) */
	for (size_t i = 0; i < g->n; i++) {
		uint64_t len = g->g[i].end - g->g[i].start;
		if (len < b->min_len)
			continue;
		uint64_t plen = b->n ? g->g[prev].end - g->g[prev].start : 0;
		uint64_t between = b->n ? g->g[i].start - g->g[prev].end : 0;
		if (!b->n || BURST_JOIN * between >= len || BURST_JOIN * between >= plen) {
			if (b->nbursts) {
				dt[nint++] = g->g[i].start - g->g[first].start;
				b->span_ns += g->g[prev].end - g->g[first].start;
			}
			first = i;
			b->nbursts++;
		}
		prev = i;
		b->n++;
		b->ns += len;
		b->longest = len > b->longest ? len : b->longest;
	}
	if (b->n)
		b->span_ns += g->g[prev].end - g->g[first].start;
	b->share = (double)b->ns / (double)g->total_ns;
	if (nint >= 3) {
		/* regular in time: a phase every N steps of a steady loop */
		uint64_t dtm = median(dt, nint);
		size_t same = 0;
		for (size_t k = 0; k < nint; k++)
			same += 4 * dt[k] >= 3 * dtm && 4 * dt[k] <= 5 * dtm;
		if (same >= BURST_REGULAR * (double)nint)
			b->every_ns = dtm;
	}
	free(v);
	return 0;
}

int ia_gap_bursts_dominant(const struct ia_gap_bursts *b, size_t ngaps, size_t nsteps, uint64_t steady_ns)
{
	/* the bursts leave most of the run to the steps between them: a loop
	 * that waits each step with little GPU work between its waits is one
	 * long burst, starving evenly (c05, c39) */
	if (b->nbursts < 3 || b->share < 0.5 || (steady_ns && b->span_ns > BURST_SPAN * (double)steady_ns))
		return 0;
	/* the steps where they are known (a loop that keeps the GPU fed between
	 * its waits has few gaps, nearly all long: c57), else the gaps */
	return nsteps ? BURST_STEPS * b->nbursts <= nsteps : 4 * b->nbursts <= ngaps;
}
