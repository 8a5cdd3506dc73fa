/*
 * cmd_stats.c — `ingero-analyze stats`: per-API latency table, copy
 * bandwidth by memory kind, and the process table; or, with --json, the
 * contract of issue 2 ({"apis":[...],"processes":[...]}, more keys may follow).
 */
#include "load/trace_status.h"
#include "base/progress.h"
#include "cli/cli.h"
#include "base/json_out.h"
#include "measure/per_process.h"
#include "measure/stats.h"
#include "base/table.h"
#include "base/util.h"
#include "base/wrap.h"
#include "render/display.h"
#include "render/headline.h"
#include "render/kernels.h"
#include "render/processes.h"
#include "render/step_times.h"
#include "rules/analysis.h"

#include <ingero/api.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* What the tracer's own BPF programs ran (collector/bpf_cost.c): false
 * when the trace does not say (an older collector, a kernel without
 * BPF run-time statistics, CUDA-only). */
static bool bpf_cost(const struct ia_trace *t, uint64_t *ns, uint64_t *runs, uint64_t *span)
{
	const char *n = ia_session(t, "bpf_run_ns"), *r = ia_session(t, "bpf_runs");
	const char *a = ia_session(t, "start_mono_ns"), *b = ia_session(t, "end_mono_ns");
	if (!n || !r || !a || !b)
		return false;
	*ns = strtoull(n, NULL, 10);
	*runs = strtoull(r, NULL, 10);
	uint64_t t0 = strtoull(a, NULL, 10), t1 = strtoull(b, NULL, 10);
	*span = t1 > t0 ? t1 - t0 : 0;
	return true;
}

/* The next program's own figures (bpf_run_ns.<program>, bpf_runs.<program>),
 * from *i = 0; NULL after the last. */
static const char *bpf_program_next(const struct ia_trace *t, size_t *i, uint64_t *run_ns, uint64_t *runs)
{
	const char *ns, *prog;
	/* (bpf_run_ns.<program>.<mode> and bpf_run_ns.<mode>: the split by mode, below) */
	do
		prog = ia_session_next(t, "bpf_run_ns.", i, &ns);
	while (prog && (strchr(prog, '.') || !strcmp(prog, "recording") || !strcmp(prog, "paused")));
	if (!prog)
		return NULL;
	char key[128];
	snprintf(key, sizeof key, "bpf_runs.%s", prog);
	const char *r = ia_session(t, key);
	*run_ns = strtoull(ns, NULL, 10);
	*runs = r ? strtoull(r, NULL, 10) : 0;
	return prog;
}

static cJSON *bpf_programs_json(const struct ia_trace *t)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i = 0;
	uint64_t run_ns, runs;
	const char *prog;
	while ((prog = bpf_program_next(t, &i, &run_ns, &runs))) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "program", prog);
		ia_json_u64(o, "run_ns", run_ns);
		ia_json_u64(o, "runs", runs);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void bpf_programs_print(FILE *f, const struct ia_trace *t, uint64_t span)
{
	size_t i = 0;
	uint64_t run_ns, runs;
	const char *prog;
	char a[32], b[32], c[32];
	while ((prog = bpf_program_next(t, &i, &run_ns, &runs))) {
		fprintf(f, "  %-24s %9s in %9s runs (%s a run), %.3f%% of one CPU\n", prog,
			ia_fmt_dur(a, sizeof a, run_ns), ia_fmt_count(b, sizeof b, runs),
			ia_fmt_dur(c, sizeof c, runs ? run_ns / runs : 0), 100.0 * (double)run_ns / (double)span);
	}
}

/* The programs' time while the program recorded and while it paused its
 * capture (collector/bpf_cost.c): false when the trace has no pause. */
static bool bpf_mode(const struct ia_trace *t, const char *mode, uint64_t *run_ns, uint64_t *mode_ns)
{
	char k1[48], k2[48];
	snprintf(k1, sizeof k1, "bpf_run_ns.%s", mode);
	snprintf(k2, sizeof k2, "bpf_mode_ns.%s", mode);
	const char *a = ia_session(t, k1), *b = ia_session(t, k2);
	if (!a || !b)
		return false;
	*run_ns = strtoull(a, NULL, 10);
	*mode_ns = strtoull(b, NULL, 10);
	return *mode_ns > 0;
}

