/*
 * mcp_nodes.c — `ingero-analyze mcp A.db B.db ...`: several report.db, one
 * a node of one job, served as one investigation.
 *
 * The files.  Each is opened and validated at start (mcp.c), as one file
 * is, and named: by its host when every node's host is known and unique
 * (nodes of a real job), else by its file's base name when those are
 * unique (two collectors on one machine), else by its path as given.  The
 * "node" argument takes an index or a name (or the path as given); every
 * per-trace tool reads the file it names, node 0 without it (s->node, set
 * by mcp_node_select before the call and read by mcp_view.c, get_timeline
 * and run_sql, whose connection is the file's own).  With one file
 * nothing here shows: no "node" in any schema, no get_nodes, the answers
 * as they were.
 *
 * The job.  get_nodes and get_ranks without "node" read the files as one
 * job, aligned once: rules/nodes.c loads every file whole, puts it on
 * node 0's clock (clock anchors, refined by the collectives) and analyses
 * the job with the straggler's own cause — the code explain A.db B.db
 * runs, so the offsets, the uncertainty, the straggler and its cause are
 * explain's.  That is done on the first call that needs it; the answers
 * (JSON) are kept and the loaded traces freed, since a job's traces can
 * be large and the answers do not change.  A window or a pid is one file's
 * and is refused across the nodes, as explain refuses it.
 */
#include "mcp/mcp_internal.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/db.h"
#include "render/explain_json.h"
#include "render/finding.h"
#include "rules/chain_straggler.h"
#include "rules/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the files and the node argument ---- */

/* The session's host of an open file, "" unknown. */
static void host_of(sqlite3 *db, char *buf, size_t n)
{
	char err[256];
	buf[0] = 0;
	sqlite3_stmt *st = ia_db_prepare(db, "SELECT value FROM session WHERE key = 'host'", err, sizeof err);
	if (!st)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/* Whether every one of n strings is non-empty, fits a name, and differs from the others. */
static int all_distinct(const char *const *v, size_t n, size_t max)
{
	for (size_t i = 0; i < n; i++) {
		if (!v[i][0] || strlen(v[i]) >= max)
			return 0;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(v[i], v[k]))
				return 0;
	}
	return 1;
}

void mcp_nodes_name(struct mcp_server *s)
{
	if (s->nfiles < 2)
		return;
	char host[IA_MAX_NODES][sizeof s->files[0].name];
	const char *hosts[IA_MAX_NODES], *bases[IA_MAX_NODES], *paths[IA_MAX_NODES];
	for (size_t i = 0; i < s->nfiles; i++) {
		host_of(s->files[i].db, host[i], sizeof host[i]);
		hosts[i] = host[i];
		bases[i] = base_name(s->files[i].path);
		paths[i] = s->files[i].path;
	}
	size_t max = sizeof s->files[0].name;
	const char *const *names = all_distinct(hosts, s->nfiles, max) ? hosts
				   : all_distinct(bases, s->nfiles, max) ? bases
				   : all_distinct(paths, s->nfiles, max) ? paths : NULL;
	for (size_t i = 0; i < s->nfiles; i++)
		if (names)
			snprintf(s->files[i].name, max, "%s", names[i]);
		else
			snprintf(s->files[i].name, max, "node %zu", i);
}

