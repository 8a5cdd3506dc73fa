/*
 * per_process.c — roles, tree order and per-process host evidence (see
 * per_process.h).
 *
 * Everything is computed from the per-thread off-CPU index in linear passes;
 * run-queue percentiles gather one process's delays at a time into a scratch
 * array and select in place.  The main-wait share walks the main thread's
 * blocked stretches and each worker thread's intervals together (a merge of
 * two sorted lists), so it is linear too.
 */
#include "measure/per_process.h"

#include "load/db.h"
#include "load/frames.h"
#include "load/stacks.h"
#include "base/json_out.h"
#include "load/phase_rules.h"
#include "base/util.h"

#include <ingero/api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the thread whose tid is the pid stays the main thread with at least
 * 1/MAIN_THREAD_SHARE_DIV of the busiest thread's launches and syncs */
#define MAIN_THREAD_SHARE_DIV 10

const char *ia_role_name(enum ia_role r)
{
	switch (r) {
	case IA_ROLE_MAIN: return "main";
	case IA_ROLE_WORKER: return "worker";
	case IA_ROLE_COMPILER: return "compiler";
	case IA_ROLE_CHILD: return "child";
	default: return "other";
	}
}

const struct ia_proc_stats *ia_pp_of_proc(const struct ia_per_process *pp, uint32_t proc)
{
	for (size_t i = 0; i < pp->n; i++)
		if (pp->p[i].proc == proc)
			return &pp->p[i];
	return NULL;
}

static uint64_t gpu_driving_calls(const struct ia_proc *p)
{
	uint64_t n = 0;
	if (!p->calls)
		return 0;
	for (unsigned a = 0; a < INGERO_API_MAX; a++) {
		int c = ingero_api_class(a);
		if (c == INGERO_CLASS_SYNC || c == INGERO_CLASS_COPY || c == INGERO_CLASS_LAUNCH)
			n += p->calls[a];
	}
	return n;
}

static int pick_main(const struct ia_trace *t)
{
	int best = -1;
	uint64_t bestn = 0;
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct ia_proc *p = &t->procs[i];
		if (!p->selected)
			continue;
		uint64_t n = gpu_driving_calls(p);
		if (n == 0)
			n = p->ncalls ? 1 : 0;
		if (n == 0)
			continue;
		if (best < 0 || n > bestn || (n == bestn && p->pid < t->procs[best].pid)) {
			best = (int)i;
			bestn = n;
		}
	}
	if (best >= 0)
		return best;
	/* No CUDA calls: the root of the tree, earliest started, lowest pid. */
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct ia_proc *p = &t->procs[i];
		if (!p->selected || (p->parent >= 0 && t->procs[p->parent].selected))
			continue;
		if (best < 0 || p->pid < t->procs[best].pid)
			best = (int)i;
	}
	return best;
}

static int descends_from(const struct ia_trace *t, int i, int anc)
{
	int hops = 0;
	for (int j = t->procs[i].parent; j >= 0 && hops < 1000; j = t->procs[j].parent, hops++)
		if (j == anc)
			return 1;
	return 0;
}

/* A process of torch.compile's compile-worker pool (Inductor starts it as
 * `python …/torch/_inductor/compile_worker/__main__.py`), or one of its
 * descendants (the pool's forks, ptxas): it compiles kernels, it does not
 * feed the training loop batches, so it is no DataLoader-style worker. */
static int in_compile_pool(const struct ia_trace *t, int i, int mainp)
{
	int hops = 0;
	for (int j = i; j >= 0 && j != mainp && hops < 1000; j = t->procs[j].parent, hops++) {
		const char *cl = t->procs[j].cmdline;
		if (cl && (strstr(cl, "_inductor/compile_worker") || strstr(cl, "_inductor.compile_worker")))
			return 1;
	}
	return 0;
}

/* What the samples of the main process's descendants show, per trace.procs
 * index: samples in all, those with a Python frame in torch/utils/data/
 * (a DataLoader worker's loop, fetch, collate), those with a compile-time
 * frame (phase_rules.h).  Samples are few (99 Hz per CPU), stacks fewer:
 * one pass over (pid, stack) pairs and one look at each stack's frames. */
struct role_evidence {
	uint64_t samples, dataloader, compiling;
};

