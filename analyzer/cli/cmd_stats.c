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
#include "base/util.h"

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

static void print_text(FILE *f, const struct ia_trace *t, const struct ia_stats *s,
		       const struct ia_per_process *pp)
{
	char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
	fprintf(f, "Trace: %s  (%s of evidence, %s CPUs)\n", t->command ? t->command : "(no command recorded)",
		ia_fmt_dur(a, sizeof a, t->last_ns - t->first_ns),
		t->cpus ? ia_fmt_count(b, sizeof b, (uint64_t)t->cpus) : "?");
	ia_trace_status_print(f, t);
	ia_capture_print(f, &t->capture, t->t0);
	fprintf(f, "\n%-28s %10s %9s %9s %9s %9s %9s %9s\n", "CUDA API", "count", "total", "mean",
		"p50", "p90", "p99", "max");
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *x = &s->apis[i];
		fprintf(f, "%-28s %10s %9s %9s %9s %9s %9s %9s\n", ia_api_name(t, x->api),
			ia_fmt_count(a, sizeof a, x->count), ia_fmt_dur(b, sizeof b, x->total_ns),
			ia_fmt_dur(c, sizeof c, (uint64_t)x->mean_ns), ia_fmt_dur(d, sizeof d, x->p50_ns),
			ia_fmt_dur(e, sizeof e, x->p90_ns), ia_fmt_dur(g, sizeof g, x->p99_ns),
			ia_fmt_dur(h, sizeof h, x->max_ns));
	}
	if (!s->napis)
		fprintf(f, "(no CUDA calls)\n");
	uint64_t calls = 0, stacks = 0, withheld = 0;
	for (size_t i = 0; i < s->napis; i++) {
		calls += s->apis[i].count;
		stacks += s->apis[i].stacks;
		withheld += s->apis[i].stacks_withheld;
	}
	if (calls) {
		fprintf(f, "Call stacks: %s of %s calls", ia_fmt_count(a, sizeof a, stacks),
			ia_fmt_count(b, sizeof b, calls));
		if (withheld)
			fprintf(f, "; %s more were due and withheld by the stack-time budget "
				"(INGERO_STACK_BUDGET_PPM)", ia_fmt_count(c, sizeof c, withheld));
		fputc('\n', f);
	}
	uint64_t bns, bruns, span;
	if (bpf_cost(t, &bns, &bruns, &span) && span) {
		fprintf(f, "Tracer's BPF programs: %s in %s runs, %.2f%% of one CPU over the %s traced\n",
			ia_fmt_dur(a, sizeof a, bns), ia_fmt_count(b, sizeof b, bruns), 100.0 * (double)bns / (double)span,
			ia_fmt_dur(c, sizeof c, span));
		bpf_modes_print(f, t);
		bpf_programs_print(f, t, span);
	}
	int hdr = 0;
	for (size_t i = 0; i < s->napis; i++) {
		const struct ia_api_stats *x = &s->apis[i];
		if (x->cls != INGERO_CLASS_COPY)
			continue;
		if (!hdr++)
			fprintf(f, "\n%-28s %10s %18s %18s %18s\n", "Copies", "bytes", "pinned GB/s (n)",
				"pageable GB/s (n)", "unknown GB/s (n)");
		const struct ia_copy_part *parts[3] = { &x->pinned, &x->pageable, &x->unknown };
		char col[3][40];
		for (int k = 0; k < 3; k++) {
			if (!parts[k]->count)
				snprintf(col[k], sizeof col[k], "-");
			else
				snprintf(col[k], sizeof col[k], "%.2f (%s)", ia_gbps(parts[k]->bytes, parts[k]->dur_ns),
					 ia_fmt_count(a, sizeof a, parts[k]->count));
		}
		fprintf(f, "%-28s %10s %18s %18s %18s\n", ia_api_name(t, x->api), ia_fmt_bytes(b, sizeof b, x->bytes),
			col[0], col[1], col[2]);
	}
	if (s->nproc_apis) {
		fprintf(f, "\n%-8s %-28s %10s %9s %9s %9s %9s %9s %9s\n", "PID", "CUDA API (per process)", "count",
			"total", "mean", "p50", "p90", "p99", "max");
		for (size_t q = 0; q < s->nproc_apis; q++) {
			const struct ia_proc_api_stats *x = &s->proc_apis[q];
			fprintf(f, "%-8d %-28s %10s %9s %9s %9s %9s %9s %9s\n", t->procs[x->proc].pid, ia_api_name(t, x->api),
				ia_fmt_count(a, sizeof a, x->count), ia_fmt_dur(b, sizeof b, x->total_ns),
				ia_fmt_dur(c, sizeof c, (uint64_t)x->mean_ns), ia_fmt_dur(d, sizeof d, x->p50_ns),
				ia_fmt_dur(e, sizeof e, x->p90_ns), ia_fmt_dur(g, sizeof g, x->p99_ns),
				ia_fmt_dur(h, sizeof h, x->max_ns));
		}
	}
	fprintf(f, "\n%-8s %-8s %-16s %-6s %10s %9s %9s %9s %9s %9s %9s\n", "PID", "PPID", "COMM", "ROLE",
		"CUDA calls", "switches", "off-CPU", "worst", "runq p99", "pg allocs", "CPU");
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *x = &pp->p[i];
		const struct ia_proc *p = &t->procs[x->proc];
		char comm[40], pid[16];
		snprintf(comm, sizeof comm, "%*s%s", x->depth * 2 > 8 ? 8 : x->depth * 2, "", p->comm);
		snprintf(pid, sizeof pid, "%d", p->ppid);
		fprintf(f, "%-8d %-8s %-16.16s %-6s %10s %9s %9s %9s %9s %9s %9s\n", p->pid,
			p->ppid < 0 ? "-" : pid, comm, ia_role_name(x->role),
			ia_fmt_count(a, sizeof a, p->ncalls), ia_fmt_count(b, sizeof b, x->context_switches),
			ia_fmt_dur(c, sizeof c, x->off_cpu_ns), ia_fmt_dur(d, sizeof d, x->worst_stall_ns),
			ia_fmt_dur(e, sizeof e, x->runq_p99_ns), ia_fmt_count(g, sizeof g, x->page_allocs),
			ia_fmt_dur(h, sizeof h, x->cpu_ns));
	}
}

int ia_cmd_stats(const struct ia_cli *c)
{
	struct ia_trace t;
	struct ia_stats s;
	struct ia_per_process pp;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL) < 0)
		return IA_EXIT_ERROR;
	ia_phase("load");
	if (ia_stats_compute(&t, &s) < 0) {
		ia_err("out of memory");
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	if (ia_per_process_compute(&t, &pp, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_stats_free(&s);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	ia_phase("stats+per-process");
	ia_progress_end();
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
	} else {
		if (c->json) {
			cJSON *root = ia_stats_report_json(&t, &s, &pp);
			if (ia_json_print(root, f, c->pretty) < 0)
				rc = IA_EXIT_ERROR;
			cJSON_Delete(root);
		} else {
			print_text(f, &t, &s, &pp);
		}
		if (ia_cli_close_output(c, f) < 0)
			rc = IA_EXIT_ERROR;
	}
	ia_per_process_free(&pp);
	ia_stats_free(&s);
	ia_cli_unload(&t);
	return rc;
}
