/*
 * chain_layout.c — the layout_conversions rule: a share of the GPU's own
 * time that only converts tensors between NCHW and NHWC.
 *
 * PyTorch keeps a 4-d tensor contiguous (NCHW) unless told otherwise, while
 * the convolution engines cuDNN picks for tensor cores (half, bfloat16,
 * TF32) read and write NHWC.  cuDNN then wraps each convolution in a
 * transpose in and a transpose out (cudnn's nchwToNhwcKernel and
 * nhwcToNchwKernel), kernels that move every byte of the activations and
 * compute nothing.  Measured GPU time (gpu_time.h) says how much of the
 * GPU's work they are.  It is the GPU's work, not a reason the GPU waits:
 * what it costs the run is that time where the GPU is what the steps wait
 * for, so severity is by that time weighed by how busy the steady state
 * kept the GPU, as a share of the steady state.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Below this share of the GPU's estimated work, no finding. */
#define LAYOUT_MIN_SHARE 0.10

/* A kernel named for converting between the two layouts: cuDNN's
 * nchwToNhwcKernel / nhwcToNchwKernel, and any other whose name holds both
 * layouts (NCHW2NHWC, nhwc_to_nchw, ...). */
static int is_layout_conversion(const char *name)
{
	return strcasestr(name, "nchw") && strcasestr(name, "nhwc");
}

/* The Python line most of the conversions' sampled launches came from (the
 * convolution's forward call: cuDNN launches them inside it), of the steady
 * state's where the shares are, or NULL; the first 8 lines seen are
 * counted (a convolution layer's few call sites). */
static const char *launch_line(const struct ia_analysis *a, const struct ia_kernel_time *const *conv, size_t nf,
			       size_t *with, size_t *sampled)
{
	const struct ia_trace *t = a->t;
	struct { const char *line; size_t n; } top[8];
	size_t ntop = 0;
	*with = *sampled = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (!c->stack || ingero_api_class(c->api) != INGERO_CLASS_LAUNCH ||
		    (a->gaps.gpu.kernels_steady && ia_phase_at(&a->ph, c->start) != IA_PHASE_STEADY))
			continue;
		size_t f = 0;
		while (f < nf && conv[f]->func != c->func)
			f++;
		if (f == nf)
			continue;
		(*sampled)++;
		const char *line = ia_stack_source(a->names, t->stack_ids[c->stack]);
		if (!line)
			continue;
		size_t k = 0;
		while (k < ntop && strcmp(top[k].line, line) != 0)
			k++;
		if (k == ntop) {
			if (ntop == sizeof top / sizeof top[0])
				continue;
			top[ntop++] = (typeof(top[0])){ line, 0 };
		}
		top[k].n++;
	}
	size_t best = 0;
	for (size_t k = 1; k < ntop; k++)
		if (top[k].n > top[best].n)
			best = k;
	if (!ntop)
		return NULL;
	*with = top[best].n;
	return top[best].line;
}

