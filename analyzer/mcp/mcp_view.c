/*
 * mcp_view.c — the trace as the MCP tools see it: a window and a process
 * (the tools' shared arguments) turned into an ia_filter, the trace loaded
 * for it, and what the analyzer computed on it, kept for the next call.
 *
 * One view is kept: an assistant asks several questions about the same
 * window of the same file (node) in a row.  Light questions (stats, per-process) need only
 * ia_stats_compute + ia_per_process_compute; the others need explain's
 * whole analysis (ia_analyze), which contains both, so once it exists the
 * light results are freed and taken from it: nothing is computed twice.
 */
#include "rules/analysis.h"
#include "mcp/mcp_internal.h"

#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

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

/* The trace of the call's file (s->node) for filter f with what `need`
 * asks computed.  NULL with a one-line reason. */
static struct mcp_view *view_get(struct mcp_server *s, const struct ia_filter *f, int need,
				 char *err, size_t errlen)
{
	struct mcp_view *v = &s->view;
	if (v->loaded && (v->file != s->node || !same_filter(&v->filter, f)))
		mcp_view_free(v);
	if (!v->loaded) {
		memset(&v->t, 0, sizeof v->t);
		/* the page check waited for below, once what was asked is computed */
		if (ia_trace_load(&v->t, s->files[s->node].db, f, IA_LOAD_ALL | IA_LOAD_CHECK_LATE, err, errlen) < 0) {
			ia_trace_free(&v->t);
			memset(v, 0, sizeof *v);
			return NULL;
		}
		v->file = s->node;
		v->filter = *f;
		v->loaded = 1;
	}
	if (need == MCP_NEED_ANALYSIS && !v->have_analysis) {
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
	if (need == MCP_NEED_LIGHT && !v->have_analysis && !v->have_light) {
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
	/* nothing is answered from pages the check has not found sound */
	if (ia_trace_checked(&v->t, err, errlen) < 0) {
		mcp_view_free(v);
		return NULL;
	}
	return v;
}

const struct ia_stats *mcp_view_stats(const struct mcp_view *v)
{
	return v->have_analysis ? &v->an.stats : &v->stats;
}

const struct ia_per_process *mcp_view_pp(const struct mcp_view *v)
{
	return v->have_analysis ? &v->an.pp : &v->pp;
}

/* ---- arguments shared by the tools: a time window and a process ---- */

/* Fills f from args; on a bad value returns -1 with the reason. */
int mcp_window_args(const cJSON *args, struct ia_filter *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	static const char *const keys[] = { "from", "to", "since" };
	for (int i = 0; i < 3; i++) {
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, keys[i]));
		if (!v)
			continue;
		uint64_t ns;
		/* v is at most 32 characters (the schema's maxLength) */
		if (ia_parse_dur(v, &ns) < 0) {
			snprintf(err, errlen, "argument '%s' is not a time: \"%s\" (a decimal number of seconds, or "
				 "with a unit ns, us, ms, s, m, h: 12.5, 1500ms, 2s; no sign, hex or exponent)", keys[i], v);
			return -1;
		}
		if (i == 2 && ns == 0) {
			snprintf(err, errlen, "argument 'since' must be more than 0 (e.g. 30s)");
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
struct mcp_view *mcp_view_for(struct mcp_server *s, const cJSON *args, int need, cJSON **fail)
{
	struct ia_filter f;
	char err[512];
	if (mcp_window_args(args, &f, err, sizeof err) < 0) {
		*fail = mcp_result_error("%s", err);
		return NULL;
	}
	struct mcp_view *v = view_get(s, &f, need, err, sizeof err);
	if (!v)
		*fail = mcp_result_error("the trace could not be analysed: %s", err);
	return v;
}

/* {"from_rel_ns","to_rel_ns","pid"}: what the answer covers. */
cJSON *mcp_window_json(const struct ia_trace *t)
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
