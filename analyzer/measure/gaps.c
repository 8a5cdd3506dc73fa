/*
 * gaps.c — finding and attributing the stretches with no CUDA work queued
 * (see gaps.h).
 *
 * Costs: the main process's calls are merged across its threads into one
 * time-ordered list (usually one thread: a copy of its index); each gap's
 * main-thread state is a binary search into the off-CPU index; workers'
 * CPU time over all gaps is one linear merge per worker thread; samples are
 * one scan of cpu_samples with a binary search into the gaps.
 */
#include "measure/gaps.h"

#include "load/aten_ops.h"
#include "load/db.h"
#include "measure/backward_line.h"
#include "measure/collectives.h"
#include "base/json_out.h"
#include "measure/phases.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_line_ns(const void *a, const void *b)
{
	const struct ia_gap_line *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->line, y->line);
}

static int cmp_stack(const void *a, const void *b)
{
	const struct ia_gap_stack *x = a, *y = b;
	uint64_t nx = x->main + x->workers + x->other + x->siblings, ny = y->main + y->workers + y->other + y->siblings;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(x->label, y->label);
}

/* The sync_lines slot of a sync call: its Python line. */
static struct ia_gap_line *sync_line(const struct ia_trace *t, struct ia_stack_names *names, struct ia_gaps *g,
				     size_t *cap, const struct ia_call *c)
{
	uint64_t sid = t->stack_ids[c->stack];
	const char *py = ia_stack_source(names, sid);
	/* the backward pass's threads have no Python frame: the line that ran it */
	int backward = !py && g->backward_line[0] && ia_is_autograd_thread(t->threads[c->th].comm);
	struct ia_gap_line *l = ia_line_slot(&g->sync_lines, &g->nsync_lines, cap,
					     backward ? g->backward_line : py ? py : "(no Python frame)");
	if (l && backward && !l->inner[0]) {
		l->backward = 1;
		snprintf(l->inner, sizeof l->inner, "the backward pass, on PyTorch's autograd thread (%s)",
			 t->threads[c->th].comm);
	}
	if (l && py && ia_stack_user_compiled(names, sid))
		l->compiled = 1;
	/* a user line that syncs inside a library (GradScaler.step, a mask
	 * index): the library function says why it syncs */
	const char *inner = ia_stack_python(names, sid), *func = ia_stack_python_func(names, sid);
	if (l && !l->inner[0] && py && inner && func && strcmp(py, inner))
		snprintf(l->inner, sizeof l->inner, "%s (%s)", func, inner);
	/* the PyTorch operation that synchronised, from the call's native
	 * frames: the first that says why it reads the GPU */
	const char *op = l && !l->op_inner[0] ? ia_stack_aten(names, sid, 0) : NULL;
	if (op) {
		const char *outer = ia_stack_aten(names, sid, 1);
		if (ia_aten_sync_kind(op, outer) != IA_ATEN_SYNC_NONE) {
			snprintf(l->op_inner, sizeof l->op_inner, "%s", op);
			snprintf(l->op_outer, sizeof l->op_outer, "%s", outer ? outer : "");
		}
	}
	return l;
}

/* Index of the gap containing ts, or -1. */
uint64_t *ia_gap_windows(const struct ia_gaps *g)
{
	uint64_t *w = malloc((2 * g->n + 2) * sizeof *w);
	for (size_t i = 0; w && i < g->n; i++) {
		w[2 * i] = g->g[i].start;
		w[2 * i + 1] = g->g[i].end;
	}
	return w;
}

size_t ia_gap_ending_after(const struct ia_gaps *g, uint64_t ts)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->g[mid].end <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static long gap_at(const struct ia_gaps *g, uint64_t ts)
{
	size_t k = ia_gap_ending_after(g, ts);
	return k < g->n && g->g[k].start <= ts ? (long)k : -1;
}

