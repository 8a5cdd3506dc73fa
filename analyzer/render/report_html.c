/*
 * report_html.c — one self-contained HTML page of an analysis
 * (report_html.h; `ingero-analyze report --html`, cli/cmd_report.c): inline
 * CSS and SVG, no script, no network.  The page a user reads first, in the
 * order they ask: the headline figures (render/headline.h, the lines
 * explain prints), the verdict, where the main thread's steady state went,
 * the timeline (report_timeline.h), the steps, the findings, the latency
 * histograms, the kernels, the process and API tables.  Everything scales
 * with the window: SVGs carry a viewBox and take the page's width.
 */
#include "render/report_html.h"

#include "base/util.h"
#include "load/trace_status.h"
#include "render/finding.h"
#include "render/headline.h"
#include "render/report_charts.h"
#include "render/report_step_parts.h"
#include "render/report_timeline.h"
#include "rules/verdict.h"

#include <stdlib.h>
#include <string.h>

#define esc ia_html_esc
#define KERNELS_SHOWN 15

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
	fprintf(f, "<p class='part'>%s</p>", ia_finding_part_title(part));
	fputs(part == IA_PART_TIMELINE ? "<ul class='tl'>" : "<ol>", f);
}

static void h_list_item(void *f, enum ia_finding_part part, int number, const char *text)
{
	(void)number;
	(void)part;
	fputs("<li>", f);
	esc(f, text);
	fputs("</li>", f);
}

static void h_list_end(void *f, enum ia_finding_part part)
{
	fputs(part == IA_PART_TIMELINE ? "</ul>\n" : "</ol>\n", f);
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
		fputs("<p class='ok'>No finding: no starvation pattern passed its threshold.</p>\n", f);
	for (size_t i = 0; i < a->nchains; i++)
		ia_finding_render(&a->chains[i], &html, f);
}

static void processes_table(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	fputs("<h2>Processes</h2>\n<div class='scroll'><table><tr><th>process</th><th>pid</th><th>role</th><th>threads</th>"
	      "<th>CUDA calls</th><th>CPU</th><th>off-CPU</th><th>switches (vol/invol)</th><th>worst stall</th>"
	      "<th>run-queue p99</th><th>page allocs</th><th>share of main's waiting</th></tr>\n", f);
	for (size_t i = 0; i < a->pp.n; i++) {
		const struct ia_proc_stats *s = &a->pp.p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		fprintf(f, "<tr><td style='padding-left:%dem'>", 1 + s->depth);
		esc(f, p->comm);
		fprintf(f, "</td><td>%d</td><td>%s</td><td>%u</td><td>%s</td><td>%s</td><td>%s</td><td>%llu/%llu</td><td>%s</td>"
			   "<td>%s</td><td>%s</td><td>", p->pid, ia_role_name(s->role), s->nthreads,
			ia_fmt_count(b1, sizeof b1, p->ncalls), ia_fmt_dur(b2, sizeof b2, s->cpu_ns),
			ia_fmt_dur(b3, sizeof b3, s->off_cpu_ns), (unsigned long long)s->voluntary,
			(unsigned long long)s->involuntary, ia_fmt_dur(b4, sizeof b4, s->worst_stall_ns),
			ia_fmt_dur(b5, sizeof b5, s->runq_p99_ns), ia_fmt_count(b6, sizeof b6, s->page_allocs));
		if (s->role == IA_ROLE_WORKER && a->pp.main_blocked_ns)
			fprintf(f, "%.0f%%", 100 * s->main_wait_share);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n<p class='note'>CPU, off-CPU and switches are thread time: each process's threads added up "
	      "(the tracer's own left out), so they can pass the window's length.</p>\n", f);
}

static void apis_table(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	char b1[32], b2[32], b3[32], b4[32];
	fputs("<h2>CUDA calls on the host</h2>\n<div class='scroll'><table><tr><th>API</th><th>calls</th><th>total</th>"
	      "<th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n", f);
	for (size_t i = 0; i < a->stats.napis; i++) {
		const struct ia_api_stats *s = &a->stats.apis[i];
		fputs("<tr><td>", f);
		esc(f, ia_api_name(t, s->api));
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td>", ia_fmt_count(b1, sizeof b1, s->count),
			ia_fmt_dur(b2, sizeof b2, s->total_ns), ia_fmt_dur(b3, sizeof b3, (uint64_t)s->mean_ns));
		fprintf(f, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", ia_fmt_dur(b1, sizeof b1, s->p50_ns),
			ia_fmt_dur(b2, sizeof b2, s->p90_ns), ia_fmt_dur(b3, sizeof b3, s->p99_ns), ia_fmt_dur(b4, sizeof b4, s->max_ns));
	}
	fputs("</table></div>\n", f);
}

