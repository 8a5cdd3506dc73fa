/*
 * chains.c — the rules that turn evidence into causal chains (see chains.h
 * and docs/chains.md, which lists every threshold used here).
 *
 * Each rule measures a share of the analysis window (the main process's
 * CUDA activity, from its first queued work to the end of its last call),
 * names a cause only when the measured evidence for it passes a threshold,
 * and derives fixes from the same evidence: the CPU count from the session,
 * the worker count from the process tree, bandwidths measured in this
 * trace, Python lines from the stacks.
 */
#include "chains.h"

#include "json_out.h"
#include "util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Severity by the share of the window a chain explains. */
#define SHARE_HIGH 0.30
#define SHARE_MEDIUM 0.10
#define SHARE_LOW 0.03
/* slow calls: smaller shares matter, the tail is ~1 % of calls */
#define SLOW_HIGH 0.05
#define SLOW_MEDIUM 0.01
/* pageable copies */
#define PAGEABLE_HIGH 0.20
#define PAGEABLE_MEDIUM 0.05
#define PINNED_GAIN 2.0              /* pinned vs pageable GB/s measured, for HIGH */
/* evidence shares that name a cause */
#define MAIN_STATE_DOMINANT 0.50     /* on-CPU / blocked share of the gaps */
#define MAIN_PREEMPTED 0.30          /* runnable share of the gaps */
#define WORKERS_BUSY 0.50            /* workers' CPU time / main's blocked gap time */
#define INTERPRETER_SHARE 0.25      /* gap samples in the CPython interpreter: per-item Python work */
#define IOWAIT_DOMINANT 0.50         /* D-state share of the main thread's blocked gap time: storage */
#define SIBLINGS_BUSY 0.50           /* the main process's other threads on-CPU / main's blocked gap time */
#define COMPILE_DOMINANT 0.50        /* main + worker gap samples in torch.compile's compile-time code */
#define CONTENTION_RUNQ 0.20         /* runnable share of slow-call time */
#define CONTENTION_RUNQ_SAT 0.05     /* ... or this much with CPUs saturated */
#define SATURATED 0.90
#define SYNC_EVERY_STEP 0.50         /* syncs from one line per gap */
#define SYNC_MIN_COUNT 10
/* host-bound launches (the stretch and its rate: hostbound.h) */
#define HOSTBOUND_MEDIUM 0.30        /* share of the window; never HIGH: GPU idle inside is not measured */
#define HOSTBOUND_LOW 0.10
#define HOSTBOUND_MIN_LAUNCHES 1000  /* enough launches for a rate to mean something */
#define HOSTBOUND_ONCPU 0.50         /* launching threads' on-CPU share of the stretches, when measured */
#define OPTIM_SHARE 0.20             /* sampled launches from torch/optim lines: name the fused optimizer */

const char *ia_severity_name(enum ia_severity s)
{
	switch (s) {
	case IA_SEV_HIGH: return "HIGH";
	case IA_SEV_MEDIUM: return "MEDIUM";
	case IA_SEV_LOW: return "LOW";
	default: return "NONE";
	}
}

static enum ia_severity by_share(double s, double hi, double med, double low)
{
	return s >= hi ? IA_SEV_HIGH : s >= med ? IA_SEV_MEDIUM : s >= low ? IA_SEV_LOW : IA_SEV_NONE;
}

static void addf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void addf(char *buf, size_t len, const char *fmt, ...)
{
	size_t l = strlen(buf);
	if (l + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, len - l, fmt, ap);
	va_end(ap);
}

