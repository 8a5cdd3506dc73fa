/*
 * main_metrics.c — what the collector's /metrics page says (metrics.h):
 * the figures of `ingero-analyze explain --json`, computed by the
 * analyzer's own code on the file as committed so far, not copied or
 * approximated here — so the page and explain can never disagree — plus
 * the intake's live counters.
 *
 * The analyzer (analyzer/: load, measure, rules, render) is linked into the
 * collector for this (GNUmakefile); its progress line is sent to /dev/null.
 * One analysis of the whole file gives the job (its ranks, their waits at
 * the collectives, the straggler) and, for a trace of one process tree, its
 * figures; for a job, each rank's own figures come from the analysis of
 * that rank alone (`explain -p PID`).  Labels, all of bounded cardinality:
 * run (the job's TORCHELASTIC_RUN_ID, else "none"; not "job", which is the
 * label Prometheus gives every target's series), rank (the rank, "none" outside a
 * job), kind and severity of the top cause (the first finding: the enum of
 * docs/chains.md), source of a loss (the losses table's fixed names), part
 * (window, steady) and bound (low, high).
 *
 * Excluded from the collector's unit tests (GNUmakefile: main*.c), which do
 * not link the analyzer.
 */
#include "main_metrics.h"

#include "base/progress.h"
#include "load/db.h"
#include "load/trace.h"
#include "render/explain_json.h"
#include "render/job_render.h"
#include "rules/analysis.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double num(const cJSON *o, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	const cJSON *x = o;
	for (char *s = strtok(buf, "."); s && x; s = strtok(NULL, "."))
		x = cJSON_GetObjectItemCaseSensitive(x, s);
	return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* A label value as the exposition format wants it (", \ and newline escaped). */
static void label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

struct series {
	char job[128], rank[16];
};

static void lbl(FILE *f, const struct series *s)
{
	fputs("run=\"", f);
	label(f, s->job);
	fprintf(f, "\",rank=\"%s\"", s->rank);
}

/* One process tree's figures (explain --json of it): GPU idle, step, the
 * input-bound share, the top cause. */
static void tree_figures(FILE *f, const struct series *s, const cJSON *doc)
{
	static const char *const parts[][3] = { { "window", "low", "high" }, { "steady", "steady_low", "steady_high" } };
	const cJSON *idle = cJSON_GetObjectItemCaseSensitive(doc, "gpu_idle_pct");
	for (int p = 0; p < 2; p++)
		for (int b = 1; b <= 2; b++) {
			double v = num(idle, parts[p][b]);
			if (v < 0)
				continue;
			fprintf(f, "ingero_gpu_idle_ratio{");
			lbl(f, s);
			fprintf(f, ",part=\"%s\",bound=\"%s\"} %.6g\n", parts[p][0], b == 1 ? "low" : "high", v / 100);
		}
	fprintf(f, "ingero_gpu_idle_measured{");
	lbl(f, s);
	fprintf(f, "} %d\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(idle, "measured")));
	double step = num(doc, "phases.step.ns");
	if (step > 0) {
		fprintf(f, "ingero_step_seconds{");
		lbl(f, s);
		fprintf(f, "} %.9g\n", step / 1e9);
	}
	double win = num(doc, "where_time_went.window_ns"), wait = num(doc, "where_time_went.host_waiting_on_workers_ns");
	if (win > 0) {
		fprintf(f, "ingero_input_bound_ratio{");
		lbl(f, s);
		fprintf(f, "} %.6g\n", wait > 0 ? wait / win : 0);
	}
	const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "chains"), 0);
	const char *kind = first ? str(first, "kind") : NULL, *sev = first ? str(first, "severity") : NULL;
	fprintf(f, "ingero_top_cause{");
	lbl(f, s);
	fprintf(f, ",kind=\"%s\",severity=\"%s\"} 1\n", kind ? kind : "none", sev ? sev : "NONE");
}

static cJSON *analyze_json(sqlite3 *db, int pid, int job, char *err, size_t errlen)
{
	struct ia_filter flt;
	struct ia_trace t;
	struct ia_analysis a;
	cJSON *doc = NULL;
	memset(&flt, 0, sizeof flt);
	flt.pid = pid;
	if (ia_trace_load(&t, db, &flt, IA_LOAD_ALL, err, errlen) == 0) {
		if (ia_analyze(&t, &a, err, errlen) == 0)
			doc = job ? ia_job_explain_json(&a) : ia_explain_json(&a);
		ia_analysis_free(&a);
	}
	ia_trace_free(&t);
	return doc;
}

static void job_figures(FILE *f, const char *job, const cJSON *ranks)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(ranks, "arrivals")) {
		struct series s;
		snprintf(s.job, sizeof s.job, "%s", job);
		snprintf(s.rank, sizeof s.rank, "%.0f", num(x, "rank"));
		fprintf(f, "ingero_collective_wait_ratio{");
		lbl(f, &s);
		fprintf(f, "} %.6g\ningero_collective_wait_seconds{", num(x, "wait_share"));
		lbl(f, &s);
		fprintf(f, "} %.9g\ningero_collective_last_ratio{", num(x, "wait_ns") / 1e9);
		lbl(f, &s);
		fprintf(f, "} %.6g\n", num(x, "last_share"));
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(ranks, "straggler");
		fprintf(f, "ingero_straggler{");
		lbl(f, &s);
		fprintf(f, "} %d\n", cJSON_IsObject(st) && num(st, "rank") == num(x, "rank"));
	}
}

