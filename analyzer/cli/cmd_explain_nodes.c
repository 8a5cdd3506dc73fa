/*
 * cmd_explain_nodes.c — `ingero-analyze explain A.db B.db ...`: several
 * report.db, one a node of the same job, read as one job.
 *
 * Each file is loaded whole, as explain loads one.  Its times are its
 * node's CLOCK_MONOTONIC: they go onto node 0's timeline by the clock
 * anchors the collectors stored (session clock_anchor_*: realtime −
 * monotonic of each node, each read to within its stated uncertainty),
 * then the NCCL collectives refine that (a collective completes at nearly
 * the same instant on every rank: measure/collectives.h), and what
 * remains is said.  The job's analysis across the ranks is the one of a
 * single trace (rules/chain_straggler.h), and the straggler's own cause
 * the analysis of its node's file with -p its pid.  A window (--from,
 * --to, --since) or -p is per file and not offered here.
 */
#include "cli/cli.h"

#include "base/json_out.h"
#include "base/util.h"
#include "base/wrap.h"
#include "load/db.h"
#include "render/display.h"
#include "render/explain_json.h"
#include "render/finding.h"
#include "render/job_render.h"
#include "rules/analysis.h"
#include "rules/chain_straggler.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 16

struct node {
	const char *path;
	sqlite3 *db;
	struct ia_trace t;
	struct ia_ranks rk;
	int loaded, ranked;
	int64_t anchor;            /* realtime − monotonic of its clock */
	uint64_t anchor_unc;       /* its anchor's uncertainty, ns; 0 unknown */
	const char *host, *boot;
};

static int64_t session_i64(const struct ia_trace *t, const char *key, int *ok)
{
	const char *v = ia_session(t, key);
	char *end;
	long long x = v ? strtoll(v, &end, 10) : 0;
	*ok = v && *v && !*end;
	return x;
}

/* realtime − monotonic: from the anchor, else from the session's start times (read a moment apart) */
static void anchor_of(struct node *n)
{
	int a, b, u;
	int64_t real = session_i64(&n->t, "clock_anchor_realtime_ns", &a);
	int64_t mono = session_i64(&n->t, "clock_anchor_mono_ns", &b);
	int64_t unc = session_i64(&n->t, "clock_anchor_uncertainty_ns", &u);
	if (a && b) {
		n->anchor = real - mono;
		n->anchor_unc = u && unc > 0 ? (uint64_t)unc : 0;
		return;
	}
	n->anchor = session_i64(&n->t, "start_wall_ns", &a) - session_i64(&n->t, "start_mono_ns", &b);
	n->anchor_unc = 0;
}

static void print_nodes(FILE *f, const struct node *nd, size_t nn, const struct ia_job *j)
{
	char d1[32], d2[32], d3[32];
	fprintf(f, "Nodes: %zu traces of one job, on node 0's clock:\n", nn);
	for (size_t i = 0; i < nn; i++) {
		fprintf(f, "  node %zu: %s (host %s%s%s)", i, nd[i].path, nd[i].host ? nd[i].host : "?",
			nd[i].boot ? ", boot " : "", nd[i].boot ? nd[i].boot : "");
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

static cJSON *nodes_json(const struct node *nd, size_t nn, const struct ia_job *j)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < nn; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "node", (double)i);
		cJSON_AddStringToObject(o, "file", nd[i].path);
		ia_json_str(o, "host", nd[i].host);
		ia_json_str(o, "boot_id", nd[i].boot);
		cJSON_AddNumberToObject(o, "anchor_offset_ns", (double)(nd[i].anchor - nd[0].anchor));
		ia_json_u64(o, "anchor_uncertainty_ns", nd[i].anchor_unc);
		cJSON_AddNumberToObject(o, "correction_ns", (double)j->fit[i].correction_ns);
		ia_json_u64(o, "collectives_used", j->fit[i].used);
		if (i && j->fit[i].used)
			ia_json_u64(o, "uncertainty_ns", j->fit[i].uncertainty_ns);
		else
			cJSON_AddNullToObject(o, "uncertainty_ns");
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static int output(const struct ia_cli *c, struct node *nd, size_t nn, const struct ia_job *j)
{
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
		cJSON_AddItemToObject(root, "nodes", nodes_json(nd, nn, j));
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
	const struct ia_filter *fl = &c->filter;
	if (fl->pid || fl->has_from || fl->has_to || fl->has_since) {
		ia_err("several report.db: no -p, --from, --to or --since (one file's own view: explain FILE)");
		return IA_EXIT_USAGE;
	}
	size_t nn = 1 + (size_t)c->nmore;
	if (nn > MAX_NODES) {
		ia_err("at most %d report.db at a time", MAX_NODES);
		return IA_EXIT_USAGE;
	}
	struct node nd[MAX_NODES];
	struct ia_coll_node cn[MAX_NODES];
	struct ia_filter none;
	char err[512];
	int rc = IA_EXIT_ERROR;
	struct ia_job *j = NULL;
	memset(nd, 0, sizeof nd);
	memset(&none, 0, sizeof none);
	for (size_t i = 0; i < nn; i++) {
		nd[i].path = i ? c->more_db[i - 1] : c->db_path;
		if (!(nd[i].db = ia_db_open(nd[i].path, err, sizeof err))) {
			ia_err("%s", err);
			goto out;
		}
		if (ia_trace_load(&nd[i].t, nd[i].db, &none, IA_LOAD_ALL, err, sizeof err) < 0) {
			ia_err("%s", err);
			ia_trace_free(&nd[i].t);
			goto out;
		}
		nd[i].loaded = 1;
		if (ia_ranks_compute(&nd[i].t, &nd[i].rk, err, sizeof err) < 0) {
			ia_err("%s", err);
			goto out;
		}
		nd[i].ranked = 1;
		anchor_of(&nd[i]);
		nd[i].host = ia_session(&nd[i].t, "host");
		nd[i].boot = ia_session(&nd[i].t, "boot_id");
		cn[i] = (struct ia_coll_node){ &nd[i].t, &nd[i].rk, nd[i].anchor - nd[0].anchor };
	}
	if (ia_job_analyze_nodes(cn, nn, ia_analyze, ia_analysis_free, &j, err, sizeof err) < 0) {
		ia_err("%s", err);
		goto out;
	}
	rc = output(c, nd, nn, j);
out:
	ia_job_free(j);
	for (size_t i = 0; i < nn; i++) {
		if (nd[i].ranked)
			ia_ranks_free(&nd[i].rk);
		if (nd[i].loaded)
			ia_trace_free(&nd[i].t);
		if (nd[i].db)
			ia_db_close(nd[i].db);
	}
	return rc;
}