static void fix(struct ia_chain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fix(struct ia_chain *c, const char *fmt, ...)
{
	if (c->nfixes == IA_CHAIN_MAX_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->fixes[c->nfixes++], sizeof c->fixes[0], fmt, ap);
	va_end(ap);
}

static void line(struct ia_chain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct ia_chain *c, const char *fmt, ...)
{
	if (c->ntimeline == IA_CHAIN_MAX_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->timeline[c->ntimeline++], sizeof c->timeline[0], fmt, ap);
	va_end(ap);
}

static struct ia_chain *new_chain(struct ia_analysis *a, size_t *cap, const char *kind)
{
	if (ia_grow((void **)&a->chains, cap, a->nchains + 1, sizeof *a->chains) < 0)
		return NULL;
	struct ia_chain *c = &a->chains[a->nchains++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->evidence = cJSON_CreateObject();
	return c;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The number of CPUs, from the session, else from cpu_busy. */
static int cpus_of(const struct ia_analysis *a)
{
	return a->t->cpus > 0 ? a->t->cpus : a->ev.ncpus;
}

/* A num_workers value for this machine: every CPU but one for the main process. */
static int good_workers(const struct ia_analysis *a)
{
	int c = cpus_of(a);
	return c > 1 ? c - 1 : 1;
}

static int is_collation(const char *sym)
{
	/* torch.stack lands in at::native::structured_cat_out_cpu in PyTorch 2.x */
	return sym && (strstr(sym, "at::native::stack") || strstr(sym, "at::native::cat") ||
		       strstr(sym, "cat_out") || strstr(sym, "collate") || strstr(sym, "gather_rows"));
}

/* "at::native::stack 55% (collate.py:141), _PyEval_EvalFrameDefault 30%" for a role. */
/* Indexes of up to max stacks most sampled by a role, most first (stacks
 * are sorted by all roles' samples together); returns how many. */
static int role_top(const struct ia_gaps *g, enum ia_gap_role role, size_t *pick, int max)
{
	int n = 0;
	for (; n < max; n++) {
		size_t best = g->nstacks;
		for (size_t i = 0; i < g->nstacks; i++) {
			uint64_t c = ia_gap_stack_n(&g->stacks[i], role);
			int taken = 0;
			for (int k = 0; k < n; k++)
				taken |= pick[k] == i;
			if (c && !taken && (best == g->nstacks || c > ia_gap_stack_n(&g->stacks[best], role)))
				best = i;
		}
		if (best == g->nstacks)
			break;
		pick[n] = best;
	}
	return n;
}

static void top_stacks(const struct ia_gaps *g, enum ia_gap_role role, char *buf, size_t len)
{
	uint64_t total = ia_gap_samples(g, role);
	size_t pick[3];
	buf[0] = 0;
	if (!total)
		return;
	int n = role_top(g, role, pick, 3);
	for (int k = 0; k < n; k++) {
		const struct ia_gap_stack *st = &g->stacks[pick[k]];
		addf(buf, len, "%s%s %.0f%%", k ? ", " : "", st->label, pct(ia_gap_stack_n(st, role), total));
		if (st->python[0])
			addf(buf, len, " (%s)", st->python);
	}
}

/* The CPython interpreter itself (evaluating bytecode, allocating objects):
 * per-item Python work such as a Dataset's __getitem__ run a million times. */
static int is_interpreter(const char *sym)
{
	return sym && (!strncmp(sym, "_PyEval_", 8) || !strncmp(sym, "PyObject_", 9) ||
		       !strncmp(sym, "_PyObject_", 10) || !strncmp(sym, "PyEval_", 7));
}

/* Share of a role's samples in gaps that ran Python code: named by their
 * Python frames, or (native stacks only) the interpreter's own symbols. */
static double stacks_interpreter_share(const struct ia_gaps *g, enum ia_gap_role role)
{
	uint64_t total = ia_gap_samples(g, role), n = 0;
	for (size_t i = 0; i < g->nstacks; i++)
		if (g->stacks[i].python_code || is_interpreter(g->stacks[i].label))
			n += ia_gap_stack_n(&g->stacks[i], role);
	return total ? (double)n / (double)total : 0;
}

/* "build_batch at data.py:24", with ", called from train.py:50" when the
 * user's own line is another one. */
static const char *python_where(const struct ia_gap_stack *s, char *buf, size_t len)
{
	int called = s->user_python[0] && strcmp(s->user_python, s->python);
	snprintf(buf, len, "%s at %s%s%s", s->label, s->python, called ? ", called from " : "",
		 called ? s->user_python : "");
	return buf;
}

/* The most sampled stack of a role that ran Python code, or NULL. */
static const struct ia_gap_stack *stacks_python_top(const struct ia_gaps *g, enum ia_gap_role role)
{
	const struct ia_gap_stack *top = NULL;
	for (size_t i = 0; i < g->nstacks; i++) {
		uint64_t n = ia_gap_stack_n(&g->stacks[i], role);
		if (g->stacks[i].python_code && g->stacks[i].python[0] && n && (!top || n > ia_gap_stack_n(top, role)))
			top = &g->stacks[i];
	}
	return top;
}

/* The folded stack with the most compiling samples, or NULL. */
static const struct ia_gap_stack *stacks_compile_top(const struct ia_gaps *g)
{
	const struct ia_gap_stack *top = NULL;
	for (size_t i = 0; i < g->nstacks; i++)
		if (g->stacks[i].compiling && (!top || g->stacks[i].compiling > top->compiling))
			top = &g->stacks[i];
	return top;
}

static int stacks_show_collation(const struct ia_gaps *g, enum ia_gap_role role)
{
	uint64_t total = ia_gap_samples(g, role), coll = 0;
	for (size_t i = 0; i < g->nstacks; i++)
		if (is_collation(g->stacks[i].label) || is_collation(g->stacks[i].python))
			coll += ia_gap_stack_n(&g->stacks[i], role);
	return total && coll * 5 >= total;   /* at least a fifth of the samples */
}

static void stacks_json(cJSON *ev, const struct ia_gaps *g, enum ia_gap_role role, const char *key)
{
	uint64_t total = ia_gap_samples(g, role);
	cJSON *arr = cJSON_AddArrayToObject(ev, key);
	size_t pick[5];
	int n = role_top(g, role, pick, 5);
	for (int k = 0; k < n; k++) {
		const struct ia_gap_stack *st = &g->stacks[pick[k]];
		uint64_t c = ia_gap_stack_n(st, role);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "symbol", st->label);
		cJSON_AddBoolToObject(o, "python_code", st->python_code);   /* symbol is a Python function */
		ia_json_str(o, "python", st->python[0] ? st->python : NULL);
		ia_json_str(o, "user_line", st->user_python[0] ? st->user_python : NULL);
		ia_json_u64(o, "samples", c);
		ia_json_round(o, "share", total ? (double)c / (double)total : 0, 4);
		cJSON_AddItemToArray(arr, o);
	}
}

static void batch_level_fix(struct ia_chain *c)
{
	fix(c, "For an in-memory dataset, skip per-sample __getitem__ + collate: index a pre-shuffled "
	       "permutation directly (perm = torch.randperm(N); batch = data[perm[i:i+B]]), or give the "
	       "DataLoader a BatchSampler and a dataset with __getitems__");
}

/* ---- gaps ---- */

/* torch.compile compiled while no GPU work was queued: once at the start,
 * or again in the second half of the run (recompilation), which needs
 * other fixes. */
static void compiling_cause(struct ia_chain *c, const struct ia_analysis *a, double comp_share, int main_only)
{
	const struct ia_gaps *g = &a->gaps;
	uint64_t mid = g->win_start + (g->win_end - g->win_start) / 2;
	int recurring = g->ncompile_gaps > 1 && g->compile_first_end <= mid && g->compile_last_start > mid;
	const struct ia_gap_stack *top = stacks_compile_top(g);
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
		addf(c->root_cause, sizeof c->root_cause, " The most sampled: %s.", python_where(top, where, sizeof where));
	uint64_t win = g->win_end - g->win_start;
	if (win > g->compile_gap_ns)   /* the steady state, which is what the run is for */
		addf(c->root_cause, sizeof c->root_cause, " Outside those gaps no GPU work was queued %.1f%% of the time.",
		     100.0 * (double)(g->total_ns - g->compile_gap_ns) / (double)(win - g->compile_gap_ns));
	if (top && top->user_python[0])   /* the user's line that called into the compiled code */
		snprintf(c->source, sizeof c->source, "%s", top->user_python);
	if (recurring)
		addf(c->root_cause, sizeof c->root_cause,
		     " It compiled again in the second half of the run (last from %s after the first GPU work): "
		     "something made it recompile.", ia_fmt_dur(d3, sizeof d3, g->compile_last_start - g->win_start));
	else
		addf(c->root_cause, sizeof c->root_cause,
		     " Compiling ended %s after the first GPU work: a start-up cost, paid once per process.",
		     ia_fmt_dur(d3, sizeof d3, g->compile_last_end - g->win_start));
	if (recurring)
		fix(c, "Find what makes it recompile: TORCH_LOGS=recompiles prints the guard that failed each time; "
		       "for shapes that change (a smaller last batch, variable sequence lengths) "
		       "torch._dynamo.mark_dynamic(x, dim), torch.compile(..., dynamic=True), drop_last=True or "
		       "padding to a few fixed sizes; for a Python number that changes (a step counter, a learning "
		       "rate), pass it as a tensor");
	else
		fix(c, "Judge the steady state after warm-up steps: this window's idle share includes compiling; "
		       "mode=\"max-autotune\" compiles and benchmarks far longer than the default mode, worth it "
		       "only for runs long enough to repay it");
	fix(c, "Keep compiled artifacts between runs: Inductor's on-disk caches (TORCHINDUCTOR_FX_GRAPH_CACHE=1, "
	       "TORCHINDUCTOR_AUTOGRAD_CACHE=1) or torch.compiler.save_cache_artifacts() and "
	       "load_cache_artifacts() on the next start");
}

static int gap_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	if (!win || !g->n || !g->total_ns)
		return 0;
	double share = (double)g->total_ns / (double)win;
	enum ia_severity sev = by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	double on = (double)g->main_oncpu_ns / (double)g->total_ns;
	double blk = (double)g->main_blocked_ns / (double)g->total_ns;
	double rq = (double)g->main_runq_ns / (double)g->total_ns;
	int workers = (int)a->pp.nworkers, cpus = cpus_of(a);
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
	const char *kind;
	if (smw && comp_share >= COMPILE_DOMINANT)
		kind = "gaps_compiling";
	else if (on >= MAIN_STATE_DOMINANT)
		kind = "gaps_host_busy";
	else if (blk >= MAIN_STATE_DOMINANT && workers &&
		 (double)g->workers_oncpu_ns >= WORKERS_BUSY * (double)g->main_blocked_ns)
		kind = "gaps_waiting_workers";
	else if (blk >= MAIN_STATE_DOMINANT)
		kind = "gaps_host_blocked";
	else if (rq >= MAIN_PREEMPTED)
		kind = "gaps_host_preempted";
	else
		kind = "gaps_host_busy";   /* mixed: said as the split below */
	struct ia_chain *c = new_chain(a, cap, kind);
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
	const char *what = !strcmp(kind, "gaps_host_busy") ? "main thread on-CPU"
		: !strcmp(kind, "gaps_waiting_workers") ? "main thread blocked waiting for workers"
		: !strcmp(kind, "gaps_host_blocked") ? "main thread blocked"
		: !strcmp(kind, "gaps_compiling") ? "torch.compile compiling in the on-CPU samples"
		: "main thread waiting for a CPU";
	double share_state = !strcmp(kind, "gaps_host_busy") ? on
		: !strcmp(kind, "gaps_compiling") ? comp_share
		: !strcmp(kind, "gaps_host_preempted") ? rq : blk;
	snprintf(c->summary, sizeof c->summary,
		 "GPU idle %s (%s): %s %.0f%% of the time, %s %.0f%% of it "
		 "(%s gaps, mean %s)",
		 ia_fmt_pct_range(rng, sizeof rng, pct(g->idle_low_ns, win), pct(g->idle_high_ns, win)),
		 g->gpu.measured ? "measured" : "estimate",
		 g->gpu.measured ? "the GPU had no work" : "no CUDA work queued", 100 * share, what,
		 100 * share_state,
		 ia_fmt_count(n1, sizeof n1, g->n), ia_fmt_dur(d1, sizeof d1, mean));

	char stk_main[600], stk_workers[600];
	top_stacks(g, IA_GAP_MAIN, stk_main, sizeof stk_main);
	top_stacks(g, IA_GAP_WORKERS, stk_workers, sizeof stk_workers);
	double sat = ia_cpu_saturation(&a->ev, g->win_start, g->win_end);
	if (sat >= 0)
		line(c, "[SYSTEM] CPU %.0f%% busy over the window (%d CPUs)", 100 * sat, cpus);
	else
		line(c, "[SYSTEM] %d CPUs (no CPU-busy evidence in this trace)", cpus);
	line(c, "[HOST] main thread (pid %d) in the gaps: on-CPU %s (%.0f%%), blocked %s (%.0f%%), waiting for a CPU %s (%.0f%%)",
	     mp->pid, ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), 100 * on,
	     ia_fmt_dur(d2, sizeof d2, g->main_blocked_ns), 100 * blk, ia_fmt_dur(d3, sizeof d3, g->main_runq_ns), 100 * rq);
	if (g->main_iowait_ns)
		line(c, "[HOST] of its blocked time, %s in uninterruptible sleep (D state: disk or page-fault I/O)",
		     ia_fmt_dur(d1, sizeof d1, g->main_iowait_ns));
	if (workers)
		line(c, "[HOST] %d worker%s on-CPU %s during the gaps (%.1f busy on average)", workers, workers > 1 ? "s" : "",
		     ia_fmt_dur(d1, sizeof d1, g->workers_oncpu_ns), (double)g->workers_oncpu_ns / (double)g->total_ns);
	if (stk_main[0])
		line(c, "[HOST] main thread's on-CPU samples in the gaps: %s", stk_main);
	if (stk_workers[0])
		line(c, "[HOST] workers' on-CPU samples in the gaps: %s", stk_workers);
	char stk_sib[600], sib_name[96] = "";
	top_stacks(g, IA_GAP_SIBLINGS, stk_sib, sizeof stk_sib);
	if (g->sibling_top != UINT32_MAX)
		snprintf(sib_name, sizeof sib_name, "tid %u \"%s\"", t->threads[g->sibling_top].tid,
			 t->threads[g->sibling_top].comm);
	if (g->siblings_oncpu_ns * 10 >= g->total_ns && sib_name[0]) {
		line(c, "[HOST] the main process's other threads on-CPU %s during the gaps (the most: %s, %s)",
		     ia_fmt_dur(d1, sizeof d1, g->siblings_oncpu_ns), sib_name, ia_fmt_dur(d2, sizeof d2, g->sibling_top_ns));
		if (stk_sib[0])
			line(c, "[HOST] their on-CPU samples in the gaps: %s", stk_sib);
	}
	int end_py = end && strcmp(end->line, "(no Python frame)");
	line(c, "[CUDA] %s gaps totalling %s of %s; the next call after a gap is %s%s%s",
	     ia_fmt_count(n1, sizeof n1, g->n), ia_fmt_dur(d1, sizeof d1, g->total_ns), ia_fmt_dur(d2, sizeof d2, win),
	     end ? ia_api_name(t, end->api) : "-", end_py ? " at " : "", end_py ? end->line : "");

	int nw = good_workers(a);
	if (comp && strcmp(kind, "gaps_compiling"))
		line(c, "[HOST] %.0f%% of the on-CPU samples in the gaps were torch.compile compiling", 100 * comp_share);
	if (!strcmp(kind, "gaps_compiling")) {
		compiling_cause(c, a, comp_share, main_only);
	} else if (!strcmp(kind, "gaps_host_busy")) {
		int coll = stacks_show_collation(g, IA_GAP_MAIN);
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread itself kept a CPU busy while no GPU work was queued: on-CPU %s of the %s "
			 "of gaps between CUDA calls.",
			 ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns));
		if (stk_main[0])
			addf(c->root_cause, sizeof c->root_cause, " Where that CPU time went (sampled): %s.", stk_main);
		else
			addf(c->root_cause, sizeof c->root_cause, " (No on-CPU samples in the gaps: where it went is unknown.)");
		if (coll)
			addf(c->root_cause, sizeof c->root_cause,
			     " That is per-sample batch assembly (indexing rows one by one, then torch.stack over a "
			     "Python list: the DataLoader's default collation)%s.",
			     workers ? "" : " in the main process, as with num_workers=0");
		else if (!workers && stk_main[0])
			addf(c->root_cause, sizeof c->root_cause, " No worker process was running.");
		double interp = coll ? 0 : stacks_interpreter_share(g, IA_GAP_MAIN);
		const struct ia_gap_stack *hot = stacks_python_top(g, IA_GAP_MAIN);
		char where[520];   /* label, python, user line: 3 × 160 + words */
		if (interp >= INTERPRETER_SHARE && hot)
			addf(c->root_cause, sizeof c->root_cause, " %.0f%% of those samples run Python code, the most in %s.",
			     100 * interp, python_where(hot, where, sizeof where));
		else if (interp >= INTERPRETER_SHARE)
			addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of those samples are the Python interpreter itself: per-item Python code "
			     "(native stacks cannot say which Python code).", 100 * interp);
		if (hot && hot->user_python[0] && interp >= INTERPRETER_SHARE)   /* where the CPU went, in the user's code */
			snprintf(c->source, sizeof c->source, "%s", hot->user_python);
		const struct ia_gap_line *sl = g->nsync_lines ? &g->sync_lines[0] : NULL;
		if (sl && sl->gap_ns * 2 >= g->total_ns && strcmp(sl->line, "(no Python frame)"))
			addf(c->root_cause, sizeof c->root_cause, " Most gaps start when the sync at %s returns.", sl->line);
		if (blk >= 0.2 || rq >= 0.2)
			addf(c->root_cause, sizeof c->root_cause, " The rest of the gaps: blocked %.0f%%, waiting for a CPU %.0f%%.",
			     100 * blk, 100 * rq);
		if (coll && !workers)
			fix(c, "Assemble batches in worker processes: DataLoader(..., num_workers=%d, persistent_workers=True, "
			       "pin_memory=True) (%d CPUs: one left for the main process)", nw, cpus);
		if (coll)
			batch_level_fix(c);
		/* Python frames that are not the DataLoader's: the code to fix is named, not guessed */
		int hot_elsewhere = hot && !strstr(hot->python, "torch/utils/data");
		if (!coll && !workers && interp >= INTERPRETER_SHARE && !hot_elsewhere)
			fix(c, "If batches come from a DataLoader with num_workers=0, its per-sample __getitem__ and "
			       "collation run here: num_workers=%d, persistent_workers=True, pin_memory=True (%d CPUs), "
			       "or for an in-memory tensor shuffle once and slice (x = x[torch.randperm(N)]; "
			       "batch = x[i:i+B])", nw, cpus);
		if (!coll && hot && interp >= INTERPRETER_SHARE)
			fix(c, "Make the Python code the samples name cheaper (%s first), or take it off the "
			       "critical path: prepare the next batch in a DataLoader worker, or queue the next step's GPU "
			       "work before it runs", python_where(hot, where, sizeof where));
		else if (!coll)
			fix(c, "Profile the host code that runs between CUDA calls (py-spy or torch.profiler's CPU view): "
			       "it runs while the GPU has nothing to do; move it off the critical path or overlap it "
			       "with GPU work");
		if (end && strcmp(end->line, "(no Python frame)"))
			fix(c, "The GPU waits for the work issued at %s (%s after each gap): look at what runs before it",
			    end->line, ia_api_name(t, end->api));
	} else if (!strcmp(kind, "gaps_waiting_workers")) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "Data loading is slower than the GPU: the main thread was blocked for %s of the %s with no "
			 "GPU work queued, while %d worker%s spent %s on CPUs in those gaps — the workers produce "
			 "batches slower than the model consumes them.",
			 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns), workers,
			 workers > 1 ? "s" : "", ia_fmt_dur(d3, sizeof d3, g->workers_oncpu_ns));
		if (stk_workers[0])
			addf(c->root_cause, sizeof c->root_cause, " Worker CPU time (sampled): %s.", stk_workers);
		/* Per-item work in the workers: collation frames, or the interpreter
		 * running __getitem__ row by row.  More workers divide it; doing it per
		 * batch removes it (on the H200, 7M rows: 9.9 s with 15 workers, 0.68 s
		 * sliced), so that fix comes first. */
		double winterp = stacks_interpreter_share(g, IA_GAP_WORKERS);
		int wcoll = stacks_show_collation(g, IA_GAP_WORKERS);
		int per_item = wcoll || winterp >= INTERPRETER_SHARE;
		const struct ia_gap_stack *whot = stacks_python_top(g, IA_GAP_WORKERS);
		char where[520];   /* label, python, user line: 3 × 160 + words */
		if (per_item && !wcoll && whot)
			addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of the workers' samples run Python code, the most in %s: per-item work such as a "
			     "Dataset's __getitem__ and the default collation.", 100 * winterp,
			     python_where(whot, where, sizeof where));
		else if (per_item && !wcoll)
			addf(c->root_cause, sizeof c->root_cause,
			     " %.0f%% of the workers' samples are the Python interpreter itself: per-item Python code "
			     "such as a Dataset's __getitem__ and the default collation.", 100 * winterp);
		if (whot && whot->user_python[0] && per_item)   /* the workers' own code starves the GPU */
			snprintf(c->source, sizeof c->source, "%s", whot->user_python);
		if (workers > cpus - 1 && cpus > 0)
			addf(c->root_cause, sizeof c->root_cause,
			     " %d workers plus the main process are more than the %d CPUs: they also fight for them.",
			     workers, cpus);
		if (per_item)
			batch_level_fix(c);
		if (workers > cpus - 1 && cpus > 0)
			fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them", nw, workers, cpus);
		else if (workers < nw)
			fix(c, "More workers: num_workers=%d (%d now, %d CPUs)", nw < 2 * workers ? nw : 2 * workers,
			    workers, cpus);
		fix(c, "persistent_workers=True (if not set already) and prefetch_factor=4, so batches are ready "
		       "before they are needed");
		if (!per_item && !a->gaps.samples_workers)
			batch_level_fix(c);
	} else if (!strcmp(kind, "gaps_host_blocked")) {
		/* the process's other threads busy while the main thread waits: in
		 * CPython, running Python code, they hold the GIL it waits for */
		int sib_busy = sib_name[0] && (double)g->siblings_oncpu_ns >= SIBLINGS_BUSY * (double)g->main_blocked_ns;
		double sinterp = stacks_interpreter_share(g, IA_GAP_SIBLINGS);
		const struct ia_gap_stack *shot = stacks_python_top(g, IA_GAP_SIBLINGS);
		int gil = sib_busy && sinterp >= INTERPRETER_SHARE;
		int io = !gil && g->main_blocked_ns && (double)g->main_iowait_ns >= IOWAIT_DOMINANT * (double)g->main_blocked_ns;
		char where[520];   /* label, python, user line: 3 × 160 + words */
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread was blocked (off-CPU, not runnable) for %s of the %s with no GPU work "
			 "queued%s",
			 ia_fmt_dur(d1, sizeof d1, g->main_blocked_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
			 workers ? ", and the workers were mostly idle then too" : "");
		if (gil) {
			addf(c->root_cause, sizeof c->root_cause,
			     ", while other threads of its process were on-CPU for %s (the most: %s). %.0f%% of their "
			     "samples run Python code%s%s. CPython runs one thread's Python code at a time (the GIL): "
			     "the main thread waits for it before it can queue the next GPU work.",
			     ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), sib_name, 100 * sinterp,
			     shot ? ", the most in " : "", shot ? python_where(shot, where, sizeof where) : "");
			if (shot && shot->user_python[0])
				snprintf(c->source, sizeof c->source, "%s", shot->user_python);
			fix(c, "Take that Python work out of the training process (a separate process, or a DataLoader "
			       "worker), run it less often, or make it cheaper%s%s%s: while it runs, the training loop "
			       "cannot queue GPU work", shot ? " (" : "", shot ? python_where(shot, where, sizeof where) : "",
			    shot ? ")" : "");
		} else if (io) {
			addf(c->root_cause, sizeof c->root_cause,
			     ", %s of it in uninterruptible sleep (D state): most likely the main thread waited on storage "
			     "— reading or writing files (data, checkpoints, logs), or faulting in pages of a memory-mapped "
			     "dataset — while no GPU work was queued (D state also covers some kernel locks).%s%s",
			     ia_fmt_dur(d3, sizeof d3, g->main_iowait_ns), stk_main[0] ? " Its samples in the gaps: " : "",
			     stk_main[0] ? stk_main : "");
			fix(c, "Take storage off the critical path: read data in DataLoader workers (num_workers=%d, "
			       "persistent_workers=True, prefetch_factor=4) so reads overlap GPU work, or keep the dataset "
			       "in RAM (or on local NVMe); write checkpoints and logs less often, or from another thread or "
			       "process", nw);
		} else {
			addf(c->root_cause, sizeof c->root_cause, ": it waited on something other than a CPU (I/O, a lock, a "
			     "queue, sleep).");
			if (sib_busy)
				addf(c->root_cause, sizeof c->root_cause,
				     " Other threads of its process were on-CPU for %s meanwhile (the most: %s): what the "
				     "main thread waits for may be one of them (a lock, a queue).",
				     ia_fmt_dur(d3, sizeof d3, g->siblings_oncpu_ns), sib_name);
		}
		if (!io)
			fix(c, "Find what the main thread waits on before %s: data read from disk or network "
			       "(prefetch it, or load it in DataLoader workers), a lock or a queue",
			    end && strcmp(end->line, "(no Python frame)") ? end->line : "the next CUDA call");
	} else {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The main thread was runnable but not running for %s of the %s with no GPU work queued: "
			 "other tasks held the CPUs%s.",
			 ia_fmt_dur(d1, sizeof d1, g->main_runq_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns),
			 sat >= SATURATED ? " (CPUs saturated)" : "");
		if (workers > cpus - 1 && cpus > 0)
			fix(c, "num_workers=%d: %d workers + the main process on %d CPUs fight for them", nw, workers, cpus);
		else
			fix(c, "Give the main process a CPU of its own: fewer competing processes, or taskset/cgroups "
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
	stacks_json(ev, g, IA_GAP_MAIN, "main_stacks");
	ia_json_round(ev, "main_python_share", stacks_interpreter_share(g, IA_GAP_MAIN), 4);
	if (workers) {
		stacks_json(ev, g, IA_GAP_WORKERS, "worker_stacks");
		ia_json_round(ev, "worker_python_share", stacks_interpreter_share(g, IA_GAP_WORKERS), 4);
	}
	ia_json_u64(ev, "sibling_threads_oncpu_ns", g->siblings_oncpu_ns);
	if (g->samples_siblings) {
		stacks_json(ev, g, IA_GAP_SIBLINGS, "sibling_stacks");
		ia_json_round(ev, "sibling_python_share", stacks_interpreter_share(g, IA_GAP_SIBLINGS), 4);
	}
	ia_gap_end_lines_json(ev, "gap_ending_lines", t, g, 3);
	return 0;
}

