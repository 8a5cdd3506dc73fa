/*
 * chain_gaps.c — the gaps_* rules: the GPU starves between calls in the
 * steady state, and the main thread's state in the gaps names the cause
 * (docs/chains.md).
 *
 * The gaps are the steady state's (gaps.h sets those of start-up,
 * compilation and autotuning apart; chain_phases.c reports those).  One
 * view of the gaps is built once (shares, stacks, the line ending them);
 * the kind follows the main thread's state; each kind has its own cause
 * and fixes, and all share the timeline and the evidence.  The host-busy
 * kind's cause is chain_gaps_busy.c's, the waiting-on-workers kind's
 * chain_gaps_workers.c's.
 */
#include "rules/chain_gaps.h"
#include "measure/backward_line.h"

#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the main thread blocked in during the gaps, as text: "futex 5.10s
 * (85%), clock_nanosleep 812ms (13%)", or "" when the trace does not say. */
static char *blocked_in_text(const struct ia_gaps *g, char *buf, size_t cap)
{
	uint8_t codes[3];
	size_t n = ia_gaps_blocked_in(g->main_sys_ns, g->main_blocked_ns, codes, 3);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		char d[32];
		ia_addf(buf, cap, "%s%s %s (%.0f%%)", i ? ", " : "", ia_sys_code_name(codes[i]),
			ia_fmt_dur(d, sizeof d, g->main_sys_ns[codes[i]]), ia_pct(g->main_sys_ns[codes[i]], g->main_blocked_ns));
	}
	return buf;
}

static int view_init(struct gap_view *v, const struct ia_analysis *a)
{
	const struct ia_gaps *g = &a->gaps;
	memset(v, 0, sizeof *v);
	v->a = a;
	v->g = g;
	v->share = ia_idle_share(&a->idle, g->total_ns);
	v->on = (double)g->main_oncpu_ns / (double)g->total_ns;
	v->blk = (double)g->main_blocked_ns / (double)g->total_ns;
	v->rq = (double)g->main_runq_ns / (double)g->total_ns;
	v->workers = (int)a->pp.nworkers;
	v->at_once = (int)a->pp.workers_at_once;
	v->cpus = ia_cpus_of(a);
	v->nw = ia_good_workers(a);
	v->end = g->nend_lines ? &g->end_lines[0] : NULL;
	v->end_py = v->end && strcmp(v->end->line, "(no Python frame)");
	v->blocked_at = ia_gap_block_line(&g->main_blocks);
	if (v->blocked_at)
		snprintf(v->where, sizeof v->where, "at %s", v->blocked_at->line);
	else
		snprintf(v->where, sizeof v->where, "before %s", v->end_py ? v->end->line : "the next CUDA call");
	v->sat = ia_cpu_saturation(&a->ev, g->win_start, g->win_end);
	if (ia_gap_bursts(g, &v->bursts) < 0)
		return -1;
	v->bursty = ia_gap_bursts_dominant(&v->bursts, g->n, a->step_times.n, a->idle.steady_ns);
	ia_top_stacks(g, IA_GAP_MAIN, v->stk_main, sizeof v->stk_main);
	ia_top_stacks(g, IA_GAP_WORKERS, v->stk_workers, sizeof v->stk_workers);
	ia_top_stacks(g, IA_GAP_SIBLINGS, v->stk_sib, sizeof v->stk_sib);
	blocked_in_text(g, v->blocked_in, sizeof v->blocked_in);
	v->wait = ia_gaps_wait_kind(g->main_sys_ns, g->main_blocked_ns, WAIT_DOMINANT, &v->wait_ns, &v->wait_sys);
	ia_gap_view_workers(v);
	ia_gap_children_text(g, v->children, sizeof v->children);
	/* a child's output is read through a pipe (poll, read) and its exit
	 * waited for (wait4); a trace before version 5 does not say which */
	enum ia_wait cw = v->wait;
	v->child_wait = v->children[0] && g->main_blocked_ns &&
			(double)g->children_alive_ns >= CHILDREN_WAITED * (double)g->main_blocked_ns &&
			(cw == IA_WAIT_POLL || cw == IA_WAIT_READ || cw == IA_WAIT_CHILD || cw == IA_WAIT_UNKNOWN);
	v->producer = !v->child_wait && g->child_top >= 0 && g->main_blocked_ns &&
		      (double)(g->children_oncpu_ns + g->children_runq_ns) >= PRODUCER_BUSY * (double)g->main_blocked_ns &&
		      (cw == IA_WAIT_POLL || cw == IA_WAIT_READ || cw == IA_WAIT_FUTEX || cw == IA_WAIT_UNKNOWN);
	if (g->child_top >= 0)
		snprintf(v->child_name, sizeof v->child_name, "pid %d \"%s\"", a->t->procs[g->child_top].pid,
			 a->t->procs[g->child_top].comm);
	ia_top_stacks(g, IA_GAP_OTHER, v->stk_other, sizeof v->stk_other);
	if (g->sibling_top != UINT32_MAX)
		snprintf(v->sib_name, sizeof v->sib_name, "tid %u \"%s\"", a->t->threads[g->sibling_top].tid,
			 a->t->threads[g->sibling_top].comm);
	/* who else held the CPUs in the gaps: the untraced processes by name */
	uint64_t *w = ia_gap_windows(g);
	if (!w)
		return -1;
	v->ncomp = ia_competitors_in(&a->ev, w, g->n, v->comp, MAX_COMP, &v->comp_ns);
	/* and whom the main thread waited behind, where the trace says it
	 * for its waits after a wake-up (schema 9) */
	uint64_t untraced;
	char err[256];
	if (a->t->off_holder && g->n && a->pp.main_thread != UINT32_MAX &&
	    ia_cpu_takers(a->t, &a->pp, &a->ev, a->t->threads[a->pp.main_thread].tid, w, g->n, v->behind, MAX_COMP,
			  &v->nbehind, &v->behind_ns, &untraced, err, sizeof err) < 0)
		v->nbehind = 0;   /* evidence only: without it, no names */
	free(w);
	return 0;
}

