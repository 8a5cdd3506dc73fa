/*
 * gate_stats.h — the statistics the CI gate decides with.
 *
 * Two latency samples (baseline and current, each sorted ascending, in ns)
 * are compared two ways, because a median shift and a tail blow-up are
 * different regressions:
 *
 *   - the Mann–Whitney U test (one-sided: is the current sample
 *     stochastically larger?), normal approximation with tie correction
 *     and continuity correction, plus the rank-biserial effect size;
 *   - a percentile bootstrap confidence interval of the ratio of a
 *     quantile (p50 or p99) current / baseline, from a seeded generator so
 *     that the same inputs always give the same interval.
 *
 * Neither decides alone: the gate also requires the observed growth to
 * exceed a configured effect size (see gate_compare.c), so a huge trace
 * where a 1 % shift is "significant" does not fail a build.
 */
#ifndef IA_GATE_STATS_H
#define IA_GATE_STATS_H

#include <stddef.h>
#include <stdint.h>

struct ia_mwu {
	double u;       /* U statistic of the current sample */
	double z;       /* standardised, continuity-corrected */
	double p;       /* one-sided p-value: current > baseline */
	double r;       /* rank-biserial correlation in [-1, 1]; > 0 = current slower */
};

/* Mann–Whitney U of cur against base (both sorted ascending, n >= 1 each). */
void ia_gate_mwu(const uint64_t *base, size_t nb, const uint64_t *cur, size_t nc, struct ia_mwu *out);

/*
 * Bootstrap interval of quantile_q(cur) / quantile_q(base), q in (0, 1],
 * nearest-rank quantiles, `resamples` resamples, two-sided level 1 - alpha.
 * Deterministic for a given seed.  Returns -1 on out of memory.
 */
int ia_gate_bootstrap_ratio(const uint64_t *base, size_t nb, const uint64_t *cur, size_t nc,
			    double q, unsigned resamples, double alpha, uint64_t seed,
			    double *lo, double *hi);

/* Nearest-rank quantile of a sorted sample (q in (0, 1]); 0 when n == 0. */
uint64_t ia_gate_quantile_sorted(const uint64_t *v, size_t n, double q);

/*
 * Reduces a sorted sample of n values to m <= n evenly spaced order
 * statistics (rank floor((i + 0.5) * n / m)), in place; returns m.  This is
 * the form a saved baseline keeps: it has the shape of the full sample at a
 * bounded size, and a report.db is reduced the same way before comparing so
 * that database-vs-database and JSON-vs-database agree.
 */
size_t ia_gate_decimate(uint64_t *v, size_t n, size_t m);

/* Median of v[0..n) (v is sorted in place); 0 when n == 0. */
double ia_gate_median(double *v, size_t n);
/* Sample standard deviation of v[0..n); 0 when n < 2. */
double ia_gate_sd(const double *v, size_t n);

/* splitmix64: the gate's only random source. */
uint64_t ia_gate_rand(uint64_t *state);

#endif
