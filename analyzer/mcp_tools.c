/*
 * mcp_tools.c — the MCP tools.  Each is a thin adapter: it turns arguments
 * into an ia_filter, gets the trace loaded for that filter (one view is
 * cached, so a run of questions about the same window loads it once), calls
 * the analyzer's modules (stats.h, per_process.h, trace.h, and the chain,
 * gap and timeline modules when they exist) and hands their cJSON to
 * mcp_result_data().  Nothing is analysed here: the figures an assistant
 * sees are the ones `ingero-analyze stats|per-process|explain --json` print.
 */
#include "mcp_internal.h"

#include "cli.h"
#include "json_out.h"
#include "util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the cached view ---- */

void mcp_view_free(struct mcp_view *v)
{
	if (v->have_analysis)
		ia_analysis_free(&v->an);
	if (v->have_light) {
		ia_per_process_free(&v->pp);
		ia_stats_free(&v->stats);
	}
	if (v->loaded)
		ia_trace_free(&v->t);
	memset(v, 0, sizeof *v);
}

static int same_filter(const struct ia_filter *a, const struct ia_filter *b)
{
	return a->has_from == b->has_from && a->has_to == b->has_to && a->has_since == b->has_since &&
	       (!a->has_from || a->from_rel == b->from_rel) && (!a->has_to || a->to_rel == b->to_rel) &&
	       (!a->has_since || a->since == b->since) && a->pid == b->pid;
}

enum { NEED_LIGHT = 1, NEED_ANALYSIS = 2 };

/* The trace for filter f with what `need` asks computed.  NULL with a
 * one-line reason. */
static struct mcp_view *view_get(struct mcp_server *s, const struct ia_filter *f, int need,
				 char *err, size_t errlen)
{
	struct mcp_view *v = &s->view;
	if (v->loaded && !same_filter(&v->filter, f))
		mcp_view_free(v);
	if (!v->loaded) {
		memset(&v->t, 0, sizeof v->t);
		if (ia_trace_load(&v->t, s->db, f, IA_LOAD_ALL, err, errlen) < 0) {
			ia_trace_free(&v->t);
			memset(v, 0, sizeof *v);
			return NULL;
		}
		v->filter = *f;
		v->loaded = 1;
	}
	if (need == NEED_ANALYSIS && !v->have_analysis) {
		if (v->have_light) {        /* the analysis holds its own stats and per-process */
			ia_per_process_free(&v->pp);
			ia_stats_free(&v->stats);
			v->have_light = 0;
		}
		if (ia_analyze(&v->t, &v->an, err, errlen) < 0) {
			ia_analysis_free(&v->an);
			return NULL;
		}
		v->have_analysis = 1;
	}
	if (need == NEED_LIGHT && !v->have_analysis && !v->have_light) {
		if (ia_stats_compute(&v->t, &v->stats) < 0) {
			snprintf(err, errlen, "out of memory computing statistics");
			return NULL;
		}
		if (ia_per_process_compute(&v->t, &v->pp, err, errlen) < 0) {
			ia_stats_free(&v->stats);
			return NULL;
		}
		v->have_light = 1;
	}
	return v;
}

static const struct ia_stats *stats_of(const struct mcp_view *v)
{
	return v->have_analysis ? &v->an.stats : &v->stats;
}

static const struct ia_per_process *pp_of(const struct mcp_view *v)
{
	return v->have_analysis ? &v->an.pp : &v->pp;
}

/* ---- arguments shared by the tools: a time window and a process ---- */

#define WINDOW_PROPS \
	"\"from\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"start of the window, as a time " \
	"since the trace start: 12.5 (seconds), 1500ms, 2s, 30us\"}," \
	"\"to\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"end of the window (same form as " \
	"from)\"}," \
	"\"since\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"only the last part of the " \
	"trace, e.g. 30s (not with from/to)\"}," \
	"\"pid\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":2147483647,\"description\":\"only this " \
	"process and its descendants\"}"

