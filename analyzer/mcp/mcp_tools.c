/*
 * mcp_tools.c — the MCP tools: their table (name, description, input and
 * output schemas) and the calls.  Each call is a thin adapter: it gets the
 * view for its arguments (mcp_view.c), calls the analyzer's modules
 * (stats.h, per_process.h, chains.h, timeline.h) and hands their
 * cJSON to mcp_result_data().  Nothing is analysed here: the figures an
 * assistant sees are the ones `ingero-analyze stats|explain|timeline --json`
 * print.  get_stacks lives in mcp_stacks.c, run_sql's sandbox in mcp_sql.c.
 */
#include "render/explain_json.h"
#include "render/job_render.h"
#include "mcp/mcp_internal.h"

#include "load/db.h"
#include "base/json_out.h"
#include "load/timeline.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The window and process every trace tool takes (mcp_window_args reads them). */
#define WINDOW_PROPS \
	"\"from\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"start of the window, as a time " \
	"since the trace start: a decimal number with an optional unit ns, us, ms, s, m, h (none = seconds): " \
	"12.5, 1500ms, 2s, 30us\"}," \
	"\"to\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"end of the window (same form as " \
	"from)\"}," \
	"\"since\":{\"type\":\"string\",\"maxLength\":32,\"description\":\"only the last part of the " \
	"trace, e.g. 30s (not with from/to)\"}," \
	"\"pid\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":2147483647,\"description\":\"only this " \
	"process and its descendants\"}"

/* ---- get_trace_stats ---- */

static cJSON *t_stats(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_LIGHT, &fail);
	if (!v)
		return fail;
	const struct ia_stats *st = mcp_view_stats(v);
	const struct ia_per_process *pp = mcp_view_pp(v);
	cJSON *data = ia_stats_report_json(&v->t, st, pp);
	cJSON_AddItemToObject(data, "window", mcp_window_json(&v->t));
	char a[32], b[32], c[32], sum[256];
	snprintf(sum, sizeof sum, "get_trace_stats: %s CUDA calls of %zu APIs in %zu processes, %s traced "
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
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_LIGHT, &fail);
	if (!v)
		return fail;
	const struct ia_trace *t = &v->t;
	const struct ia_per_process *pp = mcp_view_pp(v);
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
	cJSON_AddItemToObject(data, "window", mcp_window_json(t));
	char a[32], sum[320];
	snprintf(sum, sizeof sum, "get_per_process_breakdown: %zu processes (%zu workers of the main process); "
		 "the main thread was blocked (off-CPU, not runnable) for %s. Roles: main drives the GPU, "
		 "workers are its descendants; main_wait_share = each worker's share of on-CPU time while "
		 "main was blocked.", pp->n, pp->nworkers, ia_fmt_dur(a, sizeof a, pp->main_blocked_ns));
	return mcp_result_data(sum, data);
}
/* ---- get_causal_chains, get_gpu_idle: explain's analysis ---- */

/* The headline every view opens with (explain --json's figures.headline:
 * render/headline.h), so the assistant quotes the figure explain prints. */
static void idle_words(char *buf, size_t len, const cJSON *doc)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "figures"), "headline");
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "figures"), "window_line");
	if (cJSON_IsString(h) && cJSON_IsString(w) && *w->valuestring)
		snprintf(buf, len, "%s. %s", h->valuestring, w->valuestring);
	else if (cJSON_IsString(h))
		snprintf(buf, len, "%s", h->valuestring);
	else
		snprintf(buf, len, "no GPU idle figure");
}

/* How the bounds were obtained: explain's own words (gpu_idle_pct.basis). */
static const char *idle_basis(const cJSON *doc)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "gpu_idle_pct"), "basis");
	return cJSON_IsString(b) ? b->valuestring : "no GPU idle figures";
}

static size_t sev_count(const cJSON *doc, const char *sev)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "severity_counts"), sev);
	return cJSON_IsNumber(n) ? (size_t)n->valuedouble : 0;
}

