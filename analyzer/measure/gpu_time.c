/*
 * gpu_time.c — certainly-busy and certainly-idle GPU time (gpu_time.h).
 */
#include "measure/gpu_time.h"
#include "measure/gpu_time_internal.h"
#include "load/db.h"
#include "measure/calls.h"
#include "base/util.h"

#include <ingero/event.h>
#include <ingero/schema.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct stream_acc *stream_of(struct acc *a, int pid, uint32_t key)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].pid == pid && a->s[i].key == key)
			return &a->s[i];
	if (ia_grow((void **)&a->s, &a->cap, a->n + 1, sizeof *a->s) < 0) {
		a->oom = 1;
		return NULL;
	}
	struct stream_acc *s = &a->s[a->n++];
	memset(s, 0, sizeof *s);
	s->pid = pid;
	s->key = key;
	return s;
}

/* A copy whose call returns only once the transfer is (nearly) done: from
 * or to pageable memory the driver stages it through its own buffer while
 * the host waits, and a copy to the host returns when it is there (CUDA's
 * API sync notes).  Its call brackets its GPU time. */
static int host_sync_copy(const struct ia_call *c)
{
	if (ingero_api_class(c->api) != INGERO_CLASS_COPY || (c->dir != INGERO_DIR_HTOD && c->dir != INGERO_DIR_DTOH))
		return 0;
	return (c->flags & INGERO_FLAG_HOST_PAGEABLE) || (c->dir == INGERO_DIR_DTOH && !(c->flags & INGERO_FLAG_HOST_PINNED));
}

static enum ia_link link_of(const struct ia_call *c)
{
	unsigned cls = ingero_api_class(c->api);
	if (cls == INGERO_CLASS_MEMSET)
		return IA_LINK_MEMSET;
	if (cls != INGERO_CLASS_COPY)
		return IA_LINK_NONE;
	if (c->dir == INGERO_DIR_DTOD)
		return IA_LINK_DEVICE;
	if (c->dir != INGERO_DIR_HTOD && c->dir != INGERO_DIR_DTOH)
		return IA_LINK_NONE;
	if (c->flags & INGERO_FLAG_HOST_PINNED)
		return IA_LINK_HOST_PINNED;
	/* (memory the library could not tell: neither link's pace) */
	return c->flags & INGERO_FLAG_HOST_PAGEABLE ? IA_LINK_HOST_PAGEABLE : IA_LINK_NONE;
}

static void add_sub(struct acc *a, struct stream_acc *s, const struct ia_call *c)
{
	if (ia_grow((void **)&s->sub, &s->csub, s->nsub + 1, sizeof *s->sub) < 0) {
		a->oom = 1;
		return;
	}
	enum ia_link link = link_of(c);
	uint64_t kib = link != IA_LINK_NONE ? c->bytes >> 10 : 0;
	uint32_t after = s->nsub ? s->sub[s->nsub - 1].work : 0;
	s->sub[s->nsub++] = (struct sub){ .a = c->start, .b = c->start + c->dur, .work = c->work, .func = c->func,
					  .after = after,
					  .launch = ingero_api_class(c->api) == INGERO_CLASS_LAUNCH,
					  .host_sync = host_sync_copy(c) != 0, .after_wait = s->wait_pending != 0,
					  .link = link, .kib = kib > UINT32_MAX ? UINT32_MAX : (uint32_t)kib };
	s->wait_pending = 0;
}

static void add_cpt(struct acc *a, struct stream_acc *s, uint64_t r, uint64_t g, int exact, int mark)
{
	if (ia_grow((void **)&s->cp, &s->ccp, s->ncp + 1, sizeof *s->cp) < 0) {
		a->oom = 1;
		return;
	}
	s->cp[s->ncp++] = (struct cpt){ r, g, exact, mark };
}

void ia_gt_add_busy(struct acc *a, uint64_t x, uint64_t y)
{
	if (y <= x)
		return;
	if (ia_grow((void **)&a->busy, &a->cbusy, a->nbusy + 1, sizeof *a->busy) < 0) {
		a->oom = 1;
		return;
	}
	a->busy[a->nbusy++] = (struct ia_span){ x, y };
}