enum ia_kind ia_gaps_kind(double on, double blk, double rq, int workers_loading)
{
	if (on >= MAIN_STATE_DOMINANT)
		return IA_KIND_GAPS_HOST_BUSY;
	/* blocked for most of the gaps, or — no state a majority and the CPU
	 * wait not the story — blocked longer than it ran: a main thread
	 * blocked 45 % of the gaps and on a CPU 25 % did not keep a CPU busy */
	int blocked = blk >= MAIN_STATE_DOMINANT || (rq < MAIN_PREEMPTED && blk > on);
	if (blocked && workers_loading)
		return IA_KIND_GAPS_WAITING_WORKERS;
	if (blocked)
		return IA_KIND_GAPS_HOST_BLOCKED;
	if (rq >= MAIN_PREEMPTED)
		return IA_KIND_GAPS_HOST_PREEMPTED;
	return IA_KIND_GAPS_HOST_BUSY;   /* mixed, on a CPU the most: said as the split in the cause */
}

static enum ia_kind gaps_kind(const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	/* the workers busy loading, on CPUs or blocked in their Dataset's code */
	int loading = v->workers &&
		      (double)(g->workers_oncpu_ns + v->wload) >= WORKERS_BUSY * (double)g->main_blocked_ns;
	return ia_gaps_kind(v->on, v->blk, v->rq, loading);
}

static void gaps_summary(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_idle *i = &v->a->idle;
	char d1[32], n1[32], rng[64];
	const char *what = c->kind == IA_KIND_GAPS_HOST_BUSY ? "main thread on-CPU"
		: c->kind == IA_KIND_GAPS_WAITING_WORKERS ? "main thread blocked waiting for workers"
		: c->kind == IA_KIND_GAPS_HOST_BLOCKED ? "main thread blocked"
		: "main thread waiting for a CPU";
	double state = c->kind == IA_KIND_GAPS_HOST_BUSY ? v->on : c->kind == IA_KIND_GAPS_HOST_PREEMPTED ? v->rq : v->blk;
	/* the gaps' share of the steady state, beside the bounds it lies in:
	 * measured, a gap is an idle stretch of IA_MEASURED_GAP_MIN_NS or more */
	snprintf(c->summary, sizeof c->summary,
		 "GPU idle %s of the steady state (%s): %s gaps %s took %.0f%% of it (mean %s); %s in %.0f%% "
		 "of the gap time",
		 ia_idle_fmt_steady(i, rng, sizeof rng), i->measured ? "measured" : "estimate",
		 ia_fmt_count(n1, sizeof n1, v->g->n), i->measured ? "with the GPU idle" : "with no CUDA work queued",
		 100 * v->share, ia_fmt_dur(d1, sizeof d1, v->g->total_ns / v->g->n), what, 100 * state);
}

