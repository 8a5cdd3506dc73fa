/*
 * chain_after.c — the after_gpu_work rule: the process ran on after its
 * last CUDA call, the GPU held and idle (a profiler's processing at exit,
 * a final evaluation or checkpoint on the CPU).  The window ends at the
 * last CUDA call, so no other rule sees this time; it is paid once per
 * run, a phase like start-up.  What it was: the main thread's own samples
 * in it, by the Python function and the user's line they were in.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/db.h"
#include "load/mechanisms.h"
#include "load/stacks.h"
#include "measure/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AFTER_MIN_NS 2000000000ull   /* shorter: the interpreter's and CUDA's own teardown */
#define AFTER_LOW 0.10               /* of the traced time (the window and the tail) */
#define AFTER_MEDIUM 0.30
#define AFTER_MIN_SAMPLES 10
/* torch.utils.data's MP_STATUS_CHECK_INTERVAL: how long a shutdown at exit
 * waits for each worker that never took it; without sampled blocks, the
 * main thread's blocked time at about that a worker is the evidence */
#define JOIN_TIMEOUT_NS 5000000000ull

struct tally {
	struct ia_stack_names *names;
	struct ia_gap_line *funcs; size_t nfuncs, cfuncs;
	struct ia_gap_line *lines; size_t nlines, clines;
	int oom;
};

static void count(uint64_t stack, void *arg)
{
	struct tally *t = arg;
	const char *fn = ia_stack_python_func(t->names, stack), *at = ia_stack_python(t->names, stack);
	const char *user = ia_stack_user_python(t->names, stack);
	char buf[200];
	snprintf(buf, sizeof buf, "%s (%s)", fn ? fn : "(no Python frame)", at ? at : "native code");
	struct ia_gap_line *f = ia_line_slot(&t->funcs, &t->nfuncs, &t->cfuncs, buf);
	struct ia_gap_line *l = user ? ia_line_slot(&t->lines, &t->nlines, &t->clines, user) : NULL;
	if (!f || (user && !l)) {
		t->oom = 1;
		return;
	}
	f->count++;
	if (l)
		l->count++;
}

/* Where the main thread blocked in [a, b): its blocked time, and its
 * sampled blocks (off_cpu_stacks, each weighed by its chance) in all and
 * under torch.utils.data (the DataLoader's shutdown).  A read error leaves
 * the blocks unsampled. */
struct blocked {
	uint64_t ns;
	double sampled, loader;
};

static void blocked_in(const struct ia_analysis *a, uint64_t from, uint64_t to, struct blocked *b)
{
	const struct ia_trace *t = a->t;
	uint32_t th = a->pp.main_thread;
	uint64_t off = 0, rq = 0;
	ia_thread_off_in(t, th, from, to, &off, &rq, NULL);
	b->ns = off > rq ? off - rq : 0;
	if (!b->ns || ia_db_has_table(t->db, "off_cpu_stacks") <= 0)
		return;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(t->db, "SELECT start_ns, stack_id, chance FROM off_cpu_stacks "
				      "WHERE tid = ?1 AND start_ns >= ?2 AND start_ns < ?3", -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, t->threads[th].tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)from);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)to);
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 0), sid = (uint64_t)sqlite3_column_int64(st, 1);
		const struct ia_off *o = ia_thread_off_at(t, th, start);
		if (!o)
			continue;   /* its interval lost */
		double chance = sqlite3_column_double(st, 2);
		double w = (double)ia_overlap(o->start, o->end - o->runq, from, to) / (chance > 0 && chance <= 1 ? chance : 1);
		b->sampled += w;
		if (sid && ia_stack_torch_data(a->names, sid))
			b->loader += w;
	}
	sqlite3_finalize(st);
}

/* The main process's DataLoader workers that exited in (from, to]: a
 * shutdown at exit ends them one after another (c04, a trace without
 * sampled blocks: 4 workers 5.0 s apart while the main thread blocked). */
static size_t workers_ending(const struct ia_analysis *a, uint64_t from, uint64_t to)
{
	size_t n = 0;
	for (size_t i = 0; i < a->pp.n; i++) {
		const struct ia_proc *p = &a->t->procs[a->pp.p[i].proc];
		n += a->pp.p[i].role == IA_ROLE_WORKER && p->exit_ns > from && p->exit_ns <= to;
	}
	return n;
}