/* ---- slow calls ---- */
static int slow_chain(struct ia_analysis *a, size_t *cap, const struct ia_slow_api *s)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : t->last_ns - t->first_ns;
	if (!win || !s->slow_ns)
		return 0;
	double impact = (double)s->excess_ns / (double)win;
	double rq = (double)s->runq_ns / (double)s->slow_ns, blk = (double)s->blocked_ns / (double)s->slow_ns;
	double on = (double)s->oncpu_ns / (double)s->slow_ns;
	int contention = rq >= CONTENTION_RUNQ || (s->cpu_sat >= SATURATED && rq >= CONTENTION_RUNQ_SAT);
	int cls = ingero_api_class(s->api);
	int pageable = cls == INGERO_CLASS_COPY && s->copy_pageable * 2 > s->nslow;
	enum ia_severity sev;
	if (contention)
		sev = impact >= SLOW_HIGH ? IA_SEV_HIGH : impact >= SLOW_MEDIUM ? IA_SEV_MEDIUM : IA_SEV_LOW;
	else
		sev = impact >= SHARE_MEDIUM ? IA_SEV_MEDIUM : IA_SEV_LOW;
	struct ia_chain *c = new_chain(a, cap, "slow_calls");
	if (!c)
		return -1;
	c->sev = sev;
	c->api = s->api;
	c->impact = impact;
	int workers = (int)a->pp.nworkers, cpus = cpus_of(a);
	const struct ia_proc_stats *mps = a->pp.main >= 0 ? &a->pp.p[a->pp.main] : NULL;
	const struct ia_proc *mp = mps ? &t->procs[mps->proc] : NULL;
	char p99[32], p50[32], r[32], n1[32], d1[32], d2[32], d3[32], d4[32];
	snprintf(c->summary, sizeof c->summary, "%s p99=%s (%s p50=%s)", ia_api_name(t, s->api),
		 ia_fmt_dur(p99, sizeof p99, s->p99), ia_fmt_ratio(r, sizeof r, s->p50 ? (double)s->p99 / (double)s->p50 : 0),
		 ia_fmt_dur(p50, sizeof p50, s->p50));
	if (contention) {
		addf(c->summary, sizeof c->summary, " -");
		if (s->cpu_sat >= 0)
			addf(c->summary, sizeof c->summary, " CPU %.0f%% +", 100 * s->cpu_sat);
		addf(c->summary, sizeof c->summary, " %s context switches",
		     ia_fmt_count(n1, sizeof n1, mps ? mps->context_switches : s->nswitch));
	} else if (pageable) {
		addf(c->summary, sizeof c->summary, " - pageable host memory");
	} else {
		addf(c->summary, sizeof c->summary, " - no host cause: the thread was %s during the slow calls",
		     on >= blk ? "on-CPU" : "blocked");
	}
	/* timeline */
	if (s->cpu_sat >= 0)
		line(c, "[SYSTEM] CPU %.0f%% busy during the slow calls (%d CPUs); traced processes allocated %s pages/s "
		     "then (%s/s over the whole window)", 100 * s->cpu_sat, cpus,
		     ia_fmt_count(n1, sizeof n1, (uint64_t)s->pages_per_s), ia_fmt_count(d4, sizeof d4, (uint64_t)s->pages_per_s_all));
	else
		line(c, "[SYSTEM] %d CPUs; no CPU-busy evidence in this trace", cpus);
	if (mps)
		line(c, "[HOST] %s (pid %d): %s context switches, %s off-CPU, worst stall %s, run-queue delay p99 %s",
		     mp->comm, mp->pid, ia_fmt_count(n1, sizeof n1, mps->context_switches), ia_fmt_dur(d1, sizeof d1, mps->off_cpu_ns),
		     ia_fmt_dur(d2, sizeof d2, mps->worst_stall_ns), ia_fmt_dur(d3, sizeof d3, mps->runq_p99_ns));
	line(c, "[HOST] during the %s slow calls (%s): waiting for a CPU %s (%.0f%%), blocked %s (%.0f%%), on-CPU %s (%.0f%%)",
	     ia_fmt_count(n1, sizeof n1, s->nslow), ia_fmt_dur(d4, sizeof d4, s->slow_ns),
	     ia_fmt_dur(d1, sizeof d1, s->runq_ns), 100 * rq, ia_fmt_dur(d2, sizeof d2, s->blocked_ns), 100 * blk,
	     ia_fmt_dur(d3, sizeof d3, s->oncpu_ns), 100 * on);
	if (workers || s->ntook) {
		char took[300] = "";
		for (int i = 0; i < s->ntook; i++) {
			int pi = ia_proc_index(t, s->took[i].pid);
			addf(took, sizeof took, "%s%s %d (%s)", i ? ", " : "", pi >= 0 ? t->procs[pi].comm : "pid",
			     s->took[i].pid, ia_fmt_dur(d1, sizeof d1, s->took[i].ns));
		}
		line(c, "[HOST] %d worker%s on-CPU %s during the slow calls%s%s", workers, workers == 1 ? "" : "s",
		     ia_fmt_dur(d2, sizeof d2, s->workers_oncpu_ns), took[0] ? "; the CPU went to " : "", took);
	}
	if (s->ncomp) {
		char comp[300] = "";
		for (int i = 0; i < s->ncomp; i++)
			addf(comp, sizeof comp, "%s%s (pid %d) %s", i ? ", " : "", s->comp[i].comm, s->comp[i].pid,
			     ia_fmt_dur(d1, sizeof d1, s->comp[i].ns));
		line(c, "[HOST] untraced processes on-CPU then: %s", comp);
	}
	line(c, "[CUDA] %s p50=%s p99=%s max=%s over %s calls; %s calls >= %s (%s, %s above p50)",
	     ia_api_name(t, s->api), p50, p99, ia_fmt_dur(d1, sizeof d1, s->max), ia_fmt_count(n1, sizeof n1, s->count),
	     ia_fmt_count(d4, sizeof d4, s->nslow), ia_fmt_dur(d2, sizeof d2, s->threshold),
	     ia_fmt_dur(d3, sizeof d3, s->slow_ns), ia_fmt_dur(r, sizeof r, s->excess_ns));
	/* cause and fixes */
	int nw = good_workers(a);
	if (contention) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "CPU contention: during its slow %s calls the calling thread spent %.0f%% of the time runnable "
			 "but not running",
			 ia_api_name(t, s->api), 100 * rq);
		if (s->cpu_sat >= 0)
			addf(c->root_cause, sizeof c->root_cause, ", with the CPUs %.0f%% busy", 100 * s->cpu_sat);
		addf(c->root_cause, sizeof c->root_cause, ".");
		if (workers)
			addf(c->root_cause, sizeof c->root_cause,
			     " %d DataLoader-style workers%s held the CPUs (%s on-CPU during those calls)", workers,
			     workers > cpus - 1 && cpus > 0 ? ", more than the CPUs left beside the main process," : "",
			     ia_fmt_dur(d1, sizeof d1, s->workers_oncpu_ns));
		if (workers && s->pages_per_s_all > 0 && s->pages_per_s >= 1000)
			addf(c->root_cause, sizeof c->root_cause, ", allocating %s pages/s (heavy page-allocation pressure)",
			     ia_fmt_count(n1, sizeof n1, (uint64_t)s->pages_per_s));
		if (workers)
			addf(c->root_cause, sizeof c->root_cause, ".");
		if (s->ncomp && s->comp[0].ns * 10 >= s->runq_ns)
			addf(c->root_cause, sizeof c->root_cause, " Untraced processes also took CPU: %s (pid %d) %s.",
			     s->comp[0].comm, s->comp[0].pid, ia_fmt_dur(d1, sizeof d1, s->comp[0].ns));
		if (workers > cpus - 1 && cpus > 0)
			fix(c, "num_workers=%d (%d CPUs: one for the main process); %d workers now", nw, cpus, workers);
		if (workers) {
			fix(c, "persistent_workers=True and prefetch_factor=2: no worker start-up, a bounded queue");
			batch_level_fix(c);
		} else {
			fix(c, "Keep other CPU-heavy work off the CPUs the training process needs (taskset/cgroups), "
			       "or leave it a free CPU");
		}
	} else if (pageable) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The slow copies are from pageable host memory, which the driver stages through a bounce buffer "
			 "while the host waits (see the pageable-copies chain).");
		fix(c, "pin_memory=True in the DataLoader (or tensor.pin_memory()) and .to('cuda', non_blocking=True)");
	} else if (cls == INGERO_CLASS_SYNC || ingero_api_free_waits(s->api)) {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "No host-side cause: the thread was %s, not waiting for a CPU (%.0f%%), during the slow calls. "
			 "A sync returns when the GPU finishes the queued work, so its tail is the GPU work itself "
			 "(long kernels or copies queued before it).%s",
			 on >= blk ? "on-CPU (spinning in the driver)" : "blocked in the driver", 100 * rq,
			 ingero_api_free_waits(s->api) ? " A free waits the same way (see the sync_frees chain, if any)." : "");
		fix(c, "If the GPU work is expected, nothing to fix here; otherwise look at the kernels queued before the "
		       "sync (nsys or torch.profiler)");
	} else {
		snprintf(c->root_cause, sizeof c->root_cause,
			 "No host-side cause found: during the slow calls the thread was on-CPU %.0f%% and blocked %.0f%%, "
			 "waiting for a CPU only %.0f%%. The time is spent inside the CUDA library or driver.",
			 100 * on, 100 * blk, 100 * rq);
		fix(c, "Look inside the driver call (nsys with OS runtime tracing): allocation, JIT, or a lock in "
		       "the runtime");
	}
	for (int i = 0; i < s->ntop && !c->source[0]; i++) {   /* the slowest call with a Python frame */
		const char *py = ia_stack_source(a->names, t->stack_ids[s->top[i].stack]);
		if (py)
			snprintf(c->source, sizeof c->source, "%s", py);
	}
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "count", s->count);
	ia_json_u64(ev, "p50_ns", s->p50);
	ia_json_u64(ev, "p99_ns", s->p99);
	ia_json_u64(ev, "max_ns", s->max);
	ia_json_round(ev, "p99_over_p50", s->p50 ? (double)s->p99 / (double)s->p50 : 0, 2);
	ia_json_u64(ev, "slow_threshold_ns", s->threshold);
	ia_json_u64(ev, "slow_calls", s->nslow);
	ia_json_u64(ev, "slow_ns", s->slow_ns);
	ia_json_u64(ev, "excess_ns", s->excess_ns);
	ia_json_u64(ev, "runq_ns", s->runq_ns);
	ia_json_u64(ev, "blocked_ns", s->blocked_ns);
	ia_json_u64(ev, "oncpu_ns", s->oncpu_ns);
	ia_json_u64(ev, "context_switches_in_slow_calls", s->nswitch);
	ia_json_u64(ev, "preemptions_in_slow_calls", s->npreempt);
	if (mps)
		ia_json_u64(ev, "main_context_switches", mps->context_switches);
	if (s->cpu_sat >= 0)
		ia_json_round(ev, "cpu_saturation", s->cpu_sat, 4);
	ia_json_round(ev, "pages_per_s_in_slow_calls", s->pages_per_s, 0);
	ia_json_round(ev, "pages_per_s_overall", s->pages_per_s_all, 0);
	ia_json_u64(ev, "workers", (uint64_t)workers);
	ia_json_u64(ev, "workers_oncpu_ns", s->workers_oncpu_ns);
	cJSON_AddNumberToObject(ev, "cpus", cpus);
	cJSON *top = cJSON_AddArrayToObject(ev, "slowest");
	for (int i = 0; i < s->ntop; i++) {
		const struct ia_slow_call *x = &s->top[i];
		cJSON *o = cJSON_CreateObject();
		ia_json_u64(o, "start_rel_ns", x->start - t->t0);
		ia_json_u64(o, "dur_ns", x->dur);
		cJSON_AddNumberToObject(o, "tid", t->threads[x->th].tid);
		ia_json_u64(o, "runq_ns", x->runq_ns);
		ia_json_u64(o, "blocked_ns", x->blocked_ns);
		if (x->cpu_sat >= 0)
			ia_json_round(o, "cpu_saturation", x->cpu_sat, 4);
		if (cls == INGERO_CLASS_COPY) {
			ia_json_u64(o, "bytes", x->bytes);
			ia_json_round(o, "gbps", ia_gbps(x->bytes, x->dur), 3);
			cJSON_AddStringToObject(o, "memory", x->flags & INGERO_FLAG_HOST_PINNED ? "pinned"
						: x->flags & INGERO_FLAG_HOST_PAGEABLE ? "pageable" : "unknown");
		}
		ia_json_str(o, "python", ia_stack_python(a->names, t->stack_ids[x->stack]));
		cJSON_AddItemToArray(top, o);
	}
	cJSON *tk = cJSON_AddArrayToObject(ev, "cpu_taken_by");
	for (int i = 0; i < s->ntook; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", s->took[i].pid);
		int pi = ia_proc_index(t, s->took[i].pid);
		ia_json_str(o, "comm", pi >= 0 ? t->procs[pi].comm : NULL);
		ia_json_u64(o, "ns", s->took[i].ns);
		cJSON_AddItemToArray(tk, o);
	}
	cJSON *cp = cJSON_AddArrayToObject(ev, "competitors");
	for (int i = 0; i < s->ncomp; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", s->comp[i].pid);
		cJSON_AddStringToObject(o, "comm", s->comp[i].comm);
		ia_json_u64(o, "cpu_ns", s->comp[i].ns);
		cJSON_AddItemToArray(cp, o);
	}
	(void)d4;
	return 0;
}

