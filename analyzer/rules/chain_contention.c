/*
 * chain_contention.c — the cpu_contention rule: in the steady state the
 * GPU finished each step's work before the host asked for more, and the
 * thread that issues that work spent its time waiting for a CPU.
 *
 * The stretches are hostbound.h's (closed by a sync that found the GPU
 * idle: the host set the pace).  The main thread's run-queue time in them
 * is time the run lost to other tasks holding the CPUs; the untraced ones
 * are named from the collector's competitors table with their CPU time in
 * those stretches (competitors.h), so the fix can name what to move.
 * Its share is of the steady state: unlike GPU idle inside the stretches,
 * run-queue time is measured, so this rule may be HIGH.
 */
#include "rules/chain_build.h"

#include "measure/competitors.h"
#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTENDED 0.30               /* the main thread's runnable share of the stretches */
#define CONTENTION_MIN_STRETCHES 10  /* enough steps to call it the steady state */
#define MAX_COMP 5

/* One cause, one finding: where the gaps finding already says the main
 * thread waited for a CPU (gaps_host_preempted), this one told the same
 * contention again with the same fixes (c10: two HIGH findings, both
 * naming sh).  Its steps' measure and its named competitors become lines
 * of that finding (before its closing [CUDA] line), its fixes — which name
 * the competitor where the gaps' own may not — replace that finding's, its
 * evidence is that finding's cpu_contention, and it is dropped. */
static void fold_into_gaps(struct ia_analysis *a, size_t self)
{
	size_t gi = 0;
	while (gi < a->nchains && a->chains[gi].kind != IA_KIND_GAPS_HOST_PREEMPTED)
		gi++;
	if (gi == a->nchains)
		return;
	struct ia_chain *c = &a->chains[self], *g = &a->chains[gi];
	for (int i = 0; i < c->ntimeline && g->ntimeline > 0 && g->ntimeline < IA_CHAIN_MAX_TIMELINE; i++) {
		int seen = 0;
		for (int j = 0; j < g->ntimeline; j++)
			seen |= !strcmp(g->timeline[j], c->timeline[i]);
		if (seen)
			continue;
		/* (before the gaps finding's own [CUDA] line, its last) */
		memcpy(g->timeline[g->ntimeline], g->timeline[g->ntimeline - 1], sizeof g->timeline[0]);
		memcpy(g->timeline[g->ntimeline - 1], c->timeline[i], sizeof g->timeline[0]);
		g->ntimeline++;
	}
	if (c->nfixes) {
		memcpy(g->fixes, c->fixes, sizeof g->fixes);
		g->nfixes = c->nfixes;
	}
	if (c->sev > g->sev)
		g->sev = c->sev;
	if (!g->source[0])
		memcpy(g->source, c->source, sizeof g->source);
	cJSON_AddItemToObject(g->evidence, "cpu_contention", c->evidence);
	c->evidence = NULL;
	ia_chain_drop(a, self);
}

