/*
 * stats.c — per-API statistics (see stats.h).
 *
 * One pass counts calls per API; a second places every duration in one
 * array partitioned by API (a counting sort, 8 bytes a call); percentiles
 * are then selected in place per partition.  No per-API array growth, no
 * full sort: 10M calls cost one 80 MB array and a few linear passes.
 */
#include "stats.h"

#include "json_out.h"
#include "util.h"

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
	free(d);
	free(acc);
	qsort(s->apis, s->napis, sizeof *s->apis, cmp_total);
	for (size_t i = 0; i < s->napis; i++)
		s->by_id[s->apis[i].api] = &s->apis[i];
	return 0;
}

void ia_stats_free(struct ia_stats *s)
{
	free(s->apis);
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