/* Fills f from args; on a bad value returns -1 with the reason. */
static int window_args(const cJSON *args, struct ia_filter *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	static const char *const keys[] = { "from", "to", "since" };
	for (int i = 0; i < 3; i++) {
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, keys[i]));
		if (!v)
			continue;
		uint64_t ns;
		if (ia_parse_dur(v, &ns) < 0 || (i == 2 && ns == 0)) {
			snprintf(err, errlen, "argument '%s' is not a time (examples: 12.5, 1500ms, 2s)", keys[i]);
			return -1;
		}
		if (i == 0) { f->has_from = 1; f->from_rel = ns; }
		if (i == 1) { f->has_to = 1; f->to_rel = ns; }
		if (i == 2) { f->has_since = 1; f->since = ns; }
	}
	if (f->has_since && (f->has_from || f->has_to)) {
		snprintf(err, errlen, "'since' cannot be combined with 'from'/'to'");
		return -1;
	}
	if (f->has_from && f->has_to && f->to_rel <= f->from_rel) {
		snprintf(err, errlen, "'to' must be after 'from'");
		return -1;
	}
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(args, "pid");
	if (cJSON_IsNumber(pid))
		f->pid = pid->valueint;
	return 0;
}

/* Loads the view for the call's arguments; NULL with *fail set to a tool error. */
static struct mcp_view *view_for(struct mcp_server *s, const cJSON *args, int need, cJSON **fail)
{
	struct ia_filter f;
	char err[512];
	if (window_args(args, &f, err, sizeof err) < 0) {
		*fail = mcp_result_error("%s", err);
		return NULL;
	}
	struct mcp_view *v = view_get(s, &f, need, err, sizeof err);
	if (!v)
		*fail = mcp_result_error("the trace could not be analysed: %s", err);
	return v;
}

/* {"from_rel_ns","to_rel_ns","pid"}: what the answer covers. */
static cJSON *window_json(const struct ia_trace *t)
{
	cJSON *w = cJSON_CreateObject();
	ia_json_u64(w, "first_rel_ns", t->first_ns > t->t0 ? t->first_ns - t->t0 : 0);
	ia_json_u64(w, "last_rel_ns", t->last_ns > t->t0 ? t->last_ns - t->t0 : 0);
	if (t->filter.has_from || t->filter.has_since)
		ia_json_u64(w, "from_rel_ns", t->from - t->t0);
	if (t->filter.has_to)
		ia_json_u64(w, "to_rel_ns", t->to - t->t0);
	if (t->filter.pid)
		cJSON_AddNumberToObject(w, "pid", t->filter.pid);
	return w;
}

/* ---- get_trace_stats ---- */

static cJSON *t_stats(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = view_for(s, args, NEED_LIGHT, &fail);
	if (!v)
		return fail;
	const struct ia_stats *st = stats_of(v);
	const struct ia_per_process *pp = pp_of(v);
	cJSON *data = ia_stats_report_json(&v->t, st, pp);
	cJSON_AddItemToObject(data, "window", window_json(&v->t));
	char a[32], b[32], c[32], sum[256];
	snprintf(sum, sizeof sum, "get_trace_stats: %s CUDA calls of %zu APIs in %zu processes, %s of evidence "
		 "(%s CPUs). Per API: count, total, p50/p90/p99/max, copy bandwidth by host memory kind.",
		 ia_fmt_count(a, sizeof a, v->t.ncalls), st->napis, pp->n,
		 ia_fmt_dur(b, sizeof b, v->t.last_ns > v->t.first_ns ? v->t.last_ns - v->t.first_ns : 0),
		 v->t.cpus ? ia_fmt_count(c, sizeof c, (uint64_t)v->t.cpus) : "?");
	return mcp_result_data(sum, data);
}

/* ---- get_per_process_breakdown ---- */