int ia_rule_cpu_contention(struct ia_analysis *a, size_t *cap)
{
	const struct ia_hostbound *h = &a->hb;
	if (!a->idle.steady_ns || !h->has_offcpu || h->n < CONTENTION_MIN_STRETCHES || !h->ns)
		return 0;
	double rq = (double)h->main_runq_ns / (double)h->ns;
	if (rq < CONTENDED)
		return 0;
	double share = ia_idle_share(&a->idle, h->main_runq_ns);
	enum ia_severity sev = ia_by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	/* Who held the CPUs.  The collector's competitors table names every
	 * untraced process that took a CPU from the job (the CPU of those
	 * stints: a lower bound of what they used), over the whole trace; the
	 * loop thread's own waits in the steady state name whom it waited
	 * behind: its preemptions (off_cpu.next_pid), and from schema 9 its
	 * waits after a wake-up too (off_cpu.holder_pid) — before, a thread
	 * woken and left waiting did not record who ran instead. */
	struct ia_comp_group comp[MAX_COMP], took[MAX_COMP];
	uint64_t comp_ns, taken_ns = 0, taken_untraced_ns = 0;
	uint64_t all[2] = { a->t->first_ns, a->t->last_ns + 1 };
	size_t ncomp = ia_competitors_in(&a->ev, all, 1, comp, MAX_COMP, &comp_ns), ntook = 0, nw;
	uint64_t *w = ia_phases_steady_windows(&a->ph, a->gaps.win_start, a->gaps.win_end, &nw);
	char err[256];
	if (ia_cpu_takers(a->t, &a->pp, &a->ev, a->t->threads[a->pp.main_thread].tid, w, nw, took, MAX_COMP, &ntook,
			  &taken_ns, &taken_untraced_ns, err, sizeof err) < 0)
		ntook = 0;   /* evidence only: without it, no names */
	free(w);
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_CPU_CONTENTION);
	if (!c)
		return -1;
	const struct ia_trace *t = a->t;
	const struct ia_proc *mp = &t->procs[a->pp.p[a->pp.main].proc];
	int cpus = ia_cpus_of(a);
	double sat = ia_cpu_saturation(&a->ev, a->gaps.win_start, a->gaps.win_end);
	char d1[32], d2[32], d3[32], d4[32], n1[32], names[200], tnames[200], lim[600];
	/* a CPU quota stops the loop thread with CPUs free (chain_gaps.c's
	 * preempted cause says the same of the gaps) */
	int quota = ia_cpu_quota_held_back(a, ncomp > 0, h->main_runq_ns);
	c->sev = sev;
	c->cost_ns = h->main_runq_ns;
	c->impact = ia_idle_impact(&a->idle, h->main_runq_ns);
	if (h->nuser_lines)   /* the user's line the sampled launches come from the most: the loop */
		snprintf(c->source, sizeof c->source, "%s", h->user_lines[0].line);
	ia_competitors_text(names, sizeof names, comp, ncomp);
	ia_competitors_text(tnames, sizeof tnames, took, ntook);
	snprintf(c->summary, sizeof c->summary,
		 "CPU contention: the thread that queues the GPU work waited for a CPU %s (%.0f%% of the steady state), "
		 "while the GPU had finished its work%s%s",
		 ia_fmt_dur(d1, sizeof d1, h->main_runq_ns), 100 * share, ncomp ? " - CPUs taken by " : "", ncomp ? names : "");
	if (sat >= 0)
		ia_chain_line(c, "[SYSTEM] CPU %.0f%% busy over the window (%d CPUs)", 100 * sat, ia_machine_cpus(a));
	if (ia_cpu_limit_text(a, lim, sizeof lim)[0])
		ia_chain_line(c, "[SYSTEM] %s", lim);
	ia_chain_line(c, "[HOST] main thread (pid %d) in %s steps whose closing sync found the GPU idle (%s): waiting for a "
		      "CPU %s (%.0f%%), on-CPU %s, blocked %s", mp->pid, ia_fmt_count(n1, sizeof n1, h->n),
		      ia_fmt_dur(d1, sizeof d1, h->ns), ia_fmt_dur(d2, sizeof d2, h->main_runq_ns), 100 * rq,
		      ia_fmt_dur(d3, sizeof d3, h->ns - h->main_off_ns),
		      ia_fmt_dur(d4, sizeof d4, h->main_off_ns - h->main_runq_ns));
	if (ncomp)
		ia_chain_line(c, "[SYSTEM] untraced processes that took CPUs from the job (competitors, whole trace; CPU of "
			      "those stints): %s", names);
	if (ntook && t->off_holder)
		ia_chain_line(c, "[HOST] the loop thread waited for a CPU in the steady state behind (preempted by it, or "
			      "woken and queued until it left the CPU): %s", tnames);
	else if (ntook)
		ia_chain_line(c, "[HOST] the loop thread's preemptions in the steady state gave the CPU to %s", tnames);
	ia_chain_line(c, "[CUDA] the syncs closing those steps waited at most %s: the GPU was done before the host asked",
		      ia_fmt_dur(d1, sizeof d1, h->close_max_ns));
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The host sets the pace here (each step's closing sync found the GPU already idle), and the thread "
		 "that queues the GPU work was runnable but not running %.0f%% of that time: %s.",
		 100 * rq, quota ? "the job's CPU quota stopped it, whether CPUs were free or not" : "other tasks held the CPUs");
	if (quota) {
		ia_cpu_quota_cause(c, a);
		ia_addf(c->root_cause, sizeof c->root_cause, ".");
	}
	if (ncomp)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" Processes outside the job took CPUs from it: %s (%s of CPU in the stints that preempted it).",
			names, ia_fmt_dur(d1, sizeof d1, comp_ns));
	int pinned = t->command && strstr(t->command, "taskset") != NULL;
	if (pinned)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" The job was started under taskset (%s): it may use only the CPUs it shares with them.", t->command);
	if (quota)
		ia_cpu_quota_fix(c);
	if (ia_workers_crowd_cpus(a))
		ia_chain_fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them",
			     ia_good_workers(a), (int)a->pp.workers_at_once, cpus);
	if (ncomp) {
		ia_chain_fix(c, "Stop %s, or keep it off the job's CPUs: a cpuset cgroup (systemd-run -p AllowedCPUs=...) "
				"or taskset for it on CPUs the job does not use%s", comp[0].comm,
			     pinned ? "; or pin the job to CPUs the others are not on" : "");
		ia_chain_fix(c, "If it must run beside the job, lower its priority (nice -n 19, renice -n 19 -p PID) or "
				"raise the job's, so the training loop gets a CPU when it is runnable");
	} else if (!quota) {
		ia_chain_fix(c, "Give the training process CPUs of its own (taskset/cpuset cgroups) and keep other "
				"CPU-heavy work off them");
	}
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "steady_ns", a->idle.steady_ns);
	ia_json_u64(ev, "stretches", h->n);
	ia_json_u64(ev, "stretch_ns", h->ns);
	ia_json_u64(ev, "main_runq_ns", h->main_runq_ns);
	ia_json_u64(ev, "main_oncpu_ns", h->ns - h->main_off_ns);
	ia_json_round(ev, "runq_share_of_stretches", rq, 4);
	ia_json_u64(ev, "closing_max_wait_ns", h->close_max_ns);
	ia_json_u64(ev, "competitors_cpu_ns", comp_ns);
	cJSON_AddItemToObject(ev, "competitors", ia_competitors_json(comp, ncomp));
	ia_json_u64(ev, "preempted_to_ns", taken_ns);
	ia_json_u64(ev, "preempted_to_untraced_ns", taken_untraced_ns);
	cJSON_AddItemToObject(ev, "preempted_to", ia_competitors_json(took, ntook));
	if (t->off_holder)   /* (schema 9: its waits after a wake-up are in it too) */
		cJSON_AddBoolToObject(ev, "preempted_to_has_woken_waits", 1);
	cJSON_AddNumberToObject(ev, "cpus", cpus);
	fold_into_gaps(a, (size_t)(c - a->chains));
	return 0;
}
