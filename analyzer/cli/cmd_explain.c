/*
 * cmd_explain.c — `ingero-analyze explain` (the default): the analysis of
 * chains.h printed for a person, or --json (explain.c's contract).
 */
#include "load/trace_status.h"
#include "render/explain_json.h"
#include "rules/analysis.h"
#include "base/progress.h"
#include "rules/chains.h"
#include "cli/cli.h"
#include "render/finding.h"
#include "base/json_out.h"
#include "base/util.h"
#include "rules/verdict.h"

#include <string.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_text(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	char d1[32], d2[32], d3[32], n1[32];
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	char lim[64] = "";
	if (t->cpu_limit > 0)
		snprintf(lim, sizeof lim, ", %.2f of them allowed by a CPU quota", t->cpu_limit);
	fprintf(f, "Trace: %s (%s of CUDA activity, %d CPUs%s%s%s)\n", t->command ? t->command : "(no command recorded)",
		ia_fmt_dur(d1, sizeof d1, win), a->ev.ncpus, lim, t->gpu ? ", " : "", t->gpu ? t->gpu : "");
	ia_trace_status_print(f, t);
	if (t->nlosses) {   /* what is below counts only what arrived */
		fprintf(f, "Lost while tracing (docs/schema.md, losses):");
		for (size_t i = 0; i < t->nlosses; i++)
			fprintf(f, "%s %s %s", i ? "," : "", t->losses[i].source,
				ia_fmt_count(n1, sizeof n1, t->losses[i].count));
		fprintf(f, "\n");
	}
	ia_capture_print(f, &t->capture, t->t0);
	if (win)   /* shares are of the recorded part of the window (less the time between capture windows) */
		win = a->idle.window_ns;
	const char *pyf = ia_session(t, "python_frames");
	if (pyf && !strncmp(pyf, "off", 3))   /* which Python code ran is then not known */
		fprintf(f, "On-CPU samples have native frames only (Python frames %s).\n", pyf);
	if (a->pp.main < 0) {
		fprintf(f, "No CUDA calls and no traced process in this trace: nothing to explain.\n");
		return;
	}
	const struct ia_idle *i = &a->idle;
	if (!win) {
		fprintf(f, "No CUDA work queued by the selected processes in this window: no GPU idle estimate.\n");
	} else {
		char rng[32], rng2[64];
		fprintf(f, "GPU idle (%s): %s of the window", ia_idle_basis(g),
			ia_fmt_pct_range(rng, sizeof rng, pct(i->low_ns, win), pct(i->high_ns, win)));
		int about = 0;
		if (i->steady_ns < win && i->steady_ns) {
			fprintf(f, "; %s of the steady state", ia_idle_fmt_steady(i, rng2, sizeof rng2));
			about = ia_idle_about(i, 1);
		} else if ((about = ia_idle_about(i, 0))) {
			fprintf(f, " (about %.0f%%)", pct(i->est_ns[1], win));
		}
		if (about)
			fprintf(f, " (about: estimated from %zu kernels and copies timed alone on the GPU)", i->ntimed);
		if (g->gpu.nunmarked)
			fprintf(f, " (%zu of %zu streams with work could not be marked: left out)", g->gpu.nunmarked,
				g->gpu.nstreams);
		fprintf(f, "\n");
	}
	if (win && i->steady_ns < win) {   /* one-time phases in the window: said before any chain */
		fprintf(f, "Phases:");
		for (int p = 1; p < IA_PHASE_N; p++)
			if (i->phase_ns[p] && p != IA_PHASE_PAUSED)   /* (the capture line says that one) */
				fprintf(f, " %s %s (%.0f%%),", ia_phase_title((enum ia_phase)p),
					ia_fmt_dur(d1, sizeof d1, i->phase_ns[p]), pct(i->phase_ns[p], win));
		fprintf(f, " steady state %s (%.0f%%", ia_fmt_dur(d1, sizeof d1, i->steady_ns), pct(i->steady_ns, win));
		if (a->ph.steps.calls && a->ph.steps.ns)
			fprintf(f, "; a step every %s, %u calls", ia_fmt_dur(d2, sizeof d2, a->ph.steps.ns), a->ph.steps.calls);
		fprintf(f, ")\n");
	}
	if (win)
		fprintf(f, "Main thread's time: ");
	struct { const char *name; uint64_t ns; } parts[] = {
		{ "host busy (no GPU work queued)", g->main_oncpu_ns },
		{ a->pp.nworkers ? "waiting on workers/blocked" : "blocked", g->main_blocked_ns },
		{ "preempted", g->main_runq_ns },
		{ "in syncs", g->in_sync_ns },
		{ "in copies", g->in_copy_ns },
		{ "in launches", g->in_launch_ns },
		{ "other CUDA", g->in_other_ns },
		{ "host work while GPU had work", g->queued_host_ns },
	};
	int first = 1;
	for (size_t i = 0; win && i < sizeof parts / sizeof parts[0]; i++) {
		if (pct(parts[i].ns, win) < 0.5)
			continue;
		fprintf(f, "%s%s %.0f%%", first ? "" : " | ", parts[i].name, pct(parts[i].ns, win));
		first = 0;
	}
	if (win)
		fprintf(f, "%s\n", first ? "-" : "");

	struct ia_verdict v;
	ia_verdict_compute(a, &v);
	if (v.state != IA_VERDICT_NONE)
		fprintf(f, "\n%s\n", v.text);
	if (!a->nchains)
		fprintf(f, "\nNo causal chain: no starvation pattern passed its threshold (docs/chains.md).\n");
	for (size_t i = 0; i < a->nchains; i++)
		ia_finding_print(f, &a->chains[i]);

	fprintf(f, "\nProcesses:\n");
	for (size_t i = 0; i < a->pp.n; i++) {
		const struct ia_proc_stats *s = &a->pp.p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		fprintf(f, "  %*s%-7s pid %-7d %-16s CUDA calls %-9s CPU %-8s switches %-8s off-CPU %-8s",
			s->depth * 2 > 8 ? 8 : s->depth * 2, "", ia_role_name(s->role), p->pid, p->comm,
			ia_fmt_count(n1, sizeof n1, p->ncalls), ia_fmt_dur(d1, sizeof d1, s->cpu_ns),
			ia_fmt_count(d2, sizeof d2, s->context_switches), ia_fmt_dur(d3, sizeof d3, s->off_cpu_ns));
		if (s->nthreads > 1)   /* off-CPU adds up every thread: say how many */
			fprintf(f, " (%u threads)", s->nthreads);
		if (s->role == IA_ROLE_WORKER && a->pp.main_blocked_ns)
			fprintf(f, " share of main's waiting %.0f%%", 100 * s->main_wait_share);
		fprintf(f, "\n");
	}
}

int ia_cmd_explain(const struct ia_cli *c)
{
	struct ia_trace t;
	struct ia_analysis a;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL) < 0)
		return IA_EXIT_ERROR;
	int rc = IA_EXIT_OK;
	if (ia_analyze(&t, &a, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_analysis_free(&a);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
	} else {
		if (c->json) {
			cJSON *root = ia_explain_json(&a);
			if (!root || ia_json_print(root, f, c->pretty) < 0)
				rc = IA_EXIT_ERROR;
			cJSON_Delete(root);
		} else {
			print_text(f, &a);
		}
		if (ia_cli_close_output(c, f) < 0)
			rc = IA_EXIT_ERROR;
	}
	ia_phase("print");
	ia_progress_end();
	ia_analysis_free(&a);
	ia_cli_unload(&t);
	return rc;
}
