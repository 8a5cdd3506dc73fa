/*
 * headline.c — the figures every view opens with, in one wording
 * (headline.h).  Numbers come from a->fig (measure/figures.h) only.
 */
#include "render/headline.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/trace_status.h"

#include <stdlib.h>
#include <string.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *basis(const struct ia_figures *f)
{
	return f->measured ? "measured on the GPU" : "estimated on the host (no GPU marks)";
}

const char *ia_headline_trace(const struct ia_analysis *a, char *buf, size_t len)
{
	const struct ia_trace *t = a->t;
	char d[32], lim[80] = "";
	if (t->cpu_limit > 0)
		snprintf(lim, sizeof lim, ", %.2f of them allowed by a CPU quota", t->cpu_limit);
	snprintf(buf, len, "Trace: %s (%d CPUs%s%s%s), %s traced", t->command ? t->command : "(no command recorded)",
		 a->ev.ncpus ? a->ev.ncpus : t->cpus, lim, t->gpu ? ", " : "", t->gpu ? t->gpu : "",
		 ia_fmt_dur(d, sizeof d, a->fig.traced_ns));
	return buf;
}

const char *ia_headline_idle(const struct ia_analysis *a, char *buf, size_t len)
{
	const struct ia_figures *f = &a->fig;
	char rng[32], about[48] = "";
	if (a->pp.main < 0) {
		snprintf(buf, len, "No CUDA calls and no traced process in this trace: no GPU idle estimate.");
	} else if (!f->have) {
		snprintf(buf, len, "No CUDA work queued by the selected processes in this window: no GPU idle estimate.");
	} else if (!f->steady_ns) {
		snprintf(buf, len, "No steady state in this window (all of it start-up, compilation or other phases): "
			 "GPU idle %s of the window, %s",
			 ia_fmt_pct_range(rng, sizeof rng, f->window_low, f->window_high), basis(f));
	} else {
		if (f->has_steady_about)
			snprintf(about, sizeof about, " (about %.0f%%)", f->steady_about);
		snprintf(buf, len, "GPU idle %s%s of the steady state, %s",
			 ia_fmt_pct_range(rng, sizeof rng, f->steady_low, f->steady_high), about, basis(f));
	}
	return buf;
}

const char *ia_headline_window(const struct ia_analysis *a, char *buf, size_t len)
{
	const struct ia_figures *f = &a->fig;
	char d[32], rng[32], about[48] = "";
	*buf = 0;
	if (!f->have)
		return buf;
	if (f->has_window_about)
		snprintf(about, sizeof about, " (about %.0f%%)", f->window_about);
	size_t n = (size_t)snprintf(buf, len, "Window %s (first GPU work to last CUDA call): GPU idle %s%s of it",
				    ia_fmt_dur(d, sizeof d, f->window_ns),
				    ia_fmt_pct_range(rng, sizeof rng, f->window_low, f->window_high), about);
	if (f->steady_ns >= f->window_ns) {
		if (n < len)
			snprintf(buf + n, len - n, "; all of it steady state");
		return buf;
	}
	const char *sep = "; ";
	for (int p = 1; p < IA_PHASE_N && n < len; p++) {
		if (!f->phase_ns[p] || p == IA_PHASE_PAUSED)   /* (the capture line says that one) */
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s %s (%.0f%%)", sep, ia_phase_title((enum ia_phase)p),
				      ia_fmt_dur(d, sizeof d, f->phase_ns[p]), pct(f->phase_ns[p], f->window_ns));
		sep = ", ";
	}
	if (n < len)
		snprintf(buf + n, len - n, "%ssteady state %s (%.0f%%)", sep, ia_fmt_dur(d, sizeof d, f->steady_ns),
			 pct(f->steady_ns, f->window_ns));
	return buf;
}

const char *ia_headline_steps(const struct ia_analysis *a, char *buf, size_t len)
{
	const struct ia_figures *f = &a->fig;
	char d[32];
	*buf = 0;
	if (f->have && f->step_calls && f->step_ns)
		snprintf(buf, len, "Steps: one every %s (%u CUDA calls each)", ia_fmt_dur(d, sizeof d, f->step_ns),
			 f->step_calls);
	return buf;
}

