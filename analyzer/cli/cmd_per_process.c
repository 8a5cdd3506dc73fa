/*
 * cmd_per_process.c — `ingero-analyze per-process`: the process tree with
 * roles and host evidence (per_process.h), under the headline every view
 * opens with (render/headline.h), as tables or --json.
 */
#include "base/json_out.h"
#include "load/trace_status.h"
#include "base/util.h"
#include "base/wrap.h"
#include "cli/cli.h"
#include "render/display.h"
#include "render/headline.h"
#include "render/processes.h"
#include "rules/analysis.h"

static void print_text(FILE *f, const struct ia_analysis *a, int verbose, int width)
{
	const struct ia_trace *t = a->t;
	const struct ia_per_process *pp = &a->pp;
	char d1[32], d2[32];
	ia_headline_print(f, a, 0, verbose);
	ia_processes_print(f, t, pp, 1, width);
	if (pp->main >= 0 && pp->main_thread != UINT32_MAX) {
		fprintf(f, "\nMain thread: pid %d, thread %u; blocked %s over the %s traced", t->procs[pp->p[pp->main].proc].pid,
			t->threads[pp->main_thread].tid, ia_fmt_dur(d1, sizeof d1, pp->main_blocked_ns),
			ia_fmt_dur(d2, sizeof d2, a->fig.traced_ns));
		if (a->fig.main_known && a->fig.steady_ns)
			fprintf(f, ", %s of it in the steady state's gaps (explain)",
				ia_fmt_dur(d1, sizeof d1, a->fig.main_ns[IA_MAIN_GAP_BLOCKED]));
		fprintf(f, ".\n");
	}
}

int ia_cmd_per_process(const struct ia_cli *c)
{
	struct ia_trace t;
	struct ia_analysis a;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL) < 0)
		return IA_EXIT_ERROR;
	if (ia_analyze(&t, &a, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_analysis_free(&a);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	const struct ia_per_process *pp = &a.pp;
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
	} else {
		if (c->json) {
			cJSON *root = cJSON_CreateObject();
			cJSON_AddItemToObject(root, "processes", ia_per_process_json(&t, pp));
			if (pp->main >= 0)
				cJSON_AddNumberToObject(root, "main_pid", t.procs[pp->p[pp->main].proc].pid);
			if (pp->main_thread != UINT32_MAX)
				cJSON_AddNumberToObject(root, "main_tid", t.threads[pp->main_thread].tid);
			ia_json_u64(root, "main_blocked_ns", pp->main_blocked_ns);
			ia_trace_status_json(root, &t);
			cJSON_AddItemToObject(root, "figures", ia_figures_json(&a));
			if (ia_json_print(root, f, c->pretty) < 0)
				rc = IA_EXIT_ERROR;
			cJSON_Delete(root);
		} else {
			struct ia_wrap *w = ia_wrap_begin();
			print_text(w ? ia_wrap_file(w) : f, &a, c->verbose, ia_width_for(f));
			if (w && ia_display_write(f, w, ia_width_for(f), NULL) < 0)
				rc = IA_EXIT_ERROR;
		}
		if (ia_cli_close_output(c, f) < 0)
			rc = IA_EXIT_ERROR;
	}
	ia_analysis_free(&a);
	ia_cli_unload(&t);
	return rc;
}
