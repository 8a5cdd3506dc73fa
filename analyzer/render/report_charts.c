/*
 * report_charts.c — the HTML report's small charts (report_charts.h).
 */
#include "render/report_charts.h"

#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HBINS 32          /* latency histogram: 4 bins per decade, 1 us .. 100 s */

void ia_html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void ia_report_main_bar(FILE *f, const struct ia_analysis *a)
{
	const struct ia_figures *x = &a->fig;
	if (!x->main_known || !x->steady_ns)
		return;
	static const enum ia_main_part order[] = {
		IA_MAIN_GAP_BLOCKED, IA_MAIN_GAP_ONCPU, IA_MAIN_GAP_RUNQ, IA_MAIN_COPY, IA_MAIN_LAUNCH, IA_MAIN_SYNC,
		IA_MAIN_OTHER_CUDA, IA_MAIN_COLLECTIVE, IA_MAIN_HOST_QUEUED,
	};
	/* the timeline's colours for the same states (report_timeline.c) */
	static const char *const colors[] = { "#b0b0b0", "#4d4d4d", "#ff7f0e", "#17becf", "#1f77b4", "#aec7e8",
					      "#c7c7c7", "#9467bd", "#2ca02c" };
	static const char *const prefix[] = { "GPU idle, main thread ", "GPU idle, main thread ", "GPU idle, main thread ",
					      "inside ", "inside ", "inside ", "inside ", "inside ", "" };
	const int W = 1000, H = 26;
	double sum = 0;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		sum += (double)x->main_ns[order[i]];
	fprintf(f, "<svg class='mainbar' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' width='100%%' role='img' "
		   "aria-label='the main thread in the steady state'>", W, H + 22);
	double at = 0;
	for (size_t i = 0; i < sizeof order / sizeof *order && sum > 0; i++) {
		double w = (double)W * (double)x->main_ns[order[i]] / sum;
		if (w <= 0)
			continue;
		fprintf(f, "<g><title>%s%s: %.0f%% of the steady state</title><rect x='%.1f' y='0' width='%.1f' height='%d' "
			   "fill='%s'/></g>", prefix[i], ia_main_part_name(order[i]), pct(x->main_ns[order[i]], x->steady_ns), at,
			w, H, colors[i]);
		at += w;
	}
	/* the legend under the bar, for the parts with a share */
	double lx = 0;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		double p = pct(x->main_ns[order[i]], x->steady_ns);
		if (p < 0.5)
			continue;
		char t[96];
		snprintf(t, sizeof t, "%s%s %.0f%%", i < 3 ? "GPU idle, main thread " : i < 8 ? "in " : "",
			 ia_main_part_name(order[i]), p);
		fprintf(f, "<rect x='%.0f' y='%d' width='10' height='10' fill='%s'/><text x='%.0f' y='%d' class='tick'>%s</text>",
			lx, H + 6, colors[i], lx + 13, H + 15, t);
		lx += 22 + 6.0 * (double)strlen(t);
	}
	fputs("</svg>\n", f);
}

/* y ticks for counts 0..max (linear) */
void ia_report_y_axis(FILE *f, int x, int y0, int h, double max, const char *unit)
{
	fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", x, y0, x, y0 + h);
	for (int k = 0; k <= 4; k++) {
		double v = max * k / 4;
		int y = y0 + h - h * k / 4;
		char b[32];
		if (!strcmp(unit, "ns"))
			ia_fmt_dur(b, sizeof b, (uint64_t)v);
		else
			snprintf(b, sizeof b, "%.0f", v);
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/><text x='%d' y='%d' class='tick' "
			   "text-anchor='end'>%s</text>", x - 4, y, x, y, x - 6, y + 3, b);
	}
}