static cJSON *t_per_process(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = view_for(s, args, NEED_LIGHT, &fail);
	if (!v)
		return fail;
	const struct ia_trace *t = &v->t;
	const struct ia_per_process *pp = pp_of(v);
	cJSON *data = cJSON_CreateObject();
	cJSON_AddItemToObject(data, "processes", ia_per_process_json(t, pp));
	if (pp->main >= 0)
		cJSON_AddNumberToObject(data, "main_pid", t->procs[pp->p[pp->main].proc].pid);
	else
		cJSON_AddNullToObject(data, "main_pid");
	if (pp->main_thread != UINT32_MAX)
		cJSON_AddNumberToObject(data, "main_tid", t->threads[pp->main_thread].tid);
	else
		cJSON_AddNullToObject(data, "main_tid");
	ia_json_u64(data, "main_blocked_ns", pp->main_blocked_ns);
	ia_json_u64(data, "workers", pp->nworkers);
	cJSON_AddNumberToObject(data, "cpus", t->cpus);
	cJSON_AddItemToObject(data, "window", window_json(t));
	char a[32], sum[320];
	snprintf(sum, sizeof sum, "get_per_process_breakdown: %zu processes (%zu workers of the main process); "
		 "the main thread was blocked (off-CPU, not runnable) for %s. Roles: main drives the GPU, "
		 "workers are its descendants; main_wait_share = each worker's share of on-CPU time while "
		 "main was blocked.", pp->n, pp->nworkers, ia_fmt_dur(a, sizeof a, pp->main_blocked_ns));
	return mcp_result_data(sum, data);
}

/* ---- get_stacks ---- */

static cJSON *frames_of(sqlite3 *db, uint64_t stack_id, sqlite3_stmt **st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *nat = cJSON_AddArrayToObject(o, "native");
	cJSON *py = cJSON_AddArrayToObject(o, "python");
	if (!*st && sqlite3_prepare_v2(db, "SELECT kind, depth, symbol, module, offset, file, line FROM "
				       "stack_frames WHERE stack_id = ? ORDER BY kind, depth", -1, st, NULL) != SQLITE_OK)
		return o;
	sqlite3_bind_int64(*st, 1, (sqlite3_int64)stack_id);
	while (sqlite3_step(*st) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(*st, 0);
		const char *sym = (const char *)sqlite3_column_text(*st, 2);
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "depth", sqlite3_column_int(*st, 1));
		ia_json_str(f, "symbol", sym);
		if (kind && !strcmp(kind, "python")) {
			ia_json_str(f, "file", (const char *)sqlite3_column_text(*st, 5));
			cJSON_AddNumberToObject(f, "line", sqlite3_column_int(*st, 6));
			cJSON_AddItemToArray(py, f);
		} else {
			ia_json_str(f, "module", (const char *)sqlite3_column_text(*st, 3));
			ia_json_u64(f, "offset", (uint64_t)sqlite3_column_int64(*st, 4));
			cJSON_AddItemToArray(nat, f);
		}
	}
	sqlite3_reset(*st);
	return o;
}

static const char *host_memory(const struct ia_call *c)
{
	if (c->flags & INGERO_FLAG_HOST_PINNED)
		return "pinned";
	if (c->flags & INGERO_FLAG_HOST_PAGEABLE)
		return "pageable";
	return "unknown";
}

static const char *dir_name(unsigned d)
{
	static const char *const n[] = { "none", "HtoD", "DtoH", "DtoD", "HtoH", "default", "peer" };
	return d < sizeof n / sizeof *n ? n[d] : "unknown";
}