static void kernels_table(FILE *f, const struct ia_analysis *a)
{
	const struct ia_gpu_time *g = &a->gaps.gpu;
	char b1[32], b2[32], b3[32], b4[32];
	if (!g->measured || !g->nall)
		return;
	fprintf(f, "<h2>GPU time by kernel (%s)</h2>\n<div class='scroll'><table><tr><th>kernel</th><th>launches</th>"
		   "<th>GPU time</th><th>share</th><th>mean</th><th>p50</th><th>max</th></tr>\n",
		g->kernels_steady ? "steady state" : "whole window");
	for (size_t k = 0; k < g->nall && k < KERNELS_SHOWN; k++) {
		const struct ia_kernel_row *r = &g->all[k];
		fputs("<tr><td title='", f);
		esc(f, r->k.name);
		fputs("'>", f);
		esc(f, r->k.short_name);
		fprintf(f, "</td><td>%s</td><td>%s</td><td>%.1f%%</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			ia_fmt_count(b1, sizeof b1, r->k.launches), ia_fmt_dur(b2, sizeof b2, r->k.ns),
			g->work_ns ? 100.0 * (double)r->k.ns / (double)g->work_ns : 0, ia_fmt_dur(b3, sizeof b3, r->mean_ns),
			ia_fmt_dur(b4, sizeof b4, r->p50_ns), ia_fmt_dur(b1, sizeof b1, r->max_ns));
	}
	fprintf(f, "</table></div>\n<p class='note'>Estimated from %zu kernels and copies timed alone on the GPU, within the "
		   "measured bounds; share: of the GPU's work%s. All of them: <code>ingero-analyze stats --kernels</code>.</p>\n",
		g->ntimed, g->several_streams ? " summed over streams that may overlap" : "");
}

static const char css[] =
	"body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;padding:20px 28px;color:#222;max-width:1500px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin-top:30px;border-bottom:1px solid #ddd}"
	"h3{font-size:15px;margin:4px 0}.headline{font-size:22px;font-weight:600;margin:10px 0 2px}"
	".sub{color:#444;margin:2px 0}.verdict{font-size:16px;background:#f6f8fa;border-left:4px solid #1f77b4;"
	"padding:8px 12px}.chain{border:1px solid #ddd;border-radius:6px;padding:8px 14px;margin:12px 0}"
	".part{font-weight:600;margin:6px 0 0}ul.tl{font-size:13px;margin:2px 0}"
	".sev{display:inline-block;padding:1px 7px;border-radius:4px;color:#fff;font-size:12px}"
	".HIGH{background:#c62828}.MEDIUM{background:#ef6c00}.LOW{background:#607d8b}"
	"table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}"
	"td:first-child,th:first-child{text-align:left}.scroll{overflow-x:auto}"
	"svg{display:block;max-width:100%}.lbl{font-size:12px}.tick{font-size:10px;fill:#444}"
	".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:18px}"
	"figure{margin:0}figcaption{font-size:13px}.note{font-size:13px;color:#555}.ok{color:#2e7d32}"
	"code{font-size:13px}";

void ia_report_html_write(FILE *f, const struct ia_analysis *a, const char *db_path)
{
	const struct ia_trace *t = a->t;
	char buf[1024];
	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
		   "<meta name='viewport' content='width=device-width, initial-scale=1'><title>Ingero: ");
	esc(f, t->command ? t->command : "report");
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>Ingero report</h1>\n<p class='sub' id='trace'>", css);
	esc(f, ia_headline_trace(a, buf, sizeof buf));
	fputs("</p>\n", f);
	char incomplete[512];
	if (ia_trace_incomplete(t, incomplete, sizeof incomplete)) {   /* (trace_status.h) */
		fputs("<p class='incomplete'><b>", f);
		esc(f, incomplete);
		fputs("</b></p>\n", f);
	}
	fputs("<p class='headline' id='headline'>", f);
	esc(f, ia_headline_idle(a, buf, sizeof buf));
	fputs("</p>\n", f);
	static const char *(*const sub[])(const struct ia_analysis *, char *, size_t) = { ia_headline_window,
											    ia_headline_steps };
	static const char *const ids[] = { "window", "steps" };
	for (size_t i = 0; i < 2; i++)
		if (*sub[i](a, buf, sizeof buf)) {
			fprintf(f, "<p class='sub' id='%s'>", ids[i]);
			esc(f, buf);
			fputs("</p>\n", f);
		}
	if (*ia_headline_losses(a, 0, buf, sizeof buf)) {
		fputs("<p class='sub'>", f);
		esc(f, buf);
		fputs("</p>\n", f);
	}
	struct ia_verdict v;
	ia_verdict_compute(a, &v);
	if (v.state != IA_VERDICT_NONE) {
		fputs("<p class='verdict' id='verdict'>", f);
		esc(f, v.text);
		fputs("</p>\n", f);
	}
	if (a->fig.main_known && a->fig.steady_ns) {
		fputs("<h2>The main thread in the steady state</h2>\n", f);
		ia_report_main_bar(f, a);
	}
	fputs("<h2>Timeline</h2>\n", f);
	if (a->fig.have) {
		fputs("<p class='note'>Each row shows, per slice of time, the share of it in each state (hover for the "
		      "figures). Shaded: phases of the run that are not its steady state.</p>\n", f);
		ia_report_timeline(f, a);
	} else {
		fputs("<p>No GPU work queued by the selected processes.</p>\n", f);
	}
	if (a->step_times.n) {
		fputs("<h2>Steps</h2>\n", f);
		ia_report_steps(f, a);
		ia_report_step_parts(f, a);
	}
	fputs("<h2>Findings</h2>\n", f);
	chains_html(f, a);
	fputs("<h2>Time inside CUDA calls, per API</h2>\n", f);
	ia_report_latency(f, a);
	kernels_table(f, a);
	processes_table(f, a);
	apis_table(f, a);
	fputs("<p class='note'>Generated by ingero-analyze from ", f);
	esc(f, db_path);
	fputs(". How to read it: README, \"How to read explain\".</p>\n</body></html>\n", f);
}
