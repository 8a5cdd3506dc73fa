/*
 * cmd_per_process.c — `ingero-analyze per-process`: the process tree with
 * roles and host evidence (per_process.h), as a table or --json.
 */
#include "load/trace_status.h"
#include "cli/cli.h"
#include "base/json_out.h"
#include "measure/per_process.h"
#include "base/util.h"

static void print_text(FILE *f, const struct ia_trace *t, const struct ia_per_process *pp)
{
	char a[32], b[32], c[32], d[32], e[32], g[32], h[32], k[32];
	ia_trace_status_print(f, t);
	fprintf(f, "%-22s %-7s %-6s %10s %9s %15s %9s %9s %17s %10s %7s\n", "PROCESS", "PID", "ROLE",
		"CUDA calls", "CPU", "switches vol/inv", "off-CPU", "worst", "runq p50/p99", "pg allocs", "waiting");
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		char name[64], sw[40], rq[40], share[16] = "-";
		snprintf(name, sizeof name, "%*s%s", s->depth * 2 > 8 ? 8 : s->depth * 2, "", p->comm[0] ? p->comm : "?");
		snprintf(sw, sizeof sw, "%s/%s", ia_fmt_count(a, sizeof a, s->voluntary), ia_fmt_count(b, sizeof b, s->involuntary));
		snprintf(rq, sizeof rq, "%s/%s", ia_fmt_dur(c, sizeof c, s->runq_p50_ns), ia_fmt_dur(d, sizeof d, s->runq_p99_ns));
		if (s->role == IA_ROLE_WORKER && pp->main_blocked_ns)
			snprintf(share, sizeof share, "%.0f%%", 100 * s->main_wait_share);
		fprintf(f, "%-22.22s %-7d %-6s %10s %9s %15s %9s %9s %17s %10s %7s\n", name, p->pid, ia_role_name(s->role),
			ia_fmt_count(e, sizeof e, p->ncalls), ia_fmt_dur(g, sizeof g, s->cpu_ns), sw,
			ia_fmt_dur(h, sizeof h, s->off_cpu_ns), ia_fmt_dur(k, sizeof k, s->worst_stall_ns), rq,
			ia_fmt_count(a, sizeof a, s->page_allocs), share);
	}
	if (pp->main >= 0 && pp->main_thread != UINT32_MAX)
		fprintf(f, "\nmain: pid %d, thread %u; blocked %s in total. \"waiting\" = a worker's share of the CPU time "
			"workers used while the main thread was blocked. CPU, off-CPU and switches add up a "
			"process's threads, the tracer's own (ingero-*, nng:*) left out.\n",
			t->procs[pp->p[pp->main].proc].pid, t->threads[pp->main_thread].tid,
			ia_fmt_dur(a, sizeof a, pp->main_blocked_ns));
}

int ia_cmd_per_process(const struct ia_cli *c)
{
	struct ia_trace t;
	struct ia_per_process pp;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL) < 0)
		return IA_EXIT_ERROR;
	if (ia_per_process_compute(&t, &pp, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
	} else {
		if (c->json) {
			cJSON *root = cJSON_CreateObject();
			cJSON_AddItemToObject(root, "processes", ia_per_process_json(&t, &pp));
			if (pp.main >= 0)
				cJSON_AddNumberToObject(root, "main_pid", t.procs[pp.p[pp.main].proc].pid);
			if (pp.main_thread != UINT32_MAX)
				cJSON_AddNumberToObject(root, "main_tid", t.threads[pp.main_thread].tid);
			ia_json_u64(root, "main_blocked_ns", pp.main_blocked_ns);
			ia_trace_status_json(root, &t);
			if (ia_json_print(root, f, c->pretty) < 0)
				rc = IA_EXIT_ERROR;
			cJSON_Delete(root);
		} else {
			print_text(f, &t, &pp);
		}
		if (ia_cli_close_output(c, f) < 0)
			rc = IA_EXIT_ERROR;
	}
	ia_per_process_free(&pp);
	ia_cli_unload(&t);
	return rc;
}