static int attribute_samples(const struct ia_trace *t, const struct ia_per_process *pp,
			     struct ia_stack_names *names, struct ia_gaps *g, char *err, size_t errlen)
{
	if (!g->n)
		return 0;
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT tid, ts_ns, stack_id FROM cpu_samples "
					 "WHERE ts_ns >= ?1 AND ts_ns < ?2", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)g->g[0].start);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)g->g[g->n - 1].end);
	struct ia_map by_id = { 0 };
	struct { uint64_t id, main, workers, other, siblings; } *ids = NULL;
	size_t nids = 0, cap = 0, scap = 0;
	int rc;
	uint32_t main_tid = pp->main_thread != UINT32_MAX ? t->threads[pp->main_thread].tid : 0;
	uint32_t main_proc = pp->p[pp->main].proc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t ts = (uint64_t)sqlite3_column_int64(st, 1);
		long gi = gap_at(g, ts);
		if (gi < 0)
			continue;
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 0);
		int th = ia_thread_index(t, tid);
		if (th < 0 || !t->procs[t->threads[th].proc].selected || ia_thread_is_tracer(&t->threads[th]))
			continue;
		const struct ia_proc_stats *ps = ia_pp_of_proc(pp, t->threads[th].proc);
		if (g->nrelay && g->g[gi].th != UINT32_MAX)   /* the thread driving the GPU in that gap */
			main_tid = t->threads[g->g[gi].th].tid;
		enum ia_gap_role role = tid == main_tid ? IA_GAP_MAIN
			: t->threads[th].proc == main_proc ? IA_GAP_SIBLINGS
			: ps && ps->role == IA_ROLE_WORKER ? IA_GAP_WORKERS : IA_GAP_OTHER;
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 2);
		uint32_t k = ia_map_get(&by_id, id);
		if (k == UINT32_MAX) {
			if (ia_grow((void **)&ids, &cap, nids + 1, sizeof *ids) < 0 || ia_map_put(&by_id, id, (uint32_t)nids) < 0)
				goto oom;
			memset(&ids[nids], 0, sizeof ids[nids]);
			ids[nids].id = id;
			k = (uint32_t)nids++;
		}
		if (role == IA_GAP_MAIN) {
			ids[k].main++;
			g->samples_main++;
		} else if (role == IA_GAP_WORKERS) {
			ids[k].workers++;
			g->samples_workers++;
		} else if (role == IA_GAP_SIBLINGS) {
			ids[k].siblings++;
			g->samples_siblings++;
		} else {
			ids[k].other++;
			g->samples_other++;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		goto fail;
	}
	/* Fold stacks by their innermost native symbol, or by the Python
	 * function when the sample was running Python code (the interpreter's
	 * own symbols say nothing); keep the Python frame of the most sampled
	 * stack of each. */
	uint64_t *best = NULL;
	size_t bcap = 0;
	for (size_t i = 0; i < nids; i++) {
		const char *leaf = ia_stack_leaf(names, ids[i].id);
		const char *py = ia_stack_python(names, ids[i].id);
		const char *func = ia_stack_python_func(names, ids[i].id);
		int in_py = ia_stack_runs_python(names, ids[i].id) && func;
		char label[160];
		if (in_py)
			snprintf(label, sizeof label, "%s", func);
		else
			ia_short_symbol(label, sizeof label, leaf ? leaf : ids[i].id ? "(unnamed frames)" : "(no stack)");
		/* a script's "<module>" is the whole loop: its lines tell its work apart (c05) */
		int by_line = in_py && py && !strcmp(func, "<module>");
		size_t k;
		for (k = 0; k < g->nstacks && (strcmp(g->stacks[k].label, label) || g->stacks[k].python_code != in_py ||
					       (by_line && strcmp(g->stacks[k].python, py))); k++)
			;
		if (k == g->nstacks) {
			if (ia_grow((void **)&g->stacks, &scap, g->nstacks + 1, sizeof *g->stacks) < 0 ||
			    ia_grow((void **)&best, &bcap, g->nstacks + 1, sizeof *best) < 0) {
				free(best);
				goto oom;
			}
			memset(&g->stacks[k], 0, sizeof g->stacks[k]);
			snprintf(g->stacks[k].label, sizeof g->stacks[k].label, "%s", label);
			g->stacks[k].python_code = in_py;
			if (by_line)
				snprintf(g->stacks[k].python, sizeof g->stacks[k].python, "%s", py);
			best[k] = 0;
			g->nstacks++;
		}
		uint64_t n = ids[i].main + ids[i].workers + ids[i].other + ids[i].siblings;
		int mech = ia_stack_mech(names, ids[i].id);
		g->mech_main[mech] += ids[i].main;
		if (py && ia_is_torch_model_file(py))
			g->mech_main_model[mech] += ids[i].main;
		g->mech_workers[mech] += ids[i].workers;
		if (ids[i].main && ia_stack_torch_data(names, ids[i].id))
			g->samples_main_loader += ids[i].main;
		g->stacks[k].siblings += ids[i].siblings;
		g->stacks[k].main += ids[i].main;
		g->stacks[k].workers += ids[i].workers;
		g->stacks[k].other += ids[i].other;
		if (py && (n > best[k] || (n == best[k] && strcmp(py, g->stacks[k].python) < 0))) {
			const char *user = ia_stack_user_python(names, ids[i].id);
			best[k] = n;
			snprintf(g->stacks[k].python, sizeof g->stacks[k].python, "%s", py);
			snprintf(g->stacks[k].user_python, sizeof g->stacks[k].user_python, "%s", user ? user : "");
		}
	}
	free(best);
	if (g->nstacks)
		qsort(g->stacks, g->nstacks, sizeof *g->stacks, cmp_stack);
	free(ids);
	ia_map_free(&by_id);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	sqlite3_finalize(st);
	free(ids);
	ia_map_free(&by_id);
	return -1;
}

