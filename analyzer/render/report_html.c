/*
 * report_html.c — one self-contained HTML page of an analysis
 * (report_html.h; `ingero-analyze report --html`, cli/cmd_report.c): inline
 * CSS and SVG, no script, no network — the chains, the GPU idle estimate, a
 * timeline of GPU-waiting vs host activity, latency histograms per API, the
 * process table and the API table.
 *
 * The timeline is a heat strip per row: the CUDA activity window is cut
 * into COLS columns and each row accumulates, per column, the fraction of
 * the column's time in its state (a linear pass over the intervals; an
 * interval touches only the columns it covers).
 */
#include "load/trace_status.h"
#include "render/report_html.h"

#include "render/finding.h"
#include "base/util.h"
#include "rules/verdict.h"

#include <ingero/api.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLS 600
#define ROWS 7
#define HBINS 32          /* latency histogram: 4 bins per decade, 1 us .. 100 s */

static void esc(FILE *f, const char *s)
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

struct strip {
	uint64_t a, b;
	double v[ROWS][COLS];
};

static void add_span(struct strip *s, int row, uint64_t a, uint64_t b, double w)
{
	if (b <= a || s->b <= s->a)
		return;
	if (a < s->a)
		a = s->a;
	if (b > s->b)
		b = s->b;
	if (b <= a)
		return;
	double colw = (double)(s->b - s->a) / COLS;
	size_t c0 = (size_t)((double)(a - s->a) / colw), c1 = (size_t)((double)(b - s->a) / colw);
	if (c1 >= COLS)
		c1 = COLS - 1;
	for (size_t c = c0; c <= c1; c++) {
		double lo = (double)s->a + colw * (double)c, hi = lo + colw;
		double x0 = (double)a > lo ? (double)a : lo, x1 = (double)b < hi ? (double)b : hi;
		if (x1 > x0)
			s->v[row][c] += w * (x1 - x0) / colw;
	}
}

static const char *const row_names[ROWS] = {
	"no CUDA work queued (GPU idle, est.)", "main: in CUDA syncs", "main: in CUDA copies",
	"main: blocked (off-CPU)", "main: waiting for a CPU", "workers on-CPU (share of workers)", "CPU busy (all CPUs)",
};
static const char *const row_colors[ROWS] = {
	"#d62728", "#1f77b4", "#17becf", "#7f7f7f", "#ff7f0e", "#2ca02c", "#9467bd",
};

