/*
 * merged.c — a merged report.db written and read back node by node
 * (merged.h).  The rows move through load/report_copy.h both ways; what
 * the merge did to each node is kept beside its session ("node.K.merge."),
 * which is all that reading a node back needs.
 */
#include "load/merged.h"

#include "load/db.h"
#include "load/report_copy.h"

#include <ingero/schema.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A session value: its text into buf (NULL when absent), or as an integer. */
static const char *sess_text(sqlite3 *db, const char *key, char *buf, size_t n)
{
	sqlite3_stmt *st = NULL;
	const char *r = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM session WHERE key = ?1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
			snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
			r = buf;
		}
	}
	sqlite3_finalize(st);
	return r;
}

static int sess_i64(sqlite3 *db, const char *key, int64_t *v)
{
	char buf[64], *end;
	if (!sess_text(db, key, buf, sizeof buf))
		return 0;
	long long x = strtoll(buf, &end, 10);
	if (!buf[0] || *end)
		return 0;
	*v = x;
	return 1;
}

/* node K's key "node.K.rest" */
static const char *node_key(char *buf, size_t n, size_t k, const char *rest)
{
	snprintf(buf, n, "node.%zu.%s", k, rest);
	return buf;
}

static int put(sqlite3 *db, const char *key, const char *val, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO session(key, value) VALUES(?1, ?2)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, val, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	return rc == SQLITE_OK ? 0 : -1;
}

static int put_i64(sqlite3 *db, const char *key, int64_t v, char *err, size_t errlen)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", (long long)v);
	return put(db, key, buf, err, errlen);
}

