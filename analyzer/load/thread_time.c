/*
 * thread_time.c — what a loaded thread did over a stretch of time (the
 * queries of trace.h every measure asks): off-CPU and run-queue time in a
 * window, on-CPU time over a set of windows, its span of evidence.  Each is
 * a binary search into the thread's time-ordered off-CPU index, then a walk
 * over the intervals the window touches.
 */
#include "load/trace.h"

#include "base/util.h"

#include <stdint.h>
#include <string.h>

size_t ia_thread_off_lower(const struct ia_trace *t, uint32_t th, uint64_t a)
{
	const struct ia_thread *thr = &t->threads[th];
	const uint32_t *ix = t->off_by_th + thr->off_first;
	size_t lo = 0, hi = thr->off_n;
	/* A thread's intervals are disjoint and sorted by start, hence by end:
	 * find the first whose end is after a. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->offs[ix[mid]].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ia_off *ia_thread_off_at(const struct ia_trace *t, uint32_t th, uint64_t start)
{
	size_t i = ia_thread_off_lower(t, th, start);
	const struct ia_thread *x = &t->threads[th];
	const struct ia_off *o = i < x->off_n ? &t->offs[t->off_by_th[x->off_first + i]] : NULL;
	return o && o->start == start ? o : NULL;
}

void ia_thread_off_in(const struct ia_trace *t, uint32_t th, uint64_t a, uint64_t b,
		      uint64_t *off_ns, uint64_t *runq_ns, uint64_t *nswitch)
{
	const struct ia_thread *thr = &t->threads[th];
	const uint32_t *ix = t->off_by_th + thr->off_first;
	uint64_t off = 0, rq = 0, n = 0;
	for (size_t i = ia_thread_off_lower(t, th, a); i < thr->off_n; i++) {
		const struct ia_off *o = &t->offs[ix[i]];
		if (o->start >= b)
			break;
		off += ia_overlap(o->start, o->end, a, b);
		rq += ia_overlap(o->end - o->runq, o->end, a, b);
		n++;
	}
	if (off_ns)
		*off_ns = off;
	if (runq_ns)
		*runq_ns = rq;
	if (nswitch)
		*nswitch = n;
}

int ia_thread_is_tracer(const struct ia_thread *x)
{
	return !strncmp(x->comm, "ingero-", 7) || !strncmp(x->comm, "nng:", 4);
}

void ia_thread_span(const struct ia_trace *t, uint32_t th, uint64_t *a, uint64_t *b)
{
	const struct ia_thread *x = &t->threads[th];
	const struct ia_proc *p = &t->procs[x->proc];
	uint64_t s = x->first_ns, e = x->last_ns;
	if (s == UINT64_MAX || e == 0) {
		*a = *b = 0;
		return;
	}
	if (x->tid == (uint32_t)p->pid && p->start_ns && p->start_ns < s)
		s = p->start_ns;
	if (p->exit_ns && p->exit_ns > e && x->tid == (uint32_t)p->pid)
		e = p->exit_ns;
	if (s < t->from)
		s = t->from;
	if (e > t->to)
		e = t->to;
	if (e < s)
		e = s;
	*a = s;
	*b = e;
}

uint64_t ia_thread_oncpu_windows(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n)
{
	return ia_thread_cpu_windows(t, th, w, n, NULL);
}

uint64_t ia_thread_cpu_windows(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n, uint64_t *runq)
{
	uint64_t a, b;
	ia_thread_span(t, th, &a, &b);
	if (a == b)
		return 0;
	const struct ia_thread *x = &t->threads[th];
	const uint32_t *ix = t->off_by_th + x->off_first;
	size_t j = 0;
	uint64_t on = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t w0 = w[2 * i], w1 = w[2 * i + 1];
		uint64_t live = ia_overlap(w0, w1, a, b);
		if (!live)
			continue;
		while (j < x->off_n && t->offs[ix[j]].end <= w0)
			j++;
		uint64_t off = 0, l0 = w0 > a ? w0 : a, l1 = w1 < b ? w1 : b;
		for (size_t k = j; k < x->off_n && t->offs[ix[k]].start < w1; k++) {
			const struct ia_off *o = &t->offs[ix[k]];
			off += ia_overlap(o->start, o->end, l0, l1);
			if (runq)
				*runq += ia_overlap(o->end - o->runq, o->end, l0, l1);
		}
		on += live > off ? live - off : 0;
	}
	return on;
}