/* ---- pageable copies ---- */
static int pageable_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : t->last_ns - t->first_ns;
	struct ia_copy_part pg = { 0 }, pin_sync = { 0 };
	uint16_t top_api = 0;
	uint64_t top_ns = 0;
	for (size_t i = 0; i < a->stats.napis; i++) {
		const struct ia_api_stats *s = &a->stats.apis[i];
		if (s->cls != INGERO_CLASS_COPY)
			continue;
		pg.count += s->pageable.count;
		pg.bytes += s->pageable.bytes;
		pg.dur_ns += s->pageable.dur_ns;
		if (s->pageable.dur_ns > top_ns) {
			top_ns = s->pageable.dur_ns;
			top_api = s->api;
		}
	}
	if (!win || !pg.count || !pg.bytes)
		return 0;
	double share = (double)pg.dur_ns / (double)win;
	enum ia_severity sev = by_share(share, PAGEABLE_HIGH, PAGEABLE_MEDIUM, SHARE_LOW);
	if (sev == IA_SEV_NONE)
		return 0;
	/* Pinned reference: copies whose host time is the transfer (synchronous
	 * API, pinned memory, >= 1 MiB); an async pinned copy returns at once. */
	struct ia_map lines = { 0 };
	struct { uint64_t id, ns; } *ls = NULL;
	size_t nls = 0, lcap = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (ingero_api_class(c->api) != INGERO_CLASS_COPY)
			continue;
		if ((c->flags & INGERO_FLAG_HOST_PINNED) && !(c->flags & INGERO_FLAG_ASYNC) &&
		    ia_api_completes_work(c->api) && c->bytes >= (1u << 20)) {
			pin_sync.count++;
			pin_sync.bytes += c->bytes;
			pin_sync.dur_ns += c->dur;
		}
		if (!(c->flags & INGERO_FLAG_HOST_PAGEABLE))
			continue;
		uint64_t sid = t->stack_ids[c->stack];
		uint32_t k = ia_map_get(&lines, sid);
		if (k == UINT32_MAX) {
			if (ia_grow((void **)&ls, &lcap, nls + 1, sizeof *ls) < 0 || ia_map_put(&lines, sid, (uint32_t)nls) < 0) {
				free(ls);
				ia_map_free(&lines);
				return -1;
			}
			ls[nls].id = sid;
			ls[nls].ns = 0;
			k = (uint32_t)nls++;
		}
		ls[k].ns += c->dur;
	}
	uint64_t best_id = 0, best_ns = 0;
	for (size_t i = 0; i < nls; i++)
		if (ls[i].ns > best_ns || (ls[i].ns == best_ns && ls[i].id < best_id)) {
			best_ns = ls[i].ns;
			best_id = ls[i].id;
		}
	free(ls);
	ia_map_free(&lines);
	/* HIGH needs the comparison that shows pinning helps: pinned copies
	 * measured in this trace at least PINNED_GAIN x faster. */
	double gp0 = ia_gbps(pg.bytes, pg.dur_ns), gpin0 = ia_gbps(pin_sync.bytes, pin_sync.dur_ns);
	if (sev == IA_SEV_HIGH && !(pin_sync.count && gpin0 >= PINNED_GAIN * gp0))
		sev = IA_SEV_MEDIUM;
	struct ia_chain *c = new_chain(a, cap, "pageable_copies");
	if (!c)
		return -1;
	c->sev = sev;
	c->api = top_api;
	c->impact = share;
	const char *py = ia_stack_source(a->names, best_id);
	if (py)
		snprintf(c->source, sizeof c->source, "%s", py);
	double gp = ia_gbps(pg.bytes, pg.dur_ns), gpin = ia_gbps(pin_sync.bytes, pin_sync.dur_ns);
	char b1[32], d1[32], d2[32], n1[32];
	snprintf(c->summary, sizeof c->summary, "pageable copies: %s in %s calls at %.1f GB/s took %s (%.0f%% of the window)",
		 ia_fmt_bytes(b1, sizeof b1, pg.bytes), ia_fmt_count(n1, sizeof n1, pg.count), gp,
		 ia_fmt_dur(d1, sizeof d1, pg.dur_ns), 100 * share);
	if (pin_sync.count)
		addf(c->summary, sizeof c->summary, "; pinned copies here reached %.1f GB/s", gpin);
	line(c, "[HOST] the host waits for each pageable copy: %s blocked in copies", ia_fmt_dur(d1, sizeof d1, pg.dur_ns));
	line(c, "[CUDA] pageable: %s calls, %s, %.2f GB/s achieved", ia_fmt_count(n1, sizeof n1, pg.count),
	     ia_fmt_bytes(b1, sizeof b1, pg.bytes), gp);
	if (pin_sync.count)
		line(c, "[CUDA] pinned (synchronous, >= 1 MiB): %s calls, %.2f GB/s achieved",
		     ia_fmt_count(n1, sizeof n1, pin_sync.count), gpin);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Copies from pageable host memory are staged by the driver through a pinned bounce buffer and block "
		 "the host for the whole transfer: %.1f GB/s achieved here", gp);
	if (pin_sync.count && gpin > gp)
		addf(c->root_cause, sizeof c->root_cause, ", %.1fx slower than the %.1f GB/s pinned copies reached in this trace.",
		     gpin / gp, gpin);
	else
		addf(c->root_cause, sizeof c->root_cause,
		     " (no pinned copy in this trace to compare against, so how much pinning gains is not measured here).");
	if (pin_sync.count && gpin > gp)
		fix(c, "pin_memory=True in the DataLoader (or tensor.pin_memory()) and .to('cuda', non_blocking=True): "
		       "at the %.1f GB/s measured for pinned copies, the same bytes would take ~%s instead of %s, "
		       "and overlap with compute", gpin,
		    ia_fmt_dur(d1, sizeof d1, (uint64_t)((double)pg.bytes / gpin)), ia_fmt_dur(d2, sizeof d2, pg.dur_ns));
	else
		fix(c, "pin_memory=True in the DataLoader (or tensor.pin_memory()) and .to('cuda', non_blocking=True)");
	if (py)
		fix(c, "The largest pageable copies are issued at %s", py);
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "pageable_calls", pg.count);
	ia_json_u64(ev, "pageable_bytes", pg.bytes);
	ia_json_u64(ev, "pageable_ns", pg.dur_ns);
	ia_json_round(ev, "pageable_gbps", gp, 3);
	ia_json_u64(ev, "pinned_reference_calls", pin_sync.count);
	if (pin_sync.count)
		ia_json_round(ev, "pinned_gbps", gpin, 3);
	ia_json_round(ev, "share_of_window", share, 4);
	ia_json_u64(ev, "window_ns", win);
	return 0;
}