void ia_report_steps(FILE *f, const struct ia_analysis *a)
{
	const struct ia_step_times *s = &a->step_times;
	if (!s->n)
		return;
	char d1[32], d2[32], d3[32], d4[32];
	fprintf(f, "<p>%zu steps timed in the steady state: p50 %s, p90 %s, p99 %s, max %s.</p>\n", s->n,
		ia_fmt_dur(d1, sizeof d1, s->p50), ia_fmt_dur(d2, sizeof d2, s->p90), ia_fmt_dur(d3, sizeof d3, s->p99),
		ia_fmt_dur(d4, sizeof d4, s->max));
	/* each step's time in order: at most 500 bars (the longest of each group) */
	const int L = 60, W = 600, H = 120;
	size_t nb = s->n < 500 ? s->n : 500;
	fprintf(f, "<div class='charts'><figure><figcaption>Each step's time, in order</figcaption><svg class='stepchart' "
		   "xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' width='100%%' role='img'>", L + W + 10, H + 30);
	ia_report_y_axis(f, L, 5, H, (double)s->max, "ns");
	double bw = (double)W / (double)nb;
	for (size_t b = 0; b < nb; b++) {
		size_t i0 = b * s->n / nb, i1 = (b + 1) * s->n / nb;
		uint64_t mx = 0;
		size_t at = i0;
		for (size_t i = i0; i < i1; i++)
			if (s->ns[i] > mx) {
				mx = s->ns[i];
				at = i;
			}
		int bh = (int)((double)H * (double)mx / (double)s->max);
		fprintf(f, "<rect x='%.2f' y='%d' width='%.2f' height='%d' fill='#1f77b4'><title>step %zu at +%s: %s</title>"
			   "</rect>", L + bw * (double)b, 5 + H - bh, bw > 1.5 ? bw - 0.5 : bw, bh, at + 1,
			ia_fmt_dur(d1, sizeof d1, s->start[at] - a->t->t0), ia_fmt_dur(d2, sizeof d2, mx));
	}
	fprintf(f, "<text x='%d' y='%d' class='tick'>step 1</text><text x='%d' y='%d' class='tick' text-anchor='end'>step "
		   "%zu</text></svg></figure>\n", L, H + 22, L + W, H + 22, s->n);
	/* the histogram */
	uint64_t top = 1;
	for (int b = 0; b < IA_STEP_HIST_BINS; b++)
		top = s->hist[b] > top ? s->hist[b] : top;
	const int HW = 360;
	fprintf(f, "<figure><figcaption>Step times (count of steps)</figcaption><svg class='stephist' "
		   "xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' width='100%%' role='img'>", L + HW + 10, H + 30);
	ia_report_y_axis(f, L, 5, H, (double)top, "n");
	double hb = (double)HW / IA_STEP_HIST_BINS;
	for (int b = 0; b < IA_STEP_HIST_BINS; b++) {
		if (!s->hist[b])
			continue;
		int bh = (int)((double)H * (double)s->hist[b] / (double)top);
		uint64_t lo = s->hist_lo + (uint64_t)b * s->hist_width;
		fprintf(f, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='#1f77b4'><title>%s to %s: %llu steps</title>"
			   "</rect>", L + hb * b, 5 + H - bh, hb - 1, bh < 1 ? 1 : bh, ia_fmt_dur(d1, sizeof d1, lo),
			ia_fmt_dur(d2, sizeof d2, lo + s->hist_width), (unsigned long long)s->hist[b]);
	}
	fprintf(f, "<text x='%d' y='%d' class='tick'>%s</text><text x='%d' y='%d' class='tick' text-anchor='end'>%s</text>"
		   "</svg></figure></div>\n", L, H + 22, ia_fmt_dur(d1, sizeof d1, s->hist_lo), L + HW, H + 22,
		ia_fmt_dur(d2, sizeof d2, s->hist_lo + IA_STEP_HIST_BINS * s->hist_width));
}

static int bin_of(uint64_t ns)
{
	if (ns < 1000)
		return 0;
	int b = (int)floor(log10((double)ns / 1000.0) * 4.0);
	return b < 0 ? 0 : b >= HBINS ? HBINS - 1 : b;
}

void ia_report_latency(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	size_t n = a->stats.napis < 6 ? a->stats.napis : 6;
	uint64_t (*h)[HBINS] = calloc(n + 1, sizeof *h);
	if (!h)
		return;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		for (size_t k = 0; k < n; k++)
			if (a->stats.apis[k].api == c->api) {
				h[k][bin_of(c->dur)]++;
				break;
			}
	}
	fputs("<div class='charts'>\n", f);
	char p50[32], p99[32], b1[32], b2[32];
	for (size_t k = 0; k < n; k++) {
		const struct ia_api_stats *s = &a->stats.apis[k];
		uint64_t mx = 1;
		for (int b = 0; b < HBINS; b++)
			mx = h[k][b] > mx ? h[k][b] : mx;
		const int L = 44, bw = 9, H = 90, W = HBINS * bw;
		fprintf(f, "<figure><figcaption>");
		ia_html_esc(f, ia_api_name(t, s->api));
		fprintf(f, " — %s calls, p50 %s, p99 %s</figcaption>\n<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' "
			   "width='100%%' role='img'>", ia_fmt_count(b1, sizeof b1, s->count), ia_fmt_dur(p50, sizeof p50, s->p50_ns),
			ia_fmt_dur(p99, sizeof p99, s->p99_ns), L + W + 8, H + 34);
		/* the y axis: log-scaled counts, ticks at powers of ten */
		double lm = log1p((double)mx);
		fprintf(f, "<line x1='%d' y1='0' x2='%d' y2='%d' stroke='#333'/>", L, L, H);
		for (uint64_t v = 1; v <= mx; v *= 10) {
			int y = H - (int)((double)H * log1p((double)v) / lm);
			fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/><text x='%d' y='%d' class='tick' "
				   "text-anchor='end'>%s</text>", L - 3, y, L, y, L - 5, y + 3, ia_fmt_count(b2, sizeof b2, v));
		}
		for (int b = 0; b < HBINS; b++) {
			if (!h[k][b])
				continue;
			int bh = (int)(log1p((double)h[k][b]) / lm * H);
			fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='#1f77b4'><title>%llu calls</title></rect>",
				L + b * bw, H - (bh < 1 ? 1 : bh), bw - 1, bh < 1 ? 1 : bh, (unsigned long long)h[k][b]);
		}
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", L, H, L + W, H);
		static const char *const dec[] = { "1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s" };
		for (int d = 0; d < 8; d++)
			fprintf(f, "<text x='%d' y='%d' class='tick'>%s</text>", L + d * 4 * bw, H + 12, dec[d]);
		fprintf(f, "<text x='%d' y='%d' class='tick'>time inside the call (host); bars: calls, log scale</text>", L,
			H + 28);
		fputs("</svg></figure>\n", f);
	}
	fputs("</div>\n", f);
	free(h);
}