static void gaps_timeline(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	const struct ia_trace *t = v->a->t;
	const struct ia_proc *mp = &t->procs[v->a->pp.p[v->a->pp.main].proc];
	char d1[32], d2[32], d3[32], n1[32];
	char lim[600];
	if (v->sat >= 0)
		ia_chain_line(c, "[SYSTEM] CPU %.0f%% busy over the window (%d CPUs)", 100 * v->sat, ia_machine_cpus(v->a));
	else
		ia_chain_line(c, "[SYSTEM] %d CPUs (no CPU-busy evidence in this trace)", ia_machine_cpus(v->a));
	if (ia_cpu_limit_text(v->a, lim, sizeof lim)[0])
		ia_chain_line(c, "[SYSTEM] %s", lim);
	if (g->nrelay)
		ia_chain_line(c, "[HOST] %zu threads of the main process drove the GPU one after another (a thread per "
			      "request or prompt, as Thread(target=model.generate) starts one): each gap is read on the one "
			      "driving it then, as the main thread", g->nrelay);
	ia_chain_line(c, "[HOST] main thread (pid %d) in the gaps: on-CPU %s (%.0f%%), blocked %s (%.0f%%), waiting for a CPU %s (%.0f%%), shares of the gap time",
		      mp->pid, ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), 100 * v->on,
		      ia_fmt_dur(d2, sizeof d2, g->main_blocked_ns), 100 * v->blk, ia_fmt_dur(d3, sizeof d3, g->main_runq_ns),
		      100 * v->rq);
	if (v->nbehind && v->rq >= BEHIND_SHOWN && c->kind != IA_KIND_GAPS_HOST_PREEMPTED) {   /* (its cause says it) */
		char names[400];
		ia_chain_line(c, "[HOST] it waited for a CPU behind (the task that took its CPU, or that held it longest "
			      "while it waited once woken): %s", ia_competitors_text(names, sizeof names, v->behind, v->nbehind));
	}
	if (g->main_iowait_ns && (double)g->main_iowait_ns >= IOWAIT_SHOWN * (double)g->main_blocked_ns)
		ia_chain_line(c, "[HOST] of its blocked time, %s in uninterruptible sleep (D state: disk or page-fault I/O)",
			      ia_fmt_dur(d1, sizeof d1, g->main_iowait_ns));
	if (v->blocked_in[0] && v->blk >= BLOCKED_IN_SHOWN)
		ia_chain_line(c, "[HOST] what it blocked in (system calls): %s", v->blocked_in);
	if (g->main_blocks.sampled && v->blk >= BLOCKED_IN_SHOWN) {
		char at[600];
		ia_chain_line(c, "[HOST] where it blocked (%s stacks of its blocks in the gaps): %s",
			      ia_fmt_count(n1, sizeof n1, g->main_blocks.sampled),
			      ia_gap_blocks_text(&g->main_blocks, at, sizeof at));
	}
	if (v->producer) {
		ia_chain_line(c, "[HOST] its subprocesses on-CPU in the gaps: %s (the most: %s, %s), waiting for a CPU %s",
			      ia_fmt_dur(d1, sizeof d1, g->children_oncpu_ns), v->child_name,
			      ia_fmt_dur(d2, sizeof d2, g->child_top_ns), ia_fmt_dur(d3, sizeof d3, g->children_runq_ns));
		if (v->stk_other[0])
			ia_chain_line(c, "[HOST] other processes' on-CPU samples in the gaps: %s", v->stk_other);
	}
	if (v->children[0] && v->blk >= BLOCKED_IN_SHOWN)
		ia_chain_line(c, "[HOST] subprocesses it waited for (no CUDA call while they ran): %s; one alive %s (%.0f%% of the gaps)",
			      v->children, ia_fmt_dur(d1, sizeof d1, g->children_alive_ns),
			      ia_pct(g->children_alive_ns, g->total_ns));
	if (v->workers)
		ia_chain_line(c, "[HOST] %d worker%s on-CPU %s during the gaps (%.1f busy on average)", v->workers,
			      v->workers > 1 ? "s" : "", ia_fmt_dur(d1, sizeof d1, g->workers_oncpu_ns),
			      (double)g->workers_oncpu_ns / (double)g->total_ns);
	if (v->workers && v->wload * 10 >= g->total_ns)
		ia_gap_workers_lines(c, v);
	if (v->stk_main[0])
		ia_chain_line(c, "[HOST] main thread's on-CPU samples in the gaps: %s", v->stk_main);
	if (v->stk_workers[0])
		ia_chain_line(c, "[HOST] workers' on-CPU samples in the gaps: %s", v->stk_workers);
	if ((g->siblings_oncpu_ns + g->siblings_runq_ns) * 10 >= g->total_ns && v->sib_name[0]) {
		ia_chain_line(c, "[HOST] the main process's other threads on-CPU %s during the gaps (the most: %s, %s)",
			      ia_fmt_dur(d1, sizeof d1, g->siblings_oncpu_ns), v->sib_name,
			      ia_fmt_dur(d2, sizeof d2, g->sibling_top_ns));
		if (g->siblings_runq_ns * 10 >= g->total_ns)
			ia_chain_line(c, "[HOST] the same threads waited for a CPU %s during the gaps",
				      ia_fmt_dur(d1, sizeof d1, g->siblings_runq_ns));
		if (v->stk_sib[0])
			ia_chain_line(c, "[HOST] their on-CPU samples in the gaps: %s", v->stk_sib);
	}
	if (c->kind == IA_KIND_GAPS_HOST_PREEMPTED && v->ncomp) {
		char names[400];
		/* (the competitors table: the stints that took a CPU from a traced
		 * thread still runnable; whom a woken thread then waited behind is
		 * the cause's list, which this undercounts: c40's 8 loops 25.6 ms
		 * here, 1.13 s there) */
		ia_chain_line(c, "[SYSTEM] untraced processes that preempted the job's threads in the gaps (those stints): %s",
			      ia_competitors_text(names, sizeof names, v->comp, v->ncomp));
	}
	ia_chain_line(c, "[CUDA] %s gaps totalling %s of %s; the next call after a gap is %s%s%s",
		      ia_fmt_count(n1, sizeof n1, g->n), ia_fmt_dur(d1, sizeof d1, g->total_ns),
		      ia_fmt_dur(d2, sizeof d2, v->a->idle.steady_ns), v->end ? ia_api_name(t, v->end->api) : "-",
		      v->end_py ? " at " : "", v->end_py ? v->end->line : "");
	const struct ia_gap_bursts *b = &v->bursts;
	if (v->bursty) {
		char every[96] = "";
		const struct ia_step_times *st = &v->a->step_times;
		if (b->every_ns && st->n && st->mean > 0)   /* (a cycle over the mean step: steps a cycle) */
			snprintf(every, sizeof every, "; one every %s (about %.0f steps)",
				 ia_fmt_dur(d3, sizeof d3, b->every_ns), (double)b->every_ns / st->mean);
		else if (b->every_ns)
			snprintf(every, sizeof every, "; one every %s", ia_fmt_dur(d3, sizeof d3, b->every_ns));
		char bursts[64] = "";
		if (b->nbursts < b->n)
			snprintf(bursts, sizeof bursts, " in %zu bursts", b->nbursts);
		ia_chain_line(c, "[CUDA] the idle comes in bursts: %s gaps of %s or more (10x the median gap)%s hold %.0f%% "
			      "of it, the longest %s%s", ia_fmt_count(n1, sizeof n1, b->n),
			      ia_fmt_dur(d1, sizeof d1, b->min_len), bursts, 100 * b->share,
			      ia_fmt_dur(d2, sizeof d2, b->longest), every);
	}
}