static const char *const bpf_modes[] = { "recording", "paused" };

static cJSON *bpf_modes_json(const struct ia_trace *t)
{
	cJSON *o = NULL;
	for (size_t k = 0; k < 2; k++) {
		uint64_t run_ns, mode_ns;
		if (!bpf_mode(t, bpf_modes[k], &run_ns, &mode_ns))
			continue;
		if (!o)
			o = cJSON_CreateObject();
		cJSON *m = cJSON_AddObjectToObject(o, bpf_modes[k]);
		ia_json_u64(m, "run_ns", run_ns);
		ia_json_u64(m, "mode_ns", mode_ns);
	}
	return o;
}

static void bpf_modes_print(FILE *f, const struct ia_trace *t)
{
	char a[32], b[32];
	for (size_t k = 0; k < 2; k++) {
		uint64_t run_ns, mode_ns;
		if (bpf_mode(t, bpf_modes[k], &run_ns, &mode_ns))
			fprintf(f, "  while %-9s %9s, %.3f%% of one CPU over %s\n", bpf_modes[k], ia_fmt_dur(a, sizeof a, run_ns),
				100.0 * (double)run_ns / (double)mode_ns, ia_fmt_dur(b, sizeof b, mode_ns));
	}
}

static cJSON *trace_json(const struct ia_trace *t)
{
	cJSON *o = cJSON_CreateObject();
	ia_json_str(o, "command", t->command);
	cJSON_AddNumberToObject(o, "cpus", t->cpus);
	ia_json_u64(o, "start_mono_ns", t->t0);
	ia_json_u64(o, "first_rel_ns", t->first_ns - t->t0);
	ia_json_u64(o, "last_rel_ns", t->last_ns - t->t0);
	ia_json_u64(o, "cuda_calls", t->ncalls);
	ia_json_u64(o, "off_cpu_intervals", t->noffs);
	uint64_t ns, runs, span;
	if (bpf_cost(t, &ns, &runs, &span)) {
		ia_json_u64(o, "tracer_bpf_run_ns", ns);
		ia_json_u64(o, "tracer_bpf_runs", runs);
		ia_json_u64(o, "session_ns", span);
		cJSON_AddItemToObject(o, "tracer_bpf_programs", bpf_programs_json(t));
		cJSON *modes = bpf_modes_json(t);
		if (modes)
			cJSON_AddItemToObject(o, "tracer_bpf_by_capture_mode", modes);
	}
	ia_capture_json(o, &t->capture, t->t0);
	ia_trace_status_json(o, t);
	return o;
}

cJSON *ia_stats_report_json(const struct ia_trace *t, const struct ia_stats *s,
			    const struct ia_per_process *pp)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddItemToObject(root, "apis", ia_stats_apis_json(t, s));
	cJSON *procs = ia_per_process_json(t, pp);
	/* per process: latency of each API it called */
	for (size_t i = 0; i < pp->n; i++) {
		cJSON *arr = cJSON_CreateArray();
		for (size_t q = 0; q < s->nproc_apis; q++) {
			const struct ia_proc_api_stats *x = &s->proc_apis[q];
			if (x->proc != pp->p[i].proc)
				continue;
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "api", ia_api_name(t, x->api));
			ia_json_u64(o, "count", x->count);
			ia_json_u64(o, "total_ns", x->total_ns);
			ia_json_round(o, "mean_ns", x->mean_ns, 0);
			ia_json_u64(o, "p50_ns", x->p50_ns);
			ia_json_u64(o, "p90_ns", x->p90_ns);
			ia_json_u64(o, "p99_ns", x->p99_ns);
			ia_json_u64(o, "max_ns", x->max_ns);
			cJSON_AddItemToArray(arr, o);
		}
		cJSON_AddItemToObject(cJSON_GetArrayItem(procs, (int)i), "apis", arr);
	}
	cJSON_AddItemToObject(root, "processes", procs);
	cJSON_AddItemToObject(root, "trace", trace_json(t));
	return root;
}

