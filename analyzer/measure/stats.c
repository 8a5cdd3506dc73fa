/*
 * stats.c — per-API statistics (see stats.h).
 *
 * One pass counts calls per API; a second places every duration in one
 * array partitioned by API (a counting sort, 8 bytes a call); percentiles
 * are then selected in place per partition.  No per-API array growth, no
 * full sort: 10M calls cost one 80 MB array and a few linear passes.
 */
#include "measure/stats.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/event.h>

#include <stdlib.h>
#include <string.h>

double ia_gbps(uint64_t bytes, uint64_t dur_ns)
{
	return dur_ns ? (double)bytes / (double)dur_ns : 0;
}

static int cmp_total(const void *a, const void *b)
{
	const struct ia_api_stats *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (int)x->api - (int)y->api;
}

/* By pid (process indexes may follow row order), then total time. */
static int cmp_proc_total(const void *a, const void *b, void *ctx)
{
	const struct ia_trace *t = ctx;
	const struct ia_proc_api_stats *x = a, *y = b;
	int px = t->procs[x->proc].pid, py = t->procs[y->proc].pid;
	if (px != py)
		return px < py ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (int)x->api - (int)y->api;
}

/* Per (process, API): the same statistics, reusing the durations array d.
 * Offsets come from the per-process counts the loader already made. */
static int per_process(const struct ia_trace *t, struct ia_stats *s, uint64_t *d)
{
	size_t np = t->nprocs;
	if (!t->ncalls || np * INGERO_API_MAX > (1u << 22))   /* absurd process counts: skip */
		return 0;
	uint32_t *pair = malloc(np * INGERO_API_MAX * sizeof *pair);
	if (!pair)
		return -1;
	size_t n = 0;
	for (size_t p = 0; p < np; p++)
		for (size_t a = 0; a < INGERO_API_MAX; a++) {
			uint64_t c = t->procs[p].calls ? t->procs[p].calls[a] : 0;
			pair[p * INGERO_API_MAX + a] = c ? (uint32_t)n++ : UINT32_MAX;
		}
	s->proc_apis = calloc(n + 1, sizeof *s->proc_apis);
	size_t *off = malloc((n + 1) * sizeof *off), *fill = malloc((n + 1) * sizeof *fill);
	if (!s->proc_apis || !off || !fill) {
		free(pair);
		free(off);
		free(fill);
		return -1;
	}
	size_t k = 0, pos = 0;
	for (size_t p = 0; p < np; p++)
		for (size_t a = 0; a < INGERO_API_MAX; a++) {
			if (pair[p * INGERO_API_MAX + a] == UINT32_MAX)
				continue;
			struct ia_proc_api_stats *x = &s->proc_apis[k];
			x->proc = (uint32_t)p;
			x->api = (uint16_t)a;
			x->count = t->procs[p].calls[a];
			off[k] = fill[k] = pos;
			pos += x->count;
			k++;
		}
	s->nproc_apis = n;
	size_t callers = 0;
	for (size_t p = 0; p < np; p++)
		callers += t->procs[p].ncalls > 0;
	if (callers == 1) {   /* one process made every call: its figures are the per-API ones */
		for (size_t q = 0; q < n; q++) {
			const struct ia_api_stats *g = s->by_id[s->proc_apis[q].api];
			struct ia_proc_api_stats *x = &s->proc_apis[q];
			x->total_ns = g->total_ns;
			x->min_ns = g->min_ns;
			x->max_ns = g->max_ns;
			x->p50_ns = g->p50_ns;
			x->p90_ns = g->p90_ns;
			x->p99_ns = g->p99_ns;
			x->mean_ns = g->mean_ns;
		}
		n = 0;   /* nothing left to compute */
	}
	for (size_t i = 0; n && i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		uint32_t q = pair[(size_t)t->threads[c->th].proc * INGERO_API_MAX + c->api];
		d[fill[q]++] = c->dur;
		s->proc_apis[q].total_ns += c->dur;
	}
	static const double pcts[] = { 50, 90, 99, 100 };
	for (size_t q = 0; q < n; q++) {
		struct ia_proc_api_stats *x = &s->proc_apis[q];
		if (!x->count)
			continue;
		uint64_t *v = d + off[q], out[4], mn = UINT64_MAX;
		for (size_t i = 0; i < x->count; i++)
			if (v[i] < mn)
				mn = v[i];
		x->min_ns = mn;
		x->mean_ns = (double)x->total_ns / (double)x->count;
		ia_percentiles(v, x->count, pcts, out, 4);
		x->p50_ns = out[0];
		x->p90_ns = out[1];
		x->p99_ns = out[2];
		x->max_ns = out[3];
	}
	if (s->nproc_apis)
		qsort_r(s->proc_apis, s->nproc_apis, sizeof *s->proc_apis, cmp_proc_total, (void *)t);
	free(pair);
	free(off);
	free(fill);
	return 0;
}