/* The fix where what the main thread waits on is not known (or not only
 * the GIL): find it. */
static void fix_find_wait(struct ia_chain *c, const struct gap_view *v)
{
	ia_chain_fix(c, "Find what the main thread waits on %s: data read from disk or network "
			"(prefetch it%s), a lock or a queue", v->where,
		     v->workers ? ", or load it in DataLoader workers" : " in a background thread or process");
}

static void fix_subprocess(struct ia_chain *c, const char *what, const char *where)
{
	ia_chain_fix(c, "Run %s in the background (subprocess.Popen, its output collected a few steps later) or "
			"less often: the training loop waits for it %s", what, where);
}

/* Its subprocesses were alive while it blocked on a pipe or a child's exit:
 * a subprocess run inside the loop (subprocess.run, check_output,
 * os.system), named. */
static void child_wait_cause(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	char d[32], d2[32];
	const char *cmd = v->a->t->procs[g->children[0].proc].cmdline;
	ia_addf(c->root_cause, sizeof c->root_cause, ": it waited for its subprocesses — %s, one alive for %s of the %s "
		"of gaps%s%s%s — run and waited for inside the loop (subprocess.run or check_output reads the "
		"child's output through a pipe, then waits for it to exit).%s%.200s%s", v->children,
		ia_fmt_dur(d, sizeof d, g->children_alive_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
		v->wait_sys ? "; it blocked in " : "", v->wait_sys ? v->wait_sys : "", "",
		cmd && cmd[0] ? " Its command line: " : "", cmd && cmd[0] ? cmd : "", cmd && cmd[0] ? "." : "");
	fix_subprocess(c, g->children[0].comm, v->where);
	if (!strcmp(g->children[0].comm, "nvidia-smi"))
		ia_chain_fix(c, "Read the GPU's figures in-process instead of starting nvidia-smi for each reading: "
				"torch.cuda.utilization(), torch.cuda.memory_allocated() and memory_reserved(), or NVML "
				"(pynvml) directly");
}

/* A subprocess beside the loop was busy while the main thread waited on a
 * pipe or a queue: it produces what the loop consumes (a producer process
 * feeding a multiprocessing.Queue), more slowly than the GPU consumes it. */
static void producer_cause(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	char d[32], d2[32], d3[32], where[520] = "";
	/* where its time went: the most sampled stack under a line of the
	 * user's (a numpy call in a per-item loop), else the Python code that
	 * ran most */
	size_t top;
	const struct ia_gap_stack *hot = NULL;
	if (ia_role_top(g, IA_GAP_OTHER, &top, 1) == 1 && g->stacks[top].user_python[0]) {
		hot = &g->stacks[top];
		snprintf(where, sizeof where, "%s (%s)", hot->label, hot->user_python);
	} else if ((hot = ia_stacks_python_top(g, IA_GAP_OTHER))) {
		ia_python_where(hot, where, sizeof where);
	}
	ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on a pipe or a queue (%s of it%s%s) that its subprocess "
		"%s fills — that process's threads were on-CPU %s during the %s of gaps%s%s: it produces what the "
		"loop consumes, more slowly than the GPU consumes it.",
		ia_fmt_dur(d, sizeof d, v->wait_ns ? v->wait_ns : g->main_blocked_ns), v->wait_sys ? " in " : "",
		v->wait_sys ? v->wait_sys : "", v->child_name, ia_fmt_dur(d2, sizeof d2, g->child_top_ns),
		ia_fmt_dur(d3, sizeof d3, g->total_ns), where[0] ? ", the most in " : "", where);
	char d4[32];
	if (g->children_runq_ns >= g->children_oncpu_ns)
		ia_addf(c->root_cause, sizeof c->root_cause, " It waited for a CPU longer than it ran (%s): other tasks held the "
			"CPUs it needs.", ia_fmt_dur(d4, sizeof d4, g->children_runq_ns));
	if (hot && hot->user_python[0])
		snprintf(c->source, sizeof c->source, "%s", hot->user_python);
	if (g->children_runq_ns >= g->children_oncpu_ns)
		ia_chain_fix(c, "Give the producer (%s) CPUs of its own: fewer competing processes, or taskset/cgroups to keep "
				"them off its CPUs", v->child_name);
	ia_chain_fix(c, "Make the producer (%s) faster%s%s: per-item Python or numpy work done row by row costs most; "
			"do it per batch, vectorised", v->child_name, where[0] ? ": its time goes to " : "", where);
	int idle = v->sat >= 0 && v->cpus > 0 ? (int)((1 - v->sat) * v->cpus) : 0;
	if (idle >= 2)
		ia_chain_fix(c, "Run more producers in parallel — about %d of the %d CPUs were idle — several processes "
				"feeding the queue, or a DataLoader whose workers do this work (num_workers=%d)",
			     idle, v->cpus, v->nw);
	else
		ia_chain_fix(c, "Run more producers in parallel (several processes feeding the queue, or a DataLoader "
				"whose workers do this work), where CPUs are free for them");
}

