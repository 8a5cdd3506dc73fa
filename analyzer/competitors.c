/*
 * competitors.c — untraced CPU holders grouped by name (see competitors.h).
 *
 * Few competitors take a CPU from a traced thread (tens, not thousands),
 * so groups are a short array searched linearly; the CPU time of each is a
 * series sum per window (series.h).
 */
#include "competitors.h"

#include "json_out.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_cpu(const void *a, const void *b)
{
	const struct ia_comp_group *x = a, *y = b;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

size_t ia_competitors_in(const struct ia_evidence *e, const uint64_t *w, size_t n, struct ia_comp_group *out,
			 size_t max, uint64_t *total)
{
	struct ia_comp_group *all = calloc(e->ncomp + 1, sizeof *all);
	size_t ng = 0;
	*total = 0;
	if (!all)
		return 0;
	for (size_t c = 0; c < e->ncomp; c++) {
		uint64_t ns = 0;
		for (size_t k = 0; k < n; k++)
			ns += ia_series_sum(&e->comp[c].cpu, w[2 * k], w[2 * k + 1]);
		if (!ns)
			continue;
		const char *name = e->comp[c].comm[0] ? e->comp[c].comm : "(no name)";
		size_t i;
		for (i = 0; i < ng && strcmp(all[i].comm, name); i++)
			;
		if (i == ng)
			snprintf(all[ng++].comm, sizeof all[0].comm, "%s", name);
		all[i].npids++;
		all[i].cpu_ns += ns;
		all[i].preemptions += e->comp[c].preemptions;
		*total += ns;
	}
	if (ng)
		qsort(all, ng, sizeof *all, by_cpu);
	size_t k = ng < max ? ng : max;
	memcpy(out, all, k * sizeof *out);
	free(all);
	return k;
}

char *ia_competitors_text(char *buf, size_t len, const struct ia_comp_group *g, size_t n)
{
	char d[32];
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		int w;
		if (g[i].npids > 1)
			w = snprintf(buf + o, len - o, "%s%s (%u processes) %s", i ? ", " : "", g[i].comm, g[i].npids,
				     ia_fmt_dur(d, sizeof d, g[i].cpu_ns));
		else
			w = snprintf(buf + o, len - o, "%s%s %s", i ? ", " : "", g[i].comm, ia_fmt_dur(d, sizeof d, g[i].cpu_ns));
		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
	return buf;
}

cJSON *ia_competitors_json(const struct ia_comp_group *g, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "comm", g[i].comm);
		ia_json_u64(o, "processes", g[i].npids);
		ia_json_u64(o, "cpu_ns", g[i].cpu_ns);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
