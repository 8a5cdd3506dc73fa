/*
 * step_times.c — the step-time distribution as text and JSON (step_times.h).
 */
#include "render/step_times.h"

#include "base/json_out.h"
#include "base/util.h"

#define BAR 40   /* the longest histogram bar, in characters */

void ia_step_times_print(FILE *f, const struct ia_analysis *a)
{
	const struct ia_step_times *s = &a->step_times;
	char d1[32], d2[32], d3[32], d4[32], d5[32];
	if (!s->n)
		return;
	fprintf(f, "\nStep times (steady state, %zu steps): p50 %s, p90 %s, p99 %s, max %s; mean %s\n", s->n,
		ia_fmt_dur(d1, sizeof d1, s->p50), ia_fmt_dur(d2, sizeof d2, s->p90), ia_fmt_dur(d3, sizeof d3, s->p99),
		ia_fmt_dur(d4, sizeof d4, s->max), ia_fmt_dur(d5, sizeof d5, (uint64_t)s->mean));
	if (s->n < 3 || s->max == s->min)
		return;
	uint64_t top = 0;
	for (int b = 0; b < IA_STEP_HIST_BINS; b++)
		if (s->hist[b] > top)
			top = s->hist[b];
	/* two bins a row: 12 rows from the shortest step to the longest */
	for (int b = 0; b < IA_STEP_HIST_BINS; b += 2) {
		uint64_t n = s->hist[b] + (b + 1 < IA_STEP_HIST_BINS ? s->hist[b + 1] : 0);
		uint64_t lo = s->hist_lo + (uint64_t)b * s->hist_width;
		int len = (int)((double)BAR * (double)n / (double)(2 * top) + (n ? 0.999 : 0));
		fprintf(f, "  %9s %-*.*s %s\n", ia_fmt_dur(d1, sizeof d1, lo), BAR, len,
			"########################################", n ? ia_fmt_count(d2, sizeof d2, n) : "");
	}
}

cJSON *ia_step_times_json(const struct ia_analysis *a)
{
	const struct ia_step_times *s = &a->step_times;
	cJSON *o = cJSON_CreateObject();
	ia_json_u64(o, "count", s->n);
	if (!s->n)
		return o;
	ia_json_round(o, "mean_ns", s->mean, 0);
	ia_json_u64(o, "min_ns", s->min);
	ia_json_u64(o, "p50_ns", s->p50);
	ia_json_u64(o, "p90_ns", s->p90);
	ia_json_u64(o, "p99_ns", s->p99);
	ia_json_u64(o, "max_ns", s->max);
	cJSON *h = cJSON_AddObjectToObject(o, "histogram");
	ia_json_u64(h, "lo_ns", s->hist_lo);
	ia_json_u64(h, "width_ns", s->hist_width);
	cJSON *c = cJSON_AddArrayToObject(h, "counts");
	for (int b = 0; b < IA_STEP_HIST_BINS; b++)
		cJSON_AddItemToArray(c, cJSON_CreateNumber((double)s->hist[b]));
	return o;
}
