/*
 * gate_stats.c — Mann–Whitney U, a seeded bootstrap of a quantile ratio,
 * and the decimation a saved baseline uses.  See gate_stats.h.
 *
 * Both samples arrive sorted, so the U test is one merge pass (ranks with
 * ties averaged) instead of a sort of the pooled sample.  The bootstrap
 * draws indexes into the sorted arrays and takes the quantile of each
 * resample with the analyzer's selection (ia_percentile, the same
 * nearest-rank definition `stats` prints): O(n) per resample.
 */
#include "gate/gate_stats.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t ia_gate_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform index in [0, n) without modulo bias worth caring about (n < 2^32). */
static size_t rand_index(uint64_t *s, size_t n)
{
	return (size_t)(((ia_gate_rand(s) >> 32) * (uint64_t)n) >> 32);
}

void ia_gate_mwu(const uint64_t *base, size_t nb, const uint64_t *cur, size_t nc, struct ia_mwu *out)
{
	double rank_cur = 0, ties = 0;
	size_t i = 0, j = 0, pos = 0;   /* pos: ranks already given (0-based) */

	while (i < nb || j < nc) {
		uint64_t v = (j >= nc || (i < nb && base[i] <= cur[j])) ? base[i] : cur[j];
		size_t ti = 0, tj = 0;
		while (i < nb && base[i] == v) {
			i++;
			ti++;
		}
		while (j < nc && cur[j] == v) {
			j++;
			tj++;
		}
		double t = (double)(ti + tj);
		double avg = (double)pos + (t + 1) / 2;   /* mean of ranks pos+1 .. pos+t */
		rank_cur += avg * (double)tj;
		ties += t * t * t - t;
		pos += ti + tj;
	}
	double n1 = (double)nb, n2 = (double)nc, n = n1 + n2;
	double u = rank_cur - n2 * (n2 + 1) / 2;
	double mean = n1 * n2 / 2;
	double var = n1 * n2 / 12 * ((n + 1) - (n > 1 ? ties / (n * (n - 1)) : 0));
	out->u = u;
	out->r = n1 * n2 > 0 ? 2 * u / (n1 * n2) - 1 : 0;
	if (var <= 0) {          /* every value tied: no evidence either way */
		out->z = 0;
		out->p = 1;
		return;
	}
	double d = u - mean;
	d = d > 0.5 ? d - 0.5 : (d < -0.5 ? d + 0.5 : 0);   /* continuity correction */
	out->z = d / sqrt(var);
	out->p = 0.5 * erfc(out->z / sqrt(2.0));
}

static size_t rank_index(size_t n, double q)
{
	double r = ceil(q * (double)n);
	if (r < 1)
		r = 1;
	if (r > (double)n)
		r = (double)n;
	return (size_t)r - 1;
}

uint64_t ia_gate_quantile_sorted(const uint64_t *v, size_t n, double q)
{
	return n ? v[rank_index(n, q)] : 0;
}

static uint64_t resample_quantile(const uint64_t *v, size_t n, double q, uint64_t *scratch, uint64_t *s)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = v[rand_index(s, n)];
	return ia_percentile(scratch, n, q * 100);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int ia_gate_bootstrap_ratio(const uint64_t *base, size_t nb, const uint64_t *cur, size_t nc,
			    double q, unsigned resamples, double alpha, uint64_t seed,
			    double *lo, double *hi)
{
	if (nb == 0 || nc == 0 || resamples == 0) {
		*lo = *hi = NAN;
		return 0;
	}
	uint64_t *scratch = malloc((nb > nc ? nb : nc) * sizeof *scratch);
	double *ratios = malloc(resamples * sizeof *ratios);
	if (!scratch || !ratios) {
		free(scratch);
		free(ratios);
		return -1;
	}
	uint64_t s = seed;
	for (unsigned k = 0; k < resamples; k++) {
		double b = (double)resample_quantile(base, nb, q, scratch, &s);
		double c = (double)resample_quantile(cur, nc, q, scratch, &s);
		ratios[k] = c / (b > 0 ? b : 1);   /* a 0 ns quantile counts as 1 ns */
	}
	qsort(ratios, resamples, sizeof *ratios, cmp_double);
	size_t ilo = (size_t)floor(alpha / 2 * resamples);
	size_t ihi = (size_t)ceil((1 - alpha / 2) * resamples);
	if (ihi > 0)
		ihi--;
	if (ihi >= resamples)
		ihi = resamples - 1;
	*lo = ratios[ilo];
	*hi = ratios[ihi];
	free(scratch);
	free(ratios);
	return 0;
}

size_t ia_gate_decimate(uint64_t *v, size_t n, size_t m)
{
	if (m == 0 || n <= m)
		return n;
	/* rank(i) is increasing and >= i, so an in-place forward copy is safe. */
	for (size_t i = 0; i < m; i++)
		v[i] = v[(size_t)(((double)i + 0.5) * (double)n / (double)m)];
	return m;
}

double ia_gate_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ia_gate_sd(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	double m = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}
