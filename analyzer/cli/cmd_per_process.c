/*
 * cmd_per_process.c — `ingero-analyze per-process`: the process tree with
 * roles and host evidence (per_process.h), under the headline every view
 * opens with (render/headline.h), as tables or --json.
 */
#include "base/json_out.h"
#include "load/merged.h"
#include "load/trace_status.h"
#include "measure/ranks.h"
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

/* The job's ranks, when the trace has any (ranks.h): who is rank N, its
 * children, the agent.  Nothing for a trace without launcher variables. */
static void print_ranks(FILE *f, const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_ranks *r)
{
	if (!r->nranks)
		return;
	fprintf(f, "\nranks: %zu", r->nranks);
	if (r->world_size >= 0)
		fprintf(f, " of world size %d", r->world_size);
	if (r->run_id[0])
		fprintf(f, ", run id %s", r->run_id);
	if (r->master[0])
		fprintf(f, ", master %s", r->master);
	char who[160];   /* (a merged file's processes by node: load/merged.h) */
	if (r->agent >= 0)
		fprintf(f, "; %s %s (%s)", r->inferred ? "started by" : "agent",
			ia_merged_proc_name(t, t->procs[r->agent].pid, who, sizeof who), t->procs[r->agent].comm);
	if (r->inferred)
		fprintf(f, "; no RANK variables: told by their collectives, numbered by %s", r->inferred);
	fprintf(f, "\n");
	for (size_t k = 0; k < r->nranks; k++) {
		const struct ia_rank *x = &r->r[k];
		fprintf(f, "  rank %d: %s (%s)", x->rank, ia_merged_proc_name(t, t->procs[x->proc].pid, who, sizeof who),
			t->procs[x->proc].comm);
		if (x->local_rank >= 0)
			fprintf(f, ", local rank %d", x->local_rank);
		size_t shown = 0;
		for (size_t i = 0; i < pp->n; i++) {
			uint32_t p = pp->p[i].proc;
			if (r->p[p].role != IA_RANK_CHILD || r->p[p].rank != x->rank)
				continue;
			fprintf(f, "%s%d", shown++ ? ", " : "; its children: ", ia_merged_own_pid(t, t->procs[p].pid));
		}
		fprintf(f, "\n");
	}
}

int ia_per_process_write(const struct ia_cli *c, struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_per_process *pp = &a->pp;
	struct ia_ranks rk;
	char err[512];
	if (ia_ranks_compute(t, &rk, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_ranks_free(&rk);
		return IA_EXIT_ERROR;
	}
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
	} else {
		if (c->json) {
			cJSON *root = cJSON_CreateObject();
			cJSON *procs = ia_per_process_json(t, pp);
			for (size_t i = 0; rk.nranks && i < pp->n; i++)
				ia_ranks_json_proc(&rk, pp->p[i].proc, cJSON_GetArrayItem(procs, (int)i));
			cJSON_AddItemToObject(root, "processes", procs);
			cJSON *rj = ia_ranks_json(t, &rk);
			if (rj)
				cJSON_AddItemToObject(root, "job", rj);
			if (pp->main >= 0)
				cJSON_AddNumberToObject(root, "main_pid", t->procs[pp->p[pp->main].proc].pid);
			if (pp->main_thread != UINT32_MAX)
				cJSON_AddNumberToObject(root, "main_tid", t->threads[pp->main_thread].tid);
			ia_json_u64(root, "main_blocked_ns", pp->main_blocked_ns);
			ia_trace_status_json(root, t);
			cJSON_AddItemToObject(root, "figures", ia_figures_json(a));
			if (ia_json_print(root, f, c->pretty) < 0)
				rc = IA_EXIT_ERROR;
			cJSON_Delete(root);
		} else {
			struct ia_wrap *w = ia_wrap_begin();
			FILE *out = w ? ia_wrap_file(w) : f;
			print_text(out, a, c->verbose, ia_width_for(f));
			print_ranks(out, t, pp, &rk);
			if (w && ia_display_write(f, w, ia_width_for(f), NULL) < 0)
				rc = IA_EXIT_ERROR;
		}
		if (ia_cli_close_output(c, f) < 0)
			rc = IA_EXIT_ERROR;
	}
	ia_ranks_free(&rk);
	return rc;
}

int ia_cmd_per_process(const struct ia_cli *c)
{
	return ia_cli_views(c, ia_per_process_write);
}