/* ---- a sync every step ---- */
static int sync_chains(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	if (!win || !g->n)
		return 0;
	for (size_t i = 0; i < g->nsync_lines; i++) {
		const struct ia_gap_line *l = &g->sync_lines[i];
		double per_step = (double)l->count / (double)g->n;
		if (l->count < SYNC_MIN_COUNT || per_step < SYNC_EVERY_STEP)
			continue;
		double share = (double)l->overlap_ns / (double)win;
		enum ia_severity sev = by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
		if (sev == IA_SEV_NONE)
			continue;
		int has_line = strcmp(l->line, "(no Python frame)") != 0;
		struct ia_chain *c = new_chain(a, cap, "sync_per_step");
		if (!c)
			return -1;
		c->sev = sev;
		c->api = l->api;
		c->impact = share;
		if (has_line)
			snprintf(c->source, sizeof c->source, "%s", l->line);
		char n1[32], d1[32], d2[32], d3[32];
		snprintf(c->summary, sizeof c->summary,
			 "a sync every step%s%s: %s %s (%.1f per step), then the GPU idles %s until new work is queued",
			 has_line ? " at " : "", has_line ? l->line : "", ia_fmt_count(n1, sizeof n1, l->count),
			 ia_api_name(t, l->api), per_step, ia_fmt_dur(d1, sizeof d1, l->gap_ns));
		line(c, "[HOST] the host waits in these syncs %s, then prepares the next step for %s while nothing is queued",
		     ia_fmt_dur(d1, sizeof d1, l->ns), ia_fmt_dur(d2, sizeof d2, l->gap_ns));
		line(c, "[CUDA] %s %s calls from %s over %s steps (gaps)", ia_fmt_count(n1, sizeof n1, l->count),
		     ia_api_name(t, l->api), l->line, ia_fmt_count(d3, sizeof d3, g->n));
		snprintf(c->root_cause, sizeof c->root_cause,
			 "%s makes the host wait for the GPU every step (.item(), .cpu(), printing or comparing a CUDA "
			 "tensor, or an explicit synchronize)%s%s. The next step's work is queued only after the GPU has "
			 "drained, so the GPU idles while the host prepares it: up to %s of GPU work could have overlapped "
			 "with that host time.",
			 has_line ? l->line : "A call without a Python frame", l->inner[0] ? "; here inside " : "",
			 l->inner, ia_fmt_dur(d1, sizeof d1, l->overlap_ns));
		int scaler = strstr(l->inner, "grad_scaler.py") != NULL;
		if (scaler)
			fix(c, "torch.amp.GradScaler reads its inf check on the host when the optimizer cannot take it: "
			       "an optimizer with fused=True (torch.optim.Adam/AdamW/SGD) does the check on the GPU, "
			       "without the per-step sync");
		fix(c, "Drop the per-step sync%s%s: keep values on the GPU (accumulate the loss in a tensor) and read "
		       "them every N steps, or copy them with .to('cpu', non_blocking=True) into pinned memory and read "
		       "them a step later", has_line ? " at " : "", has_line ? l->line : "");
		cJSON *ev = c->evidence;
		cJSON_AddStringToObject(ev, "line", l->line);
		ia_json_str(ev, "inside", l->inner[0] ? l->inner : NULL);
		ia_json_u64(ev, "syncs", l->count);
		ia_json_u64(ev, "steps", g->n);
		ia_json_round(ev, "syncs_per_step", per_step, 3);
		ia_json_u64(ev, "sync_ns", l->ns);
		ia_json_u64(ev, "gap_after_ns", l->gap_ns);
		ia_json_u64(ev, "overlap_possible_ns", l->overlap_ns);
		ia_json_round(ev, "share_of_window", share, 4);
	}
	return 0;
}