/* One row of the copies table per API and host memory kind with calls.
 * GB/s is bytes over the host's time in the call: a transfer's rate only
 * where the host waits for it (pageable memory, a synchronous copy); a
 * pinned asynchronous copy returns before its transfer, so its rate is not
 * given (its GPU time is in stats --kernels). */
static void copies_print(FILE *f, const struct ia_trace *t, const struct ia_stats *s, int width)
{
	struct ia_table *tb = ia_table_new(6);
	static const char *const titles[] = { "COPIES", "MEMORY", "CALLS", "BYTES", "HOST TIME", "GB/S" };
	for (int i = 0; i < 6; i++)
		ia_table_col(tb, i, titles[i], i < 2, 0);
	int rows = 0, async_pinned = 0;
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *x = &s->apis[i];
		if (x->cls != INGERO_CLASS_COPY)
			continue;
		const struct ia_copy_part *parts[3] = { &x->pinned, &x->pageable, &x->unknown };
		static const char *const kinds[3] = { "pinned", "pageable", "unknown" };
		for (int k = 0; k < 3; k++) {
			if (!parts[k]->count)
				continue;
			char n[32], b[32], d[32], g[32] = "-";
			int waits = k == 1 || ia_api_completes_work(x->api);
			if (waits)
				snprintf(g, sizeof g, "%.2f", ia_gbps(parts[k]->bytes, parts[k]->dur_ns));
			else
				async_pinned = 1;
			const char *cells[] = { ia_api_name(t, x->api), kinds[k], ia_fmt_count(n, sizeof n, parts[k]->count),
						ia_fmt_bytes(b, sizeof b, parts[k]->bytes), ia_fmt_dur(d, sizeof d, parts[k]->dur_ns),
						g };
			ia_table_row(tb, cells);
			rows++;
		}
	}
	if (rows) {
		fputc('\n', f);
		ia_table_print(tb, f, width, "");
		fprintf(f, "GB/S: bytes over the host's time in the call, where the host waits for the transfer%s.\n",
			async_pinned ? "; \"-\": asynchronous copies return before their transfer ends (their GPU time: "
				       "stats --kernels)" : "");
	}
	ia_table_free(tb);
}

static void api_table(FILE *f, const struct ia_trace *t, const struct ia_stats *s, int width)
{
	struct ia_table *tb = ia_table_new(8);
	static const char *const titles[] = { "CUDA API", "CALLS", "TOTAL", "MEAN", "P50", "P90", "P99", "MAX" };
	static const int rank[] = { 0, 0, 0, 2, 0, 3, 0, 1 };
	for (int i = 0; i < 8; i++)
		ia_table_col(tb, i, titles[i], i == 0, rank[i]);
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *x = &s->apis[i];
		char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
		const char *cells[] = { ia_api_name(t, x->api), ia_fmt_count(a, sizeof a, x->count),
					ia_fmt_dur(b, sizeof b, x->total_ns), ia_fmt_dur(c, sizeof c, (uint64_t)x->mean_ns),
					ia_fmt_dur(d, sizeof d, x->p50_ns), ia_fmt_dur(e, sizeof e, x->p90_ns),
					ia_fmt_dur(g, sizeof g, x->p99_ns), ia_fmt_dur(h, sizeof h, x->max_ns) };
		ia_table_row(tb, cells);
	}
	fprintf(f, "\nCUDA calls on the host (time inside each call):\n");
	if (s->napis)
		ia_table_print(tb, f, width, "");
	else
		fprintf(f, "(no CUDA calls)\n");
	ia_table_free(tb);
}