int mcp_node_select(struct mcp_server *s, const cJSON *args, char *err, size_t errlen)
{
	s->node = 0;
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(args, "node");
	if (!n || s->nfiles < 2)
		return 0;
	if (cJSON_IsNumber(n)) {
		/* an integer (the schema refused a fraction) */
		if (n->valuedouble >= 0 && n->valuedouble < (double)s->nfiles) {
			s->node = (size_t)n->valuedouble;
			return 0;
		}
		snprintf(err, errlen, "no node %.0f: %zu nodes are served, 0 to %zu (get_nodes lists them with their "
			 "names)", n->valuedouble, s->nfiles, s->nfiles - 1);
		return -1;
	}
	if (cJSON_IsString(n)) {
		for (size_t i = 0; i < s->nfiles; i++)
			if (!strcmp(n->valuestring, s->files[i].name)) {
				s->node = i;
				return 0;
			}
		for (size_t i = 0; i < s->nfiles; i++)
			if (!strcmp(n->valuestring, s->files[i].path)) {
				s->node = i;
				return 0;
			}
		/* the name came from the client; keep it short in the message */
		snprintf(err, errlen, "no node named \"%.64s\": %zu nodes are served, 0 to %zu, by index or by the name "
			 "get_nodes lists", n->valuestring, s->nfiles, s->nfiles - 1);
		return -1;
	}
	snprintf(err, errlen, "argument 'node' must be an integer or a string");
	return -1;
}

int mcp_nodes_schema(const struct mcp_server *s, const struct mcp_tool *t, cJSON *schema, char *more, size_t morelen)
{
	if (s->nfiles < 2 || t->scope == MCP_JOB)
		return 0;
	cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	if (!props)
		return 0;
	int job = t->scope == MCP_FILE_OR_JOB;
	char d[400];
	snprintf(d, sizeof d, "which node's report.db to read: its index, 0 to %zu, or its name as get_nodes lists it; "
		 "without it, %s", s->nfiles - 1,
		 job ? "the job across every node (then no from/to/since/pid: a window is one file's)" : "node 0");
	cJSON *p = cJSON_CreateObject();
	cJSON *type = cJSON_AddArrayToObject(p, "type");
	cJSON_AddItemToArray(type, cJSON_CreateString("integer"));
	cJSON_AddItemToArray(type, cJSON_CreateString("string"));
	cJSON_AddNumberToObject(p, "maxLength", 4096);
	cJSON_AddStringToObject(p, "description", d);
	cJSON_AddItemToObject(props, "node", p);
	if (job)
		snprintf(more, morelen, "Here %zu report.db are served, one a node of one job: without node this answers "
			 "across all of them, as explain A.db B.db ... reads them (each node's clock put on node 0's; every "
			 "rank's arrivals with its node), adding straggler_analysis (the straggler's own analysis: its "
			 "figures, verdict and chains, explain's \"Rank N on its own\") and nodes (get_nodes' clocks); "
			 "with node, that node's file alone.", s->nfiles);
	else
		snprintf(more, morelen, "Here %zu report.db are served, one a node of one job: this reads one of them, "
			 "the one its node argument names (an index or a name get_nodes lists); without node, node 0.",
			 s->nfiles);
	return 1;
}

/* ---- the job across the files, built once ---- */

struct mcp_job {
	cJSON *nodes;                 /* get_nodes' data */
	cJSON *ranks;                 /* get_ranks' data across the nodes */
	char nodes_sum[1536];
	char ranks_sum[1536];
};

void mcp_job_free(struct mcp_job *j)
{
	if (!j)
		return;
	cJSON_Delete(j->nodes);
	cJSON_Delete(j->ranks);
	free(j);
}

static const char *signed_dur(char *buf, size_t n, int64_t ns)
{
	char d[32];
	snprintf(buf, n, "%s%s", ns < 0 ? "-" : "+", ia_fmt_dur(d, sizeof d, (uint64_t)(ns < 0 ? -ns : ns)));
	return buf;
}

/* get_nodes: explain --json's "nodes", each with its name, the offset
 * applied in all, and its ranks with their pids. */
