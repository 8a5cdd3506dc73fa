/*
 * nodes.c — several nodes' report.db loaded and aligned as one job
 * (nodes.h): the anchors read here, the refinement by the collectives done
 * by ia_job_analyze_nodes, one code for explain, export, merge and the MCP
 * server; a merged file's nodes read back (load/merged.h) and loaded the
 * same way.
 */
#include "rules/nodes.h"

#include "base/json_out.h"
#include "load/db.h"
#include "load/merged.h"
#include "rules/analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The same trace twice: one host, boot and start (two collectors on one
 * machine are two traces: they started apart). */
static int same_trace(const struct ia_node *a, const struct ia_node *b)
{
	const char *sa = ia_session(&a->t, "start_mono_ns"), *sb = ia_session(&b->t, "start_mono_ns");
#define SAME(x, y) ((!(x) && !(y)) || ((x) && (y) && !strcmp((x), (y))))
	return sa && sb && !strcmp(sa, sb) && SAME(a->host, b->host) && SAME(a->boot, b->boot);
#undef SAME
}

/* Node ns->nn from its file (n->path, n->file set; db given when open
 * already): loaded, its ranks and anchor.  0, or -1. */
static int add_node(struct ia_nodes *ns, sqlite3 *db, char *err, size_t errlen)
{
	struct ia_filter none;
	memset(&none, 0, sizeof none);
	struct ia_node *n = &ns->nd[ns->nn++];
	if (!(n->db = db ? db : ia_db_open(n->file, err, errlen)))
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
	return 0;
}

int ia_nodes_duplicate(const struct ia_nodes *ns, char *err, size_t errlen)
{
	for (size_t j = 1; j < ns->nn; j++)
		for (size_t i = 0; i < j; i++)
			if (same_trace(&ns->nd[i], &ns->nd[j])) {
				const struct ia_node *n = &ns->nd[j];
				snprintf(err, errlen, "%s and %s are the same trace (host %s, boot %s, started at the same "
					 "instant): give each node's report.db once", ns->nd[i].path, n->path,
					 n->host ? n->host : "?", n->boot ? n->boot : "?");
				return 1;
			}
	return 0;
}

/* A merged file's nodes, each read back into a file of its own and added. */
static int add_merged(struct ia_nodes *ns, const char *path, sqlite3 *db, int parts, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	for (int k = 0; k < parts; k++) {
		if (ns->nn >= IA_MAX_NODES) {
			snprintf(err, errlen, "at most %d nodes at a time (%s holds %d)", IA_MAX_NODES, path, parts);
			return IA_NODES_USAGE;
		}
		struct ia_node *n = &ns->nd[ns->nn];
		char name[4096];
		size_t len = strlen(dir) + 32;
		if (!(n->tmp = malloc(len))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		snprintf(n->tmp, len, "%s/ingero-node-XXXXXX", dir);
		int fd = mkstemp(n->tmp);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", n->tmp, strerror(errno));
			free(n->tmp);
			n->tmp = NULL;
			return -1;
		}
		close(fd);
		if (ia_merged_split(db, path, (size_t)k, n->tmp, name, sizeof name, err, errlen) < 0 ||
		    !(n->name = strdup(name))) {
			if (!err[0])
				snprintf(err, errlen, "out of memory");
			ns->nn++;   /* (freed, its file removed, with the others) */
			return -1;
		}
		n->path = n->name;
		n->merged = path;
		n->file = n->tmp;
		int rc = add_node(ns, NULL, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int ia_nodes_merged(const char *path)
{
	char err[512];
	sqlite3 *db = ia_db_open(path, err, sizeof err);
	int parts = db ? ia_merged_nodes(db) : 0;
	if (db)
		ia_db_close(db);
	return parts > 0 ? parts : 0;
}

int ia_nodes_load(struct ia_nodes *ns, const char *const *paths, size_t nn, int flags, char *err, size_t errlen)
{
	memset(ns, 0, sizeof *ns);
	if (nn < 1 || nn > IA_MAX_NODES) {
		snprintf(err, errlen, "at most %d report.db at a time", IA_MAX_NODES);
		return IA_NODES_USAGE;
	}
	struct ia_coll_node cn[IA_MAX_NODES];
	err[0] = 0;
	int rc = 0;
	for (size_t i = 0; i < nn && !rc; i++) {
		sqlite3 *db = ia_db_open(paths[i], err, errlen);
		int parts = db ? ia_merged_nodes(db) : 0;
		if (!db) {
			rc = -1;
		} else if (parts < 0) {
			ia_db_close(db);
			ia_db_blame_input();
			snprintf(err, errlen, "%s: merged, but its node count is unreadable", paths[i]);
			rc = -1;
		} else if (parts > 0) {
			rc = add_merged(ns, paths[i], db, parts, err, errlen);
			ia_db_close(db);
		} else if (ns->nn >= IA_MAX_NODES) {
			ia_db_close(db);
			snprintf(err, errlen, "at most %d nodes at a time", IA_MAX_NODES);
			rc = IA_NODES_USAGE;
		} else {
			ns->nd[ns->nn].path = ns->nd[ns->nn].file = paths[i];
			rc = add_node(ns, db, err, errlen);
		}
	}
	if (rc)
		return rc;
	if ((flags & IA_NODES_UNIQUE) && ia_nodes_duplicate(ns, err, errlen))
		return IA_NODES_USAGE;
	for (size_t i = 0; i < ns->nn; i++) {
		struct ia_node *n = &ns->nd[i];
		cn[i] = (struct ia_coll_node){ &n->t, &n->rk, n->anchor - ns->nd[0].anchor };
	}
	return ia_job_analyze_nodes(cn, ns->nn, flags & IA_NODES_CAUSE ? ia_analyze : NULL, ia_analysis_free, &ns->job,
				    err, errlen);
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
		if (n->tmp)
			unlink(n->tmp);
		free(n->tmp);
		free(n->name);
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
		if (nd[i].merged)
			cJSON_AddStringToObject(o, "merged_file", nd[i].merged);
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