/* Waits that cover one stream (the call's own), not the whole process. */
static int stream_wait(unsigned api)
{
	return api == INGERO_API_CUDA_STREAM_SYNCHRONIZE || api == INGERO_API_CUDA_STREAM_SYNCHRONIZE_PTSZ ||
	       api == INGERO_API_CU_STREAM_SYNCHRONIZE || api == INGERO_API_CU_STREAM_SYNCHRONIZE_PTSZ;
}

/* An event's stream is not known from the call: it says only that some work
 * was pending while it waited. */
static int event_wait(unsigned api)
{
	return api == INGERO_API_CUDA_EVENT_SYNCHRONIZE || api == INGERO_API_CU_EVENT_SYNCHRONIZE;
}

/* A call that holds the driver while it works on the host: a free that
 * waits (unmapping), an allocation, a copy staged through the driver's
 * buffer.  Another thread's cuEventRecord waits for it to return. */
static int holds_driver(const struct ia_call *c)
{
	return ia_call_is_waiting_free(c) || ingero_api_class(c->api) == INGERO_CLASS_ALLOC || host_sync_copy(c);
}

/* A mark recorded (by the watcher) while the process was inside such a
 * call went into the stream only once the call returned: its time was
 * taken before its cuEventRecord, which waited.  Read as recorded then,
 * its wait would say "busy" for time the GPU may have been idle in (c13:
 * empty_cache's frees; c16: the pageable copies).  held: the process's
 * spans of such calls, sorted by start, merged. */
static void marks_after_held(struct acc *a, int pid, const struct ia_span *held, size_t nheld)
{
	for (size_t i = 0; nheld && i < a->n; i++) {
		struct stream_acc *s = &a->s[i];
		if (s->pid != pid)
			continue;
		for (size_t k = 0; k < s->ncp; k++) {
			struct cpt *c = &s->cp[k];
			if (!c->mark)
				continue;
			size_t lo = 0, hi = nheld;   /* the last span starting before r */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (held[mid].a < c->r)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo && held[lo - 1].b > c->r) {
				c->r = held[lo - 1].b;
				if (c->g < c->r)
					c->g = c->r;
			}
		}
	}
}

/* One process's calls: its streams' submissions and host waits. */
static void collect_calls(const struct ia_trace *t, uint32_t proc, struct acc *a)
{
	size_t n;
	uint32_t *idx = ia_proc_calls(t, proc, &n);
	if (!idx) {
		a->oom = 1;
		return;
	}
	int pid = t->procs[proc].pid;
	size_t first_stream = a->n;
	struct ia_span *held = NULL;
	size_t nheld = 0, cheld = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ia_call *c = &t->calls[idx[i]];
		uint64_t end = c->start + c->dur;
		if (holds_driver(c) && c->dur) {
			if (ia_grow((void **)&held, &cheld, nheld + 1, sizeof *held) < 0)
				a->oom = 1;
			else
				held[nheld++] = (struct ia_span){ c->start, end };
		}
		/* a copy to the host returns once it is done (CUDA's API sync
		 * notes): it waits for its stream like a stream sync */
		if (c->dir == INGERO_DIR_DTOH && host_sync_copy(c)) {
			struct stream_acc *s = stream_of(a, pid, c->stream);
			int waited = c->dur > IA_SYNC_FLOOR_NS;
			if (waited)
				ia_gt_add_busy(a, c->start, end);
			if (s) {
				add_sub(a, s, c);
				add_cpt(a, s, end, end, 0, 0);
			}
			continue;
		}
		if (ingero_api_class(c->api) == INGERO_CLASS_WAIT) {   /* the next piece waits for another stream */
			struct stream_acc *s = stream_of(a, pid, c->stream);
			if (s)
				s->wait_pending = 1;
			continue;
		}
		if (ia_api_queues_work(c->api) && !ia_api_completes_work(c->api)) {
			struct stream_acc *s = stream_of(a, pid, c->stream);
			if (s)
				add_sub(a, s, c);
			continue;
		}
		if (!ia_call_completes_work(c))
			continue;
		/* a free's own work (unmapping, ~100 us for a large block) is
		 * in its time too: it says the queue was done by its end, not
		 * that the GPU was busy until then (c13: empty_cache's 160 us
		 * frees read as busy hid the idle they open) */
		int waited = c->dur > IA_SYNC_FLOOR_NS && !ingero_api_free_waits(c->api);
		if (waited)
			ia_gt_add_busy(a, c->start, end - IA_SYNC_FLOOR_NS);
		if (event_wait(c->api))
			continue;
		if (stream_wait(c->api)) {
			struct stream_acc *s = stream_of(a, pid, c->stream);
			if (s)
				add_cpt(a, s, c->start, end, waited, 0);
		} else {
			/* device-wide: every stream of this process seen so far; a
			 * stream first used later starts empty anyway */
			for (size_t k = first_stream; k < a->n; k++)
				add_cpt(a, &a->s[k], c->start, end, waited, 0);
		}
	}
	marks_after_held(a, pid, held, ia_spans_merge(held, nheld, 0, UINT64_MAX));
	free(held);
	free(idx);
}

