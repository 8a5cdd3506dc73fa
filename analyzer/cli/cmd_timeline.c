/*
 * cmd_timeline.c — `ingero-analyze timeline [--from T] [--to T]`: the
 * events of a window in time order (timeline.h), one line each, or --json.
 * Without a window, the text shows the steady state's first steps (the
 * analysis finds them) and says where the phases are; a window with no
 * events says where the trace's events are.
 */
#include "load/trace_status.h"
#include "cli/cli.h"
#include "base/json_out.h"
#include "load/timeline.h"
#include "base/progress.h"
#include "base/util.h"
#include "base/wrap.h"
#include "render/display.h"
#include "rules/analysis.h"

#include <stdlib.h>
#include <unistd.h>

#include <string.h>

static int print_event(const struct ia_tl_event *e, void *ctx)
{
	FILE *f = ctx;
	char d1[32], d2[32], b1[32];
	if (e->is_call) {
		fprintf(f, "+%.6fs %6d/%-6u %-12.12s CUDA %-22.22s %8s", (double)e->ts_rel / 1e9, e->pid, e->tid, e->comm,
			e->api_name, ia_fmt_dur(d1, sizeof d1, e->dur));
		if (e->copy)
			fprintf(f, " %s %s %s %.2f GB/s", ia_fmt_bytes(b1, sizeof b1, e->bytes), ia_tl_dir_name(e->dir),
				ia_tl_memory(e->flags), e->dur ? (double)e->bytes / (double)e->dur : 0);
		if (e->python)
			fprintf(f, "  [%s]", e->python);
	} else {
		fprintf(f, "+%.6fs %6d/%-6u %-12.12s OFF  %-22.22s %8s  waited for a CPU %s", (double)e->ts_rel / 1e9, e->pid,
			e->tid, e->comm, e->reason, ia_fmt_dur(d1, sizeof d1, e->dur), ia_fmt_dur(d2, sizeof d2, e->runq));
		if (e->next_pid)
			fprintf(f, "; CPU to pid %d", e->next_pid);
		if (e->syscall)
			fprintf(f, "; in %s", e->syscall);
		if (e->blocked_at)
			fprintf(f, " at %s", e->blocked_at);
	}
	fputc('\n', f);
	return 0;
}

struct both { FILE *f; long n; };

static int print_and_count(const struct ia_tl_event *e, void *ctx)
{
	struct both *b = ctx;
	b->n++;
	return print_event(e, b->f);
}

#define FIRST_STEPS 3   /* steps shown when no window is asked for */

/* Where the phases are, in one line: "start-up +4.10s to +10.0s,
 * steady state +10.0s to +12.6s"; the trace's span when it has none. */
static void phases_line(FILE *f, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_phases *ph = &a->ph;
	fprintf(f, "Phases:");
	size_t said = 0, nep = 0;
	for (size_t i = 0; i < ph->nep; i++)
		nep += ph->ep[i].phase != IA_PHASE_STEADY && ph->ep[i].end > a->gaps.win_start;
	for (size_t i = 0; i < ph->nep && said < 6; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase == IA_PHASE_STEADY || e->end <= a->gaps.win_start)
			continue;
		fprintf(f, "%s %s +%.3fs to +%.3fs", said ? "," : "", ia_phase_title(e->phase),
			(double)(e->start > t->t0 ? e->start - t->t0 : 0) / 1e9, (double)(e->end - t->t0) / 1e9);
		said++;
	}
	if (nep > said)
		fprintf(f, " (and %zu more)", nep - said);
	size_t nw = 0;
	uint64_t *w = ia_phases_steady_windows(ph, a->gaps.win_start, a->gaps.win_end, &nw);
	if (nw)
		fprintf(f, "%s steady state +%.3fs to +%.3fs%s", said ? ";" : "", (double)(w[0] - t->t0) / 1e9,
			(double)(w[2 * nw - 1] - t->t0) / 1e9, nw > 1 ? " (between the phases)" : "");
	else if (!said)
		fprintf(f, " none found");
	free(w);
	fputc('\n', f);
}

/* The default window: the steady state's first steps (from the first
 * timed step, else the steady state's start, else the first GPU work).
 * Sets from and to (since the trace start); 0 when there is nothing to show. */
static int default_window(const struct ia_analysis *a, uint64_t *from, uint64_t *to)
{
	const struct ia_trace *t = a->t;
	const struct ia_step_times *st = &a->step_times;
	uint64_t start = 0, len = 0;
	if (st->n) {
		size_t k = st->n < FIRST_STEPS ? st->n : FIRST_STEPS;
		start = st->start[0];
		len = st->start[k - 1] + st->ns[k - 1] - start;
	} else {
		size_t nw = 0;
		uint64_t *w = ia_phases_steady_windows(&a->ph, a->gaps.win_start, a->gaps.win_end, &nw);
		start = nw ? w[0] : a->gaps.win_start;
		uint64_t end = nw ? w[1] : a->gaps.win_end;
		free(w);
		len = a->ph.steps.ns ? FIRST_STEPS * a->ph.steps.ns : 100000000ull;   /* else 100 ms */
		if (start + len > end && end > start)
			len = end - start;
	}
	if (!len || start < t->t0)
		return 0;
	*from = start - t->t0;
	*to = *from + len;
	return 1;
}