/* The main thread blocked in the gaps on something other than storage or
 * the GIL: named by the system call most of that time was in (files of
 * version 5 on), with the fix that fits; else said as unknown. */
/* A lock or no system call said, while PyTorch's autograd engine thread
 * ran: the main thread waits in backward() for it — the backward pass's
 * host work, not a read from disk (c24: that thread in cuMemAlloc and
 * ioctl, no caching allocator; c12). */
static int autograd_wait(const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	int lockish = v->wait == IA_WAIT_FUTEX || v->wait == IA_WAIT_UNKNOWN || v->wait == IA_WAIT_OTHER;
	return lockish && !v->child_wait && !v->producer && g->sibling_top != UINT32_MAX &&
	       ia_is_autograd_thread(v->a->t->threads[g->sibling_top].comm) && ia_gaps_siblings_busy(g);
}

static void blocked_wait_cause(struct ia_chain *c, const struct gap_view *v)
{
	const char *where = v->where;
	char d[32];
	const char *sys = v->wait_sys;
	ia_fmt_dur(d, sizeof d, v->wait_ns);
	if (v->child_wait) {
		child_wait_cause(c, v);
		return;
	}
	if (v->producer) {
		producer_cause(c, v);
		return;
	}
	if (autograd_wait(v)) {
		const struct ia_gaps *g = v->g;
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited in backward() while PyTorch's autograd engine "
			"thread %s ran the backward pass's host work, on a CPU %s in those gaps%s%s%s.", v->sib_name,
			ia_fmt_dur(d, sizeof d, g->siblings_oncpu_ns), v->stk_sib[0] ? " (its samples: " : "",
			v->stk_sib[0] ? v->stk_sib : "", v->stk_sib[0] ? ")" : "");
		ia_chain_fix(c, "Cut the backward pass's host work, which the main thread waits for %s: what autograd's "
				"thread does in the gaps (its samples above) — fewer, larger kernels (torch.compile), or the "
				"allocation, copy or sync its samples name", where);
		return;
	}
	switch (v->wait) {
	case IA_WAIT_SLEEP:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it slept (%s of it in %s: time.sleep, a timer, or a "
			"loop paced by one). The program itself waits between steps, and the GPU has nothing to do "
			"meanwhile.", d, sys);
		ia_chain_fix(c, "The program sleeps %s: if the sleep paces a loop or polls for work, remove it or "
				"wait on the work itself; if it waits for requests, queue them and give the GPU several "
				"at a time (batching)", where);
		return;
	case IA_WAIT_FUTEX:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on a lock, a condition or a queue (%s of it in "
			"%s): another thread or process hands it what it needs (queue.get, Event.wait, "
			"Thread.join, a lock held elsewhere).", d, sys);
		ia_chain_fix(c, "Find the producer the main thread waits for %s (a queue another thread fills, a "
				"lock held elsewhere): start it earlier or make it faster, so the next step's input is "
				"ready when the GPU finishes", where);
		return;
	case IA_WAIT_POLL:
	case IA_WAIT_READ:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on a socket, a pipe or a file descriptor (%s "
			"of it in %s): data from the network or from another process (a request, a remote dataset "
			"or store, a multiprocessing queue).", d, sys);
		ia_chain_fix(c, "Fetch what the main thread reads %s ahead of time: prefetch it in a background "
				"thread or process%s, or batch the requests so one wait serves several steps", where,
			     v->workers ? " (or in DataLoader workers)" : "");
		return;
	case IA_WAIT_WRITE:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited writing to a socket, a pipe or a file (%s of "
			"it in %s): what it writes to drains slowly (a logger, a pipe to another process, a "
			"remote service).", d, sys);
		ia_chain_fix(c, "Write from another thread or process, or less often: the main thread's writes "
				"%s hold up the next step", where);
		return;
	case IA_WAIT_CHILD:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited for a child process to end (%s of it in %s): "
			"a subprocess run and waited for inside the loop.", d, sys);
		fix_subprocess(c, "that subprocess", where);
		return;
	case IA_WAIT_SYNC:
	case IA_WAIT_OPEN:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on the file system (%s of it in %s).", d, sys);
		ia_chain_fix(c, "Take file-system work off the critical path %s: open and stat files once, "
				"write checkpoints and logs from another thread or less often", where);
		return;
	default:
		ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on something other than a CPU (I/O, a lock, a "
			"queue, sleep)%s%s.", v->blocked_in[0] ? "; by system call: " : "", v->blocked_in);
		fix_find_wait(c, v);
	}
}

/* What the main thread waited for, in a few words for the verdict line
 * (evidence "blocked_on"); "" when the trace does not say. */