int ia_rule_layout(struct ia_analysis *a, size_t *cap)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	const struct ia_idle *i = &a->idle;
	if (!g->measured || !g->work_ns || !i->steady_ns)
		return 0;
	uint64_t ns = 0, launches = 0;
	const struct ia_kernel_time *conv[IA_GPU_KERNELS_MAX];
	size_t nf = 0;
	for (size_t k = 0; k < g->nkernels && nf < IA_GPU_KERNELS_MAX; k++) {
		const struct ia_kernel_time *kt = &g->kernels[k];
		if (kt->kind != IA_WORK_KERNEL || !is_layout_conversion(kt->name))
			continue;
		ns += kt->ns;
		launches += kt->launches;
		conv[nf++] = kt;
	}
	double share = (double)ns / (double)g->work_ns;
	if (share < LAYOUT_MIN_SHARE)
		return 0;
	/* what the steps wait for of it: all of it where the GPU is what they
	 * wait for, less where it idles; severity by that share of the time
	 * the shares are of (the steady state's, or the window's).  Not by the
	 * share of the estimated work alone: where the estimate holds little of
	 * the GPU's busy time (c03: synchronous copies) that overstates it.
	 * (GPU time summed over streams that may run at once can exceed the
	 * time itself: at most all of it.) */
	uint64_t idle = ia_idle_estimated(i) ? i->steady_est_ns[1] : (i->steady_low_ns + i->steady_high_ns) / 2;
	double busy = idle < i->steady_ns ? 1.0 - (double)idle / (double)i->steady_ns : 0.0;
	uint64_t span = g->kernels_steady ? i->steady_ns : i->window_ns;
	double waited = (double)ns * busy;
	uint64_t cost = waited < (double)span ? (uint64_t)waited : span;
	enum ia_severity sev = ia_by_share(span ? (double)cost / (double)span : 0, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_LAYOUT_CONVERSIONS);
	if (!c)
		return -1;
	c->sev = sev;
	c->cost_ns = cost;
	c->impact = ia_idle_impact(i, c->cost_ns);

	char d[32], w[32], nl[32], list[400] = "";
	for (size_t k = 0; k < nf; k++)
		ia_addf(list, sizeof list, "%s%s %.0f%%", k ? ", " : "", conv[k]->short_name,
			ia_pct(conv[k]->ns, g->work_ns));
	snprintf(c->summary, sizeof c->summary,
		 "layout conversions: %.0f%% of the GPU's estimated time converted tensors between NCHW and NHWC "
		 "(%s)", 100 * share, list);
	ia_chain_line(c, "[CUDA] %s launches of %zu conversion kernel%s, %s of the %s of GPU work estimated in the "
		      "%s (%.0f%%)", ia_fmt_count(nl, sizeof nl, launches), nf, nf == 1 ? "" : "s",
		      ia_fmt_dur(d, sizeof d, ns), ia_fmt_dur(w, sizeof w, g->work_ns),
		      g->kernels_steady ? "steady state" : "window", 100 * share);
	ia_chain_line(c, "[CUDA] the GPU had work %.0f%% of the steady state: %s", 100 * busy,
		      busy >= 1 - SHARE_MEDIUM ? "the steps wait for its work, conversions included"
						: "the conversions cost the steps only where they wait for the GPU");
	size_t with = 0, sampled = 0;
	const char *line = launch_line(a, conv, nf, &with, &sampled);
	if (line) {
		ia_chain_line(c, "[HOST] launched from %s (%zu of the %zu sampled launches with a stack)", line, with,
			      sampled);
		snprintf(c->source, sizeof c->source, "%s", line);
	}
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The tensors are in one memory layout and the kernels the GPU runs on them want the other: PyTorch "
		 "keeps 4-d tensors contiguous (NCHW) unless told otherwise, while cuDNN's convolution engines for "
		 "tensor cores (half, bfloat16, TF32) read and write NHWC, so each convolution converts its input on "
		 "the way in and its output on the way out. Those kernels only move bytes: %.0f%% of the GPU's "
		 "estimated time here.", 100 * share);
	ia_chain_fix(c, "Run the model in channels_last: model = model.to(memory_format=torch.channels_last) and each "
			"input x = x.to(memory_format=torch.channels_last) (in the training step or the collate); the "
			"convolutions then take and give NHWC as it is");
	ia_chain_fix(c, "Keep it NHWC between the convolutions: an op that calls .contiguous() or reshapes turns a "
			"tensor back to NCHW (check with x.is_contiguous(memory_format=torch.channels_last)), and "
			"each such boundary converts again");

	cJSON *ev = c->evidence;
	ia_json_u64(ev, "conversion_ns", ns);
	ia_json_u64(ev, "gpu_work_ns", g->work_ns);
	ia_json_round(ev, "share_of_gpu_work_pct", 100 * share, 1);
	ia_json_round(ev, "steady_gpu_busy_pct", 100 * busy, 1);
	cJSON *ks = cJSON_AddArrayToObject(ev, "kernels");
	for (size_t k = 0; k < nf; k++) {
		const struct ia_kernel_time *kt = conv[k];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", kt->name);
		cJSON_AddStringToObject(e, "short_name", kt->short_name);
		ia_json_round(e, "gpu_share_pct", ia_pct(kt->ns, g->work_ns), 1);
		ia_json_u64(e, "launches", kt->launches);
		ia_json_u64(e, "timed_alone", kt->timed);
		cJSON_AddItemToArray(ks, e);
	}
	ia_json_str(ev, "launch_line", line);
	ia_json_u64(ev, "sampled_launches", sampled);
	return 0;
}