/* ---- frees that wait for the GPU, between launches ---- */

/* What the main process's synchronous frees between its first and last
 * queued work did: how many, from where, the gaps they opened. */
struct free_evidence {
	uint64_t n, ns, gap_ns, mallocs_after;
	int empty_cache;                /* a free's innermost Python function is empty_cache */
	char empty_cache_line[200];     /* the user's line that called it (the most frees) */
	uint64_t empty_cache_n;
	struct ia_gap_line *lines; size_t nlines, cap;   /* by Python line, most first */
};

static int free_evidence(const struct ia_analysis *a, struct free_evidence *fe)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	const uint32_t *ix = g->main_calls;
	size_t n = g->nmain_calls;
	uint64_t last_queue = 0;
	for (size_t k = 0; k < n; k++)
		if (ia_api_queues_work(t->calls[ix[k]].api))
			last_queue = t->calls[ix[k]].start;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (c->start < g->win_start || c->start >= last_queue)   /* set-up and teardown are not the loop */
			continue;
		if (ia_call_is_waiting_free(c)) {
			uint64_t sid = t->stack_ids[c->stack];
			const char *py = ia_stack_source(a->names, sid);
			const char *func = ia_stack_python_func(a->names, sid);
			struct ia_gap_line *l = ia_line_slot(&fe->lines, &fe->nlines, &fe->cap, py ? py : "(no Python frame)");
			if (!l)
				return -1;
			l->count++;
			l->ns += c->dur;
			l->api = c->api;
			fe->n++;
			fe->ns += c->dur;
			if (func && !strcmp(func, "empty_cache")) {
				fe->empty_cache = 1;
				if (py && l->count > fe->empty_cache_n) {
					fe->empty_cache_n = l->count;
					snprintf(fe->empty_cache_line, sizeof fe->empty_cache_line, "%s", py);
				}
			}
		} else if (fe->n && (c->api == INGERO_API_CUDA_MALLOC || c->api == INGERO_API_CU_MEM_ALLOC_V2)) {
			fe->mallocs_after++;
		}
	}
	for (size_t i = 0; i < g->n; i++)
		if (ia_call_is_waiting_free(&t->calls[g->g[i].open_call]))
			fe->gap_ns += g->g[i].end - g->g[i].start;
	if (fe->nlines)   /* most frees first */
		qsort(fe->lines, fe->nlines, sizeof *fe->lines, ia_gap_line_by_count);
	return 0;
}