static void timeline_svg(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	struct strip *s = calloc(1, sizeof *s);
	if (!s)
		return;
	s->a = g->win_start;
	s->b = g->win_end;
	for (size_t i = 0; i < g->n; i++)
		add_span(s, 0, g->g[i].start, g->g[i].end, 1);
	uint32_t mt = a->pp.main_thread;
	if (mt != UINT32_MAX) {
		const struct ia_thread *x = &t->threads[mt];
		for (uint32_t k = 0; k < x->call_n; k++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + k]];
			int cls = ingero_api_class(c->api);
			if (cls == INGERO_CLASS_SYNC)
				add_span(s, 1, c->start, c->start + c->dur, 1);
			else if (cls == INGERO_CLASS_COPY)
				add_span(s, 2, c->start, c->start + c->dur, 1);
		}
		for (uint32_t k = 0; k < x->off_n; k++) {
			const struct ia_off *o = &t->offs[t->off_by_th[x->off_first + k]];
			add_span(s, 3, o->start, o->end - o->runq, 1);
			add_span(s, 4, o->end - o->runq, o->end, 1);
		}
	}
	double nw = (double)a->pp.nworkers;
	for (size_t i = 0; nw > 0 && i < a->pp.n; i++) {
		if (a->pp.p[i].role != IA_ROLE_WORKER)
			continue;
		for (size_t th = 0; th < t->nthreads; th++) {
			const struct ia_thread *x = &t->threads[th];
			if (x->proc != a->pp.p[i].proc)
				continue;
			uint64_t sa, sb;
			ia_thread_span(t, (uint32_t)th, &sa, &sb);
			add_span(s, 5, sa, sb, 1 / nw);
			for (uint32_t k = 0; k < x->off_n; k++) {
				const struct ia_off *o = &t->offs[t->off_by_th[x->off_first + k]];
				add_span(s, 5, o->start > sa ? o->start : sa, o->end < sb ? o->end : sb, -1 / nw);
			}
		}
	}
	const struct ia_series *busy = &a->ev.busy;
	for (size_t i = 0; i < busy->n && busy->width && a->ev.ncpus; i++)
		add_span(s, 6, busy->b[i].t, busy->b[i].t + busy->width,
			 (double)busy->b[i].v / ((double)busy->width * a->ev.ncpus));
	const int label_w = 250, colpx = 1, rowh = 22;
	int w = label_w + COLS * colpx + 10, h = ROWS * (rowh + 6) + 30;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' "
		   "aria-label='timeline of GPU waiting and host activity'>\n", w, h);
	for (int r = 0; r < ROWS; r++) {
		int y = r * (rowh + 6);
		fprintf(f, "<text x='0' y='%d' class='lbl'>", y + rowh - 6);
		esc(f, row_names[r]);
		fprintf(f, "</text><rect x='%d' y='%d' width='%d' height='%d' fill='#f4f4f4'/>\n", label_w, y, COLS * colpx, rowh);
		for (int c = 0; c < COLS; c++) {
			double v = s->v[r][c];
			if (v <= 0.005)
				continue;
			if (v > 1)
				v = 1;
			fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s' fill-opacity='%.2f'/>", label_w + c * colpx,
				y, colpx, rowh, row_colors[r], v);
		}
		fputc('\n', f);
	}
	char d1[32], d2[32];
	int y = ROWS * (rowh + 6) + 14;
	fprintf(f, "<text x='%d' y='%d' class='lbl'>+%s</text><text x='%d' y='%d' class='lbl' text-anchor='end'>+%s</text>\n",
		label_w, y, ia_fmt_dur(d1, sizeof d1, g->win_start - t->t0), label_w + COLS * colpx, y,
		ia_fmt_dur(d2, sizeof d2, g->win_end - t->t0));
	fputs("</svg>\n", f);
	free(s);
}

static int bin_of(uint64_t ns)
{
	if (ns < 1000)
		return 0;
	int b = (int)floor(log10((double)ns / 1000.0) * 4.0);
	return b < 0 ? 0 : b >= HBINS ? HBINS - 1 : b;
}

static void histograms(FILE *f, const struct ia_analysis *a)
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
	fputs("<div class='hists'>\n", f);
	char p50[32], p99[32];
	for (size_t k = 0; k < n; k++) {
		const struct ia_api_stats *s = &a->stats.apis[k];
		uint64_t mx = 1;
		for (int b = 0; b < HBINS; b++)
			if (h[k][b] > mx)
				mx = h[k][b];
		const int bw = 9, H = 90, W = HBINS * bw;
		fprintf(f, "<figure><figcaption>");
		esc(f, ia_api_name(t, s->api));
		fprintf(f, " — p50 %s, p99 %s</figcaption>\n<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img'>",
			ia_fmt_dur(p50, sizeof p50, s->p50_ns), ia_fmt_dur(p99, sizeof p99, s->p99_ns), W, H + 16);
		for (int b = 0; b < HBINS; b++) {
			if (!h[k][b])
				continue;
			/* log scale, so a tail of a few calls stays visible */
			double frac = log1p((double)h[k][b]) / log1p((double)mx);
			int bh = (int)(frac * H);
			if (bh < 1)
				bh = 1;
			fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='#1f77b4'><title>%llu calls</title></rect>",
				b * bw, H - bh, bw - 1, bh, (unsigned long long)h[k][b]);
		}
		static const char *const dec[] = { "1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s" };
		for (int d = 0; d < 8; d++)
			fprintf(f, "<text x='%d' y='%d' class='tick'>%s</text>", d * 4 * bw, H + 12, dec[d]);
		fputs("</svg></figure>\n", f);
	}
	fputs("</div>\n", f);
	free(h);
}

