/*
 * processes.c — the process tree as text tables (processes.h).
 */
#include "render/processes.h"

#include "base/table.h"
#include "base/util.h"

#include <stdio.h>

static void role_cell(char *buf, size_t len, const struct ia_proc_stats *s)
{
	int d = s->depth * 2 > 6 ? 6 : s->depth * 2;
	snprintf(buf, len, "%*s%s", d, "", ia_role_name(s->role));
}

void ia_processes_print(FILE *f, const struct ia_trace *t, const struct ia_per_process *pp, int full, int width)
{
	if (!pp->n)
		return;
	struct ia_table *tb = ia_table_new(9);
	static const char *const titles[] = { "ROLE", "PID", "NAME", "THREADS", "CUDA CALLS", "CPU", "OFF-CPU",
					      "SWITCHES", "SHARE" };
	static const int left[] = { 1, 0, 1, 0, 0, 0, 0, 0, 0 }, rank[] = { 0, 0, 0, 3, 0, 0, 0, 2, 1 };
	for (int i = 0; i < 9; i++)
		ia_table_col(tb, i, titles[i], left[i], rank[i]);
	int shares = 0;
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		char role[32], pid[16], th[16], calls[32], cpu[32], off[32], sw[32], share[16] = "";
		role_cell(role, sizeof role, s);
		snprintf(pid, sizeof pid, "%d", p->pid);
		snprintf(th, sizeof th, "%u", s->nthreads);
		if (s->role == IA_ROLE_WORKER && pp->main_blocked_ns) {
			snprintf(share, sizeof share, "%.0f%%", 100 * s->main_wait_share);
			shares = 1;
		}
		const char *cells[] = { role, pid, p->comm[0] ? p->comm : "?", th, ia_fmt_count(calls, sizeof calls, p->ncalls),
					ia_fmt_dur(cpu, sizeof cpu, s->cpu_ns), ia_fmt_dur(off, sizeof off, s->off_cpu_ns),
					ia_fmt_count(sw, sizeof sw, s->context_switches), share };
		ia_table_row(tb, cells);
	}
	if (!shares)
		ia_table_col(tb, 8, "SHARE", 0, -1);   /* no worker waited for: nothing to say */
	fprintf(f, "\nProcesses:\n");
	ia_table_print(tb, f, width, "  ");
	ia_table_free(tb);
	fprintf(f, "  CPU, OFF-CPU and SWITCHES are thread time: each process's threads added up (the tracer's "
		   "own left out).%s\n",
		shares ? " SHARE: the worker's part of the CPU time the workers used while the main thread was "
			 "blocked." : "");
	if (!full)
		return;
	tb = ia_table_new(8);
	static const char *const t2[] = { "ROLE", "PID", "SWITCHES VOL/INV", "WORST STALL", "RUN-QUEUE P50",
					  "RUN-QUEUE P99", "PAGE ALLOCS", "PAGE FAULTS" };
	static const int r2[] = { 0, 0, 0, 0, 2, 0, 0, 1 };
	for (int i = 0; i < 8; i++)
		ia_table_col(tb, i, t2[i], i == 0, r2[i]);
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		char role[32], pid[16], sw[64], a[32], b[32], worst[32], p50[32], p99[32], pa[32], pf[32];
		role_cell(role, sizeof role, s);
		snprintf(pid, sizeof pid, "%d", p->pid);
		snprintf(sw, sizeof sw, "%s/%s", ia_fmt_count(a, sizeof a, s->voluntary),
			 ia_fmt_count(b, sizeof b, s->involuntary));
		const char *cells[] = { role, pid, sw, ia_fmt_dur(worst, sizeof worst, s->worst_stall_ns),
					ia_fmt_dur(p50, sizeof p50, s->runq_p50_ns), ia_fmt_dur(p99, sizeof p99, s->runq_p99_ns),
					ia_fmt_count(pa, sizeof pa, s->page_allocs), ia_fmt_count(pf, sizeof pf, s->page_faults) };
		ia_table_row(tb, cells);
	}
	fprintf(f, "\nScheduling (per process, its threads together):\n");
	ia_table_print(tb, f, width, "  ");
	ia_table_free(tb);
	fprintf(f, "  WORST STALL: the longest time one thread was off a CPU. RUN-QUEUE: how long a thread that "
		   "could run waited for a CPU.\n");
}