static int free_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	if (!win || !g->n)
		return 0;
	struct free_evidence fe = { 0 };
	if (free_evidence(a, &fe) < 0) {
		free(fe.lines);
		return -1;
	}
	double share = (double)fe.gap_ns / (double)win;
	enum ia_severity sev = by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (fe.n < SYNC_MIN_COUNT || sev == IA_SEV_NONE) {
		free(fe.lines);
		return 0;
	}
	struct ia_chain *c = new_chain(a, cap, "sync_frees");
	if (!c) {
		free(fe.lines);
		return -1;
	}
	const struct ia_gap_line *top = &fe.lines[0];
	int has_line = strcmp(top->line, "(no Python frame)") != 0;
	double per_step = (double)fe.n / (double)g->n;
	char n1[32], n2[32], d1[32], d2[32];
	c->sev = sev;
	c->api = top->api;
	c->impact = share;
	if (has_line)
		snprintf(c->source, sizeof c->source, "%s", top->line);
	snprintf(c->summary, sizeof c->summary,
		 "frees that wait for the GPU%s%s: %s %s (%.1f per step), then the GPU idles %s until new work is queued",
		 has_line ? " at " : "", has_line ? top->line : "", ia_fmt_count(n1, sizeof n1, fe.n),
		 ia_api_name(t, top->api), per_step, ia_fmt_dur(d1, sizeof d1, fe.gap_ns));
	line(c, "[CUDA] %s frees between the first and the last launch waited %s for the GPU to drain; %s gaps "
		"start when one returns", ia_fmt_count(n1, sizeof n1, fe.n), ia_fmt_dur(d1, sizeof d1, fe.ns),
	     ia_fmt_dur(d2, sizeof d2, fe.gap_ns));
	for (size_t i = 0; i < fe.nlines && i < 3; i++)
		line(c, "[HOST] %s %s at %s", ia_fmt_count(n1, sizeof n1, fe.lines[i].count),
		     ia_api_name(t, fe.lines[i].api), fe.lines[i].line);
	if (fe.mallocs_after)
		line(c, "[CUDA] %s cudaMalloc after the first of them: the memory is allocated again",
		     ia_fmt_count(n2, sizeof n2, fe.mallocs_after));
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Freeing device memory with %s waits until the GPU has finished everything queued, so the queue "
		 "drains and the GPU idles until the host queues more: %s of gaps start at these frees. PyTorch's "
		 "caching allocator frees device memory only in torch.cuda.empty_cache() or when an allocation "
		 "fails and it returns its cache to retry (memory nearly full).",
		 ia_api_name(t, top->api), ia_fmt_dur(d1, sizeof d1, fe.gap_ns));
	const char *ec = fe.empty_cache_line[0] ? fe.empty_cache_line : NULL;
	if (fe.empty_cache)
		addf(c->root_cause, sizeof c->root_cause, " Here they come from torch.cuda.empty_cache()%s%s.",
		     ec ? ", called at " : "", ec ? ec : "");
	if (fe.mallocs_after)
		addf(c->root_cause, sizeof c->root_cause, " %s cudaMalloc calls followed: what was freed is allocated "
		     "again, step after step.", ia_fmt_count(n2, sizeof n2, fe.mallocs_after));
	if (fe.empty_cache)
		fix(c, "Take torch.cuda.empty_cache() out of the loop%s%s: it hands cached blocks back to the driver, "
		       "and the next steps allocate them again, draining the GPU at each free",
		    ec ? " at " : "", ec ? ec : "");
	else
		fix(c, "If the GPU's memory is nearly full the allocator frees its cache and retries: "
		       "torch.cuda.memory_stats()['num_alloc_retries'] > 0 confirms it; lower the peak (a smaller "
		       "batch, torch.autocast, activation checkpointing) or set "
		       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation");
	fix(c, "Outside PyTorch's allocator: allocate once and reuse the buffers, or use cudaMallocAsync/"
	       "cudaFreeAsync (stream-ordered: no device-wide wait)");
	cJSON *ev = c->evidence;
	cJSON_AddStringToObject(ev, "line", top->line);
	ia_json_u64(ev, "frees", fe.n);
	ia_json_u64(ev, "free_ns", fe.ns);
	ia_json_u64(ev, "gap_after_ns", fe.gap_ns);
	ia_json_u64(ev, "mallocs_after", fe.mallocs_after);
	ia_json_u64(ev, "steps", g->n);
	ia_json_round(ev, "frees_per_step", per_step, 3);
	cJSON_AddBoolToObject(ev, "empty_cache", fe.empty_cache);
	ia_json_round(ev, "share_of_window", share, 4);
	free(fe.lines);
	return 0;
}

/* ---- host-bound launches: the GPU kept up with the host ---- */
static void hostbound_fixes(struct ia_chain *c, const struct ia_hostbound *h, uint64_t per_launch)
{
	char d1[32];
	if (h->period_calls)
		fix(c, "CUDA Graphs: capture one step (torch.cuda.CUDAGraph with torch.cuda.graph(g), then g.replay(), or "
		       "torch.compile(model, mode=\"reduce-overhead\")) to replace its ~%u launches with one graph launch "
		       "(needs static shapes and tensors that stay in place)", h->period_launches);
	else
		fix(c, "CUDA Graphs: capture the repeated work (torch.cuda.CUDAGraph with torch.cuda.graph(g), then "
		       "g.replay(), or torch.compile(model, mode=\"reduce-overhead\")) so one graph launch replaces its "
		       "launches (needs static shapes and tensors that stay in place)");
	fix(c, "torch.compile(model) fuses small elementwise kernels: fewer launches, each doing more");
	uint64_t optim = 0;
	for (size_t i = 0; i < h->nlines; i++)
		if (strstr(h->lines[i].line, "/optim/"))
			optim += h->lines[i].count;
	if (h->launch_samples && (double)optim >= OPTIM_SHARE * (double)h->launch_samples)
		fix(c, "The optimizer issues %.0f%% of the sampled launches (torch/optim lines): torch.optim.Adam/AdamW(..., "
		       "fused=True) updates all parameters in a few kernels",
		    pct(optim, h->launch_samples));
	fix(c, "Larger batches: the host cost per launch (~%s here) stays the same while each kernel does more work",
	    ia_fmt_dur(d1, sizeof d1, per_launch));
	if (h->nlines)
		fix(c, "Most sampled launches come from %s (%s of %s launches with a stack; launches are stack-sampled)",
		    h->lines[0].line, ia_fmt_count((char[32]){ 0 }, 32, h->lines[0].count),
		    ia_fmt_count((char[32]){ 0 }, 32, h->launch_samples));
}