static void blocked_brief(const struct gap_view *v, int gil, int io, char *buf, size_t n)
{
	const char *sys = v->wait_sys ? v->wait_sys : "";
	buf[0] = 0;
	if (gil)
		snprintf(buf, n, "waiting for the GIL its thread %s held", v->sib_name);
	else if (io)
		snprintf(buf, n, "in uninterruptible sleep (D state), most likely on storage");
	else if (v->child_wait)
		snprintf(buf, n, "waiting for its subprocess %s", v->g->children[0].comm);
	else if (v->producer)
		snprintf(buf, n, "waiting on a pipe or a queue its subprocess %s fills", v->child_name);
	else if (autograd_wait(v))
		snprintf(buf, n, "in backward(), waiting for autograd's thread %s", v->sib_name);
	else if (v->wait == IA_WAIT_SLEEP)
		snprintf(buf, n, "asleep in %s", sys);
	else if (v->wait == IA_WAIT_FUTEX)
		snprintf(buf, n, "on a lock, a condition or a queue, in %s", sys);
	else if (v->wait == IA_WAIT_POLL || v->wait == IA_WAIT_READ)
		snprintf(buf, n, "on a socket, a pipe or a file descriptor, in %s", sys);
	else if (v->wait == IA_WAIT_WRITE)
		snprintf(buf, n, "writing to a socket, a pipe or a file, in %s", sys);
	else if (v->wait == IA_WAIT_CHILD)
		snprintf(buf, n, "waiting for a child process to end, in %s", sys);
	else if (v->wait == IA_WAIT_SYNC || v->wait == IA_WAIT_OPEN)
		snprintf(buf, n, "on the file system, in %s", sys);
}

static void cause_host_blocked(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	char d1[32], d2[32], d3[32], where[520];
	/* the process's other threads busy while the main thread waits: in
	 * CPython, running Python code, they hold the GIL it waits for */
	int sib_busy = ia_gaps_siblings_busy(g);
	/* preempted more than they ran: the holder itself waited for a CPU */
	int sib_starved = g->siblings_runq_ns && g->siblings_runq_ns >= g->siblings_oncpu_ns;
	double sinterp = ia_stacks_interpreter_share(g, IA_GAP_SIBLINGS);
	const struct ia_gap_stack *shot = ia_stacks_python_top(g, IA_GAP_SIBLINGS);
	int gil = ia_gaps_gil(g);   /* (sib_busy, and Python: gaps.h) */
	int io = !gil && g->main_blocked_ns && (double)g->main_iowait_ns >= IOWAIT_DOMINANT * (double)g->main_blocked_ns;
	int followed = 0;
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The main thread was blocked (off-CPU, not runnable) for %s of the %s with no GPU work queued%s",
		 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
		 v->workers ? ", and the workers were mostly idle then too" : "");
	if (gil) {
		ia_addf(c->root_cause, sizeof c->root_cause,
			", while other threads of its process were on-CPU for %s (the most: %s). %.0f%% of their "
			"samples run Python code%s%s. CPython runs one thread's Python code at a time (the GIL): "
			"the main thread waits for it before it can queue the next GPU work.",
			ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), v->sib_name, 100 * sinterp,
			shot ? ", the most in " : "", shot ? ia_python_where(shot, where, sizeof where) : "");
		if (sib_starved)
			ia_addf(c->root_cause, sizeof c->root_cause, " Those threads waited for a CPU longer than they ran "
				"(%s), holding the GIL meanwhile: other tasks held the CPUs they need.",
				ia_fmt_dur(d3, sizeof d3, g->siblings_runq_ns));
		if (shot && shot->user_python[0])
			snprintf(c->source, sizeof c->source, "%s", shot->user_python);
		/* DataLoader advice only where the job has a DataLoader */
		ia_chain_fix(c, "Take that Python work out of the training process (a separate process%s), run it "
				"less often, or make it cheaper%s%s%s: while it runs, the training loop cannot queue GPU work",
			     v->workers ? ", or a DataLoader worker" : "", shot ? " (" : "",
			     shot ? ia_python_where(shot, where, sizeof where) : "", shot ? ")" : "");
		if (sib_starved)
			ia_chain_fix(c, "Give the training process CPUs of its own: fewer competing processes, or "
					"taskset/cgroups to keep them off its CPUs — a thread preempted while it holds the GIL "
					"stops the main thread too");
		fix_find_wait(c, v);
	} else if (io) {
		ia_addf(c->root_cause, sizeof c->root_cause,
			", %s of it in uninterruptible sleep (D state): most likely the main thread waited on storage "
			"— reading or writing files (data, checkpoints, logs), or faulting in pages of a memory-mapped "
			"dataset — while no GPU work was queued (D state also covers some kernel locks).%s%s",
			ia_fmt_dur(d3, sizeof d3, g->main_iowait_ns), v->stk_main[0] ? " Its samples in the gaps: " : "",
			v->stk_main[0] ? v->stk_main : "");
		/* without DataLoader workers the reads are the loop's own (a shard
		 * loaded between steps: c78's class): reading ahead is the fix, in
		 * a thread as well as a worker — a read releases the GIL */
		char ahead[240];
		if (v->workers)
			snprintf(ahead, sizeof ahead, "read data in DataLoader workers (num_workers=%d, persistent_workers=True, "
				 "prefetch_factor=4) so reads overlap GPU work,", v->nw);
		else
			snprintf(ahead, sizeof ahead, "read ahead — the next file or shard in a background thread (a read "
				 "releases the GIL) or process while the GPU runs the current one, or a DataLoader with "
				 "workers (num_workers=%d) over the files —", v->nw);
		ia_chain_fix(c, "Take storage off the critical path: %s or keep the dataset in RAM (or on local NVMe); write "
				"checkpoints and logs less often, or from another thread or process", ahead);
	} else if (!v->child_wait && !v->producer && v->wait != IA_WAIT_SLEEP && ia_gap_wait_for_cause(c, v)) {
		/* who ended its waits, followed to the end (version 7): said */
		followed = 1;
	} else {
		blocked_wait_cause(c, v);
		/* siblings hand it what it waits for through a lock or a queue;
		 * a socket, a pipe or a sleep is another party's */
		int lock = v->wait == IA_WAIT_FUTEX || v->wait == IA_WAIT_UNKNOWN || v->wait == IA_WAIT_OTHER;
		if (sib_busy && lock && !v->child_wait && !v->producer && !autograd_wait(v))
			ia_addf(c->root_cause, sizeof c->root_cause,
				" Other threads of its process were on-CPU for %s meanwhile (the most: %s): what the "
				"main thread waits for may be one of them (a lock, a queue).",
				ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), v->sib_name);
	}
	/* where it blocked, from its block stacks: the line to change (a GIL
	 * holder's or a producer's busy line stays the Source: the fix is there) */
	const struct ia_gap_line *at = v->blocked_at;
	/* (a thread the wait was followed to, busy on a line of its own: that line stays the Source) */
	int busy_source = followed && v->a->wakers.end == IA_WAITEND_ONCPU && c->source[0];
	if (!gil && !v->producer && !busy_source && at) {
		char n1[32];
		snprintf(c->source, sizeof c->source, "%s", at->line);
		/* (after a followed wait the sentence before is about another thread) */
		ia_addf(c->root_cause, sizeof c->root_cause, " %s blocked at %s%s%s%s: %.0f%% of its blocked time, by %s "
			"stacks of its blocks.", followed ? "The main thread" : "It", at->line, at->inner[0] ? " (in " : "", at->inner,
			at->inner[0] ? ")" : "", 100 * at->weight / g->main_blocks.weight,
			ia_fmt_count(n1, sizeof n1, g->main_blocks.sampled));
	}
	char brief[160];
	blocked_brief(v, gil, io, brief, sizeof brief);
	if (followed)
		ia_gap_wait_for_brief(v, brief, sizeof brief);
	if (brief[0])
		ia_json_str(c->evidence, "blocked_on", brief);
}