static void nodes_data(struct mcp_job *jb, const struct mcp_server *s, const struct ia_nodes *ns)
{
	const struct ia_job *j = ns->job;
	cJSON *arr = ia_nodes_json(ns);
	size_t nranks = 0;
	for (size_t i = 0; i < ns->nn; i++) {
		cJSON *o = cJSON_GetArrayItem(arr, (int)i);
		cJSON_AddStringToObject(o, "name", s->files[i].name);
		cJSON_AddNumberToObject(o, "offset_applied_ns", (double)ia_nodes_shift(ns, i));
		cJSON *rj = ia_ranks_json(&ns->nd[i].t, &ns->nd[i].rk);
		cJSON *agent = rj ? cJSON_DetachItemFromObjectCaseSensitive(rj, "agent_pid") : NULL;
		cJSON *ranks = rj ? cJSON_DetachItemFromObjectCaseSensitive(rj, "ranks") : NULL;
		cJSON_AddItemToObject(o, "agent_pid", agent ? agent : cJSON_CreateNull());
		cJSON_AddItemToObject(o, "ranks", ranks ? ranks : cJSON_CreateArray());
		cJSON_Delete(rj);
		nranks += ns->nd[i].rk.nranks;
	}
	jb->nodes = cJSON_CreateObject();
	cJSON_AddItemToObject(jb->nodes, "nodes", arr);
	cJSON_AddNumberToObject(jb->nodes, "ranks_total", (double)nranks);

	/* the summary: numbers and fixed words only (names and paths are data) */
	char *p = jb->nodes_sum;
	size_t left = sizeof jb->nodes_sum;
	int w = snprintf(p, left, "get_nodes: %zu report.db of one job, %zu ranks in all, on node 0's clock as explain "
			 "A.db B.db puts them (each collector's clock anchor, then the completions of the collectives "
			 "they share).", ns->nn, nranks);
	for (size_t i = 1; i < ns->nn && w > 0 && (size_t)w < left; i++) {
		char a[40], b[40], c[40], u[32];
		const struct ia_clock_fit *f = &j->fit[i];
		if (f->used)
			w += snprintf(p + w, left - (size_t)w, " Node %zu: %s applied (anchors %s, then %s by %zu collectives), "
				      "remaining uncertainty ±%s.", i, signed_dur(a, sizeof a, ia_nodes_shift(ns, i)),
				      signed_dur(b, sizeof b, ia_nodes_anchor_offset(ns, i)),
				      signed_dur(c, sizeof c, f->correction_ns), f->used,
				      ia_fmt_dur(u, sizeof u, f->uncertainty_ns));
		else
			w += snprintf(p + w, left - (size_t)w, " Node %zu: %s applied by the anchors alone (no collective "
				      "of both to refine it: the anchors' agreement is all there is).", i,
				      signed_dur(a, sizeof a, ia_nodes_shift(ns, i)));
	}
	if (w > 0 && (size_t)w < left)
		snprintf(p + w, left - (size_t)w, " Per node: index and name (what the node argument of the other tools "
			 "takes), file, host, boot id, the offsets in ns, its ranks and their pids.");
}

/* get_ranks across the nodes: explain --json A.db B.db's "ranks" (the
 * straggler's rank_straggler chain as "finding") as get_ranks has it for
 * one file, plus the straggler's own analysis and the nodes. */