static int collect_marks(const struct ia_trace *t, uint64_t from, uint64_t to, struct acc *a, size_t *nmarks,
			 char *err, size_t errlen)
{
	int has = ia_db_has_table(t->db, "gpu_marks");
	if (has <= 0)
		return has < 0 ? (snprintf(err, errlen, "%s: cannot read gpu_marks", ia_db_path()), -1) : 0;
	sqlite3_stmt *q = ia_db_prepare(t->db,
		"SELECT pid, stream, recorded_ns, done_ns, flags FROM gpu_marks WHERE done_ns >= ?1 AND recorded_ns < ?2",
		err, errlen);
	if (!q)
		return -1;
	sqlite3_bind_int64(q, 1, (sqlite3_int64)from);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)to);
	int rc;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(q, 0);
		int pi = ia_proc_index(t, pid);
		if (pi < 0 || !t->procs[pi].selected)
			continue;
		struct stream_acc *s = stream_of(a, pid, ia_stream_key((uint64_t)sqlite3_column_int64(q, 1)));
		if (!s)
			break;
		/* a mark without a GPU timestamp says only that the work was
		 * done by the time the library saw it: a bound, like a host call
		 * that did not wait — it neither times work nor says "busy" */
		int timed = !(sqlite3_column_int(q, 4) & INGERO_GPU_MARK_COARSE);
		add_cpt(a, s, (uint64_t)sqlite3_column_int64(q, 2), (uint64_t)sqlite3_column_int64(q, 3), timed, timed);
		s->nmarks++;
		(*nmarks)++;
	}
	int bad = ia_db_done(q, rc, err, errlen);
	sqlite3_finalize(q);
	return bad;
}

static int cmp_span(const void *x, const void *y)
{
	const struct ia_span *a = x, *b = y;
	return (a->a > b->a) - (a->a < b->a);
}

static int cmp_cpt(const void *x, const void *y)
{
	const struct cpt *a = x, *b = y;
	return (a->r > b->r) - (a->r < b->r);
}

/* Sorts and merges spans in place, clipped to [lo, hi); returns the count. */
size_t ia_spans_merge(struct ia_span *s, size_t n, uint64_t lo, uint64_t hi)
{
	if (n)
		qsort(s, n, sizeof *s, cmp_span);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = s[i].a < lo ? lo : s[i].a, y = s[i].b > hi ? hi : s[i].b;
		if (y <= x)
			continue;
		if (w && x <= s[w - 1].b) {
			if (y > s[w - 1].b)
				s[w - 1].b = y;
		} else {
			s[w++] = (struct ia_span){ x, y };
		}
	}
	return w;
}

/* First submission (by start) that ended after r: the earliest work that
 * may have been queued behind the completion point. */
