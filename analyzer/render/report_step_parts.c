/*
 * report_step_parts.c — the per-step breakdown (measure/step_breakdown.h)
 * as the HTML report's chart: one stacked column per step, in order, as
 * XProf's step-time graph draws them, so that a stretch of slow steps and
 * what made them slow (input wait growing, a sync appearing) show where
 * they happen; the legend gives each part's share and the class.
 */
#include "render/report_step_parts.h"

#include "base/util.h"
#include "render/report_charts.h"

#include <string.h>

/* Bottom to top: the GPU's work first, then what the host did while it idled. */
static const enum ia_step_part stack[IA_STEP_NPARTS] = {
	IA_STEP_DEVICE, IA_STEP_COLLECTIVES, IA_STEP_SYNC, IA_STEP_LAUNCH, IA_STEP_HOST, IA_STEP_CPU_WAIT,
	IA_STEP_OTHER_WAIT, IA_STEP_INPUT,
};
static const char *const color[IA_STEP_NPARTS] = {
	[IA_STEP_DEVICE] = "#2ca02c", [IA_STEP_COLLECTIVES] = "#9467bd", [IA_STEP_SYNC] = "#aec7e8",
	[IA_STEP_LAUNCH] = "#1f77b4", [IA_STEP_HOST] = "#4d4d4d", [IA_STEP_INPUT] = "#d62728",
	[IA_STEP_OTHER_WAIT] = "#ff9896", [IA_STEP_CPU_WAIT] = "#ff7f0e",
};

#define MAXBARS 300   /* more steps than this: each column the mean of a run of them */

void ia_report_step_parts(FILE *f, const struct ia_analysis *a)
{
	const struct ia_step_breakdown *b = &a->step_parts;
	if (!b->n)
		return;
	char d1[32], d2[32];
	size_t nb = b->n < MAXBARS ? b->n : MAXBARS;
	/* the columns' heights: each part's mean over the steps a column holds */
	double top = 1;
	for (size_t c = 0; c < nb; c++) {
		size_t i0 = c * b->n / nb, i1 = (c + 1) * b->n / nb;
		double h = 0;
		for (size_t i = i0; i < i1; i++)
			for (int p = 0; p < IA_STEP_NPARTS; p++)
				h += (double)b->part_ns[p][i];
		h /= (double)(i1 - i0);
		top = h > top ? h : top;
	}
	const int L = 60, W = 900, H = 160;
	fprintf(f, "<figure><figcaption>Where each step's time went (%s), %zu steady steps%s</figcaption><svg "
		   "class='stepparts' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' width='100%%' role='img' "
		   "aria-label='each step split into its parts'>",
		b->cls, b->n, nb < b->n ? ", each column the mean of a run of them" : "", L + W + 10, H + 50);
	ia_report_y_axis(f, L, 5, H, top, "ns");
	double bw = (double)W / (double)nb;
	for (size_t c = 0; c < nb; c++) {
		size_t i0 = c * b->n / nb, i1 = (c + 1) * b->n / nb;
		double y = 5 + H;
		for (int k = 0; k < IA_STEP_NPARTS; k++) {
			enum ia_step_part p = stack[k];
			double v = 0;
			for (size_t i = i0; i < i1; i++)
				v += (double)b->part_ns[p][i];
			v /= (double)(i1 - i0);
			double h = (double)H * v / top;
			if (h <= 0)
				continue;
			y -= h;
			fprintf(f, "<rect x='%.2f' y='%.2f' width='%.2f' height='%.2f' fill='%s'><title>step %zu%s: %s %s"
				   "</title></rect>", L + bw * (double)c, y, bw > 1.5 ? bw - 0.5 : bw, h, color[p], i0 + 1,
				i1 - i0 > 1 ? "…" : "", ia_step_part_name(p), ia_fmt_dur(d1, sizeof d1, (uint64_t)v));
		}
	}
	fprintf(f, "<text x='%d' y='%d' class='tick'>step 1</text><text x='%d' y='%d' class='tick' text-anchor='end'>step "
		   "%zu</text>", L, H + 18, L + W, H + 18, b->n);
	/* the legend: the parts with a share, in the table's order */
	double lx = L;
	for (int k = IA_STEP_NPARTS - 1; k >= 0; k--) {
		enum ia_step_part p = stack[k];
		if (!b->sum_ns[p])
			continue;
		char t[64];
		snprintf(t, sizeof t, "%s %.0f%% (median %s)", ia_step_part_name(p), b->share_pct[p],
			 ia_fmt_dur(d2, sizeof d2, b->p50_ns[p]));
		fprintf(f, "<rect x='%.0f' y='%d' width='10' height='10' fill='%s'/><text x='%.0f' y='%d' class='tick'>%s"
			   "</text>", lx, H + 30, color[p], lx + 13, H + 39, t);
		lx += 22 + 5.6 * (double)strlen(t);
	}
	fputs("</svg></figure>\n", f);
}