/* Per process, only when more than one process made calls (else it is the table above). */
static void proc_api_table(FILE *f, const struct ia_trace *t, const struct ia_stats *s, int width)
{
	uint32_t first = s->nproc_apis ? s->proc_apis[0].proc : 0;
	int several = 0;
	for (size_t q = 0; q < s->nproc_apis; q++)
		several |= s->proc_apis[q].proc != first;
	if (!several)
		return;
	struct ia_table *tb = ia_table_new(7);
	static const char *const titles[] = { "PID", "CUDA API", "CALLS", "TOTAL", "P50", "P99", "MAX" };
	for (int i = 0; i < 7; i++)
		ia_table_col(tb, i, titles[i], i == 1, 0);
	for (size_t q = 0; q < s->nproc_apis; q++) {
		const struct ia_proc_api_stats *x = &s->proc_apis[q];
		char p[16], a[32], b[32], d[32], g[32], h[32];
		snprintf(p, sizeof p, "%d", t->procs[x->proc].pid);
		const char *cells[] = { p, ia_api_name(t, x->api), ia_fmt_count(a, sizeof a, x->count),
					ia_fmt_dur(b, sizeof b, x->total_ns), ia_fmt_dur(d, sizeof d, x->p50_ns),
					ia_fmt_dur(g, sizeof g, x->p99_ns), ia_fmt_dur(h, sizeof h, x->max_ns) };
		ia_table_row(tb, cells);
	}
	fprintf(f, "\nCUDA calls per process:\n");
	ia_table_print(tb, f, width, "");
	ia_table_free(tb);
}

static void print_text(FILE *f, const struct ia_analysis *an, int verbose, int width)
{
	const struct ia_trace *t = an->t;
	const struct ia_stats *s = &an->stats;
	char a[32], b[32], c[32];
	ia_headline_print(f, an, 0, verbose);
	ia_step_times_print(f, an);
	api_table(f, t, s, width);
	uint64_t calls = 0, stacks = 0, withheld = 0;
	for (size_t i = 0; i < s->napis; i++) {
		calls += s->apis[i].count;
		stacks += s->apis[i].stacks;
		withheld += s->apis[i].stacks_withheld;
	}
	if (calls && verbose) {
		fprintf(f, "Call stacks: %s of %s calls", ia_fmt_count(a, sizeof a, stacks),
			ia_fmt_count(b, sizeof b, calls));
		if (withheld)
			fprintf(f, "; %s more were due and withheld by the stack-time budget "
				"(INGERO_STACK_BUDGET_PPM)", ia_fmt_count(c, sizeof c, withheld));
		fputc('\n', f);
	}
	copies_print(f, t, s, width);
	proc_api_table(f, t, s, width);
	ia_processes_print(f, t, &an->pp, 1, width);
	uint64_t bns, bruns, span;
	if (bpf_cost(t, &bns, &bruns, &span) && span) {
		fprintf(f, "\nTracer's BPF programs: %s in %s runs, %.2f%% of one CPU over the %s traced\n",
			ia_fmt_dur(a, sizeof a, bns), ia_fmt_count(b, sizeof b, bruns), 100.0 * (double)bns / (double)span,
			ia_fmt_dur(c, sizeof c, span));
		if (verbose) {
			bpf_modes_print(f, t);
			bpf_programs_print(f, t, span);
		}
	}
}

int ia_stats_write(const struct ia_cli *c, struct ia_analysis *an)
{
	ia_progress_end();
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f)
		return IA_EXIT_ERROR;
	if (c->json) {
		cJSON *root = c->kernels ? ia_kernels_json(an) : ia_stats_report_json(an->t, &an->stats, &an->pp);
		if (root && !c->kernels) {
			cJSON_AddItemToObject(root, "figures", ia_figures_json(an));
			cJSON_AddItemToObject(root, "step_times", ia_step_times_json(an));
		}
		if (!root || ia_json_print(root, f, c->pretty) < 0)
			rc = IA_EXIT_ERROR;
		cJSON_Delete(root);
	} else {
		struct ia_wrap *w = ia_wrap_begin();
		FILE *o = w ? ia_wrap_file(w) : f;
		if (c->kernels)
			ia_kernels_print(o, an, ia_width_for(f));
		else
			print_text(o, an, c->verbose, ia_width_for(f));
		if (w && ia_display_write(f, w, ia_width_for(f), NULL) < 0)
			rc = IA_EXIT_ERROR;
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	return rc;
}

int ia_cmd_stats(const struct ia_cli *c)
{
	return ia_cli_views(c, ia_stats_write);
}
