/*
 * nodes.c — several nodes' report.db loaded and aligned as one job
 * (nodes.h): the anchors read here, the refinement by the collectives done
 * by ia_job_analyze_nodes, one code for explain, export and the MCP server.
 */
#include "rules/nodes.h"

#include "base/json_out.h"
#include "load/db.h"
#include "rules/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t session_i64(const struct ia_trace *t, const char *key, int *ok)
{
	const char *v = ia_session(t, key);
	char *end;
	long long x = v ? strtoll(v, &end, 10) : 0;
	*ok = v && *v && !*end;
	return x;
}

/* realtime − monotonic: from the anchor, else from the session's start times (read a moment apart) */
static void anchor_of(struct ia_node *n)
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

int ia_nodes_load(struct ia_nodes *ns, const char *const *paths, size_t nn, int cause, char *err, size_t errlen)
{
	memset(ns, 0, sizeof *ns);
	if (nn < 1 || nn > IA_MAX_NODES) {
		snprintf(err, errlen, "at most %d report.db at a time", IA_MAX_NODES);
		return -1;
	}
	struct ia_coll_node cn[IA_MAX_NODES];
	struct ia_filter none;
	memset(&none, 0, sizeof none);
	ns->nn = nn;
	for (size_t i = 0; i < nn; i++) {
		struct ia_node *n = &ns->nd[i];
		n->path = paths[i];
		if (!(n->db = ia_db_open(n->path, err, errlen)))
			return -1;
		if (ia_trace_load(&n->t, n->db, &none, IA_LOAD_ALL, err, errlen) < 0) {
			ia_trace_free(&n->t);
			return -1;
		}
		n->loaded = 1;
		if (ia_ranks_compute(&n->t, &n->rk, err, errlen) < 0)
			return -1;
		n->ranked = 1;
		anchor_of(n);
		n->host = ia_session(&n->t, "host");
		n->boot = ia_session(&n->t, "boot_id");
		cn[i] = (struct ia_coll_node){ &n->t, &n->rk, n->anchor - ns->nd[0].anchor };
	}
	return ia_job_analyze_nodes(cn, nn, cause ? ia_analyze : NULL, ia_analysis_free, &ns->job, err, errlen);
}

void ia_nodes_free(struct ia_nodes *ns)
{
	ia_job_free(ns->job);
	ns->job = NULL;
	for (size_t i = 0; i < ns->nn; i++) {
		struct ia_node *n = &ns->nd[i];
		if (n->ranked)
			ia_ranks_free(&n->rk);
		if (n->loaded)
			ia_trace_free(&n->t);
		if (n->db)
			ia_db_close(n->db);
	}
	ns->nn = 0;
}

int64_t ia_nodes_anchor_offset(const struct ia_nodes *ns, size_t i)
{
	return ns->nd[i].anchor - ns->nd[0].anchor;
}

int64_t ia_nodes_shift(const struct ia_nodes *ns, size_t i)
{
	return ia_nodes_anchor_offset(ns, i) + (ns->job ? ns->job->fit[i].correction_ns : 0);
}

cJSON *ia_nodes_json(const struct ia_nodes *ns)
{
	const struct ia_node *nd = ns->nd;
	const struct ia_job *j = ns->job;
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < ns->nn; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "node", (double)i);
		cJSON_AddStringToObject(o, "file", nd[i].path);
		ia_json_str(o, "host", nd[i].host);
		ia_json_str(o, "boot_id", nd[i].boot);
		cJSON_AddNumberToObject(o, "anchor_offset_ns", (double)ia_nodes_anchor_offset(ns, i));
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