static cJSON *t_chains(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	const struct ia_analysis *an = &v->an;
	cJSON *data = ia_job_explain_json(an);   /* explain --json's document (a job's straggler first) */
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	int limit = cJSON_IsNumber(lim) ? lim->valueint : 20;
	cJSON *chains = cJSON_GetObjectItemCaseSensitive(data, "chains");
	int total = cJSON_GetArraySize(chains);
	while (cJSON_GetArraySize(chains) > limit)
		cJSON_DeleteItemFromArray(chains, cJSON_GetArraySize(chains) - 1);
	if (total > limit)
		cJSON_AddNumberToObject(data, "chains_left_out", total - limit);
	cJSON_AddItemToObject(data, "window", mcp_window_json(&v->t));
	char sum[2048], idle[600];
	idle_words(idle, sizeof idle, data);
	const cJSON *vt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(data, "verdict"), "text");
	snprintf(sum, sizeof sum, "get_causal_chains: %d chain%s (%zu HIGH, %zu MEDIUM, %zu LOW), most severe "
		 "first%s; %s (%s). %s%s"
		 "Each chain: severity, kind, summary, root cause, fixes, timeline, evidence, Python source line.",
		 total, total == 1 ? "" : "s", sev_count(data, "HIGH"), sev_count(data, "MEDIUM"), sev_count(data, "LOW"), total > limit ? " (the rest left out: raise limit)" : "", idle,
		 idle_basis(data), cJSON_IsString(vt) ? vt->valuestring : "", cJSON_IsString(vt) ? " " : "");
	return mcp_result_data(sum, data);
}

static cJSON *t_gpu_idle(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_ANALYSIS, &fail);
	if (!v)
		return fail;
	/* the GPU-time part of explain --json, as explain computed it */
	cJSON *doc = ia_explain_json(&v->an);
	cJSON *data = cJSON_CreateObject();
	static const char *const keys[] = { "figures", "gpu_idle_pct", "verdict", "where_time_went", "gaps",
					    "step_breakdown" };
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		cJSON *x = cJSON_DetachItemFromObjectCaseSensitive(doc, keys[i]);
		cJSON_AddItemToObject(data, keys[i], x ? x : cJSON_CreateNull());
	}
	cJSON *tr = cJSON_GetObjectItemCaseSensitive(doc, "trace");
	cJSON *w = mcp_window_json(&v->t);
	static const char *const tkeys[] = { "window_start_rel_ns", "window_end_rel_ns" };
	for (size_t i = 0; i < 2; i++) {
		cJSON *x = cJSON_DetachItemFromObjectCaseSensitive(tr, tkeys[i]);
		if (x)
			cJSON_AddItemToObject(w, tkeys[i], x);
	}
	cJSON_AddItemToObject(data, "window", w);
	cJSON_Delete(doc);
	char sum[1400], idle[600];
	idle_words(idle, sizeof idle, data);
	snprintf(sum, sizeof sum, "get_gpu_idle: %s. figures: the headline explain prints, with its numbers "
		 "(figures.main_thread_steady_ns splits the steady state: in the gaps on-CPU/blocked/waiting for a "
		 "CPU, inside CUDA calls, host work while the GPU had work; it sums to figures.steady_ns). "
		 "gpu_idle_pct.basis: %s. gaps: what the main thread and the workers did while the GPU idled, the "
		 "top on-CPU stacks, and the Python lines that end the gaps. step_breakdown: each steady step split "
		 "into input wait, other waits, host compute, launch, sync, device compute, collectives (median, p90, "
		 "share; they sum to the step) and its class by XProf's tiers (input-bound at 20 %%, somewhat at 5 %%).",
		 idle, idle_basis(data));
	return mcp_result_data(sum, data);
}

/* ---- get_timeline: the timeline's own data (timeline.h) ---- */

static cJSON *t_timeline(struct mcp_server *s, const cJSON *args)
{
	struct ia_filter filter;
	memset(&filter, 0, sizeof filter);
	char err[512];
	if (mcp_window_args(args, &filter, err, sizeof err) < 0)
		return mcp_result_error("%s", err);
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(args, "limit");
	long limit = cJSON_IsNumber(lim) ? lim->valueint : 200;
	sqlite3 *db = ia_db_open(s->files[s->node].path, err, sizeof err);
	if (!db)
		return mcp_result_error("get_timeline: %s", err);
	struct ia_trace t;
	cJSON *data = NULL;
	if (ia_trace_load(&t, db, &filter, 0, err, sizeof err) == 0)
		data = ia_timeline_json(&t, limit, err, sizeof err);
	ia_trace_free(&t);
	ia_db_close(db);
	if (!data)
		return mcp_result_error("get_timeline: the timeline could not be read from the trace: %s", err);
	int nev = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(data, "events"));
	double more = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(data, "more"));
	char sum[512];
	snprintf(sum, sizeof sum, "get_timeline: %d event%s in time order (ts_rel_ns = time since the trace start): "
		 "type cuda (api, dur_ns, bytes, dir, pinned/pageable memory, python line) or off_cpu (reason "
		 "preempted/blocked, syscall = what it blocked in, blocked_at = the Python line, where a stack was taken "
		 "of the block, dur_ns, runq_ns = then waiting for a CPU, "
		 "next_pid = who got the CPU)%s.",
		 nev, nev == 1 ? "" : "s", more > 0 ? "; more events exist past the limit (narrow from/to)" : "");
	return mcp_result_data(sum, data);
}