static void ranks_data(struct mcp_job *jb, const struct ia_nodes *ns)
{
	const struct ia_job *j = ns->job;
	size_t nranks = 0;
	for (size_t i = 0; i < ns->nn; i++)
		nranks += ns->nd[i].rk.nranks;
	cJSON *data = ia_job_json(&ns->nd[0].t, j);
	if (!data) {
		data = cJSON_CreateObject();
		cJSON_AddArrayToObject(data, "ranks");
		cJSON_AddNullToObject(data, "straggler");
		snprintf(jb->ranks_sum, sizeof jb->ranks_sum, "get_ranks: no job of several ranks in these %zu nodes' "
			 "traces (no launcher variables such as RANK in their processes' environments, or schema "
			 "version 7).", ns->nn);
	} else {
		mcp_ranks_summary(jb->ranks_sum, sizeof jb->ranks_sum, j, nranks, ns->nn);
	}
	if (j->has_chain)
		cJSON_AddItemToObject(data, "finding", ia_finding_json(&j->sub_a, &j->chain));
	if (j->has_sub) {
		const struct ia_coll_rank *r = &j->coll.r[j->straggler];
		cJSON *sa = cJSON_AddObjectToObject(data, "straggler_analysis");
		cJSON_AddNumberToObject(sa, "rank", r->rank);
		cJSON_AddNumberToObject(sa, "node", r->node);
		cJSON_AddNumberToObject(sa, "pid", r->trace->procs[r->proc].pid);
		cJSON *doc = ia_explain_json(&j->sub_a);
		static const char *const keys[] = { "figures", "gpu_idle_pct", "verdict", "chains", "severity_counts" };
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
			cJSON *x = cJSON_DetachItemFromObjectCaseSensitive(doc, keys[k]);
			cJSON_AddItemToObject(sa, keys[k], x ? x : cJSON_CreateNull());
		}
		cJSON_Delete(doc);
		size_t w = strlen(jb->ranks_sum);
		snprintf(jb->ranks_sum + w, sizeof jb->ranks_sum - w, " straggler_analysis: rank %d's own analysis (its "
			 "process and children on node %d): figures, verdict and chains, as explain A.db B.db ... prints "
			 "them under \"Rank %d on its own\".", r->rank, r->node, r->rank);
	}
	cJSON_AddItemToObject(data, "nodes", ia_nodes_json(ns));
	jb->ranks = data;
}

/* The job, built on first use.  NULL with a tool error in *fail. */
static struct mcp_job *job_get(struct mcp_server *s, const char *tool, cJSON **fail)
{
	if (s->job)
		return s->job;
	struct ia_nodes *ns = calloc(1, sizeof *ns);   /* 16 loaded traces: not on the stack */
	struct mcp_job *jb = calloc(1, sizeof *jb);
	const char *paths[IA_MAX_NODES];
	char err[512] = "out of memory";
	for (size_t i = 0; i < s->nfiles; i++)
		paths[i] = s->files[i].path;
	int rc = ns && jb ? ia_nodes_load(ns, paths, s->nfiles, IA_NODES_CAUSE, err, sizeof err) : -1;
	if (!rc && ns->nn != s->nfiles) {   /* a merged file counts as its nodes: not one node a file served */
		snprintf(err, sizeof err, "a merged report.db among them (merge): serve its nodes' files, or it alone");
		rc = -1;
	}
	if (rc < 0) {
		*fail = mcp_result_error("%s: the %zu report.db could not be read as one job: %s", tool, s->nfiles, err);
		if (ns)
			ia_nodes_free(ns);
		free(ns);
		free(jb);
		return NULL;
	}
	nodes_data(jb, s, ns);
	ranks_data(jb, ns);
	ia_nodes_free(ns);
	free(ns);
	return s->job = jb;
}

cJSON *mcp_tool_nodes(struct mcp_server *s, const cJSON *args)
{
	(void)args;
	cJSON *fail = NULL;
	struct mcp_job *jb = job_get(s, "get_nodes", &fail);
	if (!jb)
		return fail;
	return mcp_result_data(jb->nodes_sum, cJSON_Duplicate(jb->nodes, 1));
}

cJSON *mcp_job_ranks(struct mcp_server *s, const cJSON *args)
{
	static const char *const window[] = { "from", "to", "since", "pid" };
	for (size_t i = 0; i < sizeof window / sizeof *window; i++)
		if (cJSON_GetObjectItemCaseSensitive(args, window[i]))
			return mcp_result_error("get_ranks: across the nodes there is no '%s': a window or a process is one "
						"file's (explain A.db B.db takes none either); give node as well to read that "
						"node's file alone", window[i]);
	cJSON *fail = NULL;
	struct mcp_job *jb = job_get(s, "get_ranks", &fail);
	if (!jb)
		return fail;
	return mcp_result_data(jb->ranks_sum, cJSON_Duplicate(jb->ranks, 1));
}