/* Where the events are, for a window that holds none. */
static void hint(FILE *f, const struct ia_trace *whole, const struct ia_analysis *a)
{
	uint64_t t0 = whole->t0;
	fprintf(f, "(no events in this window; the trace's run from +%.3fs to +%.3fs", (double)(whole->first_ns - t0) / 1e9,
		(double)(whole->last_ns - t0) / 1e9);
	if (a && a->fig.have)
		fprintf(f, ", its GPU work from +%.3fs to +%.3fs", (double)(a->gaps.win_start - t0) / 1e9,
			(double)(a->gaps.win_end - t0) / 1e9);
	fprintf(f, "; without --from/--to: the steady state's first steps)\n");
}

int ia_cmd_timeline(const struct ia_cli *c)
{
	struct ia_trace t, whole;
	struct ia_analysis a;
	char err[512];
	/* a window, or --limit (0: every event), is asked for: no default window */
	int asked = c->filter.has_from || c->filter.has_to || c->filter.has_since || c->limit_given;
	int analysed = 0, have_whole = 0;
	struct ia_cli w = *c;
	/* text: with no window asked for, the steady state's first steps, found
	 * by the analysis of the whole trace (--json keeps its window: a
	 * program asks for one) */
	struct ia_cli all = *c;
	memset(&all.filter, 0, sizeof all.filter);
	all.filter.pid = c->filter.pid;
	if (!c->json && !asked) {
		if (ia_cli_load(&all, &whole, IA_LOAD_ALL | IA_LOAD_CHECK_LATE) < 0)
			return IA_EXIT_ERROR;
		have_whole = 1;
		if (ia_analyze(&whole, &a, err, sizeof err) < 0) {
			ia_err("%s", err);
			ia_analysis_free(&a);
			ia_cli_unload(&whole);
			return IA_EXIT_ERROR;
		}
		analysed = 1;
		ia_progress_end();
		if (!asked && default_window(&a, &w.filter.from_rel, &w.filter.to_rel))
			w.filter.has_from = w.filter.has_to = 1;
	}
	int rc = IA_EXIT_OK;
	if (ia_cli_load(&w, &t, 0) < 0) {
		rc = IA_EXIT_ERROR;
		goto done;
	}
	FILE *out = ia_cli_output(c, NULL);
	if (!out) {
		ia_cli_unload(&t);
		rc = IA_EXIT_ERROR;
		goto done;
	}
	/* one line an event into a file or a pipe (grep, sort); fitted to a
	 * terminal, or to --width */
	int fit = !c->json && (isatty(fileno(out)) || ia_width_given());
	struct ia_wrap *wr = fit ? ia_wrap_begin() : NULL;
	FILE *f = wr ? ia_wrap_file(wr) : out;
	if (c->json) {
		cJSON *root = ia_timeline_json(&t, c->limit, err, sizeof err);
		if (!root) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
		} else if (ia_json_print(root, f, c->pretty) < 0) {
			rc = IA_EXIT_ERROR;
		}
		cJSON_Delete(root);
	} else {
		if (!asked && w.filter.has_from)
			fprintf(f, "The steady state's first steps: --from %.6fs --to %.6fs (give --from/--to for another "
				   "window, --limit 0 for every event)\n", (double)w.filter.from_rel / 1e9,
				(double)w.filter.to_rel / 1e9);
		if (!asked && analysed)
			phases_line(f, &a);
		struct both b = { f, 0 };
		int more;
		ia_trace_status_print(f, &t);
		if (ia_timeline_walk(&t, c->limit, print_and_count, &b, &more, err, sizeof err) < 0) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
		} else if (more) {
			fprintf(f, "... more events follow (--limit 0 shows all, --from/--to narrow the window)\n");
		} else if (!b.n) {
			/* where the events are: the whole trace's span (its small
			 * tables say it) */
			if (!have_whole && ia_cli_load(&all, &whole, 0) == 0)
				have_whole = 1;
			hint(f, have_whole ? &whole : &t, analysed ? &a : NULL);
		}
	}
	char *dir = analysed && !c->verbose ? ia_display_user_dir_of(&a) : NULL;
	if (wr && ia_display_write(out, wr, ia_width_for(out), dir) < 0)
		rc = IA_EXIT_ERROR;
	free(dir);
	if (ia_cli_close_output(c, out) < 0)
		rc = IA_EXIT_ERROR;
	ia_cli_unload(&t);
done:
	if (analysed)
		ia_analysis_free(&a);
	if (have_whole)
		ia_cli_unload(&whole);
	return rc;
}