static cJSON *t_stacks(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = view_for(s, args, NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	const struct ia_trace *t = &v->t;
	const struct ia_stats *stats = &v->an.stats;
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	size_t k = cJSON_IsNumber(lim) ? (size_t)lim->valueint : 10;
	const char *order = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "order"));
	int by_ratio = order && !strcmp(order, "ratio_to_p50");
	const char *api_name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "api"));
	int api = -1;
	if (api_name) {
		for (size_t i = 0; i < stats->napis; i++)
			if (!strcmp(ia_api_name(t, stats->apis[i].api), api_name))
				api = stats->apis[i].api;
		if (api < 0)
			return mcp_result_error("get_stacks: no calls of that API in this window (get_trace_stats "
						"lists the APIs that have calls)");
	}

	/* the k largest by duration (or by duration / the API's p50): a
	 * bounded insertion list, since k is small and most calls lose at once */
	size_t *top = calloc(k + 1, sizeof *top);
	double *key = calloc(k + 1, sizeof *key);
	if (!top || !key) {
		free(top);
		free(key);
		return mcp_result_error("out of memory");
	}
	size_t n = 0, considered = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (api >= 0 && c->api != api)
			continue;
		considered++;
		double x = (double)c->dur;
		if (by_ratio) {
			const struct ia_api_stats *a = stats->by_id[c->api];
			x = a && a->p50_ns ? x / (double)a->p50_ns : 0;
		}
		if (n == k && x <= key[k - 1])
			continue;
		size_t j = n < k ? n++ : k - 1;
		while (j > 0 && key[j - 1] < x) {
			key[j] = key[j - 1];
			top[j] = top[j - 1];
			j--;
		}
		key[j] = x;
		top[j] = i;
	}

	cJSON *data = cJSON_CreateObject();
	cJSON_AddStringToObject(data, "order", by_ratio ? "ratio_to_p50" : "duration");
	cJSON *calls = cJSON_AddArrayToObject(data, "calls");
	cJSON *stacks = cJSON_AddObjectToObject(data, "stacks");
	sqlite3_stmt *st = NULL;
	size_t nstacks = 0, nostack = 0;
	for (size_t r = 0; r < n; r++) {
		const struct ia_call *c = &t->calls[top[r]];
		const struct ia_thread *th = &t->threads[c->th];
		const struct ia_api_stats *a = stats->by_id[c->api];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "api", ia_api_name(t, c->api));
		cJSON_AddNumberToObject(o, "pid", t->procs[th->proc].pid);
		cJSON_AddNumberToObject(o, "tid", th->tid);
		cJSON_AddStringToObject(o, "thread", th->comm);
		ia_json_u64(o, "start_rel_ns", c->start - t->t0);
		ia_json_u64(o, "dur_ns", c->dur);
		if (a) {
			ia_json_u64(o, "api_p50_ns", a->p50_ns);
			ia_json_round(o, "ratio_to_p50", a->p50_ns ? (double)c->dur / (double)a->p50_ns : 0, 1);
		}
		/* what the thread and the machine did during exactly this call:
		 * explain's own per-call alignment (align.h) */
		struct ia_call_align al;
		ia_align_call(t, &v->an.ev, c, &al);
		ia_json_u64(o, "oncpu_ns", al.oncpu_ns);
		ia_json_u64(o, "runq_ns", al.runq_ns);
		ia_json_u64(o, "blocked_ns", al.blocked_ns);
		ia_json_u64(o, "context_switches", al.nswitch);
		ia_json_u64(o, "preemptions", al.npreempt);
		if (al.cpu_sat >= 0)
			ia_json_round(o, "cpu_saturation", al.cpu_sat, 3);
		else
			cJSON_AddNullToObject(o, "cpu_saturation");
		if (ingero_api_class(c->api) == INGERO_CLASS_COPY) {
			ia_json_u64(o, "bytes", c->bytes);
			cJSON_AddStringToObject(o, "dir", dir_name(c->dir));
			cJSON_AddStringToObject(o, "host_memory", host_memory(c));
			ia_json_round(o, "gbps", ia_gbps(c->bytes, c->dur), 3);
		}
		uint64_t sid = c->stack ? t->stack_ids[c->stack] : 0;
		if (sid) {
			char idk[24];
			snprintf(idk, sizeof idk, "%llu", (unsigned long long)sid);
			ia_json_u64(o, "stack_id", sid);
			ia_json_str(o, "python_line", ia_stack_python(v->an.names, sid));
			if (!cJSON_GetObjectItemCaseSensitive(stacks, idk)) {
				cJSON_AddItemToObject(stacks, idk, frames_of(t->db, sid, &st));
				nstacks++;
			}
		} else {
			cJSON_AddNullToObject(o, "stack_id");
			nostack++;
		}
		cJSON_AddItemToArray(calls, o);
	}
	sqlite3_finalize(st);
	free(top);
	free(key);
	ia_json_u64(data, "calls_considered", considered);
	cJSON_AddItemToObject(data, "window", window_json(t));
	char a[32], sum[384];
	snprintf(sum, sizeof sum, "get_stacks: the %zu slowest of %s calls (%s), with %zu distinct stacks "
		 "(native frames innermost first; python frames give file:line)%s. During each call the calling "
		 "thread was on-CPU (oncpu_ns), waiting for a CPU (runq_ns) or blocked (blocked_ns).",
		 n, ia_fmt_count(a, sizeof a, considered), by_ratio ? "by duration / the API's p50" : "by duration",
		 nstacks, nostack ? "; some calls have no recorded stack" : "");
	return mcp_result_data(sum, data);
}