static int role_evidence(const struct ia_trace *t, int mainp, struct role_evidence *ev, char *err, size_t errlen)
{
	if (!ia_db_has_table(t->db, "cpu_samples") || !ia_frames_exist(t->db))
		return 0;   /* no samples: roles from names only */
	sqlite3_stmt *pairs = ia_db_prepare(t->db, "SELECT pid, stack_id, count(*) FROM cpu_samples GROUP BY pid, stack_id",
					    err, errlen);
	if (!pairs)
		return -1;
	/* names of its own: this runs beside the analysis's (analysis.c), and
	 * a names cache is one thread's; each distinct frame is classified once */
	struct ia_stack_names *names = ia_stack_names_new(t->db);
	if (!names) {
		sqlite3_finalize(pairs);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc;
	while ((rc = sqlite3_step(pairs)) == SQLITE_ROW) {
		int pi = ia_proc_index(t, sqlite3_column_int(pairs, 0));
		if (pi < 0 || pi == mainp || mainp < 0 || !descends_from(t, pi, mainp))
			continue;
		uint64_t n = (uint64_t)sqlite3_column_int64(pairs, 2), id = (uint64_t)sqlite3_column_int64(pairs, 1);
		ev[pi].samples += n;
		ev[pi].dataloader += ia_stack_torch_data(names, id) ? n : 0;
		ev[pi].compiling += ia_stack_has_phase(names, id, IA_PHASE_COMPILE) ? n : 0;
	}
	sqlite3_finalize(pairs);
	int bad = ia_stack_names_error(names, err, errlen);   /* a damaged page under a stack (err says why) */
	ia_stack_names_free(names);
	if (bad < 0)
		return -1;
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
}

/* Whether process i has a thread named name (PyTorch renames a DataLoader
 * worker's thread pt_data_worker). */
static int has_thread_named(const struct ia_trace *t, int i, const char *name)
{
	for (size_t k = 0; k < t->nthreads; k++)
		if ((int)t->threads[k].proc == i && !strcmp(t->threads[k].comm, name))
			return 1;
	return 0;
}

/* The main process runs Python: its name or executable says so, or a stack
 * of it has Python frames.  Its children then need evidence to be workers. */
static int runs_python(const struct ia_trace *t, int mainp)
{
	const struct ia_proc *p = &t->procs[mainp];
	const char *exe = p->exe ? strrchr(p->exe, '/') : NULL;
	exe = exe ? exe + 1 : p->exe;
	if (!strncmp(p->comm, "python", 6) || (exe && !strncmp(exe, "python", 6)))
		return 1;
	if (!ia_db_has_table(t->db, "stacks"))
		return 0;
	return ia_frames_pid_has_python(t->db, p->pid);   /* evidence only: without it, the names decide */
}

/* Tree order: roots by pid, each followed by its children by pid. */
static void tree_order(const struct ia_trace *t, int i, int depth, struct ia_per_process *pp,
		       const int *sorted, char *seen)
{
	if (seen[i])
		return;
	seen[i] = 1;
	if (t->procs[i].selected) {
		pp->p[pp->n].proc = (uint32_t)i;
		pp->p[pp->n].depth = depth;
		pp->n++;
	}
	for (size_t k = 0; k < t->nprocs; k++) {
		int c = sorted[k];
		if (t->procs[c].parent == i)
			tree_order(t, c, t->procs[i].selected ? depth + 1 : depth, pp, sorted, seen);
	}
}

static int cmp_pid(const void *a, const void *b, void *ctx)
{
	const struct ia_trace *t = ctx;
	int x = t->procs[*(const int *)a].pid, y = t->procs[*(const int *)b].pid;
	return (x > y) - (x < y);
}

static int load_page_allocs(const struct ia_trace *t, struct ia_per_process *pp, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db,
		"SELECT pid, sum(pages), sum(allocs), sum(faults) FROM page_allocs "
		"WHERE bucket_ns >= ?1 AND bucket_ns < ?2 GROUP BY pid", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pi = ia_proc_index(t, sqlite3_column_int(st, 0));
		if (pi < 0)
			continue;
		for (size_t i = 0; i < pp->n; i++) {
			if (pp->p[i].proc != (uint32_t)pi)
				continue;
			pp->p[i].pages = (uint64_t)sqlite3_column_int64(st, 1);
			pp->p[i].page_allocs = (uint64_t)sqlite3_column_int64(st, 2);
			pp->p[i].page_faults = (uint64_t)sqlite3_column_int64(st, 3);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
}

/* pp->p in tree order: each root's descendants after it, by pid. */
static int order_tree(const struct ia_trace *t, struct ia_per_process *pp)
{
	int *sorted = malloc((t->nprocs + 1) * sizeof *sorted);
	char *seen = calloc(t->nprocs + 1, 1);
	if (!sorted || !seen) {
		free(sorted);
		free(seen);
		return -1;
	}
	for (size_t i = 0; i < t->nprocs; i++)
		sorted[i] = (int)i;
	qsort_r(sorted, t->nprocs, sizeof *sorted, cmp_pid, (void *)t);
	for (size_t k = 0; k < t->nprocs; k++) {
		int i = sorted[k];
		int par = t->procs[i].parent;
		if (par < 0 || par == i)
			tree_order(t, i, 0, pp, sorted, seen);
	}
	for (size_t k = 0; k < t->nprocs; k++)   /* cycles (pid reuse): still listed */
		tree_order(t, sorted[k], 0, pp, sorted, seen);
	free(sorted);
	free(seen);
	return 0;
}

/* The most workers alive at one instant: at each one's start, those started
 * by then and not yet exited (an unknown start or exit: the trace's edge). */
static size_t workers_at_once(const struct ia_trace *t, const struct ia_per_process *pp)
{
	size_t best = 0;
	for (size_t i = 0; i < pp->n; i++) {
		if (pp->p[i].role != IA_ROLE_WORKER)
			continue;
		uint64_t at = t->procs[pp->p[i].proc].start_ns;
		size_t alive = 0;
		for (size_t j = 0; j < pp->n; j++) {
			const struct ia_proc *q = &t->procs[pp->p[j].proc];
			if (pp->p[j].role == IA_ROLE_WORKER && q->start_ns <= at && (!q->exit_ns || q->exit_ns > at))
				alive++;
		}
		if (alive > best)
			best = alive;
	}
	return best;
}

/* Each process's role, from evidence, and why. */
static int assign_roles(const struct ia_trace *t, struct ia_per_process *pp, int mainp, char *err, size_t errlen)
{
	/* A descendant that ended before the main process's first CUDA call
	 * cannot be feeding it (the shells of a pyenv shim, a tool run at
	 * import): not a worker. */
	uint64_t first_call = UINT64_MAX;
	for (size_t i = 0; mainp >= 0 && i < t->ncalls; i++)
		if ((int)t->threads[t->calls[i].th].proc == mainp && t->calls[i].start < first_call)
			first_call = t->calls[i].start;
	struct role_evidence *rev = calloc(t->nprocs + 1, sizeof *rev);
	if (!rev) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (role_evidence(t, mainp, rev, err, errlen) < 0) {
		free(rev);
		return -1;
	}
	int python_main = mainp >= 0 && runs_python(t, mainp);
	for (size_t i = 0; i < pp->n; i++) {
		struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *pr = &t->procs[s->proc];
		const struct role_evidence *ev = &rev[s->proc];
		s->why_role = NULL;
		if ((int)s->proc == mainp) {
			s->role = IA_ROLE_MAIN;
			s->why_role = "most sync, copy and launch calls";
			pp->main = (int)i;
		} else if (mainp < 0 || !descends_from(t, (int)s->proc, mainp) ||
			   (pr->exit_ns && first_call != UINT64_MAX && pr->exit_ns < first_call)) {
			s->role = IA_ROLE_OTHER;   /* not a child, or gone before the GPU work began */
		} else if ((s->compile_pool = in_compile_pool(t, (int)s->proc, mainp)) || ia_is_compiler_comm(pr->comm) ||
			   (ev->compiling >= 2 && ev->compiling * 2 >= ev->samples)) {
			s->role = IA_ROLE_COMPILER;
			s->why_role = s->compile_pool ? "torch.compile's compile-worker pool"
				: ia_is_compiler_comm(pr->comm) ? "a compiler's name" : "compile-time code in its samples";
			pp->ncompilers++;
		} else if (has_thread_named(t, (int)s->proc, "pt_data_worker") || ev->dataloader) {
			s->role = IA_ROLE_WORKER;
			s->why_role = ev->dataloader ? "torch/utils/data frames in its samples" : "a thread named pt_data_worker";
			pp->nworkers++;
		} else if (!python_main) {
			s->role = IA_ROLE_WORKER;   /* a C program's forked helpers: DataLoader-style, by position */
			s->why_role = "a child of a program that runs no Python";
			pp->nworkers++;
		} else {
			s->role = IA_ROLE_CHILD;
			s->why_role = "a child with no DataLoader or compiler evidence";
			pp->nchildren++;
		}
	}
	free(rev);
	pp->workers_at_once = workers_at_once(t, pp);
	return 0;
}

/* Main thread: the thread whose tid is the pid, when it makes a fair share
 * of the loop's calls (launches and syncs: set-up copies and allocations do
 * not count) — a Python training loop runs there, while PyTorch launches
 * the backward pass from its autograd device thread, often with more calls;
 * else the thread with the most calls. */
static void pick_main_thread(const struct ia_trace *t, struct ia_per_process *pp, int mainp)
{
	uint64_t best = 0, best_loop = 0, leader_loop = 0;
	uint32_t leader = UINT32_MAX;
	uint64_t *loop = calloc(t->nthreads ? t->nthreads : 1, sizeof *loop);
	for (size_t i = 0; loop && i < t->ncalls; i++) {
		int cls = ingero_api_class(t->calls[i].api);
		if (cls == INGERO_CLASS_LAUNCH || cls == INGERO_CLASS_SYNC)
			loop[t->calls[i].th]++;
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct ia_thread *x = &t->threads[i];
		if ((int)x->proc != mainp)
			continue;
		uint64_t l = loop ? loop[i] : 0;
		if (x->tid == (uint32_t)t->procs[mainp].pid) {
			leader = (uint32_t)i;
			leader_loop = l;
		}
		if (l > best_loop)
			best_loop = l;
		if (pp->main_thread == UINT32_MAX || x->ncalls > best ||
		    (x->ncalls == best && x->tid == (uint32_t)t->procs[mainp].pid)) {
			pp->main_thread = (uint32_t)i;
			best = x->ncalls;
		}
	}
	if (leader != UINT32_MAX && leader_loop && leader_loop * MAIN_THREAD_SHARE_DIV >= best_loop)
		pp->main_thread = leader;
	free(loop);
}

/* Per-thread sums folded into processes: CPU time, context switches, off-CPU
 * and run-queue time (its p50/p99), the worst stall.  0, or -1 out of memory. */
static int fold_threads(const struct ia_trace *t, struct ia_per_process *pp)
{
	uint64_t *rq = NULL;
	size_t rqcap = 0;
	for (size_t i = 0; i < pp->n; i++) {
		struct ia_proc_stats *s = &pp->p[i];
		size_t nrq = 0;
		for (size_t th = 0; th < t->nthreads; th++) {
			const struct ia_thread *x = &t->threads[th];
			if (x->proc != s->proc)
				continue;
			s->nthreads++;
			if (ia_thread_is_tracer(x))
				continue;   /* the tracer's CPU and switches, not the program's */
			if (ia_grow((void **)&rq, &rqcap, nrq + x->off_n + 1, sizeof *rq) < 0) {
				free(rq);
				return -1;
			}
			uint64_t a, b, off_in_span = 0;
			ia_thread_span(t, (uint32_t)th, &a, &b);
			for (uint32_t k = 0; k < x->off_n; k++) {
				const struct ia_off *o = &t->offs[t->off_by_th[x->off_first + k]];
				uint64_t d = o->end - o->start;
				off_in_span += ia_overlap(o->start, o->end, a, b);
				if (o->start < t->from || o->start >= t->to)
					continue;   /* counted where it starts */
				s->context_switches++;
				if (o->th & IA_OFF_PREEMPTED)
					s->involuntary++;
				else
					s->voluntary++;
				s->off_cpu_ns += d;
				s->runq_ns += o->runq;
				if (d > s->worst_stall_ns)
					s->worst_stall_ns = d;
				rq[nrq++] = o->runq;
			}
			s->cpu_ns += (b - a) > off_in_span ? (b - a) - off_in_span : 0;
		}
		static const double pc[] = { 50, 99 };
		uint64_t out[2];
		ia_percentiles(rq, nrq, pc, out, 2);
		s->runq_p50_ns = out[0];
		s->runq_p99_ns = out[1];
	}
	free(rq);
	return 0;
}

/* The main thread's blocked time (off-CPU and not runnable), and the
 * workers' share of its waiting: CPU each worker used meanwhile.  0, or -1
 * out of memory. */
static int main_blocked(const struct ia_trace *t, struct ia_per_process *pp)
{
	const struct ia_thread *m = &t->threads[pp->main_thread];
	uint64_t *w = malloc((2 * (size_t)m->off_n + 2) * sizeof *w);
	if (!w)
		return -1;
	size_t nw = 0;
	for (uint32_t k = 0; k < m->off_n; k++) {
		const struct ia_off *o = &t->offs[t->off_by_th[m->off_first + k]];
		uint64_t b0 = o->start, b1 = o->end - o->runq;
		if (b0 < t->from)
			b0 = t->from;
		if (b1 > t->to)
			b1 = t->to;
		if (b1 <= b0)
			continue;
		w[2 * nw] = b0;
		w[2 * nw + 1] = b1;
		pp->main_blocked_ns += b1 - b0;
		nw++;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < pp->n; i++) {
		struct ia_proc_stats *s = &pp->p[i];
		if (s->role != IA_ROLE_WORKER)
			continue;
		for (size_t th = 0; th < t->nthreads; th++)
			if (t->threads[th].proc == s->proc)
				s->oncpu_while_main_blocked_ns += ia_thread_oncpu_windows(t, (uint32_t)th, w, nw);
		total += s->oncpu_while_main_blocked_ns;
	}
	for (size_t i = 0; i < pp->n; i++)
		if (pp->p[i].role == IA_ROLE_WORKER && total)
			pp->p[i].main_wait_share = (double)pp->p[i].oncpu_while_main_blocked_ns / (double)total;
	free(w);
	return 0;
}

int ia_per_process_compute(const struct ia_trace *t, struct ia_per_process *pp, char *err, size_t errlen)
{
	memset(pp, 0, sizeof *pp);
	pp->main = -1;
	pp->main_thread = UINT32_MAX;
	pp->p = calloc(t->nprocs + 1, sizeof *pp->p);
	if (!pp->p || order_tree(t, pp) < 0)
		goto oom;
	int mainp = pick_main(t);
	if (assign_roles(t, pp, mainp, err, errlen) < 0)
		return -1;
	if (mainp >= 0)
		pick_main_thread(t, pp, mainp);
	if (fold_threads(t, pp) < 0)
		goto oom;
	if (pp->main_thread != UINT32_MAX && main_blocked(t, pp) < 0)
		goto oom;
	return load_page_allocs(t, pp, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_per_process_free(struct ia_per_process *pp)
{
	free(pp->p);
	memset(pp, 0, sizeof *pp);
}

cJSON *ia_per_process_json(const struct ia_trace *t, const struct ia_per_process *pp)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", p->pid);
		cJSON_AddNumberToObject(o, "ppid", p->ppid < 0 ? 0 : p->ppid);
		cJSON_AddStringToObject(o, "comm", p->comm);
		cJSON_AddStringToObject(o, "role", ia_role_name(s->role));
		ia_json_str(o, "role_evidence", s->why_role);
		cJSON *calls = cJSON_AddObjectToObject(o, "calls");
		for (unsigned a = 0; p->calls && a < INGERO_API_MAX; a++)
			if (p->calls[a])
				ia_json_u64(calls, ia_api_name(t, a), p->calls[a]);
		ia_json_u64(o, "cuda_calls", p->ncalls);
		ia_json_u64(o, "context_switches", s->context_switches);
		ia_json_u64(o, "off_cpu_ns", s->off_cpu_ns);
		ia_json_u64(o, "voluntary_switches", s->voluntary);
		ia_json_u64(o, "involuntary_switches", s->involuntary);
		ia_json_u64(o, "worst_stall_ns", s->worst_stall_ns);
		ia_json_u64(o, "runq_delay_ns", s->runq_ns);
		ia_json_u64(o, "runq_delay_p50_ns", s->runq_p50_ns);
		ia_json_u64(o, "runq_delay_p99_ns", s->runq_p99_ns);
		ia_json_u64(o, "page_allocs", s->page_allocs);
		ia_json_u64(o, "pages", s->pages);
		ia_json_u64(o, "page_faults", s->page_faults);
		ia_json_u64(o, "cpu_ns", s->cpu_ns);
		ia_json_u64(o, "threads", s->nthreads);
		if (s->role == IA_ROLE_WORKER) {
			ia_json_u64(o, "oncpu_while_main_blocked_ns", s->oncpu_while_main_blocked_ns);
			ia_json_round(o, "main_wait_share", s->main_wait_share, 4);
		}
		if (p->dropped)
			ia_json_u64(o, "dropped", p->dropped);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