/* With measured GPU time the gaps are the stretches the GPU was certainly
 * idle (gpu_time.h), not the host's guess: a loop that never syncs still
 * shows when its GPU ran dry.  Each ends at the main process's next call
 * that queued work, and opens after the call that started last before it
 * (a sync returning, when the gap follows one). */
static int measured_gaps(const struct ia_trace *t, struct ia_gaps *g, const uint32_t *ix, size_t n)
{
	free(g->g);
	g->g = NULL;
	g->n = 0;
	size_t cap = 0, k = 0;
	for (size_t i = 0; i < g->gpu.nidle; i++) {
		const struct ia_span *s = &g->gpu.idle[i];
		if (s->b - s->a < IA_MEASURED_GAP_MIN_NS)
			continue;
		while (k < n && t->calls[ix[k]].start < s->a)
			k++;
		size_t e = k;
		while (e < n && !(ia_api_queues_work(t->calls[ix[e]].api) && t->calls[ix[e]].start >= s->b))
			e++;
		if (e == n)
			break;   /* idle to the end of the window: nothing ended it */
		if (ia_grow((void **)&g->g, &cap, g->n + 1, sizeof *g->g) < 0)
			return -1;
		struct ia_gap *x = &g->g[g->n++];
		memset(x, 0, sizeof *x);
		x->start = s->a;
		x->end = s->b;
		x->open_call = k ? ix[k - 1] : ix[0];
		x->end_call = ix[e];
	}
	return 0;
}

/* The stretches between capture windows are cut out of the gaps: nothing
 * was recorded there, so what is left of a gap around one is the host time
 * recorded before the stop and after the next start. */
