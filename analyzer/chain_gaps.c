/*
 * chain_gaps.c — the gaps_* rules: the GPU starves between calls, and the
 * main thread's state in the gaps names the cause (docs/chains.md).
 */
#include "chain_build.h"

#include "json_out.h"
#include "util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAIN_STATE_DOMINANT 0.50     /* on-CPU / blocked share of the gaps */
#define MAIN_PREEMPTED 0.30          /* runnable share of the gaps */
#define WORKERS_BUSY 0.50            /* workers' CPU time / main's blocked gap time */
#define INTERPRETER_SHARE 0.25      /* gap samples in the CPython interpreter: per-item Python work */
#define IOWAIT_DOMINANT 0.50         /* D-state share of the main thread's blocked gap time: storage */
#define SIBLINGS_BUSY 0.50           /* the main process's other threads on-CPU / main's blocked gap time */
#define COMPILE_DOMINANT 0.50        /* main + worker gap samples in torch.compile's compile-time code */
#define SATURATED 0.90

/* ---- gaps ---- */

/* torch.compile compiled while no GPU work was queued: once at the start,
 * or again in the second half of the run (recompilation), which needs
 * other fixes. */
static void compiling_cause(struct ia_chain *c, const struct ia_analysis *a, double comp_share, int main_only)
{
	const struct ia_gaps *g = &a->gaps;
	uint64_t mid = g->win_start + (g->win_end - g->win_start) / 2;
	int recurring = g->ncompile_gaps > 1 && g->compile_first_end <= mid && g->compile_last_start > mid;
	const struct ia_gap_stack *top = ia_stacks_compile_top(g);
	char d1[32], d2[32], d3[32], n1[32], where[520];
	snprintf(c->root_cause, sizeof c->root_cause,
		 "torch.compile was compiling while no GPU work was queued: %.0f%% of the %son-CPU samples in the "
		 "gaps (%s%s%s) are in its compile-time code (TorchDynamo, AOTAutograd, Inductor, Triton), "
		 "in %s gap%s totalling %s of the %s of gaps.",
		 100 * comp_share, main_only ? "main thread's " : "", g->samples_main_compiling ? "main thread" : "",
		 g->samples_workers_compiling ? (g->samples_main_compiling ? ", workers" : "workers") : "",
		 g->samples_siblings_compiling + g->samples_pool_compiling
			 ? (g->samples_main_compiling || g->samples_workers_compiling ? ", compile workers or other threads"
										       : "compile workers or other threads") : "",
		 ia_fmt_count(n1, sizeof n1, g->ncompile_gaps),
		 g->ncompile_gaps == 1 ? "" : "s", ia_fmt_dur(d1, sizeof d1, g->compile_gap_ns),
		 ia_fmt_dur(d2, sizeof d2, g->total_ns));
	if (top && top->python[0])
		ia_addf(c->root_cause, sizeof c->root_cause, " The most sampled: %s.", ia_python_where(top, where, sizeof where));
	uint64_t win = g->win_end - g->win_start;
	if (win > g->compile_gap_ns)   /* the steady state, which is what the run is for */
		ia_addf(c->root_cause, sizeof c->root_cause, " Outside those gaps no GPU work was queued %.1f%% of the time.",
		     100.0 * (double)(g->total_ns - g->compile_gap_ns) / (double)(win - g->compile_gap_ns));
	if (top && top->user_python[0])   /* the user's line that called into the compiled code */
		snprintf(c->source, sizeof c->source, "%s", top->user_python);
	if (recurring)
		ia_addf(c->root_cause, sizeof c->root_cause,
		     " It compiled again in the second half of the run (last from %s after the first GPU work): "
		     "something made it recompile.", ia_fmt_dur(d3, sizeof d3, g->compile_last_start - g->win_start));
	else
		ia_addf(c->root_cause, sizeof c->root_cause,
		     " Compiling ended %s after the first GPU work: a start-up cost, paid once per process.",
		     ia_fmt_dur(d3, sizeof d3, g->compile_last_end - g->win_start));
	if (recurring)
		ia_chain_fix(c, "Find what makes it recompile: TORCH_LOGS=recompiles prints the guard that failed each time; "
		       "for shapes that change (a smaller last batch, variable sequence lengths) "
		       "torch._dynamo.mark_dynamic(x, dim), torch.compile(..., dynamic=True), drop_last=True or "
		       "padding to a few fixed sizes; for a Python number that changes (a step counter, a learning "
		       "rate), pass it as a tensor");
	else
		ia_chain_fix(c, "Judge the steady state after warm-up steps: this window's idle share includes compiling; "
		       "mode=\"max-autotune\" compiles and benchmarks far longer than the default mode, worth it "
		       "only for runs long enough to repay it");
	ia_chain_fix(c, "Keep compiled artifacts between runs: Inductor's on-disk caches (TORCHINDUCTOR_FX_GRAPH_CACHE=1, "
	       "TORCHINDUCTOR_AUTOGRAD_CACHE=1) or torch.compiler.save_cache_artifacts() and "
	       "load_cache_artifacts() on the next start");
}