/* ---- the HTML sink of the finding renderer (finding.h) ---- */
static void h_begin(void *f, const char *sev, const char *summary)
{
	fprintf(f, "<section class='chain'><h3><span class='sev %s'>%s</span> ", sev, sev);
	esc(f, summary);
	fputs("</h3>\n", f);
}

static void h_list_begin(void *f, enum ia_finding_part part, int n)
{
	(void)n;
	fputs(part == IA_PART_TIMELINE ? "<pre class='tl'>" : "<ol>", f);
}

static void h_list_item(void *f, enum ia_finding_part part, int number, const char *text)
{
	(void)number;
	if (part == IA_PART_TIMELINE) {
		esc(f, text);
		fputc('\n', f);
	} else {
		fputs("<li>", f);
		esc(f, text);
		fputs("</li>", f);
	}
}

static void h_list_end(void *f, enum ia_finding_part part)
{
	fputs(part == IA_PART_TIMELINE ? "</pre>\n" : "</ol>", f);
}

static void h_field(void *f, enum ia_finding_part part, const char *text)
{
	fprintf(f, "<p><b>%s:</b> %s", ia_finding_part_title(part), part == IA_PART_SOURCE ? "<code>" : "");
	esc(f, text);
	fputs(part == IA_PART_SOURCE ? "</code></p>" : "</p>\n", f);
}

static void h_end(void *f)
{
	fputs("</section>\n", f);
}

static void chains_html(FILE *f, const struct ia_analysis *a)
{
	static const struct ia_finding_sink html = { h_begin, h_list_begin, h_list_item, h_list_end, h_field, h_end };
	if (!a->nchains)
		fputs("<p class='ok'>No causal chain: no starvation pattern passed its threshold.</p>\n", f);
	for (size_t i = 0; i < a->nchains; i++)
		ia_finding_render(&a->chains[i], &html, f);
}

static void tables(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	fputs("<h2>Processes</h2>\n<table><tr><th>process</th><th>pid</th><th>role</th><th>CUDA calls</th><th>CPU</th>"
	      "<th>switches (vol/invol)</th><th>off-CPU</th><th>worst stall</th><th>run-queue p99</th>"
	      "<th>page allocs</th><th>share of main's waiting</th></tr>\n", f);
	for (size_t i = 0; i < a->pp.n; i++) {
		const struct ia_proc_stats *s = &a->pp.p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		fprintf(f, "<tr><td style='padding-left:%dem'>", 1 + s->depth);
		esc(f, p->comm);
		fprintf(f, "</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%llu/%llu</td><td>%s</td><td>%s</td><td>%s</td>"
			   "<td>%s</td><td>",
			p->pid, ia_role_name(s->role), ia_fmt_count(b1, sizeof b1, p->ncalls), ia_fmt_dur(b2, sizeof b2, s->cpu_ns),
			(unsigned long long)s->voluntary, (unsigned long long)s->involuntary, ia_fmt_dur(b3, sizeof b3, s->off_cpu_ns),
			ia_fmt_dur(b4, sizeof b4, s->worst_stall_ns), ia_fmt_dur(b5, sizeof b5, s->runq_p99_ns),
			ia_fmt_count(b6, sizeof b6, s->page_allocs));
		if (s->role == IA_ROLE_WORKER && a->pp.main_blocked_ns)
			fprintf(f, "%.0f%%", 100 * s->main_wait_share);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n<h2>CUDA APIs</h2>\n<table><tr><th>API</th><th>count</th><th>total</th><th>mean</th><th>p50</th>"
	      "<th>p90</th><th>p99</th><th>max</th></tr>\n", f);
	for (size_t i = 0; i < a->stats.napis; i++) {
		const struct ia_api_stats *s = &a->stats.apis[i];
		fputs("<tr><td>", f);
		esc(f, ia_api_name(t, s->api));
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td>", ia_fmt_count(b1, sizeof b1, s->count),
			ia_fmt_dur(b2, sizeof b2, s->total_ns), ia_fmt_dur(b3, sizeof b3, (uint64_t)s->mean_ns));
		fprintf(f, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", ia_fmt_dur(b1, sizeof b1, s->p50_ns),
			ia_fmt_dur(b2, sizeof b2, s->p90_ns), ia_fmt_dur(b3, sizeof b3, s->p99_ns), ia_fmt_dur(b4, sizeof b4, s->max_ns));
	}
	fputs("</table>\n", f);
}

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
	"h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
	"h3{font-size:15px;margin:6px 0}.chain{border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:10px 0}"
	".sev{display:inline-block;padding:1px 7px;border-radius:4px;color:#fff;font-size:12px}"
	".HIGH{background:#c62828}.MEDIUM{background:#ef6c00}.LOW{background:#607d8b}"
	"pre.tl{background:#f7f7f7;padding:6px;white-space:pre-wrap;font-size:12px}"
	"table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}"
	"td:first-child,th:first-child{text-align:left}.lbl{font-size:11px}.tick{font-size:9px;fill:#555}"
	".hists{display:flex;flex-wrap:wrap;gap:18px}figure{margin:0}figcaption{font-size:12px}"
	".idle{font-size:18px}.verdict{font-size:16px}.ok{color:#2e7d32}";