static int cut_paused(const struct ia_capture *c, struct ia_gaps *g)
{
	if (!c->npaused)
		return 0;
	struct ia_gap *out = NULL;
	size_t n = 0, cap = 0, k = 0;
	/* both in time order: one walk */
	for (size_t i = 0; i < g->n; i++) {
		struct ia_gap x = g->g[i];
		while (k < c->npaused && c->paused[2 * k + 1] <= x.start)
			k++;
		for (size_t q = k; q < c->npaused && x.start < x.end; q++) {
			uint64_t p0 = c->paused[2 * q], p1 = c->paused[2 * q + 1];
			if (p0 >= x.end)
				break;
			if (p0 > x.start) {   /* the part before this stretch: its stop ended it */
				if (ia_grow((void **)&out, &cap, n + 1, sizeof *out) < 0)
					goto oom;
				out[n] = x;
				out[n].end = p0;
				out[n++].cut |= IA_GAP_CUT_END;
			}
			x.start = p1;   /* the next start opens what follows */
			x.cut |= IA_GAP_CUT_START;
		}
		if (x.start < x.end) {
			if (ia_grow((void **)&out, &cap, n + 1, sizeof *out) < 0)
				goto oom;
			out[n++] = x;
		}
	}
	free(g->g);
	g->g = out;
	g->n = n;
	return 0;
oom:
	free(out);
	return -1;
}

/* Moves the gaps that lie mostly in a one-time phase out of g->g, into the
 * per-phase counts: the attribution that follows is the steady state's. */
static void set_phase_gaps_apart(const struct ia_phases *ph, struct ia_gaps *g)
{
	size_t keep = 0;
	for (size_t i = 0; i < g->n; i++) {
		enum ia_phase p = ph ? ia_phases_gap(ph, g->g[i].start, g->g[i].end) : IA_PHASE_STEADY;
		if (p == IA_PHASE_STEADY) {
			g->g[keep++] = g->g[i];
			continue;
		}
		g->nphase_gaps[p]++;
		g->phase_gap_ns[p] += g->g[i].end - g->g[i].start;
	}
	g->n = keep;
}

uint64_t ia_refill_after(const struct ia_trace *t, const struct ia_gaps *g, const uint32_t *ix, size_t n, size_t k)
{
	const struct ia_call *c = &t->calls[ix[k]];
	if (!g->gpu.nest[2] || c->dur <= IA_SYNC_FLOOR_NS)
		return 0;
	uint64_t a = c->start + c->dur, b = g->win_end;
	for (size_t m = k + 1; m < n; m++) {
		const struct ia_call *d = &t->calls[ix[m]];
		if (d->start >= a && ia_call_completes_work(d)) {
			b = d->start;
			break;
		}
	}
	if (b <= a)
		return 0;
	uint64_t idle = b - a - ia_spans_within(g->gpu.est[2], g->gpu.nest[2], a, b);
	uint64_t wait = c->dur - IA_SYNC_FLOOR_NS;
	return idle < wait ? idle : wait;
}

/* Each sync's refill (ia_gap_line.est_overlap_ns). */
static int sync_refills(const struct ia_trace *t, struct ia_stack_names *names, const struct ia_coll_tids *gloo,
			struct ia_gaps *g, size_t *scap, const uint32_t *ix, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (ingero_api_class(c->api) != INGERO_CLASS_SYNC || c->dur <= IA_SYNC_FLOOR_NS ||
		    ia_coll_tids_has(gloo, t->threads[c->th].tid))
			continue;
		struct ia_gap_line *l = sync_line(t, names, g, scap, c);
		if (!l)
			return -1;
		l->est_overlap_ns += ia_refill_after(t, g, ix, n, k);
	}
	return 0;
}

/* The main process's calls in time order, once: its gaps (from a call
 * that completes work to the next that queues some), its time inside calls
 * by class (a union across its threads) and the time the GPU was known
 * busy (the host waited in a sync, or a copy held it).  Sets the window to
 * the first queued work .. the last call's end.  0, or -1 out of memory. */
