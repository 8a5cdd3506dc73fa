/*
 * gpu_anchor.c — an anchor event's stamp from several tries' bounds (see
 * gpu_anchor.h).  Runs on the GPU watcher's thread, once a second.
 */
#include "gpu_anchor.h"

void ingero_anchor_fit(const uint64_t *t1, const uint64_t *t2, const int64_t *e, int n, uint64_t *at,
		       uint64_t *half)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	int best = 0;
	for (int k = 0; k < n; k++) {
		int64_t a = (int64_t)t1[k] - e[k], b = (int64_t)t2[k] - e[k];
		lo = a > lo ? a : lo;
		hi = b < hi ? b : hi;
		if (t2[k] - t1[k] < t2[best] - t1[best])
			best = k;
	}
	if (n > 0 && lo > hi) {
		lo = (int64_t)t1[best] - e[best];
		hi = (int64_t)t2[best] - e[best];
	}
	*at = n > 0 ? (uint64_t)(lo + (hi - lo) / 2) : 0;
	*half = n > 0 ? (uint64_t)(hi - lo) / 2 : 0;
}
