/*
 * clock_fit.c — the nodes of a job on one clock (collectives.h:
 * ia_collectives_compute_nodes).  The anchors (CLOCK_REALTIME against
 * CLOCK_MONOTONIC, read by each collector) leave the nodes' clocks off by
 * the realtime clocks' disagreement, often milliseconds; a collective
 * completes at nearly the same instant on every rank, so the median of
 * the completions' differences is the correction, and what the
 * completions still disagree by once aligned is its stated uncertainty.
 */
#include "measure/collectives_internal.h"

#include "base/util.h"

#include <stdlib.h>

/* The median completion of node n's ranks in row i (0 when it has none);
 * with marked_only, of those read from a GPU mark only. */
static uint64_t node_done(const struct ia_coll_table *tb, const struct ia_coll_col *cols, size_t i, int n, int marked_only)
{
	uint64_t v[64];
	size_t m = 0;
	for (size_t k = 0; k < tb->nr && m < 64; k++)
		if (cols[k].node == n && (!marked_only || tb->marked[i * tb->nr + k]))
			v[m++] = tb->done[i * tb->nr + k];
	if (!m)
		return 0;
	qsort(v, m, sizeof *v, ia_cmp_u64);
	return v[m / 2];
}

/* The median, over the rows where node 0 and node n both have ranks, of the
 * spread of those ranks' completions (d: scratch of tb->n). */
static uint64_t row_spread_median(const struct ia_coll_table *tb, const struct ia_coll_col *cols, int n, int64_t *d)
{
	size_t m = 0;
	for (size_t i = 0; i < tb->n; i++) {
		uint64_t lo = UINT64_MAX, hi = 0;
		int seen0 = 0, seen_n = 0;   /* (both nodes' ranks in the row) */
		for (size_t k = 0; k < tb->nr; k++) {
			uint64_t v = tb->done[i * tb->nr + k];
			if (!v || (cols[k].node != 0 && cols[k].node != n))
				continue;
			seen0 |= cols[k].node == 0;
			seen_n |= cols[k].node == n;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (seen0 && seen_n)
			d[m++] = (int64_t)(hi - lo);
	}
	if (m)
		qsort(d, m, sizeof *d, ia_cmp_i64);
	return m ? (uint64_t)d[m / 2] : 0;
}

/* (collectives_internal.h) */
int ia_coll_refine_clocks(struct ia_coll_table *tb, const struct ia_coll_col *cols, size_t nn, struct ia_clock_fit *fit)
{
	int64_t *d = malloc((tb->n ? tb->n : 1) * sizeof *d);
	if (!d)
		return -1;
	for (size_t n = 1; n < nn; n++) {
		/* A completion read from the GPU mark after the collective is the
		 * device's instant, the same on every rank; one without (a mark not
		 * taken: the first collective's, or marks off) is when the call
		 * returned, earlier by whatever the stream still had queued.  The
		 * marked ones alone when there are a few: one unmarked row would
		 * otherwise be the stated uncertainty. */
		size_t m = 0;
		for (int marked_only = 1; marked_only >= 0 && m < 3; marked_only--) {
			m = 0;
			for (size_t i = 0; i < tb->n; i++) {
				uint64_t a = node_done(tb, cols, i, 0, marked_only), b = node_done(tb, cols, i, (int)n, marked_only);
				if (a && b)
					d[m++] = (int64_t)(a - b);
			}
		}
		if (!m)
			continue;
		qsort(d, m, sizeof *d, ia_cmp_i64);
		int64_t corr = d[m / 2];
		uint64_t worst = 0;
		for (size_t i = 0; i < m; i++) {
			uint64_t dev = (uint64_t)(d[i] > corr ? d[i] - corr : corr - d[i]);
			if (dev > worst)
				worst = dev;
		}
		for (size_t i = 0; i < tb->n; i++)
			for (size_t k = 0; k < tb->nr; k++)
				if (cols[k].node == (int)n) {
					tb->arrive[i * tb->nr + k] = (uint64_t)((int64_t)tb->arrive[i * tb->nr + k] + corr);
					tb->done[i * tb->nr + k] = (uint64_t)((int64_t)tb->done[i * tb->nr + k] + corr);
				}
		/* The differences' spread says how consistent they are, not how
		 * far off all may be together (a rank read from its call's return
		 * is late by its wake-up, one node's more than the other's every
		 * time): at least the median row's spread once aligned. */
		uint64_t spread = row_spread_median(tb, cols, (int)n, d);
		fit[n] = (struct ia_clock_fit){ corr, worst > spread ? worst : spread, m };
	}
	free(d);
	return 0;
}