static int scan_calls(const struct ia_trace *t, const struct ia_phases *ph, struct ia_gaps *g,
		      const uint32_t *ix, size_t n, int *started)
{
	size_t gcap = 0;
	int pending = 0;
	uint64_t gap_start = 0, busy_until = 0, call_until = 0, win_end = 0;
	uint32_t open_call = 0;
	*started = 0;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		uint64_t end = c->start + c->dur;
		int cls = ingero_api_class(c->api);
		if (ia_api_queues_work(c->api)) {
			if (!*started) {
				*started = 1;
				g->win_start = c->start;
				busy_until = call_until = c->start;
			}
			if (pending && c->start > gap_start) {
				if (ia_grow((void **)&g->g, &gcap, g->n + 1, sizeof *g->g) < 0)
					return -1;
				struct ia_gap *x = &g->g[g->n++];
				memset(x, 0, sizeof *x);
				x->start = gap_start;
				x->end = c->start;
				x->open_call = open_call;
				x->end_call = ix[k];
			}
			pending = 0;
		}
		if (!*started)
			continue;
		if (end > win_end)
			win_end = end;
		uint64_t s0 = c->start > call_until ? c->start : call_until;
		if (end > s0) {
			uint64_t in = end - s0;
			if (cls == INGERO_CLASS_SYNC)
				g->in_sync_ns += in;
			else if (cls == INGERO_CLASS_COPY)
				g->in_copy_ns += in;
			else if (cls == INGERO_CLASS_LAUNCH)
				g->in_launch_ns += in;
			else
				g->in_other_ns += in;
			call_until = end;
		}
		uint64_t b0 = 0, b1 = 0;
		if ((cls == INGERO_CLASS_SYNC || ia_call_is_waiting_free(c)) && c->dur > IA_SYNC_FLOOR_NS) {
			b0 = c->start;
			b1 = end - IA_SYNC_FLOOR_NS;
		} else if (cls == INGERO_CLASS_COPY && (ia_api_completes_work(c->api) || (c->flags & INGERO_FLAG_HOST_PAGEABLE))) {
			b0 = c->start;
			b1 = end;
		}
		if (b1 > b0) {
			if (b0 < busy_until)
				b0 = busy_until;
			if (b1 > b0) {
				g->known_busy_ns += b1 - b0;
				if (ph)
					g->known_busy_phase_ns += ia_phases_time_in(ph, IA_PHASE_N, b0, b1);
				busy_until = b1;
			}
		}
		if (ia_call_completes_work(c) && (!pending || end > gap_start)) {
			pending = 1;
			gap_start = end;
			open_call = ix[k];
		}
	}
	if (*started)
		g->win_end = win_end;
	else
		g->win_start = g->win_end = t->first_ns;   /* no CUDA work: nothing to estimate */
	return 0;
}

/* The main thread in each gap (off-CPU, waiting for a CPU, in D state) and
 * the gaps' total: the gap's thread (its th: the main thread, or a relay's
 * driver), its intervals found from the gap's start. */
static void main_thread_in_gaps(const struct ia_trace *t, struct ia_gaps *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct ia_gap *x = &g->g[i];
		uint64_t len = x->end - x->start;
		g->total_ns += len;
		if (x->th != UINT32_MAX) {
			const struct ia_thread *mt = &t->threads[x->th];
			const uint32_t *oi = t->off_by_th + mt->off_first;
			for (size_t k = ia_thread_off_lower(t, x->th, x->start); k < mt->off_n && t->offs[oi[k]].start < x->end; k++) {
				const struct ia_off *o = &t->offs[oi[k]];
				x->main_off_ns += ia_overlap(o->start, o->end, x->start, x->end);
				x->main_runq_ns += ia_overlap(o->end - o->runq, o->end, x->start, x->end);
				uint64_t blk = ia_overlap(o->start, o->end - o->runq, x->start, x->end);
				if (o->th & IA_OFF_IOWAIT)
					x->main_iowait_ns += blk;
				uint8_t sys = ia_off_sys(o);
				if (ia_wait_not_input(ia_syscall_wait(sys)))
					x->main_other_wait_ns += blk;
				g->main_sys_ns[sys] += blk;
			}
		}
	g->main_runq_ns += x->main_runq_ns;
		g->main_iowait_ns += x->main_iowait_ns;
		g->main_blocked_ns += x->main_off_ns - x->main_runq_ns;
		g->main_oncpu_ns += len > x->main_off_ns ? len - x->main_off_ns : 0;
	}
}

