/*
 * kernels.c — the GPU's time by kernel (kernels.h).
 */
#include "render/kernels.h"

#include "base/json_out.h"
#include "base/table.h"
#include "base/util.h"
#include "render/headline.h"

#include <stdio.h>

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *kind_name(enum ia_work_kind k)
{
	return k == IA_WORK_COPY ? "copy" : k == IA_WORK_MEMSET ? "memset" : "kernel";
}

void ia_kernels_print(FILE *f, const struct ia_analysis *a, int width)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	char buf[1024], d[32];
	ia_headline_print(f, a, 0, 0);
	if (!g->measured) {
		fprintf(f, "\nNo GPU time per kernel: this trace has no GPU marks (the preload library's "
			   "INGERO_GPU_MARKS, schema 3 on); the host's time per launch call is in stats.\n");
		return;
	}
	if (!g->nall) {
		fprintf(f, "\nNo kernel, copy or memset with GPU time in this window.\n");
		return;
	}
	fprintf(f, "\nGPU time by kernel, %s (%s of GPU work%s; estimated from %zu kernels and copies timed alone "
		   "on the GPU):\n", g->kernels_steady ? "steady state" : "whole window",
		ia_fmt_dur(d, sizeof d, g->work_ns), g->several_streams ? ", summed over streams that may overlap" : "",
		g->ntimed);
	struct ia_table *tb = ia_table_new(8);
	static const char *const titles[] = { "KERNEL", "LAUNCHES", "GPU TIME", "SHARE", "MEAN", "P50", "MAX", "STREAM" };
	static const int rank[] = { 0, 0, 0, 0, 2, 0, 1, 3 };
	for (int i = 0; i < 8; i++)
		ia_table_col(tb, i, titles[i], i == 0, g->several_streams || i != 7 ? rank[i] : -1);
	uint64_t listed = 0;
	for (size_t k = 0; k < g->nall; k++) {
		const struct ia_kernel_row *r = &g->all[k];
		char n[32], t1[32], s1[16], m[32], p[32], x[32];
		snprintf(s1, sizeof s1, "%.1f%%", share(r->k.ns, g->work_ns));
		const char *cells[] = { r->k.short_name, ia_fmt_count(n, sizeof n, r->k.launches),
					ia_fmt_dur(t1, sizeof t1, r->k.ns), s1, ia_fmt_dur(m, sizeof m, r->mean_ns),
					ia_fmt_dur(p, sizeof p, r->p50_ns), ia_fmt_dur(x, sizeof x, r->max_ns),
					ia_kernel_stream(g, &r->k) };
		ia_table_row(tb, cells);
		listed += r->k.ns;
	}
	ia_table_print(tb, f, width, "");
	ia_table_free(tb);
	if (listed < g->work_ns)
		fprintf(f, "(%s of GPU work by kernels without a name in the trace: not listed)\n",
			ia_fmt_dur(d, sizeof d, g->work_ns - listed));
	fprintf(f, "SHARE: of the GPU's work above. MEAN, P50, MAX: one launch's GPU time. --json has the full "
		   "kernel names.\n");
	(void)buf;
}

cJSON *ia_kernels_json(const struct ia_analysis *a)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "measured", g->measured);
	cJSON_AddStringToObject(o, "over", g->kernels_steady ? "steady_state" : "window");
	ia_json_u64(o, "work_ns", g->work_ns);
	ia_json_u64(o, "timed_alone", g->ntimed);
	cJSON_AddBoolToObject(o, "several_streams", g->several_streams);
	cJSON *ks = cJSON_AddArrayToObject(o, "kernels");
	for (size_t k = 0; k < g->nall; k++) {
		const struct ia_kernel_row *r = &g->all[k];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", r->k.name);
		cJSON_AddStringToObject(e, "short_name", r->k.short_name);
		cJSON_AddStringToObject(e, "kind", kind_name(r->k.kind));
		ia_json_u64(e, "launches", r->k.launches);
		ia_json_u64(e, "gpu_ns", r->k.ns);
		ia_json_round(e, "share_pct", share(r->k.ns, g->work_ns), 2);
		ia_json_u64(e, "mean_ns", r->mean_ns);
		ia_json_u64(e, "p50_ns", r->p50_ns);
		ia_json_u64(e, "max_ns", r->max_ns);
		ia_json_u64(e, "timed_alone", r->k.timed);
		cJSON_AddStringToObject(e, "stream", ia_kernel_stream(g, &r->k));
		cJSON_AddItemToArray(ks, e);
	}
	cJSON_AddItemToObject(o, "figures", ia_figures_json(a));
	return o;
}
