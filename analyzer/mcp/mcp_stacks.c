/*
 * mcp_stacks.c — the get_stacks tool: the slowest CUDA calls with their
 * native and Python stacks and what happened during each call.
 *
 * Ranking is a bounded insertion list (k <= 50, and most calls lose at the
 * first comparison).  What happened during a call is explain's own per-call
 * alignment (ia_align_call: on-CPU, run-queue and blocked time, CPU
 * saturation), the Python line is explain's label (ia_stack_python), and
 * the frame lists are read by the stack id (load/frames.h), once per
 * distinct stack.
 */
#include "mcp/mcp_internal.h"

#include "load/db.h"
#include "load/frames.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stack's frames; NULL with err set when they cannot be read. */
static cJSON *frames_of(sqlite3 *db, uint64_t stack_id, struct ia_frames **r, char *err, size_t errlen)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *nat = cJSON_AddArrayToObject(o, "native");
	cJSON *py = cJSON_AddArrayToObject(o, "python");
	char ignored[256];
	if (!*r && !(*r = ia_frames_new(db, ignored, sizeof ignored)))
		return o;
	struct ia_frame fr;
	int rc;
	ia_frames_start(*r, stack_id);
	while ((rc = ia_frames_next(*r, &fr, err, errlen)) > 0) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "depth", fr.depth);
		ia_json_str(f, "symbol", fr.symbol);
		if (fr.kind == IA_FRAME_PYTHON) {
			ia_json_str(f, "file", fr.file);
			cJSON_AddNumberToObject(f, "line", (int)fr.line);
			cJSON_AddItemToArray(py, f);
		} else {
			ia_json_str(f, "module", fr.module);
			ia_json_u64(f, "offset", (uint64_t)fr.offset);
			cJSON_AddItemToArray(nat, f);
		}
	}
	if (rc < 0) {
		cJSON_Delete(o);
		o = NULL;
	}
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

cJSON *mcp_tool_stacks(struct mcp_server *s, const cJSON *args)
{
	cJSON *fail = NULL;
	struct mcp_view *v = mcp_view_for(s, args, MCP_NEED_ANALYSIS, &fail);
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
	struct ia_frames *st = NULL;
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
				char err[512];
				cJSON *fr = frames_of(t->db, sid, &st, err, sizeof err);
				if (!fr || ia_stack_names_error(v->an.names, err, sizeof err) < 0) {
					cJSON_Delete(o);
					cJSON_Delete(data);
					ia_frames_free(st);
					free(top);
					free(key);
					return mcp_result_error("get_stacks: %s", err);
				}
				cJSON_AddItemToObject(stacks, idk, fr);
				nstacks++;
			}
		} else {
			cJSON_AddNullToObject(o, "stack_id");
			nostack++;
		}
		cJSON_AddItemToArray(calls, o);
	}
	ia_frames_free(st);
	free(top);
	free(key);
	ia_json_u64(data, "calls_considered", considered);
	cJSON_AddItemToObject(data, "window", mcp_window_json(t));
	char a[32], sum[384];
	snprintf(sum, sizeof sum, "get_stacks: the %zu slowest of %s calls (%s), with %zu distinct stacks "
		 "(native frames innermost first; python frames give file:line)%s. During each call the calling "
		 "thread was on-CPU (oncpu_ns), waiting for a CPU (runq_ns) or blocked (blocked_ns).",
		 n, ia_fmt_count(a, sizeof a, considered), by_ratio ? "by duration / the API's p50" : "by duration",
		 nstacks, nostack ? "; some calls have no recorded stack" : "");
	return mcp_result_data(sum, data);
}