/* GPU idle bounds over the window, measured where marks timed the GPU.
 * The time between capture windows is no part of them: nothing was
 * recorded there (what the GPU did in it is not known either). */
static void idle_bounds(const struct ia_trace *t, struct ia_gaps *g)
{
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	const struct ia_capture *cap = g->capture = &t->capture;
	g->paused_ns = ia_capture_paused_in(cap, g->win_start, g->win_end);
	uint64_t paused_idle = ia_spans_within_windows(g->gpu.idle, g->gpu.nidle, cap->paused, cap->npaused);
	uint64_t paused_busy = ia_spans_within_windows(g->gpu.busy, g->gpu.nbusy, cap->paused, cap->npaused);
	uint64_t rec = win - g->paused_ns;   /* the recorded part of the window */
	g->idle_low_ns = g->total_ns;
	for (int p = 0; p < IA_PHASE_N; p++)   /* the whole window's bounds hold the phases' gaps too */
		if (p != IA_PHASE_PAUSED)
			g->idle_low_ns += g->phase_gap_ns[p];
	if (g->gpu.measured)   /* measured: every certainly idle stretch, short ones too */
		g->idle_low_ns = g->gpu.idle_low_ns > paused_idle ? g->gpu.idle_low_ns - paused_idle : 0;
	g->idle_high_ns = rec > g->known_busy_ns ? rec - g->known_busy_ns : 0;
	if (g->gpu.measured) {
		uint64_t unknown = g->paused_ns > paused_busy ? g->paused_ns - paused_busy : 0;
		g->idle_high_ns = g->gpu.idle_high_ns > unknown ? g->gpu.idle_high_ns - unknown : 0;
	}
	if (g->idle_high_ns < g->idle_low_ns)
		g->idle_high_ns = g->idle_low_ns;
	uint64_t in_calls = g->in_sync_ns + g->in_copy_ns + g->in_launch_ns + g->in_other_ns;
	g->queued_host_ns = rec > in_calls + g->idle_low_ns ? rec - in_calls - g->idle_low_ns : 0;
}

/* On-CPU time over all gaps of the workers (each, and their sum) and of the
 * main process's other threads, with their time waiting for a CPU (the
 * busiest by both named).  0, or -1 out of memory. */
static int others_in_gaps(const struct ia_trace *t, const struct ia_per_process *pp, uint32_t mproc,
			  struct ia_gaps *g)
{
	g->worker_oncpu_ns = calloc(pp->n + 1, sizeof *g->worker_oncpu_ns);
	uint64_t *w = ia_gap_windows(g);
	if (!g->worker_oncpu_ns || !w) {
		free(w);
		return -1;
	}
	for (size_t i = 0; i < pp->n; i++) {
		if (pp->p[i].role != IA_ROLE_WORKER)
			continue;
		for (size_t th = 0; th < t->nthreads; th++)
			if (t->threads[th].proc == pp->p[i].proc)
				g->worker_oncpu_ns[i] += ia_thread_oncpu_windows(t, (uint32_t)th, w, g->n);
		g->workers_oncpu_ns += g->worker_oncpu_ns[i];
	}
	uint64_t top = 0;
	for (size_t th = 0; th < t->nthreads; th++) {
		if (t->threads[th].proc != mproc || th == pp->main_thread || ia_thread_is_tracer(&t->threads[th]) ||
		    ia_gaps_in_relay(g, (uint32_t)th))   /* (a relay's thread drove the GPU, or had ended) */
			continue;
		uint64_t rq = 0, on = ia_thread_cpu_windows(t, (uint32_t)th, w, g->n, &rq);
		g->siblings_oncpu_ns += on;
		g->siblings_runq_ns += rq;
		if (on + rq > top) {
			top = on + rq;
			g->sibling_top_ns = on;
			g->sibling_top = (uint32_t)th;
		}
	}
	free(w);
	return 0;
}

