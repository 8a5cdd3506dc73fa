/*
 * cmd_explain.c — `ingero-analyze explain` (the default): the analysis of
 * chains.h printed for a person, or --json (explain.c's contract).
 */
#include "render/explain_json.h"
#include "render/job_render.h"
#include "rules/analysis.h"
#include "base/progress.h"
#include "rules/chains.h"
#include "cli/cli.h"
#include "render/finding.h"
#include "render/display.h"
#include "render/headline.h"
#include "render/processes.h"
#include "render/step_breakdown.h"
#include "render/nvtx.h"
#include "base/wrap.h"
#include "base/json_out.h"
#include "base/util.h"
#include "rules/verdict.h"

#include <stdlib.h>
#include <string.h>

void ia_explain_print(FILE *f, const struct ia_analysis *a, int verbose, int width)
{
	ia_headline_print(f, a, 1, verbose);
	if (a->pp.main < 0)
		return;

	struct ia_verdict v;
	ia_verdict_compute(a, &v);
	if (v.state != IA_VERDICT_NONE)
		fprintf(f, "\n%s\n", v.text);
	ia_nvtx_print_home(f, a);
	ia_step_breakdown_print(f, a);
	if (!a->nchains)
		fprintf(f, "\nNo causal chain: no starvation pattern passed its threshold (docs/chains.md).\n");
	for (size_t i = 0; i < a->nchains; i++)
		ia_finding_print(f, &a->chains[i]);
	ia_nvtx_print(f, a, verbose);

	ia_processes_print(f, a->t, &a->pp, 0, width);
}

int ia_explain_write(const struct ia_cli *c, struct ia_analysis *a)
{
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f)
		return IA_EXIT_ERROR;
	if (c->json) {
		cJSON *root = ia_job_explain_json(a);
		if (!root || ia_json_print(root, f, c->pretty) < 0)
			rc = IA_EXIT_ERROR;
		cJSON_Delete(root);
	} else {
		/* a job of several ranks: its ranks first, then the straggler's own analysis */
		struct ia_wrap *w = ia_wrap_begin();
		FILE *out = w ? ia_wrap_file(w) : f;
		if (a->job)
			ia_job_print(out, a->t, a->job);
		if (a->job && a->job->has_sub)
			fprintf(out, "\nRank %d on its own (pid %d and its children):\n",
				a->job->coll.r[a->job->straggler].rank, a->job->sub.procs[a->job->sub_a.pp.main >= 0 ?
				a->job->sub_a.pp.p[a->job->sub_a.pp.main].proc : 0].pid);
		const struct ia_analysis *shown = ia_job_shown(a);
		ia_explain_print(out, shown, c->verbose, ia_width_for(f));
		char *dir = c->verbose ? NULL : ia_display_user_dir_of(shown);
		if (w && ia_display_write(f, w, ia_width_for(f), dir) < 0)
			rc = IA_EXIT_ERROR;
		free(dir);
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	ia_phase("print");
	ia_progress_end();
	return rc;
}

int ia_cmd_explain(const struct ia_cli *c)
{
	if (ia_cli_nodes_wanted(c))
		return c->nalso ? ia_cli_no_also(c) : ia_cmd_explain_nodes(c);
	return ia_cli_views(c, ia_explain_write);
}
