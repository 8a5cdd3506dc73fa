/*
 * job_render.c — a job of several ranks in explain's text and --json
 * (job_render.h).  The straggler's own analysis is rendered by the same
 * code as any trace's; this file only puts the job's part before it.
 */
#include "render/job_render.h"

#include "base/json_out.h"
#include "base/util.h"
#include "render/explain_json.h"
#include "render/finding.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void ia_job_print(FILE *f, const struct ia_trace *t, const struct ia_job *j)
{
	const struct ia_ranks *rk = &j->ranks;
	const struct ia_collectives *c = &j->coll;
	char d1[32], d2[32];
	if (j->nnodes > 1)
		fprintf(f, "Job: %zu ranks on %zu nodes", c->nranks, j->nnodes);
	else
		fprintf(f, "Job: %zu ranks", rk->nranks);
	if (rk->world_size >= 0)
		fprintf(f, " of world size %d", rk->world_size);
	if (rk->run_id[0])
		fprintf(f, " (run id %s)", rk->run_id);
	if (rk->agent >= 0)
		fprintf(f, ", %s pid %d (%s)", rk->inferred ? "started by" : "agent", t->procs[rk->agent].pid,
			t->procs[rk->agent].comm);
	if (rk->inferred)
		fprintf(f, " (no RANK variables, as under torch.multiprocessing.spawn: the ranks told by their "
			   "collectives, numbered by %s)", rk->inferred);
	if (!c->n) {
		fprintf(f, ". Their collectives could not be timed: no NCCL collective of every rank in the trace, and no "
			   "gloo all-reduce of CUDA tensors seen (docs/chains.md, rank_straggler).\n");
		return;
	}
	fprintf(f, "; %zu %s calls matched across all of them (%s)\n", c->n, c->op, ia_coll_source_name(c->source));
	if (c->comm_nranks > (int)c->nranks)
		fprintf(f, "These are %zu of the communicator's %d ranks: the others are in other traces (other nodes) — "
			   "give every node's report.db at once (ingero-analyze explain A.db B.db ...) to see them all.\n",
			c->nranks, c->comm_nranks);
	for (size_t k = 0; k < c->nranks; k++) {
		const struct ia_coll_rank *r = &c->r[k];
		uint64_t span = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
		if (j->nnodes > 1)
			fprintf(f, "  node %d", r->node);
		fprintf(f, "  rank %-3d pid %-7d last at %llu of %zu", r->rank, r->trace->procs[r->proc].pid,
			(unsigned long long)r->last_count, c->n);
		if (r->last_count)
			fprintf(f, " (%s after the others' median)", ia_fmt_dur(d1, sizeof d1, r->late_ns / r->last_count));
		fprintf(f, ", waited %s for the last rank (%.0f%% of its time)\n", ia_fmt_dur(d2, sizeof d2, r->wait_ns),
			pct(r->wait_ns, span));
	}
	if (j->straggler < 0 && c->comm_nranks > (int)c->nranks)
		return;   /* (no verdict on ranks that are not all here) */
	if (j->straggler < 0) {
		char b[600];
		ia_job_balance_sentence(j, b, sizeof b);
		fprintf(f, "%s\n", b);
		return;
	}
	if (j->has_chain)
		ia_finding_print(f, &j->chain);
}

const struct ia_analysis *ia_job_shown(const struct ia_analysis *a)
{
	return a->job && a->job->has_sub ? &a->job->sub_a : a;
}

cJSON *ia_job_explain_json(const struct ia_analysis *a)
{
	const struct ia_analysis *shown = ia_job_shown(a);
	cJSON *root = ia_explain_json(shown);
	if (!root || !a->job)
		return root;
	const struct ia_job *j = a->job;
	if (j->has_chain) {
		cJSON *chains = cJSON_GetObjectItem(root, "chains");
		cJSON_InsertItemInArray(chains, 0, ia_finding_json(shown, &j->chain));
		cJSON *sev = cJSON_GetObjectItem(root, "severity_counts");
		cJSON *n = sev ? cJSON_GetObjectItem(sev, ia_severity_name(j->chain.sev)) : NULL;
		if (n)
			cJSON_SetNumberValue(n, n->valuedouble + 1);
	}
	cJSON *rj = ia_job_json(a->t, j);
	if (rj)
		cJSON_AddItemToObject(root, "ranks", rj);
	return root;
}