/* The Python line of the call ending each gap, weighted by the gap. */
static int end_lines(const struct ia_trace *t, struct ia_stack_names *names, struct ia_gaps *g)
{
	size_t ecap = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->g[i].cut & IA_GAP_CUT_END)   /* a capture stop ended it, not a call */
			continue;
		const struct ia_call *c = &t->calls[g->g[i].end_call];
		const char *py = ia_stack_source(names, t->stack_ids[c->stack]);
		struct ia_gap_line *l = ia_line_slot(&g->end_lines, &g->nend_lines, &ecap, py ? py : "(no Python frame)");
		if (!l)
			return -1;
		l->count++;
		l->ns += g->g[i].end - g->g[i].start;
		l->api = c->api;
	}
	if (g->nend_lines)
		qsort(g->end_lines, g->nend_lines, sizeof *g->end_lines, cmp_line_ns);
	return 0;
}

/* Syncs by Python line: their count and time, the gaps each line's syncs
 * open, and (with nested streams measured) the GPU work refilled after
 * them.  0, or -1 out of memory. */
static int sync_lines(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		      const struct ia_coll_tids *gloo, struct ia_gaps *g, const uint32_t *ix, size_t n, char *err,
		      size_t errlen)
{
	size_t scap = 0;
	/* sought only when an autograd thread synced outside Python */
	for (size_t k = 0; k < n && pp->main_thread != UINT32_MAX; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (ingero_api_class(c->api) == INGERO_CLASS_SYNC && ia_is_autograd_thread(t->threads[c->th].comm) &&
		    !ia_stack_source(names, t->stack_ids[c->stack])) {
			if (ia_backward_line(t, t->threads[pp->main_thread].tid, names, g->backward_line,
					     sizeof g->backward_line, err, errlen) < 0)
				return -2;
			break;
		}
	}
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (ingero_api_class(c->api) != INGERO_CLASS_SYNC || ia_coll_tids_has(gloo, t->threads[c->th].tid))
			continue;
		struct ia_gap_line *l = sync_line(t, names, g, &scap, c);
		if (!l)
			return -1;
		l->count++;
		l->ns += c->dur;
		l->api = c->api;
		g->nsyncs++;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct ia_call *c = &t->calls[g->g[i].open_call];
		if (ingero_api_class(c->api) != INGERO_CLASS_SYNC || (g->g[i].cut & IA_GAP_CUT_START) ||
		    ia_coll_tids_has(gloo, t->threads[c->th].tid))
			continue;
		struct ia_gap_line *l = sync_line(t, names, g, &scap, c);
		if (!l)
			return -1;
		uint64_t len = g->g[i].end - g->g[i].start;
		uint64_t wait = c->dur > IA_SYNC_FLOOR_NS ? c->dur - IA_SYNC_FLOOR_NS : 0;
		l->gap_ns += len;
		l->overlap_ns += len < wait ? len : wait;
		uint64_t off = g->g[i].main_off_ns < len ? g->g[i].main_off_ns : len;
		l->gap_blocked_ns += off > g->g[i].main_runq_ns ? off - g->g[i].main_runq_ns : 0;
	}
	if (g->gpu.nest[2] && sync_refills(t, names, gloo, g, &scap, ix, n) < 0)
		return -1;
	if (g->nsync_lines)
		qsort(g->sync_lines, g->nsync_lines, sizeof *g->sync_lines, cmp_line_ns);
	return 0;
}