int ia_stats_compute(const struct ia_trace *t, struct ia_stats *s)
{
	memset(s, 0, sizeof *s);
	struct ia_api_stats *acc = calloc(INGERO_API_MAX, sizeof *acc);
	if (!acc)
		return -1;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		struct ia_api_stats *a = &acc[c->api];
		a->count++;
		a->total_ns += c->dur;
		a->bytes += c->bytes;
		a->stacks += c->stack != 0;
		a->stacks_withheld += (c->flags & INGERO_FLAG_STACK_WITHHELD) != 0;
		if (ingero_api_class(c->api) == INGERO_CLASS_COPY) {
			struct ia_copy_part *p = (c->flags & INGERO_FLAG_HOST_PINNED) ? &a->pinned
				: (c->flags & INGERO_FLAG_HOST_PAGEABLE) ? &a->pageable : &a->unknown;
			p->count++;
			p->bytes += c->bytes;
			p->dur_ns += c->dur;
		}
	}
	size_t off[INGERO_API_MAX + 1], fill[INGERO_API_MAX];
	off[0] = 0;
	for (size_t a = 0; a < INGERO_API_MAX; a++)
		off[a + 1] = off[a] + acc[a].count;
	uint64_t *d = malloc((t->ncalls + 1) * sizeof *d);
	if (d)
		ia_hint_huge(d, (t->ncalls + 1) * sizeof *d);
	if (!d) {
		free(acc);
		return -1;
	}
	memcpy(fill, off, sizeof fill);
	for (size_t i = 0; i < t->ncalls; i++)
		d[fill[t->calls[i].api]++] = t->calls[i].dur;

	for (size_t a = 0; a < INGERO_API_MAX; a++)
		if (acc[a].count)
			s->napis++;
	s->apis = calloc(s->napis + 1, sizeof *s->apis);
	if (!s->apis) {
		free(d);
		free(acc);
		return -1;
	}
	size_t k = 0;
	static const double pcts[] = { 50, 90, 99, 100 };
	for (size_t a = 0; a < INGERO_API_MAX; a++) {
		if (!acc[a].count)
			continue;
		struct ia_api_stats *x = &s->apis[k++];
		*x = acc[a];
		x->api = (uint16_t)a;
		x->cls = ingero_api_class((unsigned)a);
		x->mean_ns = (double)x->total_ns / (double)x->count;
		uint64_t out[4];
		uint64_t *v = d + off[a];
		uint64_t mn = UINT64_MAX;
		for (size_t i = 0; i < x->count; i++)
			if (v[i] < mn)
				mn = v[i];
		x->min_ns = mn;
		ia_percentiles(v, x->count, pcts, out, 4);
		x->p50_ns = out[0];
		x->p90_ns = out[1];
		x->p99_ns = out[2];
		x->max_ns = out[3];
	}
	free(acc);
	qsort(s->apis, s->napis, sizeof *s->apis, cmp_total);
	for (size_t i = 0; i < s->napis; i++)
		s->by_id[s->apis[i].api] = &s->apis[i];
	int rc = per_process(t, s, d);
	free(d);
	return rc;
}

void ia_stats_free(struct ia_stats *s)
{
	free(s->apis);
	free(s->proc_apis);
	memset(s, 0, sizeof *s);
}

static void copy_part_json(cJSON *o, const char *key, const struct ia_copy_part *p)
{
	cJSON *j = cJSON_AddObjectToObject(o, key);
	ia_json_u64(j, "count", p->count);
	ia_json_u64(j, "bytes", p->bytes);
	ia_json_u64(j, "dur_ns", p->dur_ns);
	ia_json_round(j, "gbps", ia_gbps(p->bytes, p->dur_ns), 3);
}

cJSON *ia_stats_apis_json(const struct ia_trace *t, const struct ia_stats *s)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *a = &s->apis[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "api", ia_api_name(t, a->api));
		cJSON_AddStringToObject(o, "class", ingero_api_class_name(a->cls));
		ia_json_u64(o, "count", a->count);
		ia_json_u64(o, "p50_ns", a->p50_ns);
		ia_json_u64(o, "p99_ns", a->p99_ns);
		ia_json_u64(o, "max_ns", a->max_ns);
		ia_json_u64(o, "min_ns", a->min_ns);
		ia_json_u64(o, "p90_ns", a->p90_ns);
		ia_json_round(o, "mean_ns", a->mean_ns, 0);
		ia_json_u64(o, "total_ns", a->total_ns);
		ia_json_u64(o, "stacks", a->stacks);
		ia_json_u64(o, "stacks_withheld", a->stacks_withheld);
		if (a->cls == INGERO_CLASS_COPY || a->cls == INGERO_CLASS_MEMSET)
			ia_json_u64(o, "bytes", a->bytes);
		if (a->cls == INGERO_CLASS_COPY) {
			ia_json_round(o, "gbps", ia_gbps(a->bytes, a->total_ns), 3);
			copy_part_json(o, "pinned", &a->pinned);
			copy_part_json(o, "pageable", &a->pageable);
			copy_part_json(o, "unknown_memory", &a->unknown);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
