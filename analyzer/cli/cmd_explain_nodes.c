/*
 * cmd_explain_nodes.c — `ingero-analyze explain A.db B.db ...`: several
 * report.db, one a node of the same job, read as one job (and a merged
 * file, `explain JOB.db`, as the nodes it holds).
 *
 * The files are loaded and put on node 0's timeline in rules/nodes.c (the
 * clock anchors, refined by the NCCL collectives: what remains is said);
 * export of several files (cmd_export.c) and the MCP server of several
 * (mcp/mcp_nodes.c) read them the same way.  The
 * job's analysis across the ranks is the one of a single trace
 * (rules/chain_straggler.h), and the straggler's own cause
 * the analysis of its node's file with -p its pid.  A window (--from,
 * --to, --since) or -p is per file and refused (nodes.c).
 */
#include "cli/cli.h"

#include "base/json_out.h"
#include "base/util.h"
#include "base/wrap.h"
#include "render/display.h"
#include "render/explain_json.h"
#include "render/finding.h"
#include "render/job_render.h"
#include "rules/analysis.h"
#include "rules/chain_straggler.h"
#include "rules/nodes.h"

#include <stdio.h>

static void print_nodes(FILE *f, const struct ia_node *nd, size_t nn, const struct ia_job *j)
{
	char d1[32], d2[32], d3[32];
	fprintf(f, "Nodes: %zu traces of one job, on node 0's clock:\n", nn);
	for (size_t i = 0; i < nn; i++) {
		fprintf(f, "  node %zu: %s%s%s (host %s%s%s)", i, nd[i].path, nd[i].merged ? " in " : "",
			nd[i].merged ? nd[i].merged : "", nd[i].host ? nd[i].host : "?", nd[i].boot ? ", boot " : "",
			nd[i].boot ? nd[i].boot : "");
		if (i == 0) {
			fprintf(f, ": the reference\n");
			continue;
		}
		int64_t off = nd[i].anchor - nd[0].anchor, corr = j->fit[i].correction_ns;
		fprintf(f, ": %s%s by the clock anchors", off < 0 ? "-" : "+",
			ia_fmt_dur(d1, sizeof d1, (uint64_t)(off < 0 ? -off : off)));
		if (nd[i].anchor_unc && nd[0].anchor_unc)
			fprintf(f, " (each read to %s)", ia_fmt_dur(d2, sizeof d2, nd[i].anchor_unc > nd[0].anchor_unc
									      ? nd[i].anchor_unc : nd[0].anchor_unc));
		if (j->fit[i].used) {
			char d4[32];
			int64_t net = off + corr;
			fprintf(f, ", then %s%s by %zu collectives' completions (net %s%s): remaining uncertainty ±%s\n",
				corr < 0 ? "-" : "+", ia_fmt_dur(d2, sizeof d2, (uint64_t)(corr < 0 ? -corr : corr)),
				j->fit[i].used, net < 0 ? "-" : "+", ia_fmt_dur(d4, sizeof d4, (uint64_t)(net < 0 ? -net : net)),
				ia_fmt_dur(d3, sizeof d3, j->fit[i].uncertainty_ns));
		}
		else
			fprintf(f, "; no collective of both to refine it: the anchors' agreement (NTP's) is all there is\n");
	}
}

static int output(const struct ia_cli *c, const struct ia_nodes *ns)
{
	const struct ia_node *nd = ns->nd;
	size_t nn = ns->nn;
	const struct ia_job *j = ns->job;
	FILE *f = ia_cli_output(c, NULL);
	if (!f)
		return IA_EXIT_ERROR;
	int rc = IA_EXIT_OK;
	if (c->json) {
		cJSON *root;
		if (j->has_sub) {
			root = ia_explain_json(&j->sub_a);
			cJSON_InsertItemInArray(cJSON_GetObjectItem(root, "chains"), 0, ia_finding_json(&j->sub_a, &j->chain));
		} else {
			root = cJSON_CreateObject();
			cJSON_AddArrayToObject(root, "chains");
		}
		cJSON *rj = ia_job_json(&nd[0].t, j);
		if (rj)
			cJSON_AddItemToObject(root, "ranks", rj);
		cJSON_AddItemToObject(root, "nodes", ia_nodes_json(ns));
		if (ia_json_print(root, f, c->pretty) < 0)
			rc = IA_EXIT_ERROR;
		cJSON_Delete(root);
	} else {
		struct ia_wrap *w = ia_wrap_begin();
		FILE *out = w ? ia_wrap_file(w) : f;
		print_nodes(out, nd, nn, j);
		ia_job_print(out, &nd[0].t, j);
		if (j->has_sub) {
			const struct ia_coll_rank *s = &j->coll.r[j->straggler];
			fprintf(out, "\nRank %d on its own (node %d, %s: pid %d and its children):\n", s->rank, s->node,
				nd[s->node].path, s->trace->procs[s->proc].pid);
			ia_explain_print(out, &j->sub_a, c->verbose, ia_width_for(f));
		} else {
			fprintf(out, "\nEach node's own analysis: ingero-analyze explain FILE (one file).\n");
		}
		if (w && ia_display_write(f, w, ia_width_for(f), NULL) < 0)
			rc = IA_EXIT_ERROR;
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	return rc;
}

int ia_cmd_explain_nodes(const struct ia_cli *c)
{
	struct ia_nodes ns;
	int rc = ia_cli_load_nodes(c, &ns, IA_NODES_CAUSE);
	if (rc == IA_EXIT_OK)
		rc = output(c, &ns);
	ia_nodes_free(&ns);
	return rc;
}