void ia_report_html_write(FILE *f, const struct ia_analysis *a, const char *db_path)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	char d1[32];
	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Ingero report</title>"
		   "<style>%s</style></head><body>\n<h1>Why is the GPU starving?</h1>\n<p>", css);
	esc(f, t->command ? t->command : "(no command recorded)");
	fprintf(f, " — %s of CUDA activity, %d CPUs", ia_fmt_dur(d1, sizeof d1, win), a->ev.ncpus);
	if (t->gpu) {
		fputs(", ", f);
		esc(f, t->gpu);
	}
	char incomplete[512];
	if (ia_trace_incomplete(t, incomplete, sizeof incomplete)) {   /* (trace_status.h) */
		fputs("</p>\n<p class='incomplete'><b>", f);
		esc(f, incomplete);
		fputs("</b>", f);
	}
	uint64_t rec = a->idle.window_ns;   /* the window less the time between capture windows */
	if (win && rec)
		fprintf(f, "</p>\n<p class='idle'>GPU idle: <b>%s</b> <small>(%s)</small></p>\n",
			ia_fmt_pct_range(d1, sizeof d1, 100.0 * (double)g->idle_low_ns / (double)rec,
					 100.0 * (double)g->idle_high_ns / (double)rec),
			g->gpu.measured ? "measured: CUDA event marks timed on the GPU; low = certainly idle, high = not "
					  "certainly busy"
					: "estimate from host evidence: no GPU timestamps; low = no CUDA work queued, "
					  "high = not known busy");
	else
		fputs("</p>\n<p class='idle'>No CUDA work queued by the selected processes: no GPU idle estimate.</p>\n", f);
	struct ia_verdict v;
	ia_verdict_compute(a, &v);
	if (v.state != IA_VERDICT_NONE) {
		fputs("<p class='verdict'><b>", f);
		esc(f, v.text);
		fputs("</b></p>\n", f);
	}
	fputs("<h2>Causal chains</h2>\n", f);
	chains_html(f, a);
	fputs("<h2>Timeline: GPU waiting vs host activity</h2>\n", f);
	if (win)
		timeline_svg(f, a);
	else
		fputs("<p>No CUDA activity.</p>\n", f);
	fputs("<h2>Latency per API (log-scaled counts)</h2>\n", f);
	histograms(f, a);
	tables(f, a);
	fputs("<p><small>Generated by ingero-analyze from ", f);
	esc(f, db_path);
	fputs(".</small></p>\n</body></html>\n", f);
}