static int64_t query_i64(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int ia_merged_create(sqlite3 *out, char *err, size_t errlen)
{
	if (ia_report_create(out, INGERO_SCHEMA_VERSION, err, errlen) < 0)
		return -1;
	return ia_db_exec(out, INGERO_MERGED_SCHEMA_SQL, err, errlen);
}

int ia_merged_add(sqlite3 *out, size_t k, const struct ia_merge_node *n, char *err, size_t errlen)
{
	char key[96], pre[32];
	int64_t base = (int64_t)k * INGERO_NODE_PID_STRIDE, cpu_base = 0, prev_cpus = 0, start = 0;
	if (k && (!sess_i64(out, node_key(key, sizeof key, k - 1, "merge.cpu_base"), &cpu_base) ||
		  !sess_i64(out, node_key(key, sizeof key, k - 1, "merge.cpus"), &prev_cpus))) {
		snprintf(err, errlen, "merge: node %zu added before node %zu", k, k - 1);
		return -1;
	}
	cpu_base += prev_cpus;
	int64_t frame_base = query_i64(out, "SELECT coalesce(max(id), 0) FROM frames");
	snprintf(pre, sizeof pre, "node.%zu.", k);
	struct ia_copy m = {
		.shift_ns = n->shift_ns, .pid_delta = base, .cpu_delta = cpu_base, .frame_delta = frame_base,
		.fresh_salt = 0x6e6f646500000000ull | (k + 1), .session_to = pre, .count_cpus = 1,
	};
	if (ia_report_copy(out, n->path, &m, err, errlen) < 0)
		return -1;
	if (sess_i64(out, node_key(key, sizeof key, k, "start_mono_ns"), &start) && start + n->shift_ns < 0) {
		snprintf(err, errlen, "%s: its trace began before node 0's clock did (its boot): give the node booted "
			 "first as node 0", n->name ? n->name : n->path);
		return -1;
	}
	int64_t cpus = n->cpus > m.cpu_max + 1 ? n->cpus : m.cpu_max + 1;
	char *sql = sqlite3_mprintf("INSERT INTO node_processes(pid, node, node_pid) SELECT pid, %d, pid - %lld "
				    "FROM processes WHERE pid >= %lld AND pid < %lld",
				    (int)k, (long long)base, (long long)base, (long long)(base + INGERO_NODE_PID_STRIDE));
	int rc = sql ? ia_db_exec(out, sql, err, errlen) : (snprintf(err, errlen, "out of memory"), -1);
	sqlite3_free(sql);
	if (rc < 0)
		return -1;
	struct { const char *k; int64_t v; int when; } f[] = {
		{ "merge.pid_base", base, 1 },
		{ "merge.cpu_base", cpu_base, 1 },
		{ "merge.cpus", cpus, 1 },
		{ "merge.frame_base", frame_base, 1 },
		{ "merge.frame_end", query_i64(out, "SELECT coalesce(max(id), 0) FROM frames"), 1 },
		{ "merge.shift_ns", n->shift_ns, 1 },
		{ "merge.anchor_offset_ns", n->anchor_offset_ns, 1 },
		{ "merge.correction_ns", n->correction_ns, 1 },
		{ "merge.collectives_used", (int64_t)n->collectives_used, 1 },
		{ "merge.uncertainty_ns", (int64_t)n->uncertainty_ns, n->collectives_used > 0 },
		{ "merge.schema_version", m.version, 1 },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (f[i].when && put_i64(out, node_key(key, sizeof key, k, f[i].k), f[i].v, err, errlen) < 0)
			return -1;
	if (put(out, node_key(key, sizeof key, k, "merge.file"), n->name ? n->name : n->path, err, errlen) < 0 ||
	    (m.absent[0] && put(out, node_key(key, sizeof key, k, "merge.absent"), m.absent, err, errlen) < 0))
		return -1;
	return 0;
}

int ia_merged_finish(sqlite3 *out, size_t nn, char *err, size_t errlen)
{
	if (ia_db_exec(out, "INSERT OR REPLACE INTO session(key, value) SELECT substr(key, 8), value FROM session "
		      "WHERE substr(key, 1, 7) = 'node.0.' AND substr(key, 8, 6) <> 'merge.'",
		 err, errlen) < 0)
		return -1;
	int64_t start = INT64_MAX, end = INT64_MIN, cpus = 0;
	int ended = 1;
	char key[96], why[512];
	for (size_t k = 0; k < nn; k++) {
		int64_t shift = 0, s, e, c = 0;
		sess_i64(out, node_key(key, sizeof key, k, "merge.shift_ns"), &shift);
		sess_i64(out, node_key(key, sizeof key, k, "merge.cpus"), &c);
		cpus += c;
		if (sess_i64(out, node_key(key, sizeof key, k, "start_mono_ns"), &s) && s + shift < start)
			start = s + shift;
		if (!sess_i64(out, node_key(key, sizeof key, k, "end_mono_ns"), &e))
			ended = 0;
		else if (e + shift > end)
			end = e + shift;
		char what[400];
		if (sess_text(out, node_key(key, sizeof key, k, "store_error"), what, sizeof what)) {
			snprintf(why, sizeof why, "node %zu: %s", k, what);
			if (put(out, "store_error", why, err, errlen) < 0)
				return -1;
		}
	}
	if ((start != INT64_MAX && put_i64(out, "start_mono_ns", start, err, errlen) < 0) ||
	    put_i64(out, "cpus", cpus, err, errlen) < 0 || put_i64(out, "merged_nodes", (int64_t)nn, err, errlen) < 0)
		return -1;
	if (ended && end != INT64_MIN)
		return put_i64(out, "end_mono_ns", end, err, errlen);
	return ia_db_exec(out, "DELETE FROM session WHERE key = 'end_mono_ns'", err, errlen);   /* one was cut short */
}

int ia_merged_nodes(sqlite3 *db)
{
	char buf[32], *end;
	if (!sess_text(db, "merged_nodes", buf, sizeof buf))
		return 0;
	long v = strtol(buf, &end, 10);
	return *end || v < 1 || v > 4096 ? -1 : (int)v;
}

int ia_merged_split(sqlite3 *db, const char *path, size_t k, const char *out_path, char *file, size_t filelen,
		    char *err, size_t errlen)
{
	static const char *const keys[] = { "merge.pid_base", "merge.cpu_base", "merge.cpus", "merge.frame_base",
					    "merge.frame_end", "merge.shift_ns", "merge.schema_version" };
	int64_t v[7];
	char key[96], absent[256] = "";
	for (size_t i = 0; i < 7; i++)
		if (!sess_i64(db, node_key(key, sizeof key, k, keys[i]), &v[i])) {
			ia_db_blame_input();
			snprintf(err, errlen, "%s: merged, but without %s", path, key);
			return -1;
		}
	if (v[0] != (int64_t)k * INGERO_NODE_PID_STRIDE || v[1] < 0 || v[2] < 0 || v[4] < v[3] || v[6] < 2 ||
	    v[6] > INGERO_SCHEMA_VERSION) {
		ia_db_blame_input();
		snprintf(err, errlen, "%s: merged, but node %zu's bases are not a merge's", path, k);
		return -1;
	}
	if (!sess_text(db, node_key(key, sizeof key, k, "merge.file"), file, filelen))
		snprintf(file, filelen, "%s node %zu", path, k);
	sess_text(db, node_key(key, sizeof key, k, "merge.absent"), absent, sizeof absent);
	sqlite3 *out = NULL;
	if (sqlite3_open_v2(out_path, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", out_path, out ? sqlite3_errmsg(out) : "cannot open");
		sqlite3_close(out);
		return -1;
	}
	char pre[32];
	snprintf(pre, sizeof pre, "node.%zu.", k);
	struct ia_copy m = {
		.shift_ns = -v[5], .pid_delta = -v[0], .cpu_delta = -v[1], .ranged = 1,
		.pid_lo = v[0], .pid_hi = v[0] + INGERO_NODE_PID_STRIDE, .cpu_lo = v[1], .cpu_hi = v[1] + v[2],
		.frame_lo = v[3], .frame_hi = v[4], .session_from = pre,
	};
	int rc = ia_db_exec(out, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", err, errlen);
	if (!rc && (ia_report_create(out, (int)v[6], err, errlen) < 0 || ia_report_drop(out, absent, err, errlen) < 0))
		rc = -1;
	if (!rc)
		rc = ia_report_copy(out, path, &m, err, errlen);
	if (sqlite3_close(out) != SQLITE_OK && !rc) {
		snprintf(err, errlen, "%s: cannot close", out_path);
		rc = -1;
	}
	return rc;
}

int ia_merged_own_pid(const struct ia_trace *t, int pid)
{
	return ia_session(t, "merged_nodes") && pid >= 0 ? pid % INGERO_NODE_PID_STRIDE : pid;
}

const char *ia_merged_proc_name(const struct ia_trace *t, int pid, char *buf, size_t n)
{
	char key[64];
	if (ia_session(t, "merged_nodes") && pid >= 0) {
		snprintf(key, sizeof key, "node.%d.host", pid / INGERO_NODE_PID_STRIDE);
		const char *host = ia_session(t, key);
		snprintf(buf, n, "node %d (%s) · pid %d", pid / INGERO_NODE_PID_STRIDE, host ? host : "?",
			 ia_merged_own_pid(t, pid));
	} else {
		snprintf(buf, n, "pid %d", pid);
	}
	return buf;
}