int ia_rule_after(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	if (a->pp.main < 0 || !a->gaps.win_end)
		return 0;
	const struct ia_proc *p = &t->procs[a->pp.p[a->pp.main].proc];
	/* a process that did not exit while traced runs to the trace's end:
	 * t->to is open (UINT64_MAX) unless a window was chosen */
	uint64_t end = p->exit_ns ? p->exit_ns : t->status.stopped_at;
	if (end > t->to)
		end = t->to;
	if (end <= a->gaps.win_end || end - a->gaps.win_end < AFTER_MIN_NS)
		return 0;
	uint64_t tail = end - a->gaps.win_end, span = a->gaps.win_end - a->gaps.win_start + tail;
	double share = (double)tail / (double)span;
	if (share < AFTER_LOW)
		return 0;
	struct tally y = { .names = a->names };
	struct blocked b = { 0 };
	uint64_t n = ia_phases_main_samples(&a->ph, a->gaps.win_end, end, 0, count, &y);
	int rc = 0;
	if (y.oom) {
		rc = -1;
		goto out;
	}
	if (a->pp.main_thread != UINT32_MAX)
		blocked_in(a, a->gaps.win_end, end, &b);
	if (y.nfuncs)
		qsort(y.funcs, y.nfuncs, sizeof *y.funcs, ia_gap_line_by_count);
	if (y.nlines)
		qsort(y.lines, y.nlines, sizeof *y.lines, ia_gap_line_by_count);
	char d1[32], d2[32], d3[32], what[600] = "";
	for (size_t i = 0; i < y.nfuncs && i < 3; i++)
		ia_addf(what, sizeof what, "%s%s %.0f%%", i ? ", " : "", y.funcs[i].line, ia_pct(y.funcs[i].count, n));
	/* blocked most of it: what it waited in says what it was */
	int mostly_blocked = b.sampled > 0 && b.ns * 2 >= tail;
	enum ia_instrument top;
	uint64_t in_top;
	ia_instruments_in(a, a->gaps.win_end, end, 0, &top, &in_top);
	int instrumented = !mostly_blocked && n >= AFTER_MIN_SAMPLES && top != IA_INSTR_NONE && in_top * 2 >= n;
	/* the DataLoader's shutdown: its sampled blocks, or where none were
	 * sampled, its workers ending while the main thread blocked */
	size_t ending = workers_ending(a, a->gaps.win_end, end);
	int loader = mostly_blocked ? b.loader * 2 >= b.sampled
				    : !b.sampled && ending && b.ns * 2 >= tail && b.ns / ending >= JOIN_TIMEOUT_NS * 4 / 5 &&
					      b.ns / ending <= JOIN_TIMEOUT_NS * 6 / 5;
	/* only what can be named: the interpreter's own exit, a child's wait
	 * or unnamed native code would be told as a cause without one (the
	 * README says what is not told) */
	if (!instrumented && !loader)
		goto out;
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_AFTER_GPU_WORK);
	if (!c) {
		rc = -1;
		goto out;
	}
	c->sev = share >= AFTER_MEDIUM ? IA_SEV_MEDIUM : IA_SEV_LOW;
	c->amortised = 1;   /* once per run */
	c->impact = share;
	c->cost_ns = tail;
	snprintf(c->summary, sizeof c->summary,
		 "after the last GPU work: the process ran %s more (%.0f%% of the run from its first GPU work to %s) "
		 "with the GPU idle", ia_fmt_dur(d1, sizeof d1, tail), 100 * share,
		 p->exit_ns ? "its exit" : "the trace's end; it had not exited");
	if (n && !loader)
		ia_chain_line(c, "[HOST] main thread's on-CPU samples after the last CUDA call (%llu): %s",
			      (unsigned long long)n, what);
	if (loader && b.sampled)
		ia_chain_line(c, "[HOST] main thread blocked %s of it, %.0f%% of its sampled blocks in the DataLoader's "
			      "shutdown (torch.utils.data: joining each worker)", ia_fmt_dur(d3, sizeof d3, b.ns),
			      100.0 * b.loader / b.sampled);
	else if (loader)
		ia_chain_line(c, "[HOST] main thread blocked %s of it while %zu of its DataLoader workers exited one "
			      "after another (no block of it sampled: its stack is not known)", ia_fmt_dur(d3, sizeof d3, b.ns),
			      ending);
	if (instrumented && y.nlines)   /* (a shutdown at exit has no line of the user's) */
		snprintf(c->source, sizeof c->source, "%s", y.lines[0].line);
	ia_chain_line(c, "[CUDA] the last CUDA call ended %s before %s", ia_fmt_dur(d2, sizeof d2, tail),
		      p->exit_ns ? "the process exited" : "the trace ended");
	if (instrumented)
		snprintf(c->root_cause, sizeof c->root_cause, "The job's own work after its last CUDA call: %s processing "
			 "what it recorded — %s.", ia_instrument_name(top), what);
	else if (ending)
		snprintf(c->root_cause, sizeof c->root_cause, "After its last CUDA call the main thread waited %s for its "
			 "%zu DataLoader workers to shut down, one after another (%s each): the loader's iterator was still "
			 "alive when the interpreter exited, the workers kept waiting for work and never took the "
			 "shutdown, so each join waited out its timeout (MP_STATUS_CHECK_INTERVAL, 5 s) before the worker "
			 "was terminated (PyTorch's issue 81794: persistent_workers with pin_memory).",
			 ia_fmt_dur(d1, sizeof d1, b.ns), ending, ia_fmt_dur(d2, sizeof d2, b.ns / ending));
	else
		snprintf(c->root_cause, sizeof c->root_cause, "After its last CUDA call the main thread waited %s in the "
			 "DataLoader's shutdown, joining its workers.", ia_fmt_dur(d1, sizeof d1, b.ns));
	ia_addf(c->root_cause, sizeof c->root_cause, " The GPU stays allocated to the job and idle meanwhile; it is "
		"paid once per run, outside the window the other findings measure.");
	if (instrumented)
		ia_chain_fix(c, "%s", ia_instrument_fix(top));
	if (loader)
		ia_chain_fix(c, "Shut the DataLoader's workers down when training ends, not at interpreter exit: drop the "
			     "iterator and the DataLoader (del) once the last batch is used; with persistent_workers=True "
			     "they otherwise live until the process exits");
	ia_json_u64(c->evidence, "after_window_ns", tail);
	ia_json_u64(c->evidence, "main_samples", n);
	ia_json_u64(c->evidence, "main_blocked_ns", b.ns);
out:
	free(y.funcs);
	free(y.lines);
	return rc;
}