int ia_gaps_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		    const struct ia_phases *ph, const struct ia_coll_tids *gloo, struct ia_gaps *g, char *err,
		    size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->sibling_top = UINT32_MAX;
	g->child_top = -1;
	g->win_start = t->first_ns;
	g->win_end = t->last_ns;
	if (pp->main < 0)
		return 0;
	uint32_t mproc = pp->p[pp->main].proc;
	size_t n = 0;
	uint32_t *ix = ia_proc_calls(t, mproc, &n);
	g->main_calls = ix;   /* kept (ia_gaps_free frees it) */
	g->nmain_calls = n;
	int started;
	if (!ix || scan_calls(t, ph, g, ix, n, &started) < 0)
		goto oom;
	if (started && ia_gpu_time_compute(t, g->win_start, g->win_end, ph, &g->gpu, err, errlen) < 0)
		return -1;
	if (g->gpu.measured && measured_gaps(t, g, ix, n) < 0)
		goto oom;
	if (cut_paused(&t->capture, g) < 0)
		goto oom;
	set_phase_gaps_apart(ph, g);
	for (size_t i = 0; i < g->n; i++)
		g->g[i].th = pp->main_thread;
	if (ia_gap_relay_find(t, pp, g) < 0)
		goto oom;
	main_thread_in_gaps(t, g);
	idle_bounds(t, g);
	ia_gap_workers_off(t, pp, g);
	if (others_in_gaps(t, pp, mproc, g) < 0 || ia_gap_children_compute(t, pp, g) < 0 || end_lines(t, names, g) < 0)
		goto oom;
	int rc = sync_lines(t, pp, names, gloo, g, ix, n, err, errlen);
	if (rc == -2)
		return -1;
	if (rc < 0)
		goto oom;
	if (attribute_samples(t, pp, names, g, err, errlen) < 0)
		return -1;
	return ia_gap_blocks_compute(t, pp, names, g, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The CPython interpreter itself (evaluating bytecode, allocating objects):
 * per-item Python work such as a Dataset's __getitem__ run a million times. */
int ia_is_interpreter(const char *sym)
{
	return sym && (!strncmp(sym, "_PyEval_", 8) || !strncmp(sym, "PyObject_", 9) ||
		       !strncmp(sym, "_PyObject_", 10) || !strncmp(sym, "PyEval_", 7));
}

double ia_stacks_interpreter_share(const struct ia_gaps *g, enum ia_gap_role role)
{
	uint64_t total = ia_gap_samples(g, role), n = 0;
	for (size_t i = 0; i < g->nstacks; i++)
		if (g->stacks[i].python_code || ia_is_interpreter(g->stacks[i].label))
			n += ia_gap_stack_n(&g->stacks[i], role);
	return total ? (double)n / (double)total : 0;
}

int ia_gaps_siblings_busy(const struct ia_gaps *g)
{
	return g->sibling_top != UINT32_MAX &&
	       (double)(g->siblings_oncpu_ns + g->siblings_runq_ns) >= IA_SIBLINGS_BUSY * (double)g->main_blocked_ns;
}

int ia_gaps_gil(const struct ia_gaps *g)
{
	return ia_gaps_siblings_busy(g) && g->workers_oncpu_ns * 2 < g->main_blocked_ns &&
	       ia_stacks_interpreter_share(g, IA_GAP_SIBLINGS) >= IA_INTERPRETER_SHARE;
}

size_t ia_gaps_first_call_at(const struct ia_trace *t, const struct ia_gaps *g, uint64_t ts)
{
	size_t lo = 0, hi = g->nmain_calls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->calls[g->main_calls[mid]].start < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void ia_gaps_free(struct ia_gaps *g)
{
	free(g->g);
	free(g->relay);
	free(g->main_calls);
	free(g->worker_oncpu_ns);
	free(g->stacks);
	free(g->end_lines);
	free(g->sync_lines);
	ia_gap_blocks_free(&g->main_blocks);
	ia_gap_blocks_free(&g->worker_blocks);
	ia_gpu_time_free(&g->gpu);
	memset(g, 0, sizeof *g);
}

void ia_gap_end_lines_json(cJSON *parent, const char *key, const struct ia_trace *t,
			   const struct ia_gaps *g, size_t max)
{
	cJSON *el = cJSON_AddArrayToObject(parent, key);
	for (size_t i = 0; i < g->nend_lines && i < max; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "line", g->end_lines[i].line);
		cJSON_AddStringToObject(o, "api", ia_api_name(t, g->end_lines[i].api));
		ia_json_u64(o, "gaps", g->end_lines[i].count);
		ia_json_u64(o, "gap_ns", g->end_lines[i].ns);
		cJSON_AddItemToArray(el, o);
	}
}