/* Other tasks held the CPUs: traced workers (more than the CPUs), or
 * untraced processes, named with their CPU time in the gaps. */
static void cause_host_preempted(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	const struct ia_trace *t = v->a->t;
	int cpus = v->cpus;
	char d1[32], d2[32], d3[32], names[400];
	int hogs = v->ncomp && v->comp_ns * 10 >= g->main_runq_ns;   /* untraced CPU time worth naming */
	/* a CPU quota stops the job's threads with CPUs free: runnable, not
	 * running, nobody else on the CPU */
	int quota = ia_cpu_quota_held_back(v->a, hogs, g->main_runq_ns);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The main thread was runnable but not running for %s of the %s with no GPU work queued",
		 ia_fmt_dur(d1, sizeof d1, g->main_runq_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns));
	if (quota)
		ia_addf(c->root_cause, sizeof c->root_cause,
			": the job ran under a CPU quota of %.2f CPUs (its cgroup's), which stopped its threads in %s of %s "
			"periods (%s of thread time held back) whether CPUs were free or not — a container's or a unit's CPU limit%s.",
			t->cpu_limit, ia_fmt_count(d1, sizeof d1, t->cpu_limit_throttled_periods),
			ia_fmt_count(d2, sizeof d2, t->cpu_limit_periods), ia_fmt_dur(d3, sizeof d3, t->cpu_limit_throttled_ns),
			hogs ? "; other tasks held CPUs too" : ", not other tasks");
	else
		ia_addf(c->root_cause, sizeof c->root_cause, ": other tasks held the CPUs%s.",
			v->sat >= SATURATED ? " (CPUs saturated)" : "");
	if (hogs)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" Processes outside the job took CPUs from it in the gaps: %s of CPU time, %s.",
			ia_fmt_dur(d1, sizeof d1, v->comp_ns), ia_competitors_text(names, sizeof names, v->comp, v->ncomp));
	if (v->nbehind)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" It waited behind (the task that took its CPU, or that held it longest while it waited once woken): %s.",
			ia_competitors_text(names, sizeof names, v->behind, v->nbehind));
	/* blocked too, for a thread that itself waited for a CPU: the same
	 * contention, through that thread (an autograd engine thread starved) */
	const struct ia_wakers *wk = &v->a->wakers;
	if (wk->nhops && wk->end == IA_WAITEND_RUNQ && (double)g->main_blocked_ns >= 0.2 * (double)g->total_ns) {
		char path[1200];
		ia_addf(c->root_cause, sizeof c->root_cause, " It was blocked for %s more: %s — the same contention, "
			"through the thread it waits for.", ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns),
			ia_wakers_text(t, wk, path, sizeof path));
	}
	if (quota)
		ia_cpu_quota_fix(c);
	int pinned = t->command && strstr(t->command, "taskset") != NULL;
	if (hogs && pinned)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" The job was started under taskset (%s): the CPUs it may use are the ones they compete for.", t->command);
	if (ia_workers_crowd_cpus(v->a))
		ia_chain_fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them", v->nw, v->at_once,
			     cpus);
	if (hogs) {
		ia_chain_fix(c, "Stop %s, or keep it off the job's CPUs: a cpuset cgroup (systemd-run -p AllowedCPUs=...) "
				"or taskset for it, CPUs the job does not use%s",
			     v->comp[0].comm, pinned ? " (the job is pinned: give it CPUs the others are not on)" : "");
		ia_chain_fix(c, "If it must run beside the job, lower its priority (nice -n 19, or renice -n 19 -p PID) "
				"or give the job a higher one, so the training loop gets a CPU when it is runnable");
	} else if (!ia_workers_crowd_cpus(v->a) && !quota) {
		ia_chain_fix(c, "Give the main process a CPU of its own: fewer competing processes, or taskset/cgroups "
				"to keep others off one CPU");
	}
}