/* ---- get_causal_chains, get_gpu_idle: explain's analysis ---- */

static cJSON *t_chains(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = view_for(s, args, NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	const struct ia_analysis *an = &v->an;
	cJSON *data = ia_explain_json(an);
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	int limit = cJSON_IsNumber(lim) ? lim->valueint : 20;
	cJSON *chains = cJSON_GetObjectItemCaseSensitive(data, "chains");
	int total = cJSON_GetArraySize(chains);
	while (cJSON_GetArraySize(chains) > limit)
		cJSON_DeleteItemFromArray(chains, cJSON_GetArraySize(chains) - 1);
	if (total > limit)
		cJSON_AddNumberToObject(data, "chains_left_out", total - limit);
	cJSON_AddItemToObject(data, "window", window_json(&v->t));
	char sum[1024];
	const cJSON *idle = cJSON_GetObjectItemCaseSensitive(data, "gpu_idle_pct");
	snprintf(sum, sizeof sum, "get_causal_chains: %d chain%s (%zu HIGH, %zu MEDIUM, %zu LOW), most severe "
		 "first%s; GPU idle %.1f-%.1f%% of the CUDA window (an estimate from host evidence: low = no work "
		 "queued, high = not known busy). Each chain: severity, kind, summary, root cause, fixes, timeline, "
		 "evidence, Python source line.", total, total == 1 ? "" : "s",
		 ia_chains_count(an, IA_SEV_HIGH), ia_chains_count(an, IA_SEV_MEDIUM), ia_chains_count(an, IA_SEV_LOW),
		 total > limit ? " (the rest left out: raise limit)" : "",
		 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(idle, "low")),
		 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(idle, "high")));
	return mcp_result_data(sum, data);
}

static cJSON *t_gpu_idle(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = view_for(s, args, NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	/* the GPU-time part of explain --json, as explain computed it */
	cJSON *doc = ia_explain_json(&v->an);
	cJSON *data = cJSON_CreateObject();
	static const char *const keys[] = { "gpu_idle_pct", "where_time_went", "gaps" };
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		cJSON *x = cJSON_DetachItemFromObjectCaseSensitive(doc, keys[i]);
		cJSON_AddItemToObject(data, keys[i], x ? x : cJSON_CreateNull());
	}
	cJSON *tr = cJSON_GetObjectItemCaseSensitive(doc, "trace");
	cJSON *w = window_json(&v->t);
	static const char *const tkeys[] = { "window_start_rel_ns", "window_end_rel_ns" };
	for (size_t i = 0; i < 2; i++) {
		cJSON *x = cJSON_DetachItemFromObjectCaseSensitive(tr, tkeys[i]);
		if (x)
			cJSON_AddItemToObject(w, tkeys[i], x);
	}
	cJSON_AddItemToObject(data, "window", w);
	cJSON_Delete(doc);
	const cJSON *idle = cJSON_GetObjectItemCaseSensitive(data, "gpu_idle_pct");
	char sum[1024];
	snprintf(sum, sizeof sum, "get_gpu_idle: GPU idle %.1f-%.1f%% of the main process's CUDA window. This is "
		 "an estimate from host evidence (no GPU timestamps): low = time with no CUDA work queued, high = "
		 "time the GPU was not known busy. where_time_went splits the window (host busy, waiting, "
		 "preempted, in syncs, copies, launches); gaps: what the main thread and the workers did while "
		 "nothing was queued, the top on-CPU stacks, and the Python lines that end the gaps.",
		 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(idle, "low")),
		 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(idle, "high")));
	return mcp_result_data(sum, data);
}