static void hostbound_json(cJSON *ev, const struct ia_analysis *a, uint64_t win, double share, double rate)
{
	const struct ia_hostbound *h = &a->hb;
	const struct ia_call *cl = &a->t->calls[h->long_close];
	ia_json_u64(ev, "window_ns", win);
	ia_json_u64(ev, "stretches", h->n);
	ia_json_u64(ev, "stretch_ns", h->ns);
	ia_json_round(ev, "share_of_window", share, 4);
	ia_json_u64(ev, "launches", h->launches);
	ia_json_round(ev, "launches_per_s", rate, 0);
	ia_json_u64(ev, "mean_launch_interval_ns", h->launch_gaps ? h->launch_gap_ns / h->launch_gaps : 0);
	ia_json_u64(ev, "mean_launch_call_ns", h->in_launch_ns / h->launches);
	ia_json_u64(ev, "in_cuda_calls_ns", h->in_calls_ns);
	ia_json_u64(ev, "in_launch_ns", h->in_launch_ns);
	ia_json_u64(ev, "between_calls_ns", h->ns - h->in_calls_ns);
	if (h->has_offcpu) {
		ia_json_u64(ev, "main_oncpu_ns", h->ns - h->main_off_ns);
		ia_json_u64(ev, "main_blocked_ns", h->main_off_ns - h->main_runq_ns);
		ia_json_u64(ev, "main_runq_ns", h->main_runq_ns);
		ia_json_u64(ev, "other_threads_oncpu_ns", h->others_oncpu_ns);
	}
	ia_json_u64(ev, "main_thread_launches", h->main_launches);
	ia_json_u64(ev, "other_launching_threads", h->nothers);
	cJSON *cs = cJSON_AddObjectToObject(ev, "closing_sync");   /* of the longest stretch */
	cJSON_AddStringToObject(cs, "api", ia_api_name(a->t, cl->api));
	ia_json_u64(cs, "wait_ns", cl->dur);
	ia_json_u64(cs, "start_rel_ns", cl->start - a->t->t0);
	ia_json_u64(ev, "closing_max_wait_ns", h->close_max_ns);
	ia_json_u64(ev, "sync_floor_ns", IA_SYNC_FLOOR_NS);
	ia_json_u64(ev, "longest_stretch_ns", h->long_end - h->long_start);
	ia_json_u64(ev, "longest_stretch_launches", h->long_launches);
	if (h->period_calls) {
		ia_json_u64(ev, "period_calls", h->period_calls);
		ia_json_u64(ev, "period_launches", h->period_launches);
	}
	ia_json_u64(ev, "launch_samples", h->launch_samples);
	cJSON *ll = cJSON_AddArrayToObject(ev, "launch_lines");
	for (size_t i = 0; i < h->nlines && i < 5; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "line", h->lines[i].line);
		ia_json_u64(o, "samples", h->lines[i].count);
		cJSON_AddItemToArray(ll, o);
	}
}

static int hostbound_chain(struct ia_analysis *a, size_t *cap)
{
	const struct ia_hostbound *h = &a->hb;
	const struct ia_gaps *g = &a->gaps;
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	if (!win || !h->n || !h->ns || h->launches < HOSTBOUND_MIN_LAUNCHES)
		return 0;
	double share = (double)h->ns / (double)win;
	/* The threads that issue the launches must keep a CPU busy: mostly
	 * off-CPU, they wait on something and are not issue-bound.  Their CPU
	 * time adds up: PyTorch's main thread blocks while pt_autograd_N runs
	 * the backward pass and launches its kernels. */
	double oncpu = (double)(h->ns - h->main_off_ns) / (double)h->ns;
	double issuing = (double)(h->ns - h->main_off_ns + h->others_oncpu_ns) / (double)h->ns;
	if (h->has_offcpu && issuing < HOSTBOUND_ONCPU)
		return 0;
	enum ia_severity sev = share >= HOSTBOUND_MEDIUM ? IA_SEV_MEDIUM : share >= HOSTBOUND_LOW ? IA_SEV_LOW : IA_SEV_NONE;
	if (sev == IA_SEV_NONE)
		return 0;
	struct ia_chain *c = new_chain(a, cap, "host_bound_launches");
	if (!c)
		return -1;
	const struct ia_trace *t = a->t;
	const struct ia_call *cl = &t->calls[h->long_close];
	c->sev = sev;
	c->impact = share;
	c->api = cl->api;
	if (h->nlines)
		snprintf(c->source, sizeof c->source, "%s", h->lines[0].line);
	double rate = (double)h->launches * 1e9 / (double)h->ns;
	uint64_t interval = h->launch_gaps ? h->launch_gap_ns / h->launch_gaps : h->ns / h->launches;
	uint64_t in_launch = h->in_launch_ns / h->launches;
	uint64_t between = h->ns - h->in_calls_ns;
	char n1[32], n2[32], d1[32], d2[32], d3[32], d4[32];
	ia_fmt_count(n1, sizeof n1, h->launches);
	ia_fmt_count(n2, sizeof n2, (uint64_t)(rate + 0.5));
	if (h->n == 1)
		snprintf(c->summary, sizeof c->summary,
			 "host-bound: %s launches at %s/s over %s (%.0f%% of the window); the %s after them waited %s "
			 "(GPU already idle) - the GPU keeps up with the host",
			 n1, n2, ia_fmt_dur(d1, sizeof d1, h->ns), 100 * share, ia_api_name(t, cl->api),
			 ia_fmt_dur(d2, sizeof d2, cl->dur));
	else
		snprintf(c->summary, sizeof c->summary,
			 "host-bound: %s launches at %s/s in %s stretches (%s, %.0f%% of the window); the syncs after "
			 "them waited at most %s (GPU already idle) - the GPU keeps up with the host",
			 n1, n2, ia_fmt_count(d3, sizeof d3, h->n), ia_fmt_dur(d1, sizeof d1, h->ns), 100 * share,
			 ia_fmt_dur(d2, sizeof d2, h->close_max_ns));
	const struct ia_proc *mp = &t->procs[a->pp.p[a->pp.main].proc];
	if (h->has_offcpu)
		line(c, "[HOST] main thread (pid %d) in these stretches: on-CPU %s (%.0f%%), blocked %s, waiting for a CPU %s; "
		     "it issued %.0f%% of the launches",
		     mp->pid, ia_fmt_dur(d1, sizeof d1, h->ns - h->main_off_ns), 100 * oncpu,
		     ia_fmt_dur(d2, sizeof d2, h->main_off_ns - h->main_runq_ns), ia_fmt_dur(d3, sizeof d3, h->main_runq_ns),
		     pct(h->main_launches, h->launches));
	if (h->has_offcpu && h->nothers)
		line(c, "[HOST] %u other thread%s of the process issued the rest (%s: %.0f%% of the launches), on-CPU %s in "
		     "the stretches: with the main thread, %.0f%% of the stretches' time on a CPU",
		     h->nothers, h->nothers > 1 ? "s" : "", t->threads[h->top_other].comm,
		     pct(h->top_other_launches, h->launches), ia_fmt_dur(d1, sizeof d1, h->others_oncpu_ns), 100 * issuing);
	if (!h->has_offcpu)
		line(c, "[HOST] main thread (pid %d): no off-CPU evidence in this trace, on-CPU share unknown", mp->pid);
	line(c, "[HOST] inside CUDA calls %s (%.0f%%; launches %s), between calls %s (%.0f%%: Python and framework code)",
	     ia_fmt_dur(d1, sizeof d1, h->in_calls_ns), pct(h->in_calls_ns, h->ns), ia_fmt_dur(d2, sizeof d2, h->in_launch_ns),
	     ia_fmt_dur(d3, sizeof d3, between), pct(between, h->ns));
	line(c, "[CUDA] %s launches at %s/s: one every %s on average, %s of it inside the launch call", n1, n2,
	     ia_fmt_dur(d1, sizeof d1, interval), ia_fmt_dur(d2, sizeof d2, in_launch));
	if (h->period_calls)
		line(c, "[CUDA] the call sequence repeats every %u calls (%u launches): ~%s repeats in the longest stretch, "
		     "likely one training step each", h->period_calls, h->period_launches,
		     ia_fmt_count(d1, sizeof d1, h->long_calls / h->period_calls));
	line(c, "[CUDA] the longest stretch (%s, %s launches) ends in %s at %s, which waited %s (floor %s: nothing "
	     "left to wait for)", ia_fmt_dur(d1, sizeof d1, h->long_end - h->long_start),
	     ia_fmt_count(d4, sizeof d4, h->long_launches), ia_api_name(t, cl->api),
	     ia_fmt_dur(d2, sizeof d2, cl->start - t->t0), ia_fmt_dur(d3, sizeof d3, cl->dur),
	     ia_fmt_dur(n1, sizeof n1, IA_SYNC_FLOOR_NS));
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The host's issue rate bounds throughput: the process issues a launch every %s (%s inside the "
		 "launch call, the rest in Python and framework code between calls), and the sync that closes each "
		 "stretch found the GPU already done with everything queued (waited at most %s). The GPU kept up with "
		 "the host, so faster kernels would not make this part faster; fewer launches, each doing more work, "
		 "would. How busy the GPU was inside the stretches is not measured (no GPU timestamps).",
		 ia_fmt_dur(d1, sizeof d1, interval), ia_fmt_dur(d2, sizeof d2, in_launch),
		 ia_fmt_dur(d3, sizeof d3, h->close_max_ns));
	hostbound_fixes(c, h, interval);
	hostbound_json(c->evidence, a, win, share, rate);
	return 0;
}

static int cmp_chain(const void *a, const void *b)
{
	const struct ia_chain *x = a, *y = b;
	if (x->sev != y->sev)
		return x->sev > y->sev ? -1 : 1;
	if (x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	int k = strcmp(x->kind, y->kind);
	return k ? k : (int)x->api - (int)y->api;
}

int ia_chains_build(struct ia_analysis *a, char *err, size_t errlen)
{
	size_t cap = 0;
	if (a->pp.main < 0)
		return 0;
	if (gap_chain(a, &cap) < 0)
		goto oom;
	for (size_t i = 0; i < a->nslow; i++)
		if (slow_chain(a, &cap, &a->slow[i]) < 0)
			goto oom;
	if (pageable_chain(a, &cap) < 0 || sync_chains(a, &cap) < 0 || free_chain(a, &cap) < 0 ||
	    hostbound_chain(a, &cap) < 0)
		goto oom;
	if (a->nchains)
		qsort(a->chains, a->nchains, sizeof *a->chains, cmp_chain);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

size_t ia_chains_count(const struct ia_analysis *a, enum ia_severity s)
{
	size_t n = 0;
	for (size_t i = 0; i < a->nchains; i++)
		n += a->chains[i].sev == s;
	return n;
}