static void gaps_evidence(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	cJSON *ev = c->evidence;
	ia_wakers_json(ev, v->a->t, &v->a->wakers);
	ia_json_u64(ev, "window_ns", v->a->idle.window_ns);
	ia_json_u64(ev, "steady_ns", v->a->idle.steady_ns);
	ia_json_u64(ev, "gaps", g->n);
	ia_json_u64(ev, "gap_ns", g->total_ns);
	ia_json_round(ev, "gap_share", v->share, 4);
	ia_json_u64(ev, "main_oncpu_ns", g->main_oncpu_ns);
	ia_json_u64(ev, "main_blocked_ns", g->main_blocked_ns);
	ia_json_u64(ev, "main_runq_ns", g->main_runq_ns);
	ia_json_u64(ev, "main_iowait_ns", g->main_iowait_ns);
	ia_json_u64(ev, "relay_threads", g->nrelay);
	ia_gaps_blocked_in_json(ev, "main_blocked_in", g->main_sys_ns, g->main_blocked_ns);
	ia_gap_blocks_json(ev, "main", g, &g->main_blocks, 5);
	ia_gap_children_json(ev, v->a->t, g);
	if (g->child_top >= 0) {
		ia_json_u64(ev, "children_oncpu_ns", g->children_oncpu_ns);
		ia_json_u64(ev, "children_runq_ns", g->children_runq_ns);
		ia_json_u64(ev, "busiest_child_pid", (uint64_t)v->a->t->procs[g->child_top].pid);
		ia_json_u64(ev, "busiest_child_oncpu_ns", g->child_top_ns);
		ia_stacks_json(ev, g, IA_GAP_OTHER, "other_stacks");
	}
	ia_json_u64(ev, "workers", (uint64_t)v->workers);
	ia_json_u64(ev, "workers_oncpu_ns", g->workers_oncpu_ns);
	if (v->workers)
		ia_gap_workers_json(ev, g);
	cJSON_AddNumberToObject(ev, "cpus", v->cpus);
	if (v->sat >= 0)
		ia_json_round(ev, "cpu_saturation", v->sat, 4);
	ia_stacks_json(ev, g, IA_GAP_MAIN, "main_stacks");
	ia_json_round(ev, "main_python_share", ia_stacks_interpreter_share(g, IA_GAP_MAIN), 4);
	if (v->workers) {
		ia_stacks_json(ev, g, IA_GAP_WORKERS, "worker_stacks");
		ia_json_round(ev, "worker_python_share", ia_stacks_interpreter_share(g, IA_GAP_WORKERS), 4);
	}
	ia_json_u64(ev, "sibling_threads_oncpu_ns", g->siblings_oncpu_ns);
	ia_json_u64(ev, "sibling_threads_runq_ns", g->siblings_runq_ns);
	if (g->samples_siblings) {
		ia_stacks_json(ev, g, IA_GAP_SIBLINGS, "sibling_stacks");
		ia_json_round(ev, "sibling_python_share", ia_stacks_interpreter_share(g, IA_GAP_SIBLINGS), 4);
	}
	ia_json_u64(ev, "competitors_oncpu_ns", v->comp_ns);
	cJSON_AddItemToObject(ev, "competitors", ia_competitors_json(v->comp, v->ncomp));
	if (v->a->t->off_holder) {   /* (schema 9) */
		ia_json_u64(ev, "main_waited_behind_ns", v->behind_ns);
		cJSON_AddItemToObject(ev, "main_waited_behind", ia_competitors_json(v->behind, v->nbehind));
	}
	ia_gap_end_lines_json(ev, "gap_ending_lines", v->a->t, g, 3);
}

int ia_rule_gaps(struct ia_analysis *a, size_t *cap)
{
	const struct ia_gaps *g = &a->gaps;
	if (!a->idle.steady_ns || !g->n || !g->total_ns)
		return 0;
	enum ia_severity sev = ia_by_share(ia_idle_share(&a->idle, g->total_ns), SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	struct gap_view v;
	if (view_init(&v, a) < 0)
		return -1;
	struct ia_chain *c = ia_chain_new(a, cap, gaps_kind(&v));
	if (!c)
		return -1;
	c->sev = sev;
	c->cost_ns = g->total_ns;
	c->impact = ia_idle_impact(&a->idle, g->total_ns);
	if (v.end) {
		c->api = v.end->api;
		if (v.end_py)
			snprintf(c->source, sizeof c->source, "%s", v.end->line);
	}
	gaps_summary(c, &v);
	gaps_timeline(c, &v);
	switch (c->kind) {
	case IA_KIND_GAPS_HOST_BUSY: ia_gap_cause_host_busy(c, &v); break;
	case IA_KIND_GAPS_WAITING_WORKERS: ia_gap_cause_workers(c, &v); break;
	case IA_KIND_GAPS_HOST_BLOCKED: cause_host_blocked(c, &v); break;
	default: cause_host_preempted(c, &v); break;
	}
	gaps_evidence(c, &v);
	return 0;
}