/* ---- get_timeline: `timeline --json`, run as is ----
 *
 * The timeline streams rows straight from SQLite to its output inside
 * ia_cmd_timeline(); there is no function that returns it as a tree.  Rather
 * than write a second timeline, the tool runs that very command with
 * --json into an in-memory file and parses what it printed. */

static cJSON *t_timeline(struct mcp_server *s, const cJSON *args)
{
	struct ia_cli c;
	memset(&c, 0, sizeof c);
	char err[512];
	if (window_args(args, &c.filter, err, sizeof err) < 0)
		return mcp_result_error("%s", err);
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	c.cmd = "timeline";
	c.db_path = s->db_path;
	c.json = 1;
	c.pretty = 0;
	c.limit = cJSON_IsNumber(lim) ? lim->valueint : 200;
	int fd = memfd_create("ingero-mcp-timeline", MFD_CLOEXEC);
	if (fd < 0)
		return mcp_result_error("get_timeline: no in-memory file: %s", strerror(errno));
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	c.out = path;
	int rc = ia_cmd_timeline(&c);      /* its error line, if any, goes to stderr: our log */
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	ssize_t got = buf ? pread(fd, buf, (size_t)n, 0) : -1;
	close(fd);
	if (rc != 0 || got != n) {
		free(buf);
		return mcp_result_error("get_timeline: the timeline could not be read from the trace (the server log says why)");
	}
	buf[n] = 0;
	cJSON *data = cJSON_Parse(buf);
	free(buf);
	if (!cJSON_IsObject(data)) {
		cJSON_Delete(data);
		return mcp_result_error("get_timeline: the timeline's output did not parse (a bug)");
	}
	int nev = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(data, "events"));
	double more = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(data, "more"));
	char sum[512];
	snprintf(sum, sizeof sum, "get_timeline: %d event%s in time order (ts_rel_ns = time since the trace start): "
		 "type cuda (api, dur_ns, bytes, dir, pinned/pageable memory, python line) or off_cpu (reason "
		 "preempted/blocked, dur_ns, runq_ns = then waiting for a CPU, next_pid = who got the CPU)%s.",
		 nev, nev == 1 ? "" : "s", more > 0 ? "; more events exist past the limit (narrow from/to)" : "");
	return mcp_result_data(sum, data);
}

/* ---- run_sql ---- */

static cJSON *t_sql(struct mcp_server *s, const cJSON *args)
{
	char err[512];
	if (!s->sql && !(s->sql = mcp_sql_open(s->db_path, err, sizeof err)))
		return mcp_result_error("run_sql: cannot open the database: %s", err);
	const char *sql = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "sql"));
	const cJSON *mr = cJSON_GetObjectItemCaseSensitive(args, "max_rows");
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(args, "timeout_ms");
	long max_rows = cJSON_IsNumber(mr) ? (long)mr->valuedouble : MCP_SQL_MAX_ROWS_DEFAULT;
	long timeout = cJSON_IsNumber(to) ? (long)to->valuedouble : s->sql_timeout_ms;
	cJSON *data = mcp_sql_run(s->sql, sql, max_rows, timeout, err, sizeof err);
	if (!data)
		return mcp_result_error("run_sql: %s", err);
	char sum[256];
	int rows = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(data, "rows"));
	snprintf(sum, sizeof sum, "run_sql: %d row%s%s.", rows, rows == 1 ? "" : "s",
		 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "truncated"))
		 ? " (truncated: more rows exist; raise max_rows or narrow the query)" : "");
	return mcp_result_data(sum, data);
}

/* ---- the table ---- */

#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "]," \
	"\"additionalProperties\":false}"

/* Output schemas name the top-level keys a caller may rely on; what is
 * inside them is the analyzer's JSON contract (docs/mcp.md). */
