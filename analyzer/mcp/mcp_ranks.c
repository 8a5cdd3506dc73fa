/*
 * mcp_ranks.c — the get_ranks tool: a job of several ranks across them —
 * the ranks and the agent, when each rank arrived at the collectives, how
 * often each came last and how long the others waited, and the straggler
 * with its own cause — explain's job analysis (rules/chain_straggler.h),
 * the same figures as explain --json's "ranks" and its rank_straggler chain.
 * Several report.db served, one a node: without "node" the job across
 * them (mcp_nodes.c, the same as explain A.db B.db ...), with it that
 * node's file alone, as here.
 */
#include "mcp/mcp_internal.h"

#include "render/finding.h"
#include "rules/chain_straggler.h"

#include <stdio.h>

void mcp_ranks_summary(char *sum, size_t n, const struct ia_job *j, size_t nranks, size_t nnodes)
{
	char where[64] = "", node[32] = "";
	if (nnodes > 1) {
		snprintf(where, sizeof where, " on %zu nodes", nnodes);
		if (j->straggler >= 0)
			snprintf(node, sizeof node, " (node %d)", j->coll.r[j->straggler].node);
	}
	char why[400];
	if (j->straggler >= 0)
		snprintf(sum, n, "get_ranks: %zu ranks%s; the straggler is rank %d%s: %s. Its own cause: %s. arrivals: "
			 "per rank, collectives it came last at, mean lateness, its wait for the last rank.",
			 nranks, where, j->coll.r[j->straggler].rank, node, j->chain.summary,
			 ia_job_cause_summary(j, why, sizeof why));
	else if (j->coll.n) {
		char b[600];
		ia_job_balance_sentence(j, b, sizeof b);
		snprintf(sum, n, "get_ranks: %zu ranks%s. %s arrivals: per rank, collectives it came last at, mean "
			 "lateness, its wait.", nranks, where, b);
	}
	else
		snprintf(sum, n, "get_ranks: %zu ranks%s; their collectives could not be timed (no NCCL calls of "
			 "every rank, no gloo all-reduce of CUDA tensors).", nranks, where);
}

cJSON *mcp_tool_ranks(struct mcp_server *s, const cJSON *args)
{
	if (s->nfiles > 1 && !cJSON_GetObjectItemCaseSensitive(args, "node"))
		return mcp_job_ranks(s, args);
	cJSON *fail = NULL;
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	const struct ia_analysis *an = &v->an;
	const struct ia_job *j = an->job;
	cJSON *data = j ? ia_job_json(&v->t, j) : NULL;
	if (!data) {
		data = cJSON_CreateObject();
		cJSON_AddArrayToObject(data, "ranks");
		cJSON_AddNullToObject(data, "straggler");
		return mcp_result_data("get_ranks: no job of several ranks in this selection (no launcher variables such "
				       "as RANK in its processes' environments, schema version 7, or a -p/pid selection of "
				       "one rank).", data);
	}
	if (j->has_chain)
		cJSON_AddItemToObject(data, "finding", ia_finding_json(&j->sub_a, &j->chain));
	char sum[1024];
	mcp_ranks_summary(sum, sizeof sum, j, j->ranks.nranks, 1);
	return mcp_result_data(sum, data);
}