size_t ia_gt_first_after(const struct stream_acc *s, uint64_t r)
{
	size_t lo = 0, hi = s->nsub;
	while (lo < hi) {   /* starts are sorted, ends nearly: search starts, then look back */
		size_t mid = (lo + hi) / 2;
		if (s->sub[mid].a < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && s->sub[lo - 1].b > r)
		lo--;
	return lo;
}

/* One stream: its certainly-idle spans (returned, merged) and its
 * certainly-busy spans (added to a). */
static struct ia_span *stream_spans(struct acc *a, struct stream_acc *s, uint64_t lo, uint64_t hi, size_t *nidle)
{
	*nidle = 0;
	struct ia_span *idle = malloc((s->ncp + 2) * sizeof *idle);
	if (!idle) {
		a->oom = 1;
		return NULL;
	}
	size_t n = 0;
	idle[n++] = (struct ia_span){ lo, s->nsub ? s->sub[0].a : hi };
	for (size_t i = 0; i < s->ncp; i++) {
		const struct cpt *c = &s->cp[i];
		size_t k = ia_gt_first_after(s, c->r);
		uint64_t q = k < s->nsub ? s->sub[k].a : hi;
		if (q > c->g)
			idle[n++] = (struct ia_span){ c->g, q };
		if (!c->exact || c->g <= c->r + EMPTY_NS)
			continue;
		/* the work before the mark was still running at r: it ran from
		 * the last time some was queued until g */
		uint64_t from = c->r;
		if (k > 0 && s->sub[k - 1].b < from)
			from = s->sub[k - 1].b;
		ia_gt_add_busy(a, from, c->g);
	}
	*nidle = ia_spans_merge(idle, n, lo, hi);
	return idle;
}

/* a ∩ b, both sorted and disjoint, into out (room for na + nb). */
static size_t intersect(const struct ia_span *x, size_t nx, const struct ia_span *y, size_t ny, struct ia_span *out)
{
	size_t i = 0, j = 0, n = 0;
	while (i < nx && j < ny) {
		uint64_t lo = x[i].a > y[j].a ? x[i].a : y[j].a, hi = x[i].b < y[j].b ? x[i].b : y[j].b;
		if (hi > lo)
			out[n++] = (struct ia_span){ lo, hi };
		if (x[i].b < y[j].b)
			i++;
		else
			j++;
	}
	return n;
}

uint64_t ia_spans_within(const struct ia_span *s, size_t n, uint64_t a, uint64_t b)
{
	/* sorted and disjoint: from the first span ending after a */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t t = 0;
	for (size_t i = lo; i < n && s[i].a < b; i++)
		t += ia_overlap(s[i].a, s[i].b, a, b);
	return t;
}

uint64_t ia_spans_within_windows(const struct ia_span *s, size_t n, const uint64_t *w, size_t nw)
{
	uint64_t t = 0;
	for (size_t k = 0; k < nw; k++)
		t += ia_spans_within(s, n, w[2 * k], w[2 * k + 1]);
	return t;
}

void ia_gt_acc_free(struct acc *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->s[i].sub);
		free(a->s[i].cp);
	}
	free(a->s);
	free(a->busy);
	free(a->smp);
	free(a->smp_sum);
	free(a->typical);
	free(a->rate);
	for (size_t i = 0; i < a->nkt; i++)
		free(a->kt[i].d);
	free(a->tp);
	free(a->kt);
	ia_map_free(&a->kmap);
}

static int out_of_memory(struct acc *a, struct ia_gpu_time *g, char *err, size_t errlen)
{
	ia_gt_acc_free(a);
	ia_gpu_time_free(g);
	snprintf(err, errlen, "out of memory");
	return -1;
}