#define OUT(props, req) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "]}"

const struct mcp_tool mcp_tools[] = {
	{
		"get_trace_stats", "Trace statistics",
		"Per CUDA API: count, total, mean, p50/p90/p99/max latency (ns), bytes and achieved copy bandwidth "
		"split pinned/pageable host memory; per process: calls, context switches, off-CPU, run-queue "
		"delay, page allocations, CPU time; and the trace's command, CPU count and span. The first "
		"tool to call: a p99 far above its p50 (e.g. cudaStreamSynchronize 1,000x) marks slow calls; "
		"low totals over a long trace point to gaps between calls. Same numbers as "
		"`ingero-analyze stats --json`.",
		OBJ(WINDOW_PROPS, ""),
		OUT("\"apis\":{\"type\":\"array\"},\"processes\":{\"type\":\"array\"},\"trace\":{\"type\":\"object\"},"
		    "\"window\":{\"type\":\"object\"}", "\"apis\",\"processes\",\"trace\""),
		t_stats,
	},
	{
		"get_causal_chains", "Causal chains (why the GPU starved)",
		"The analyzer's conclusions, most severe first: for slow calls and for gaps between CUDA calls, a "
		"severity (HIGH/MEDIUM/LOW), a summary with p99/p50, the evidence aligned call by call (CPU "
		"saturation, the thread's run-queue and blocked time, competing processes, page allocations, "
		"copy bandwidth), the root cause, fixes with concrete values, and the Python file:line. Also the "
		"GPU idle share as low/high bounds (an estimate from host evidence). Same as "
		"`ingero-analyze explain --json`.",
		OBJ(WINDOW_PROPS ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":"
		    "\"at most this many chains (default 20)\"}", ""),
		OUT("\"chains\":{\"type\":\"array\"},\"gpu_idle_pct\":{\"type\":\"object\"},"
		    "\"where_time_went\":{\"type\":\"object\"}", "\"chains\",\"gpu_idle_pct\""),
		t_chains,
	},
	{
		"get_per_process_breakdown", "Per-process breakdown",
		"The traced process tree with roles: main (drives the GPU), worker (its descendants, e.g. "
		"DataLoader workers), other. Per process: CUDA calls, CPU time, context switches "
		"voluntary/involuntary, off-CPU total and worst stall, run-queue delay p50/p99, page "
		"allocations, and for workers their share of the time the main thread was blocked. Shows whether "
		"the main process works on-CPU between CUDA calls (num_workers=0 batch assembly) or waits "
		"blocked on workers, and whether workers fight for CPUs (involuntary switches, run-queue delay).",
		OBJ(WINDOW_PROPS, ""),
		OUT("\"processes\":{\"type\":\"array\"},\"main_pid\":{\"description\":\"pid of the main process, null when none\"},"
		    "\"main_blocked_ns\":{\"type\":\"number\"},\"workers\":{\"type\":\"number\"}",
		    "\"processes\",\"main_pid\""),
		t_per_process,
	},
	{
		"get_stacks", "Stacks of the slowest calls",
		"The slowest CUDA calls (by duration, or by duration relative to their API's p50) with their "
		"native stack (innermost first) and Python stack (file:line: the line of user code that made the "
		"call, e.g. a loss.item() or .cpu() that synchronizes every step), plus what the calling thread "
		"did during each call: off-CPU and run-queue time, and for copies bytes, direction, pinned or "
		"pageable host memory and GB/s.",
		OBJ(WINDOW_PROPS ",\"api\":{\"type\":\"string\",\"maxLength\":64,\"description\":\"only calls of this "
		    "CUDA API, e.g. cudaStreamSynchronize\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,"
		    "\"maximum\":50,\"description\":\"how many calls (default 10)\"},\"order\":{\"type\":\"string\","
		    "\"enum\":[\"duration\",\"ratio_to_p50\"],\"description\":\"rank by duration (default) or by "
		    "duration / the API's p50\"}", ""),
		OUT("\"calls\":{\"type\":\"array\"},\"stacks\":{\"type\":\"object\"}", "\"calls\",\"stacks\""),
		t_stacks,
	},
	{
		"get_timeline", "Timeline of a window",
		"Events in a time window, in time order: CUDA calls (API, duration, bytes, direction, pinned or "
		"pageable, the Python line) and off-CPU intervals of traced threads (preempted or blocked, how long, "
		"how long it then waited for a CPU, who got the CPU). Use it to look closely at a slow call or a "
		"gap found by another tool: give from/to around it and keep windows short. Same as "
		"`ingero-analyze timeline --json`.",
		OBJ(WINDOW_PROPS ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5000,\"description\":"
		    "\"at most this many events (default 200)\"}", ""),
		OUT("\"events\":{\"type\":\"array\"},\"more\":{\"type\":\"number\"}", "\"events\""),
		t_timeline,
	},
	{
		"get_gpu_idle", "Where GPU time went",
		"The share of the trace during which no CUDA work was queued (GPU idle), as low/high bounds (an "
		"estimate from host evidence: there are no GPU-side timestamps), and where that time went: host "
		"busy (main thread on-CPU between calls), host waiting on workers (blocked), host preempted "
		"(runnable but not running), copies, syncs.",
		OBJ(WINDOW_PROPS, ""),
		OUT("\"gpu_idle_pct\":{\"type\":\"object\",\"properties\":{\"low\":{\"type\":\"number\"},"
		    "\"high\":{\"type\":\"number\"}},\"required\":[\"low\",\"high\"]},\"where_time_went\":"
		    "{\"type\":\"object\"},\"gaps\":{\"type\":\"object\"}", "\"gpu_idle_pct\",\"where_time_went\""),
		t_gpu_idle,
	},
	{
		"run_sql", "Read-only SQL on the trace",
		NULL,   /* mcp_sql_description(): carries the schema */
		OBJ("\"sql\":{\"type\":\"string\",\"maxLength\":100000,\"description\":\"one SELECT (or WITH ... "
		    "SELECT, or a read-only PRAGMA) in SQLite syntax\"},\"max_rows\":{\"type\":\"integer\","
		    "\"minimum\":1,\"maximum\":" "5000" ",\"description\":\"row cap (default 200)\"},"
		    "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000,\"description\":"
		    "\"time limit for the statement (default 5000)\"}", "\"sql\""),
		OUT("\"columns\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"rows\":{\"type\":\"array\"},"
		    "\"row_count\":{\"type\":\"number\"},\"truncated\":{\"type\":\"boolean\"},"
		    "\"elapsed_ms\":{\"type\":\"number\"}", "\"columns\",\"rows\",\"row_count\",\"truncated\""),
		t_sql,
	},
};
const size_t mcp_ntools = sizeof mcp_tools / sizeof mcp_tools[0];

const struct mcp_tool *mcp_tool_find(const char *name)
{
	for (size_t i = 0; i < mcp_ntools; i++)
		if (!strcmp(mcp_tools[i].name, name))
			return &mcp_tools[i];
	return NULL;
}

cJSON *mcp_tool_describe(const struct mcp_tool *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "title", t->title);
	cJSON_AddStringToObject(o, "description", t->description ? t->description : mcp_sql_description());
	cJSON *in = cJSON_Parse(t->input_schema);
	cJSON_AddItemToObject(o, "inputSchema", in ? in : cJSON_CreateObject());
	if (t->output_schema) {
		cJSON *out = cJSON_Parse(t->output_schema);
		if (out)
			cJSON_AddItemToObject(o, "outputSchema", out);
	}
	cJSON *ann = cJSON_AddObjectToObject(o, "annotations");
	cJSON_AddStringToObject(ann, "title", t->title);
	cJSON_AddBoolToObject(ann, "readOnlyHint", 1);
	cJSON_AddBoolToObject(ann, "destructiveHint", 0);
	cJSON_AddBoolToObject(ann, "idempotentHint", 1);
	cJSON_AddBoolToObject(ann, "openWorldHint", 0);
	return o;
}