/* A loss source (docs/schema.md, losses) in a user's words: NULL when it has none. */
static const char *loss_words(const char *source)
{
	static const struct { const char *source, *words; } w[] = {
		{ "preload_dropped", "CUDA calls not recorded (the library's buffer was full)" },
		{ "sample_python_frames", "on-CPU samples without their Python frames" },
		{ "gpu_marks_lost", "GPU timing marks never read back" },
		{ "size_cap_rows", "events deleted to keep the file under --max-size" },
		{ "preload_after_owner_exit", "processes whose CUDA calls after their parent exited were lost" },
		{ "preload_counts_unknown", "processes whose last counts never arrived" },
		{ "malformed_message", "messages the collector could not read" },
		{ "process_env_unread", "processes gone before their launcher variables (RANK, ...) were read" },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		if (!strcmp(source, w[i].source))
			return w[i].words;
	if (!strncmp(source, "bpf_ringbuf_", 12))
		return "kernel events dropped (the kernel's buffer was full)";
	return NULL;
}

const char *ia_headline_losses(const struct ia_analysis *a, int verbose, char *buf, size_t len)
{
	const struct ia_trace *t = a->t;
	char n1[32];
	size_t n = 0;
	*buf = 0;
	if (!t->nlosses)
		return buf;
	n = (size_t)snprintf(buf, len, "Lost while tracing%s:", verbose ? " (docs/schema.md, losses)" : "");
	uint64_t other = 0;
	for (size_t i = 0; i < t->nlosses && n < len; i++) {
		const char *w = loss_words(t->losses[i].source);
		if (!verbose && !w) {
			other += t->losses[i].count;
			continue;
		}
		if (verbose)   /* the losses table's words: source, count */
			n += (size_t)snprintf(buf + n, len - n, "%s %s %s", buf[n - 1] != ':' ? "," : "",
					      t->losses[i].source, ia_fmt_count(n1, sizeof n1, t->losses[i].count));
		else
			n += (size_t)snprintf(buf + n, len - n, "%s %s %s", buf[n - 1] != ':' ? "," : "",
					      ia_fmt_count(n1, sizeof n1, t->losses[i].count), w);
	}
	if (other && n < len)
		snprintf(buf + n, len - n, "%s %s other records (--verbose names them)", buf[n - 1] != ':' ? "," : "",
			 ia_fmt_count(n1, sizeof n1, other));
	return buf;
}

static void line(FILE *f, const char *s)
{
	if (*s)
		fprintf(f, "%s\n", s);
}

void ia_headline_main_print(FILE *f, const struct ia_analysis *a)
{
	const struct ia_figures *x = &a->fig;
	char d[32];
	if (!x->main_known || !x->steady_ns)
		return;
	const uint64_t *m = x->main_ns, s = x->steady_ns;
	uint64_t gap = m[IA_MAIN_GAP_ONCPU] + m[IA_MAIN_GAP_BLOCKED] + m[IA_MAIN_GAP_RUNQ];
	uint64_t calls = m[IA_MAIN_SYNC] + m[IA_MAIN_COPY] + m[IA_MAIN_LAUNCH] + m[IA_MAIN_OTHER_CUDA] + m[IA_MAIN_COLLECTIVE];
	fprintf(f, "Main thread in the steady state (%s):\n", ia_fmt_dur(d, sizeof d, s));
	static const enum ia_main_part gp[] = { IA_MAIN_GAP_BLOCKED, IA_MAIN_GAP_ONCPU, IA_MAIN_GAP_RUNQ };
	static const enum ia_main_part cp[] = { IA_MAIN_COPY, IA_MAIN_LAUNCH, IA_MAIN_SYNC, IA_MAIN_OTHER_CUDA,
						IA_MAIN_COLLECTIVE };
	fprintf(f, "  %3.0f%% the GPU idle (%zu gap%s): ", pct(gap, s), x->ngaps, x->ngaps == 1 ? "" : "s");
	/* the parts in order of size */
	enum ia_main_part o[3];
	memcpy(o, gp, sizeof o);
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (m[o[j]] > m[o[i]]) {
				enum ia_main_part tmp = o[i];
				o[i] = o[j];
				o[j] = tmp;
			}
	for (int i = 0; i < 3; i++)
		fprintf(f, "%s%s %.0f%%", i ? ", " : "", ia_main_part_name(o[i]), pct(m[o[i]], s));
	fprintf(f, "\n  %3.0f%% inside CUDA calls", pct(calls, s));
	int first = 1;
	for (size_t i = 0; i < sizeof cp / sizeof cp[0]; i++) {
		if (pct(m[cp[i]], s) < 0.5)
			continue;
		fprintf(f, "%s%s %.0f%%", first ? ": " : ", ", ia_main_part_name(cp[i]), pct(m[cp[i]], s));
		first = 0;
	}
	/* the gaps are idle of 50 us or more; the GPU estimate's idle beyond
	 * them (between short kernels, outside the gaps) falls in the rows
	 * below them: said, or "host work while the GPU had work" would
	 * contradict the headline's about N% (c67: 67 % beside about 89 % idle) */
	double between = x->has_steady_about ? x->steady_about - pct(gap, s) : 0;
	if (between >= 5)
		fprintf(f, "\n  %3.0f%% host work while GPU work was queued (between kernels the GPU idled about %.0f%% of the "
			   "steady state more, in idles under %.0fus each)\n", pct(m[IA_MAIN_HOST_QUEUED], s), between,
			IA_MEASURED_GAP_MIN_NS / 1e3);
	else
		fprintf(f, "\n  %3.0f%% host work while the GPU had work\n", pct(m[IA_MAIN_HOST_QUEUED], s));
}

void ia_headline_print(FILE *f, const struct ia_analysis *a, int main, int verbose)
{
	char buf[1024];
	line(f, ia_headline_trace(a, buf, sizeof buf));
	ia_trace_status_print(f, a->t);   /* incomplete, read with its WAL (trace_status.h) */
	line(f, ia_headline_losses(a, verbose, buf, sizeof buf));
	ia_capture_print(f, &a->t->capture, a->t->t0);
	const char *pyf = ia_session(a->t, "python_frames");
	if (pyf && !strncmp(pyf, "off", 3))   /* which Python code ran is then not known */
		fprintf(f, "On-CPU samples have native frames only (Python frames %s).\n", pyf);
	line(f, ia_headline_idle(a, buf, sizeof buf));
	line(f, ia_headline_window(a, buf, sizeof buf));
	if (a->fig.have && a->fig.unmarked_streams)
		fprintf(f, "(%zu of %zu streams with work could not be marked: left out of the GPU idle figures)\n",
			a->fig.unmarked_streams, a->fig.streams);
	line(f, ia_headline_steps(a, buf, sizeof buf));
	if (verbose && (a->fig.has_steady_about || a->fig.has_window_about))
		fprintf(f, "(\"about\": estimated from %zu kernels and copies timed alone on the GPU, within the measured "
			   "bounds)\n", a->fig.ntimed);
	if (main)
		ia_headline_main_print(f, a);
}

static void pct3(cJSON *o, const char *key, int have, double low, double high, int has_about, double about)
{
	cJSON *x = cJSON_AddObjectToObject(o, key);
	if (!have) {
		cJSON_AddNullToObject(x, "low");
		cJSON_AddNullToObject(x, "high");
		cJSON_AddNullToObject(x, "about");
		cJSON_AddNullToObject(x, "text");
		return;
	}
	ia_json_round(x, "low", low, 1);
	ia_json_round(x, "high", high, 1);
	if (has_about)
		ia_json_round(x, "about", about, 1);
	else
		cJSON_AddNullToObject(x, "about");
	char rng[32], text[64];
	ia_fmt_pct_range(rng, sizeof rng, low, high);
	if (has_about)
		snprintf(text, sizeof text, "%s (about %.0f%%)", rng, about);
	cJSON_AddStringToObject(x, "text", has_about ? text : rng);   /* as every view prints it */
}

cJSON *ia_figures_json(const struct ia_analysis *a)
{
	const struct ia_figures *f = &a->fig;
	char buf[1024];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "trace_line", ia_headline_trace(a, buf, sizeof buf));
	cJSON_AddStringToObject(o, "headline", ia_headline_idle(a, buf, sizeof buf));
	cJSON_AddStringToObject(o, "window_line", ia_headline_window(a, buf, sizeof buf));
	cJSON_AddStringToObject(o, "steps_line", ia_headline_steps(a, buf, sizeof buf));
	cJSON_AddStringToObject(o, "basis", f->measured ? "measured" : "host_estimate");
	ia_json_u64(o, "traced_ns", f->traced_ns);
	ia_json_u64(o, "window_ns", f->window_ns);
	ia_json_u64(o, "steady_ns", f->steady_ns);
	pct3(o, "gpu_idle_steady_pct", f->have && f->steady_ns, f->steady_low, f->steady_high, f->has_steady_about,
	     f->steady_about);
	pct3(o, "gpu_idle_window_pct", f->have, f->window_low, f->window_high, f->has_window_about, f->window_about);
	cJSON *ph = cJSON_AddObjectToObject(o, "phases_ns");
	for (int p = 0; p < IA_PHASE_N; p++)
		if (f->phase_ns[p] || p == IA_PHASE_STEADY)
			ia_json_u64(ph, ia_phase_name((enum ia_phase)p), f->phase_ns[p]);
	cJSON *g = cJSON_AddObjectToObject(o, "steady_gaps");
	ia_json_u64(g, "count", f->ngaps);
	ia_json_u64(g, "total_ns", f->gaps_ns);
	if (f->main_known && f->steady_ns) {
		cJSON *m = cJSON_AddObjectToObject(o, "main_thread_steady_ns");
		for (int p = 0; p < IA_MAIN_N; p++)
			ia_json_u64(m, ia_main_part_key((enum ia_main_part)p), f->main_ns[p]);
	} else {
		cJSON_AddNullToObject(o, "main_thread_steady_ns");
	}
	cJSON *s = cJSON_AddObjectToObject(o, "step");
	ia_json_u64(s, "ns", f->step_ns);
	ia_json_u64(s, "calls", f->step_calls);
	return o;
}