int ia_gpu_time_compute(const struct ia_trace *t, uint64_t win_start, uint64_t win_end, const struct ia_phases *ph,
			struct ia_gpu_time *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->win_start = win_start;
	g->win_end = win_end;
	if (win_end <= win_start)
		return 0;
	struct acc a = { .ph = ph };
	if (collect_marks(t, win_start, win_end, &a, &g->nmarks, err, errlen) < 0) {
		ia_gt_acc_free(&a);
		return -1;
	}
	if (!g->nmarks) {   /* nothing measured: the host estimate stands */
		ia_gt_acc_free(&a);
		return 0;
	}
	for (size_t p = 0; p < t->nprocs && !a.oom; p++)
		if (t->procs[p].selected && t->procs[p].ncalls)
			collect_calls(t, (uint32_t)p, &a);
	/* completion points in order; the work timed alone, every stream's
	 * before any is estimated (a kernel timed on one stream stands in for
	 * the same kernel on another) */
	for (size_t i = 0; i < a.n && !a.oom; i++)
		if (a.s[i].ncp)
			qsort(a.s[i].cp, a.s[i].ncp, sizeof *a.s[i].cp, cmp_cpt);
	ia_gt_waits_met(&a);
	for (size_t i = 0; i < a.n && !a.oom; i++)
		ia_gt_time_alone(&a, &a.s[i]);
	ia_gt_samples_ready(&a);
	ia_gt_mark_main(&a);
	g->ntimed = a.ntimed;
	g->timed = a.tp;   /* (its owner now) */
	g->ntimed_pieces = a.ntp;
	a.tp = NULL;
	size_t cest[3] = { 0 };
	struct ia_span *idle = NULL, *tmp = NULL;
	size_t nidle = 0;
	for (size_t i = 0; i < a.n && !a.oom; i++) {
		struct stream_acc *s = &a.s[i];
		if (!s->nsub)
			continue;   /* marks without work in the window: nothing to say */
		g->nstreams++;
		size_t ns;
		struct ia_span *si = stream_spans(&a, s, win_start, win_end, &ns);
		if (!si)
			break;
		ia_gt_alike_find(&a, s);
		for (int q = 0; q < 3; q++)
			ia_gt_estimate(&a, s, q, win_start, win_end, si, ns, &g->est[q], &g->nest[q], &cest[q]);
		ia_gt_coverage(s, win_start, win_end, &g->nwork, &g->nwork_alike);
		if (!s->nmarks) {
			/* a stream the library could not mark (a fork child's, the
			 * per-thread default stream, marks off in that process): its
			 * waits count as busy, but its silence proves nothing, so it
			 * stays out of the idle intersection (said: nunmarked) */
			g->nunmarked++;
			free(si);
			continue;
		}
		if (!idle) {
			idle = si;
			nidle = ns;
			continue;
		}
		tmp = malloc((nidle + ns + 1) * sizeof *tmp);
		if (!tmp) {
			free(si);
			a.oom = 1;
			break;
		}
		nidle = intersect(idle, nidle, si, ns, tmp);
		free(idle);
		free(si);
		idle = tmp;
	}
	g->idle = idle;   /* g owns the spans from here (ia_gpu_time_free) */
	g->nidle = nidle;
	if (a.oom)
		return out_of_memory(&a, g, err, errlen);
	g->nbusy = ia_spans_merge(a.busy, a.nbusy, win_start, win_end);
	g->busy = a.busy;
	a.busy = NULL;
	/* each estimate holds what is certainly busy */
	for (int q = 0; q < 3; q++) {
		if (ia_grow((void **)&g->est[q], &cest[q], g->nest[q] + g->nbusy, sizeof *g->est[q]) < 0)
			return out_of_memory(&a, g, err, errlen);
		for (size_t k = 0; k < g->nbusy; k++)
			g->est[q][g->nest[q]++] = g->busy[k];
		g->nest[q] = ia_spans_merge(g->est[q], g->nest[q], win_start, win_end);
	}
	g->busy_ns = ia_spans_within(g->busy, g->nbusy, win_start, win_end);
	g->idle_low_ns = ia_spans_within(g->idle, g->nidle, win_start, win_end);
	uint64_t win = win_end - win_start;
	g->idle_high_ns = win > g->busy_ns ? win - g->busy_ns : 0;
	if (g->idle_high_ns < g->idle_low_ns)
		g->idle_high_ns = g->idle_low_ns;
	g->measured = g->nstreams > 0;
	if (ia_gt_kernels_name(t, &a, g) < 0)
		return out_of_memory(&a, g, err, errlen);
	ia_gt_acc_free(&a);
	return 0;
}

void ia_gpu_time_free(struct ia_gpu_time *g)
{
	free(g->busy);
	free(g->idle);
	for (int q = 0; q < 3; q++)
		free(g->est[q]);
	for (size_t i = 0; i < g->nkernels; i++)
		free(g->kernels[i].name);
	free(g->kernels);
	for (size_t i = 0; i < g->nall; i++)
		free(g->all[i].k.name);
	free(g->all);
	free(g->timed);
	memset(g, 0, sizeof *g);
}