static void headers(FILE *f)
{
	fputs("# HELP ingero_gpu_idle_ratio GPU idle, as explain's gpu_idle_pct bounds (part window or steady state; "
	      "measured from GPU marks where ingero_gpu_idle_measured is 1, else estimated)\n"
	      "# TYPE ingero_gpu_idle_ratio gauge\n"
	      "# HELP ingero_gpu_idle_measured 1 when the GPU idle bounds were measured with CUDA event marks\n"
	      "# TYPE ingero_gpu_idle_measured gauge\n"
	      "# HELP ingero_step_seconds the loop's step, as explain's phases.step\n"
	      "# TYPE ingero_step_seconds gauge\n"
	      "# HELP ingero_input_bound_ratio share of the window the main thread waited on its DataLoader workers "
	      "with no GPU work queued (explain's where_time_went)\n"
	      "# TYPE ingero_input_bound_ratio gauge\n"
	      "# HELP ingero_top_cause the first finding of explain (kind and severity; none when no finding)\n"
	      "# TYPE ingero_top_cause gauge\n"
	      "# HELP ingero_collective_wait_ratio a rank's wait for the last rank at the collectives over its span\n"
	      "# TYPE ingero_collective_wait_ratio gauge\n"
	      "# HELP ingero_collective_wait_seconds a rank's wait for the last rank at the collectives\n"
	      "# TYPE ingero_collective_wait_seconds gauge\n"
	      "# HELP ingero_collective_last_ratio share of the collectives a rank arrived at last\n"
	      "# TYPE ingero_collective_last_ratio gauge\n"
	      "# HELP ingero_straggler 1 for the rank explain names the straggler\n"
	      "# TYPE ingero_straggler gauge\n"
	      "# HELP ingero_losses what was lost while tracing, by source (the losses table)\n"
	      "# TYPE ingero_losses gauge\n",
	      f);
}

static void live_counters(FILE *f, struct metrics_ctx *c, int final)
{
	struct intake_stats is;
	pthread_mutex_lock(&c->lock);
	is = c->is;
	if (c->in)
		intake_stats(c->in, &is);
	pthread_mutex_unlock(&c->lock);
	fprintf(f, "# HELP ingero_up 1 while the collector serves figures\n# TYPE ingero_up gauge\ningero_up 1\n"
		   "# HELP ingero_trace_final 1 once the trace has ended: the figures are the final file's\n"
		   "# TYPE ingero_trace_final gauge\ningero_trace_final %d\n"
		   "# HELP ingero_collector_messages_total messages received from the preload library\n"
		   "# TYPE ingero_collector_messages_total counter\ningero_collector_messages_total %llu\n"
		   "# HELP ingero_collector_cuda_calls_total CUDA calls received\n"
		   "# TYPE ingero_collector_cuda_calls_total counter\ningero_collector_cuda_calls_total %llu\n"
		   "# HELP ingero_collector_malformed_messages_total messages the decoder refused\n"
		   "# TYPE ingero_collector_malformed_messages_total counter\ningero_collector_malformed_messages_total %llu\n",
		final, (unsigned long long)is.messages, (unsigned long long)is.calls, (unsigned long long)is.malformed);
}

char *metrics_page(void *arg, int final)
{
	struct metrics_ctx *c = arg;
	char *buf = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	live_counters(f, c, final);
	static FILE *devnull;
	if (!devnull && (devnull = fopen("/dev/null", "w")))
		ia_progress_output(devnull, 0);   /* the analyzer's progress line: not on the collector's terminal */
	ia_db_opened_by_writer();   /* (its own file: no descriptor of it closed outside SQLite) */
	sqlite3 *db = ia_db_open(c->path, err, sizeof err);
	cJSON *doc = db ? analyze_json(db, 0, 1, err, sizeof err) : NULL;
	if (doc) {
		headers(f);
		const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(doc, "ranks");
		const char *run = ranks ? str(ranks, "run_id") : NULL;
		struct series s;
		snprintf(s.job, sizeof s.job, "%s", run && *run ? run : "none");
		if (ranks) {
			job_figures(f, s.job, ranks);
			const cJSON *x;
			cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(ranks, "ranks")) {
				cJSON *one = analyze_json(db, (int)num(x, "pid"), 0, err, sizeof err);
				snprintf(s.rank, sizeof s.rank, "%.0f", num(x, "rank"));
				if (one)
					tree_figures(f, &s, one);
				cJSON_Delete(one);
			}
		} else {
			snprintf(s.rank, sizeof s.rank, "none");
			tree_figures(f, &s, doc);
		}
		const cJSON *l;
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "trace"), "losses")) {
			fputs("ingero_losses{run=\"", f);
			label(f, s.job);
			fputs("\",source=\"", f);
			label(f, l->string);
			fprintf(f, "\"} %.0f\n", l->valuedouble);
		}
	} else {
		fputs("# the analysis of the file so far failed: ", f);
		for (char *p = err; *p; p++)
			fputc(*p == '\n' ? ' ' : *p, f);
		fputc('\n', f);
	}
	cJSON_Delete(doc);
	if (db)
		ia_db_close(db);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(f, "# HELP ingero_metrics_analysis_seconds how long building these figures took\n"
		   "# TYPE ingero_metrics_analysis_seconds gauge\ningero_metrics_analysis_seconds %.6f\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fclose(f);
	return buf;
}

void metrics_ctx_final(struct metrics_ctx *c, const struct intake_stats *is)
{
	pthread_mutex_lock(&c->lock);
	if (is) {
		c->is = *is;
		c->have_final = 1;
	}
	c->in = NULL;
	pthread_mutex_unlock(&c->lock);
}