int ia_rule_gaps(struct ia_analysis *a, size_t *cap)
{
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	if (!win || !g->n || !g->total_ns)
		return 0;
	double share = (double)g->total_ns / (double)win;
	enum ia_severity sev = ia_by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	double on = (double)g->main_oncpu_ns / (double)g->total_ns;
	double blk = (double)g->main_blocked_ns / (double)g->total_ns;
	double rq = (double)g->main_runq_ns / (double)g->total_ns;
	int workers = (int)a->pp.nworkers, cpus = ia_cpus_of(a);
	/* torch.compile compiling (in the main thread, or in its compile
	 * workers while the main thread waits) is told apart first: the other
	 * kinds' fixes (DataLoader, host code) would be wrong for it */
	uint64_t comp = g->samples_main_compiling + g->samples_workers_compiling + g->samples_siblings_compiling +
			g->samples_pool_compiling;
	uint64_t smw = g->samples_main + g->samples_workers + g->samples_siblings + g->samples_pool;
	double comp_share = smw ? (double)comp / (double)smw : 0;
	/* DataLoader workers' samples must not dilute a compiling main thread */
	int main_only = g->samples_main && (double)g->samples_main_compiling / (double)g->samples_main > comp_share;
	if (main_only)
		comp_share = (double)g->samples_main_compiling / (double)g->samples_main;
	enum ia_kind kind;
	if (smw && comp_share >= COMPILE_DOMINANT)
		kind = IA_KIND_GAPS_COMPILING;
	else if (on >= MAIN_STATE_DOMINANT)
		kind = IA_KIND_GAPS_HOST_BUSY;
	else if (blk >= MAIN_STATE_DOMINANT && workers &&
		 (double)g->workers_oncpu_ns >= WORKERS_BUSY * (double)g->main_blocked_ns)
		kind = IA_KIND_GAPS_WAITING_WORKERS;
	else if (blk >= MAIN_STATE_DOMINANT)
		kind = IA_KIND_GAPS_HOST_BLOCKED;
	else if (rq >= MAIN_PREEMPTED)
		kind = IA_KIND_GAPS_HOST_PREEMPTED;
	else
		kind = IA_KIND_GAPS_HOST_BUSY;   /* mixed: said as the split below */
	struct ia_chain *c = ia_chain_new(a, cap, kind);
	if (!c)
		return -1;
	c->sev = sev;
	c->impact = share;
	const struct ia_trace *t = a->t;
	const struct ia_proc *mp = &t->procs[a->pp.p[a->pp.main].proc];
	const struct ia_gap_line *end = g->nend_lines ? &g->end_lines[0] : NULL;
	if (end) {
		c->api = end->api;
		if (strcmp(end->line, "(no Python frame)"))
			snprintf(c->source, sizeof c->source, "%s", end->line);
	}
	char d1[32], d2[32], d3[32], n1[32], rng[32];
	uint64_t mean = g->total_ns / g->n;
	const char *what = kind == IA_KIND_GAPS_HOST_BUSY ? "main thread on-CPU"
		: kind == IA_KIND_GAPS_WAITING_WORKERS ? "main thread blocked waiting for workers"
		: kind == IA_KIND_GAPS_HOST_BLOCKED ? "main thread blocked"
		: kind == IA_KIND_GAPS_COMPILING ? "torch.compile compiling in the on-CPU samples"
		: "main thread waiting for a CPU";
	double share_state = kind == IA_KIND_GAPS_HOST_BUSY ? on
		: kind == IA_KIND_GAPS_COMPILING ? comp_share
		: kind == IA_KIND_GAPS_HOST_PREEMPTED ? rq : blk;
	snprintf(c->summary, sizeof c->summary,
		 "GPU idle %s (estimate): no CUDA work queued %.0f%% of the time, %s %.0f%% of it "
		 "(%s gaps, mean %s)",
		 ia_fmt_pct_range(rng, sizeof rng, ia_pct(g->idle_low_ns, win), ia_pct(g->idle_high_ns, win)), 100 * share, what,
		 100 * share_state,
		 ia_fmt_count(n1, sizeof n1, g->n), ia_fmt_dur(d1, sizeof d1, mean));

	char stk_main[600], stk_workers[600];
	ia_top_stacks(g, IA_GAP_MAIN, stk_main, sizeof stk_main);
	ia_top_stacks(g, IA_GAP_WORKERS, stk_workers, sizeof stk_workers);
	double sat = ia_cpu_saturation(&a->ev, g->win_start, g->win_end);
	if (sat >= 0)
		ia_chain_line(c, "[SYSTEM] CPU %.0f%% busy over the window (%d CPUs)", 100 * sat, cpus);
	else
		ia_chain_line(c, "[SYSTEM] %d CPUs (no CPU-busy evidence in this trace)", cpus);
	ia_chain_line(c, "[HOST] main thread (pid %d) in the gaps: on-CPU %s (%.0f%%), blocked %s (%.0f%%), waiting for a CPU %s (%.0f%%)",
	     mp->pid, ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), 100 * on,
	     ia_fmt_dur(d2, sizeof d2, g->main_blocked_ns), 100 * blk, ia_fmt_dur(d3, sizeof d3, g->main_runq_ns), 100 * rq);
	if (g->main_iowait_ns)
		ia_chain_line(c, "[HOST] of its blocked time, %s in uninterruptible sleep (D state: disk or page-fault I/O)",
		     ia_fmt_dur(d1, sizeof d1, g->main_iowait_ns));
	if (workers)
		ia_chain_line(c, "[HOST] %d worker%s on-CPU %s during the gaps (%.1f busy on average)", workers, workers > 1 ? "s" : "",
		     ia_fmt_dur(d1, sizeof d1, g->workers_oncpu_ns), (double)g->workers_oncpu_ns / (double)g->total_ns);
	if (stk_main[0])
		ia_chain_line(c, "[HOST] main thread's on-CPU samples in the gaps: %s", stk_main);
	if (stk_workers[0])
		ia_chain_line(c, "[HOST] workers' on-CPU samples in the gaps: %s", stk_workers);
	char stk_sib[600], sib_name[96] = "";
	ia_top_stacks(g, IA_GAP_SIBLINGS, stk_sib, sizeof stk_sib);
	if (g->sibling_top != UINT32_MAX)
		snprintf(sib_name, sizeof sib_name, "tid %u \"%s\"", t->threads[g->sibling_top].tid,
			 t->threads[g->sibling_top].comm);
	if (g->siblings_oncpu_ns * 10 >= g->total_ns && sib_name[0]) {
		ia_chain_line(c, "[HOST] the main process's other threads on-CPU %s during the gaps (the most: %s, %s)",
		     ia_fmt_dur(d1, sizeof d1, g->siblings_oncpu_ns), sib_name, ia_fmt_dur(d2, sizeof d2, g->sibling_top_ns));
		if (stk_sib[0])
			ia_chain_line(c, "[HOST] their on-CPU samples in the gaps: %s", stk_sib);
	}
	int end_py = end && strcmp(end->line, "(no Python frame)");
	ia_chain_line(c, "[CUDA] %s gaps totalling %s of %s; the next call after a gap is %s%s%s",
	     ia_fmt_count(n1, sizeof n1, g->n), ia_fmt_dur(d1, sizeof d1, g->total_ns), ia_fmt_dur(d2, sizeof d2, win),
	     end ? ia_api_name(t, end->api) : "-", end_py ? " at " : "", end_py ? end->line : "");

	int nw = ia_good_workers(a);
	if (comp && kind != IA_KIND_GAPS_COMPILING)
		ia_chain_line(c, "[HOST] %.0f%% of the on-CPU samples in the gaps were torch.compile compiling", 100 * comp_share);
	if (kind == IA_KIND_GAPS_COMPILING) {
		compiling_cause(c, a, comp_share, main_only);
	} else if (kind == IA_KIND_GAPS_HOST_BUSY) {
		int coll = ia_stacks_show_collation(g, IA_GAP_MAIN);
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread itself kept a CPU busy while no GPU work was queued: on-CPU %s of the %s "
			 "of gaps between CUDA calls.",
			 ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns));
		if (stk_main[0])
			ia_addf(c->root_cause, sizeof c->root_cause, " Where that CPU time went (sampled): %s.", stk_main);
		else
			ia_addf(c->root_cause, sizeof c->root_cause, " (No on-CPU samples in the gaps: where it went is unknown.)");
		if (coll)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " That is per-sample batch assembly (indexing rows one by one, then torch.stack over a "
			     "Python list: the DataLoader's default collation)%s.",
			     workers ? "" : " in the main process, as with num_workers=0");
		else if (!workers && stk_main[0])
			ia_addf(c->root_cause, sizeof c->root_cause, " No worker process was running.");
		double interp = coll ? 0 : ia_stacks_interpreter_share(g, IA_GAP_MAIN);
		const struct ia_gap_stack *hot = ia_stacks_python_top(g, IA_GAP_MAIN);
		char where[520];   /* label, python, user line: 3 × 160 + words */
		if (interp >= INTERPRETER_SHARE && hot)
			ia_addf(c->root_cause, sizeof c->root_cause, " %.0f%% of those samples run Python code, the most in %s.",
			     100 * interp, ia_python_where(hot, where, sizeof where));
		else if (interp >= INTERPRETER_SHARE)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of those samples are the Python interpreter itself: per-item Python code "
			     "(native stacks cannot say which Python code).", 100 * interp);
		if (hot && hot->user_python[0] && interp >= INTERPRETER_SHARE)   /* where the CPU went, in the user's code */
			snprintf(c->source, sizeof c->source, "%s", hot->user_python);
		const struct ia_gap_line *sl = g->nsync_lines ? &g->sync_lines[0] : NULL;
		if (sl && sl->gap_ns * 2 >= g->total_ns && strcmp(sl->line, "(no Python frame)"))
			ia_addf(c->root_cause, sizeof c->root_cause, " Most gaps start when the sync at %s returns.", sl->line);
		if (blk >= 0.2 || rq >= 0.2)
			ia_addf(c->root_cause, sizeof c->root_cause, " The rest of the gaps: blocked %.0f%%, waiting for a CPU %.0f%%.",
			     100 * blk, 100 * rq);
		if (coll && !workers)
			ia_chain_fix(c, "Assemble batches in worker processes: DataLoader(..., num_workers=%d, persistent_workers=True, "
			       "pin_memory=True) (%d CPUs: one left for the main process)", nw, cpus);
		if (coll)
			ia_batch_level_fix(c);
		/* Python frames that are not the DataLoader's: the code to fix is named, not guessed */
		int hot_elsewhere = hot && !strstr(hot->python, "torch/utils/data");
		if (!coll && !workers && interp >= INTERPRETER_SHARE && !hot_elsewhere)
			ia_chain_fix(c, "If batches come from a DataLoader with num_workers=0, its per-sample __getitem__ and "
			       "collation run here: num_workers=%d, persistent_workers=True, pin_memory=True (%d CPUs), "
			       "or for an in-memory tensor shuffle once and slice (x = x[torch.randperm(N)]; "
			       "batch = x[i:i+B])", nw, cpus);
		if (!coll && hot && interp >= INTERPRETER_SHARE)
			ia_chain_fix(c, "Make the Python code the samples name cheaper (%s first), or take it off the "
			       "critical path: prepare the next batch in a DataLoader worker, or queue the next step's GPU "
			       "work before it runs", ia_python_where(hot, where, sizeof where));
		else if (!coll)
			ia_chain_fix(c, "Profile the host code that runs between CUDA calls (py-spy or torch.profiler's CPU view): "
			       "it runs while the GPU has nothing to do; move it off the critical path or overlap it "
			       "with GPU work");
		if (end && strcmp(end->line, "(no Python frame)"))
			ia_chain_fix(c, "The GPU waits for the work issued at %s (%s after each gap): look at what runs before it",
			    end->line, ia_api_name(t, end->api));
	} else if (kind == IA_KIND_GAPS_WAITING_WORKERS) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "Data loading is slower than the GPU: the main thread was blocked for %s of the %s with no "
			 "GPU work queued, while %d worker%s spent %s on CPUs in those gaps — the workers produce "
			 "batches slower than the model consumes them.",
			 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns), workers,
			 workers > 1 ? "s" : "", ia_fmt_dur(d3, sizeof d3, g->workers_oncpu_ns));
		if (stk_workers[0])
			ia_addf(c->root_cause, sizeof c->root_cause, " Worker CPU time (sampled): %s.", stk_workers);
		/* Per-item work in the workers: collation frames, or the interpreter
		 * running __getitem__ row by row.  More workers divide it; doing it per
		 * batch removes it (on the H200, 7M rows: 9.9 s with 15 workers, 0.68 s
		 * sliced), so that fix comes first. */
		double winterp = ia_stacks_interpreter_share(g, IA_GAP_WORKERS);
		int wcoll = ia_stacks_show_collation(g, IA_GAP_WORKERS);
		int per_item = wcoll || winterp >= INTERPRETER_SHARE;
		const struct ia_gap_stack *whot = ia_stacks_python_top(g, IA_GAP_WORKERS);
		char where[520];   /* label, python, user line: 3 × 160 + words */
		if (per_item && !wcoll && whot)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of the workers' samples run Python code, the most in %s: per-item work such as a "
			     "Dataset's __getitem__ and the default collation.", 100 * winterp,
			     ia_python_where(whot, where, sizeof where));
		else if (per_item && !wcoll)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of the workers' samples are the Python interpreter itself: per-item Python code "
			     "such as a Dataset's __getitem__ and the default collation.", 100 * winterp);
		if (whot && whot->user_python[0] && per_item)   /* the workers' own code starves the GPU */
			snprintf(c->source, sizeof c->source, "%s", whot->user_python);
		if (workers > cpus - 1 && cpus > 0)
			ia_addf(c->root_cause, sizeof c->root_cause,
			     " %d workers plus the main process are more than the %d CPUs: they also fight for them.",
			     workers, cpus);
		if (per_item)
			ia_batch_level_fix(c);
		if (workers > cpus - 1 && cpus > 0)
			ia_chain_fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them", nw, workers, cpus);
		else if (workers < nw)
			ia_chain_fix(c, "More workers: num_workers=%d (%d now, %d CPUs)", nw < 2 * workers ? nw : 2 * workers,
			    workers, cpus);
		ia_chain_fix(c, "persistent_workers=True (if not set already) and prefetch_factor=4, so batches are ready "
		       "before they are needed");
		if (!per_item && !a->gaps.samples_workers)
			ia_batch_level_fix(c);
	} else if (kind == IA_KIND_GAPS_HOST_BLOCKED) {
		/* the process's other threads busy while the main thread waits: in
		 * CPython, running Python code, they hold the GIL it waits for */
		int sib_busy = sib_name[0] && (double)g->siblings_oncpu_ns >= SIBLINGS_BUSY * (double)g->main_blocked_ns;
		double sinterp = ia_stacks_interpreter_share(g, IA_GAP_SIBLINGS);
		const struct ia_gap_stack *shot = ia_stacks_python_top(g, IA_GAP_SIBLINGS);
		int gil = sib_busy && sinterp >= INTERPRETER_SHARE;
		int io = !gil && g->main_blocked_ns && (double)g->main_iowait_ns >= IOWAIT_DOMINANT * (double)g->main_blocked_ns;
		char where[520];   /* label, python, user line: 3 × 160 + words */
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread was blocked (off-CPU, not runnable) for %s of the %s with no GPU work "
			 "queued%s",
			 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
			 workers ? ", and the workers were mostly idle then too" : "");
		if (gil) {
			ia_addf(c->root_cause, sizeof c->root_cause,
			     ", while other threads of its process were on-CPU for %s (the most: %s). %.0f%% of their "
			     "samples run Python code%s%s. CPython runs one thread's Python code at a time (the GIL): "
			     "the main thread waits for it before it can queue the next GPU work.",
			     ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), sib_name, 100 * sinterp,
			     shot ? ", the most in " : "", shot ? ia_python_where(shot, where, sizeof where) : "");
			if (shot && shot->user_python[0])
				snprintf(c->source, sizeof c->source, "%s", shot->user_python);
			ia_chain_fix(c, "Take that Python work out of the training process (a separate process, or a DataLoader "
			       "worker), run it less often, or make it cheaper%s%s%s: while it runs, the training loop "
			       "cannot queue GPU work", shot ? " (" : "", shot ? ia_python_where(shot, where, sizeof where) : "",
			    shot ? ")" : "");
		} else if (io) {
			ia_addf(c->root_cause, sizeof c->root_cause,
			     ", %s of it in uninterruptible sleep (D state): most likely the main thread waited on storage "
			     "— reading or writing files (data, checkpoints, logs), or faulting in pages of a memory-mapped "
			     "dataset — while no GPU work was queued (D state also covers some kernel locks).%s%s",
			     ia_fmt_dur(d3, sizeof d3, g->main_iowait_ns), stk_main[0] ? " Its samples in the gaps: " : "",
			     stk_main[0] ? stk_main : "");
			ia_chain_fix(c, "Take storage off the critical path: read data in DataLoader workers (num_workers=%d, "
			       "persistent_workers=True, prefetch_factor=4) so reads overlap GPU work, or keep the dataset "
			       "in RAM (or on local NVMe); write checkpoints and logs less often, or from another thread or "
			       "process", nw);
		} else {
			ia_addf(c->root_cause, sizeof c->root_cause, ": it waited on something other than a CPU (I/O, a lock, a "
			     "queue, sleep).");
			if (sib_busy)
				ia_addf(c->root_cause, sizeof c->root_cause,
				     " Other threads of its process were on-CPU for %s meanwhile (the most: %s): what the "
				     "main thread waits for may be one of them (a lock, a queue).",
				     ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), sib_name);
		}
		if (!io)
			ia_chain_fix(c, "Find what the main thread waits on before %s: data read from disk or network "
			       "(prefetch it, or load it in DataLoader workers), a lock or a queue",
			    end && strcmp(end->line, "(no Python frame)") ? end->line : "the next CUDA call");
	} else {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread was runnable but not running for %s of the %s with no GPU work queued: "
			 "other tasks held the CPUs%s.",
			 ia_fmt_dur(d1, sizeof d1, g->main_runq_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
			 sat >= SATURATED ? " (CPUs saturated)" : "");
		if (workers > cpus - 1 && cpus > 0)
			ia_chain_fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them", nw, workers, cpus);
		else
			ia_chain_fix(c, "Give the main process a CPU of its own: fewer competing processes, or taskset/cgroups "
			       "to keep others off one CPU");
	}

	cJSON *ev = c->evidence;
	ia_json_u64(ev, "window_ns", win);
	ia_json_u64(ev, "gaps", g->n);
	ia_json_u64(ev, "gap_ns", g->total_ns);
	ia_json_round(ev, "gap_share", share, 4);
	ia_json_u64(ev, "main_oncpu_ns", g->main_oncpu_ns);
	ia_json_u64(ev, "main_blocked_ns", g->main_blocked_ns);
	ia_json_u64(ev, "main_runq_ns", g->main_runq_ns);
	ia_json_u64(ev, "main_iowait_ns", g->main_iowait_ns);
	ia_json_u64(ev, "workers", (uint64_t)workers);
	ia_json_u64(ev, "workers_oncpu_ns", g->workers_oncpu_ns);
	cJSON_AddNumberToObject(ev, "cpus", cpus);
	if (sat >= 0)
		ia_json_round(ev, "cpu_saturation", sat, 4);
	ia_json_round(ev, "compile_share", comp_share, 4);
	ia_json_u64(ev, "compile_gaps", g->ncompile_gaps);
	ia_json_u64(ev, "compile_gap_ns", g->compile_gap_ns);
	ia_stacks_json(ev, g, IA_GAP_MAIN, "main_stacks");
	ia_json_round(ev, "main_python_share", ia_stacks_interpreter_share(g, IA_GAP_MAIN), 4);
	if (workers) {
		ia_stacks_json(ev, g, IA_GAP_WORKERS, "worker_stacks");
		ia_json_round(ev, "worker_python_share", ia_stacks_interpreter_share(g, IA_GAP_WORKERS), 4);
	}
	ia_json_u64(ev, "sibling_threads_oncpu_ns", g->siblings_oncpu_ns);
	if (g->samples_siblings) {
		ia_stacks_json(ev, g, IA_GAP_SIBLINGS, "sibling_stacks");
		ia_json_round(ev, "sibling_python_share", ia_stacks_interpreter_share(g, IA_GAP_SIBLINGS), 4);
	}
	ia_gap_end_lines_json(ev, "gap_ending_lines", t, g, 3);
	return 0;
}
