/*
 * gap_children.c — the subprocesses the main process ran while its GPU
 * idled (gaps.h): nvidia-smi run for a log line every few steps, a shell, a
 * git call.  A main thread that waits for one blocks reading its output
 * (poll, read) or for its exit (wait4), which by the system call alone
 * reads like a socket or a queue; their lifetimes over the gaps say which.
 * Children are the per_process role "child" (not a worker, not a compiler)
 * during whose whole life the main process made no CUDA call, and that
 * ended inside a gap: the main thread did nothing but wait for them (the
 * GPU drains what was queued before they started, then idles until they
 * end).  A child that lives beside the loop — a producer writing to a pipe,
 * multiprocessing's resource tracker, a logging process — sees calls made.
 */
#include "measure/gaps.h"
#include "base/json_out.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

/* Gap time inside [a, b); with alive, each gap's part of it added to alive[gap]. */
static uint64_t in_gaps(const struct ia_gaps *g, uint64_t a, uint64_t b, uint64_t *alive)
{
	uint64_t t = 0;
	for (size_t i = ia_gap_ending_after(g, a); i < g->n && g->g[i].start < b; i++) {
		uint64_t ov = ia_overlap(a, b, g->g[i].start, g->g[i].end);
		t += ov;
		if (alive)
			alive[i] += ov;
	}
	return t;
}

static int by_start(const void *x, const void *y)
{
	const struct ia_span *a = x, *b = y;
	return a->a < b->a ? -1 : a->a > b->a;
}

static int by_alive(const void *x, const void *y)
{
	const struct ia_gap_child *a = x, *b = y;
	if (a->alive_ns != b->alive_ns)
		return a->alive_ns > b->alive_ns ? -1 : 1;
	return strcmp(a->comm, b->comm);
}

/* Whether the main process made a call in [a, b): its calls in time order. */
static int called_within(const struct ia_trace *t, const struct ia_gaps *g, uint64_t a, uint64_t b)
{
	size_t k = ia_gaps_first_call_at(t, g, a);
	return k < g->nmain_calls && t->calls[g->main_calls[k]].start < b;
}

/* Its time in the gaps when it was waited for (above), else 0. */
static uint64_t waited_for(const struct ia_trace *t, const struct ia_proc *pr, const struct ia_gaps *g)
{
	if (!pr->start_ns || pr->exit_ns <= pr->start_ns || called_within(t, g, pr->start_ns, pr->exit_ns))
		return 0;
	size_t k = ia_gap_ending_after(g, pr->exit_ns);
	if (k == g->n || g->g[k].start > pr->exit_ns)
		return 0;
	return in_gaps(g, pr->start_ns, pr->exit_ns, NULL);
}

/* The children's threads on-CPU in the gaps, and the busiest child. */
static int children_busy(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g)
{
	uint64_t *w = ia_gap_windows(g), *by_proc = calloc(t->nprocs + 1, sizeof *by_proc);
	if (!w || !by_proc) {
		free(w);
		free(by_proc);
		return -1;
	}
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_proc_stats *ps = ia_pp_of_proc(pp, t->threads[th].proc);
		if (!ps || ps->role != IA_ROLE_CHILD || ia_thread_is_tracer(&t->threads[th]))
			continue;
		uint64_t on = ia_thread_cpu_windows(t, (uint32_t)th, w, g->n, &g->children_runq_ns);
		by_proc[t->threads[th].proc] += on;
		g->children_oncpu_ns += on;
	}
	for (size_t p = 0; p < t->nprocs; p++)
		if (by_proc[p] > g->child_top_ns) {
			g->child_top_ns = by_proc[p];
			g->child_top = (int)p;
		}
	free(w);
	free(by_proc);
	return 0;
}

int ia_gap_children_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g)
{
	g->child_top = -1;
	if (!g->n || !pp->nchildren)
		return 0;
	if (children_busy(t, pp, g) < 0)
		return -1;
	struct ia_span *s = malloc(pp->nchildren * sizeof *s);
	struct ia_gap_child *names = calloc(pp->nchildren, sizeof *names);
	uint64_t *alive = calloc(g->n, sizeof *alive);   /* each gap's time with a child waited for alive */
	if (!s || !names || !alive) {
		free(s);
		free(names);
		free(alive);
		return -1;
	}
	size_t n = 0, nnames = 0;
	for (size_t i = 0; i < pp->n && n < pp->nchildren; i++) {
		if (pp->p[i].role != IA_ROLE_CHILD)
			continue;
		const struct ia_proc *pr = &t->procs[pp->p[i].proc];
		uint64_t alive = waited_for(t, pr, g);
		if (!alive)
			continue;
		s[n++] = (struct ia_span){ pr->start_ns, pr->exit_ns };
		size_t k = 0;
		while (k < nnames && strcmp(names[k].comm, pr->comm))
			k++;
		if (k == nnames) {
			snprintf(names[k].comm, sizeof names[k].comm, "%s", pr->comm);
			names[nnames++].proc = pp->p[i].proc;
		}
		names[k].count++;
		names[k].alive_ns += alive;
	}
	/* the union: children that overlap one another count once */
	qsort(s, n, sizeof *s, by_start);
	uint64_t a = 0, b = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && s[i].a <= b) {
			if (s[i].b > b)
				b = s[i].b;
			continue;
		}
		g->children_alive_ns += in_gaps(g, a, b, alive);
		a = s[i].a;
		b = s[i].b;
	}
	g->children_alive_ns += in_gaps(g, a, b, alive);
	qsort(names, nnames, sizeof *names, by_alive);
	g->nchildren = nnames < IA_GAP_CHILD_NAMES ? nnames : IA_GAP_CHILD_NAMES;
	memcpy(g->children, names, g->nchildren * sizeof *names);
	/* the main thread blocked while one lived waited for it (reading its
	 * output: c34's nvidia-smi, in poll): not for the step's input */
	for (size_t i = 0; i < g->n; i++) {
		struct ia_gap *x = &g->g[i];
		uint64_t blk = x->main_off_ns - x->main_runq_ns, c = alive[i] < blk ? alive[i] : blk;
		if (c > x->main_other_wait_ns)
			x->main_other_wait_ns = c;
	}
	free(alive);
	free(s);
	free(names);
	return 0;
}

char *ia_gap_children_text(const struct ia_gaps *g, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < g->nchildren && k < cap; i++) {
		int w = snprintf(buf + k, cap - k, "%s%s (%u run%s)", i ? ", " : "", g->children[i].comm,
				 g->children[i].count, g->children[i].count == 1 ? "" : "s");
		if (w < 0)
			break;
		k += (size_t)w;
	}
	return buf;
}

void ia_gap_children_json(cJSON *parent, const struct ia_trace *t, const struct ia_gaps *g)
{
	if (!g->nchildren)
		return;
	ia_json_u64(parent, "children_alive_ns", g->children_alive_ns);
	cJSON *a = cJSON_AddArrayToObject(parent, "children_in_gaps");
	for (size_t i = 0; a && i < g->nchildren; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o))
			break;
		ia_json_str(o, "comm", g->children[i].comm);
		ia_json_u64(o, "count", g->children[i].count);
		ia_json_u64(o, "alive_ns", g->children[i].alive_ns);
		ia_json_str(o, "cmdline", t->procs[g->children[i].proc].cmdline);
	}
}