/* ---- run_sql ---- */

/* run_sql's progress handler asks this: did the client cancel the call? */
static int sql_cancelled(void *server)
{
	return mcp_poll_input(server, 0);
}

static cJSON *t_sql(struct mcp_server *s, const cJSON *args)
{
	char err[512];
	struct mcp_file *f = &s->files[s->node];
	if (!f->sql) {
		if (!(f->sql = mcp_sql_open(f->path, s->sql_heap, err, sizeof err)))
			return mcp_result_error("run_sql: cannot open the database: %s", err);
		mcp_sql_on_progress(f->sql, sql_cancelled, s);
	}
	const char *sql = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "sql"));
	const cJSON *mr = cJSON_GetObjectItemCaseSensitive(args, "max_rows");
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(args, "timeout_ms");
	long max_rows = cJSON_IsNumber(mr) ? (long)mr->valuedouble : MCP_SQL_MAX_ROWS_DEFAULT;
	long timeout = cJSON_IsNumber(to) ? (long)to->valuedouble : s->sql_timeout_ms;
	cJSON *data = mcp_sql_run(f->sql, sql, max_rows, timeout, err, sizeof err);
	if (!data)
		return mcp_result_error("run_sql: %s", err);
	char sum[384];
	int rows = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(data, "rows"));
	const cJSON *nf = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(data, "non_finite_reals"),
							   "count");
	int w = snprintf(sum, sizeof sum, "run_sql: %d row%s%s.", rows, rows == 1 ? "" : "s",
			 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(data, "truncated"))
			 ? " (truncated: more rows exist; raise max_rows or narrow the query)" : "");
	if (cJSON_IsNumber(nf))
		snprintf(sum + w, sizeof sum - (size_t)w, " %.0f REAL value%s that JSON cannot hold (infinity, NaN) "
			 "%s given as the string \"Infinity\", \"-Infinity\" or \"NaN\"; non_finite_reals lists "
			 "the cells.", nf->valuedouble, nf->valuedouble == 1 ? "" : "s", nf->valuedouble == 1 ? "is" : "are");
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
		MCP_PER_FILE,
	},
	{
		"get_causal_chains", "Causal chains (why the GPU starved)",
		"The analyzer's conclusions, most severe first: for slow calls and for gaps between CUDA calls, a "
		"severity (HIGH/MEDIUM/LOW), a summary with p99/p50, the evidence aligned call by call (CPU "
		"saturation, the thread's run-queue and blocked time, competing processes, page allocations, "
		"copy bandwidth), the root cause, fixes with concrete values, and the Python file:line. Also the "
		"GPU idle share as low/high bounds (measured with CUDA event marks when the trace has them, else an "
		"estimate from host evidence), and the verdict: whether the GPU starves in the steady state "
		"(busy, partly_idle, starving, unknown) and the finding that says why. Same as "
		"`ingero-analyze explain --json`.",
		OBJ(WINDOW_PROPS ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":"
		    "\"at most this many chains (default 20)\"}", ""),
		OUT("\"chains\":{\"type\":\"array\"},\"gpu_idle_pct\":{\"type\":\"object\"},"
		    "\"verdict\":{\"type\":\"object\"},\"where_time_went\":{\"type\":\"object\"}",
		    "\"chains\",\"gpu_idle_pct\""),
		t_chains,
		MCP_PER_FILE,
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
		MCP_PER_FILE,
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
		mcp_tool_stacks,
		MCP_PER_FILE,
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
		MCP_PER_FILE,
	},
	{
		"get_gpu_idle", "Where GPU time went",
		"The share of the trace during which the GPU had no work (GPU idle), as low/high bounds (measured "
		"with CUDA event marks timed on the GPU when the trace has them, schema 3; else estimated from "
		"host evidence): figures.headline is the steady state's, the line explain prints first, "
		"figures.window_line the whole window's with its phases. Where that time went: host "
		"busy (main thread on-CPU between calls), host waiting on workers (blocked), host preempted "
		"(runnable but not running), copies, syncs; the verdict (whether the GPU starves in the "
		"steady state); and step_breakdown, where each steady step's time went (XProf's step-time graph).",
		OBJ(WINDOW_PROPS, ""),
		OUT("\"figures\":{\"type\":\"object\",\"description\":\"the headline every view prints, and its "
		    "numbers\"},\"gpu_idle_pct\":{\"type\":\"object\",\"required\":[\"low\",\"high\"],\"description\":"
		    "\"percent of the window, bounds; null when no CUDA work was queued\"},\"verdict\":"
		    "{\"type\":\"object\"},\"where_time_went\":"
		    "{\"type\":\"object\"},\"gaps\":{\"type\":\"object\"},\"step_breakdown\":{\"type\":\"object\","
		    "\"description\":\"each steady step split into parts that sum to it, their median/p90 and "
		    "shares, the thresholds and the class; {steps: 0} when no step was timed\"}",
		    "\"gpu_idle_pct\",\"where_time_went\""),
		t_gpu_idle,
		MCP_PER_FILE,
	},
	{
		"get_ranks", "Ranks and the straggler",
		"For a distributed job (torchrun, mpirun, srun: processes with RANK and the like in their "
		"environment): the ranks, the agent, and across them at their collectives (NCCL calls, matched by "
		"communicator and sequence number; or gloo all-reduces, timed on the host) when each rank arrived, "
		"how often each came last and how late, how long the others waited, and the straggler — the rank "
		"the others wait for — with its own cause found by the single-rank analysis of that rank alone "
		"(its DataLoader workers, contention, a host-bound loop). Balanced ranks are said to be so.",
		OBJ(WINDOW_PROPS, ""),
		OUT("\"ranks\":{\"type\":\"array\"},\"straggler\":{\"description\":\"null when balanced or no job\"}",
		    "\"ranks\",\"straggler\""),
		mcp_tool_ranks,
		MCP_FILE_OR_JOB,
	},
	{
		"get_nodes", "The nodes of the job",
		"The report.db files served, one a node of one job, as explain A.db B.db reads them: each node's "
		"index and name (what the other tools' node argument takes), file, host and boot id, and how its "
		"clock was put on node 0's — the offset of its clock anchor (realtime against monotonic, read by "
		"its collector), the correction the collectives' completions made, the offset applied in all, and "
		"the uncertainty that remains — with its ranks and their pids and the launcher's agent. Offered "
		"only when several report.db are served.",
		OBJ("", ""),
		OUT("\"nodes\":{\"type\":\"array\"}", "\"nodes\""),
		mcp_tool_nodes,
		MCP_JOB,
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
		    "\"elapsed_ms\":{\"type\":\"number\"},\"non_finite_reals\":{\"type\":\"object\",\"description\":"
		    "\"present when a REAL was infinity or NaN, given as a string: count, cells [row, column]\"}",
		    "\"columns\",\"rows\",\"row_count\",\"truncated\""),
		t_sql,
		MCP_PER_FILE,
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

int mcp_tool_offered(const struct mcp_server *s, const struct mcp_tool *t)
{
	return t->scope != MCP_JOB || s->nfiles > 1;
}

cJSON *mcp_tool_input_schema(const struct mcp_server *s, const struct mcp_tool *t)
{
	char more[1024];
	cJSON *in = cJSON_Parse(t->input_schema);
	if (in)
		mcp_nodes_schema(s, t, in, more, sizeof more);
	return in;
}

cJSON *mcp_tool_describe(const struct mcp_server *s, const struct mcp_tool *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "title", t->title);
	const char *desc = t->description ? t->description : mcp_sql_description();
	char more[1024];
	cJSON *in = cJSON_Parse(t->input_schema);
	if (in && mcp_nodes_schema(s, t, in, more, sizeof more)) {
		/* several files: the one file's description, then which file it reads */
		size_t n = strlen(desc) + strlen(more) + 2;
		char *d = malloc(n);
		if (d) {
			snprintf(d, n, "%s %s", desc, more);
			cJSON_AddStringToObject(o, "description", d);
			free(d);
		} else {
			cJSON_AddStringToObject(o, "description", desc);
		}
	} else {
		cJSON_AddStringToObject(o, "description", desc);
	}
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
