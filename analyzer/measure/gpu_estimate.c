/*
 * gpu_estimate.c — the GPU time of work that was not timed, from alike work
 * that was (gpu_time.h: the estimate).
 *
 * The marks bound the GPU's idle time, but where small kernels are queued
 * one by one faster than the library marks them (a launch-bound loop), a
 * stretch between two completions holds many kernels whose run times the
 * bounds cannot tell apart.  Some kernels were timed alone, though: a mark
 * right behind one piece of work queued on an empty stream says how long
 * that piece took, from the end of its call to the mark's completion (the
 * launch latency included); so does one behind a piece queued while the
 * work before it still ran, from that work's end, when a mark right behind
 * it measured that (the library marks runs of consecutive launches: where
 * the GPU lags, this is how a kernel is timed at all).  A training loop
 * queues the same kernels with the same geometry every step (ia_call.work),
 * so their times stand in for the untimed ones'.  Each stream is then
 * replayed: its work runs one piece after another, from when it was queued or when the piece before ended,
 * held to the measured completions (work queued before a mark is done when
 * the mark is; a mark that waited says the stream was busy until then) and
 * never inside the stream's certainly-idle spans.  Work of a kind never
 * timed alone takes no time in the short replay and all the time it can in
 * the long one, so it widens the range instead of guessing.
 */
#include "measure/gpu_time_internal.h"
#include "measure/phases.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>

/* an unknown piece in the long replay: until the next completion */
#define FOREVER (UINT64_MAX / 4)
/* A mark recorded this soon after the call that queued the piece times it
 * (the calling thread's marks: well under a microsecond later).  A mark
 * recorded later that found the stream empty only bounds it: the piece may
 * have ended long before (the thread lost its CPU in between, or it was the
 * watcher's mark once the stream went quiet). */
#define ALONE_LAG_NS 5000ull
/* Times of alike work stand in only when there are this many (a kernel's
 * first launch, which loads it, must not be the only say). */
#define MIN_ALIKE 3
/* A copy this large moves at its link's pace (its fixed cost a small part
 * of its time): copies of a size never timed alone are given their bytes at
 * the pace of the large copies over their link that were.  Else a copy of
 * 7 MiB took the median of the process's pieces, or of its smaller copies
 * (c52: gloo's copies of the gradients back to the host, 4.8 us each). */
#define RATED_MIN_KIB 1024
/* Work in its place: the same work after the same work before it on its
 * stream — one kernel with one geometry may run more than once a step at
 * different lengths (c13: one twice a step, ~124 and ~232 us), and a
 * median over both is right for neither; where its place has this many
 * times, they stand in, else the work's. */
#define MIN_IN_PLACE 8

/* The key of a piece of work in its place (never 0). */
static uint32_t in_place(const struct sub *w)
{
	uint32_t k = w->work * 2654435761u ^ (w->after * 40503u + 0x5bd1e995u);
	return k ? k : 1;
}

static void add_sample(struct acc *a, int pid, const struct sub *w, uint64_t ns)
{
	if (ia_grow((void **)&a->smp, &a->csmp, a->nsmp + 3, sizeof *a->smp) < 0) {
		a->oom = 1;
		return;
	}
	a->smp[a->nsmp++] = (struct sample){ pid, 0, w->link, w->work, w->kib, ns };
	a->smp[a->nsmp++] = (struct sample){ pid, 1, w->link, w->func, w->kib, ns };
	a->smp[a->nsmp++] = (struct sample){ pid, 2, w->link, in_place(w), w->kib, ns };
	a->ntimed++;
}

/* When the one piece of work between two completion points began on the
 * GPU: when it was queued, if the stream was empty by then; else when the
 * work before it ended, if the previous point measured that (a mark or a
 * host wait that lasted, with nothing queued between it and the piece: the
 * calling threads' runs of marks on back-to-back launches); else not
 * known (0). */
static uint64_t piece_start(const struct cpt *prev, const struct sub *w)
{
	if (!prev || prev->g <= w->a)
		return w->b;
	if (!prev->exact || w->a < prev->r)
		return 0;
	return prev->g > w->b ? prev->g : w->b;
}

/* Whether stream s may still have had work at T: the last piece queued
 * before T was not yet done by then (no completion after it says when:
 * maybe). */
static int busy_at(const struct stream_acc *s, uint64_t T)
{
	size_t lo = 0, hi = s->nsub;
	while (lo < hi) {   /* pieces queued before T */
		size_t mid = (lo + hi) / 2;
		if (s->sub[mid].a < T)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	const struct sub *last = &s->sub[lo - 1];
	if (last->host_sync && last->b <= T)
		return 0;
	lo = 0, hi = s->ncp;
	while (lo < hi) {   /* the first completion that covers it */
		size_t mid = (lo + hi) / 2;
		if (s->cp[mid].r < last->b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == s->ncp || s->cp[lo].g > T;
}

void ia_gt_waits_met(struct acc *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct stream_acc *s = &a->s[i];
		for (size_t k = 0; k < s->nsub; k++) {
			struct sub *w = &s->sub[k];
			if (!w->after_wait)
				continue;
			int pending = 0;
			for (size_t j = 0; j < a->n && !pending; j++)
				pending = j != i && a->s[j].pid == s->pid && busy_at(&a->s[j], w->b);
			w->after_wait = pending;
		}
	}
}

void ia_gt_time_alone(struct acc *a, const struct stream_acc *s)
{
	for (size_t i = 0; i < s->ncp; i++) {
		const struct cpt *c = &s->cp[i], *prev = i ? &s->cp[i - 1] : NULL;
		size_t k0 = prev ? ia_gt_first_after(s, prev->r) : 0;
		size_t k1 = ia_gt_first_after(s, c->r);
		/* one piece of work since the previous completion: it ran alone
		 * on the stream from its start (piece_start) to the mark, when
		 * the mark came right behind it or had to wait for it */
		const struct sub *w = k1 == k0 + 1 ? &s->sub[k0] : NULL;
		/* a call that queued work and was still running when the mark
		 * was recorded (a pageable copy, which holds the stream while
		 * it stages) may be ahead of the mark or behind it: the mark
		 * was recorded before its cuEventRecord, which may have waited
		 * for that call; the piece before it is then not alone */
		int straddled = k1 < s->nsub && s->sub[k1].a < c->r;
		if (!w || w->after_wait || straddled || !c->mark || !w->work || w->b > c->r ||
		    (c->r - w->b > ALONE_LAG_NS && c->g <= c->r + EMPTY_NS))
			continue;
		uint64_t from = piece_start(prev, w);
		if (from)
			add_sample(a, s->pid, w, c->g > from ? c->g - from : 0);
		if (from && c->g > from && ia_grow((void **)&a->tp, &a->ctp, a->ntp + 1, sizeof *a->tp) == 0)
			a->tp[a->ntp++] = (struct ia_timed_piece){ from, c->g, s->pid, s->key, w->func, w->launch };
	}
}

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->pid != b->pid)
		return (a->pid > b->pid) - (a->pid < b->pid);
	if (a->by_func != b->by_func)
		return a->by_func - b->by_func;
	if (a->key != b->key)
		return (a->key > b->key) - (a->key < b->key);
	return (a->ns > b->ns) - (a->ns < b->ns);
}

static int cmp_ns(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Per process and link, the pace of its large copies timed alone (each
 * piece once: by_func 0).  tmp: room for a->nsmp values. */
static void copy_rates(struct acc *a, uint64_t *tmp)
{
	double *r = (double *)tmp;   /* (a uint64_t and a double are the same size) */
	for (size_t i = 0; i < a->nsmp;) {
		int pid = a->smp[i].pid;
		size_t end = i;
		while (end < a->nsmp && a->smp[end].pid == pid)
			end++;
		for (unsigned link = IA_LINK_HOST_PINNED; link <= IA_LINK_MEMSET; link++) {
			size_t n = 0;
			for (size_t k = i; k < end && !a->smp[k].by_func; k++)
				if (a->smp[k].link == link && a->smp[k].kib >= RATED_MIN_KIB)
					r[n++] = (double)a->smp[k].ns / a->smp[k].kib;
			if (n < MIN_ALIKE)
				continue;
			qsort(r, n, sizeof *r, cmp_double);
			size_t cap = a->nrate;
			if (ia_grow((void **)&a->rate, &cap, a->nrate + 1, sizeof *a->rate) < 0) {
				a->oom = 1;
				return;
			}
			a->rate[a->nrate++] = (struct copy_rate){ pid, link, { r[(n - 1) / 4], r[(n - 1) / 2], r[3 * (n - 1) / 4] } };
		}
		i = end;
	}
}

static const struct copy_rate *rate_of(const struct acc *a, int pid, unsigned link)
{
	for (size_t i = 0; i < a->nrate; i++)
		if (a->rate[i].pid == pid && a->rate[i].link == link)
			return &a->rate[i];
	return NULL;
}

void ia_gt_samples_ready(struct acc *a)
{
	if (!a->nsmp)
		return;
	qsort(a->smp, a->nsmp, sizeof *a->smp, cmp_sample);
	if (!(a->smp_sum = malloc((a->nsmp + 1) * sizeof *a->smp_sum))) {
		a->oom = 1;
		return;
	}
	a->smp_sum[0] = 0;
	for (size_t i = 0; i < a->nsmp; i++)
		a->smp_sum[i + 1] = a->smp_sum[i] + a->smp[i].ns;
	/* per process, the median of its pieces (each once: by_func 0) */
	uint64_t *ns = malloc(a->nsmp * sizeof *ns);
	if (!ns) {
		a->oom = 1;
		return;
	}
	for (size_t i = 0; i < a->nsmp;) {
		int pid = a->smp[i].pid;
		size_t n = 0;
		for (; i < a->nsmp && a->smp[i].pid == pid; i++)
			if (!a->smp[i].by_func)
				ns[n++] = a->smp[i].ns;
		if (n < MIN_ALIKE)
			continue;
		qsort(ns, n, sizeof *ns, cmp_ns);
		size_t cap = a->ntypical;
		if (ia_grow((void **)&a->typical, &cap, a->ntypical + 1, sizeof *a->typical) < 0) {
			a->oom = 1;
			break;
		}
		a->typical[a->ntypical++] = (struct sample){ .pid = pid, .ns = ns[(n - 1) / 2] };
	}
	copy_rates(a, ns);
	free(ns);
}

static uint64_t typical_ns(const struct acc *a, int pid)
{
	for (size_t i = 0; i < a->ntypical; i++)
		if (a->typical[i].pid == pid)
			return a->typical[i].ns;
	return FOREVER;
}

/* First sample not below key (or, with past_equal, above it). */
static size_t lower_bound(const struct acc *a, const struct sample *key, int past_equal)
{
	size_t lo = 0, hi = a->nsmp;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_sample(&a->smp[mid], key);
		if (c < 0 || (past_equal && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The samples filed under one key: [*first, return). */
static size_t filed(const struct acc *a, int pid, int by_func, uint32_t k, size_t *first, size_t min)
{
	*first = 0;
	if (!k || !a->nsmp)
		return 0;
	/* the key's samples, by two binary searches (a key may have
	 * thousands, and every piece of work looks its key up) */
	struct sample from = { .pid = pid, .by_func = (uint16_t)by_func, .key = k }, to = from;
	to.ns = UINT64_MAX;
	*first = lower_bound(a, &from, 0);
	size_t end = lower_bound(a, &to, 1);
	return end - *first >= min ? end : *first;
}

/* The samples of work alike this one: the same work in its place, else the
 * same work, else (another geometry, another size) the same kernel or kind
 * of copy.  own: of the first two. */
static size_t alike(const struct acc *a, int pid, const struct sub *w, size_t *first, int *own)
{
	*own = 1;
	size_t end = w->work ? filed(a, pid, 2, in_place(w), first, MIN_IN_PLACE) : 0;
	if (end > *first)
		return end;
	end = filed(a, pid, 0, w->work, first, MIN_ALIKE);
	if (end > *first)
		return end;
	*own = 0;
	return filed(a, pid, 1, w->func, first, MIN_ALIKE);
}

/* The time a piece of work is given: q 1, the median of the times of work
 * alike it; q 0 and 2, the ends of the range — how well that typical time
 * is known, not how much single pieces vary: a replay gives every piece
 * the same end at once, and with the quartiles c15's 200,000 tiny kernels
 * added up their spread to a range 5.2 points wide around an estimate that
 * was not in question.  So the median's 95 % confidence interval (order
 * statistics: ranks (n-1)/2 -+ 0.98 sqrt(n)), never wider than the
 * quartiles (few samples: as before), and widened to hold the samples'
 * mean (a tenth trimmed at each end): where the times are skewed, the sum of many pieces goes as their
 * mean, not their median, and the replay is monotonic in every piece's
 * time, so the range holds the mean's replay too.  When none was timed:
 * nothing (q 0), the process's typical piece (1), all it can (2). */
static uint64_t piece_ns(const struct acc *a, int pid, const struct sub *w, int q)
{
	if (w->rated)
		return (uint64_t)(rate_of(a, pid, w->link)->ns_per_kib[q] * w->kib);
	size_t lo = w->alike_lo, end = w->alike_end;
	if (end == lo)
		return q == 0 ? 0 : q == 1 ? typical_ns(a, pid) : FOREVER;
	size_t n = end - lo;
	if (q == 1)
		return a->smp[lo + (n - 1) / 2].ns;
	double mid = (double)(n - 1) / 2, half = 0.98 * sqrt((double)n);
	size_t quart = (n - 1) * (size_t)(q + 1) / 4;   /* p25 or p75's rank, as before */
	size_t r = q == 0 ? (mid - half <= (double)quart ? quart : (size_t)(mid - half))
			  : (mid + half >= (double)quart ? quart : (size_t)ceil(mid + half));
	/* the mean less a tenth of the times at each end: one piece timed
	 * while something else held the GPU must not move it (c32: 1.9 ms
	 * among eight times of 22 us made the range 12 points wide) */
	size_t cut = (n + 9) / 10, kept = n > 2 * cut ? n - 2 * cut : 0;
	uint64_t v = a->smp[lo + r].ns,
		 mean = kept ? (a->smp_sum[end - cut] - a->smp_sum[lo + cut]) / kept : a->smp[lo + (n - 1) / 2].ns;
	return q == 0 ? (v < mean ? v : mean) : (v > mean ? v : mean);
}

void ia_gt_alike_find(const struct acc *a, struct stream_acc *s)
{
	for (size_t k = 0; k < s->nsub; k++) {
		struct sub *w = &s->sub[k];
		int own;
		w->alike_end = alike(a, s->pid, w, &w->alike_lo, &own);
		w->rated = !own && w->kib >= RATED_MIN_KIB && rate_of(a, s->pid, w->link);
	}
}

void ia_gt_coverage(const struct stream_acc *s, uint64_t lo, uint64_t hi, size_t *n,
		    size_t *nalike)
{
	for (size_t k = 0; k < s->nsub; k++) {
		if (s->sub[k].a < lo || s->sub[k].a >= hi)
			continue;
		(*n)++;
		if (s->sub[k].alike_end > s->sub[k].alike_lo || s->sub[k].rated)
			(*nalike)++;
	}
}

struct replay {
	struct acc *a;
	struct ia_span *sp; size_t n, cap;
	/* per piece (as sp): the time it was given; once a completion clipped
	 * its stretch, its share of it (share_out) — what the kernels' table sums */
	uint64_t *d; size_t capd;
	size_t pending;            /* spans from here on are of work queued before the next completion */
	uint64_t qend;             /* when the stream's queue runs dry, as replayed */
};

static void put(struct replay *r, uint64_t x, uint64_t d)
{
	if (ia_grow((void **)&r->sp, &r->cap, r->n + 1, sizeof *r->sp) < 0 ||
	    ia_grow((void **)&r->d, &r->capd, r->n + 1, sizeof *r->d) < 0) {
		r->a->oom = 1;
		return;
	}
	r->sp[r->n] = (struct ia_span){ x, x + d };
	r->d[r->n] = d;
	r->n++;
}

/* The GPU time the completion left to pieces [from, n) — their spans, one
 * after another, clipped to it — shared among them as the times they were
 * given: where the GPU lags behind the host, the work queued before a mark
 * is more than the mark's stretch holds, and clipping would give the
 * stretch to the first pieces queued and none to the last. */
static void share_out(struct replay *r, size_t from)
{
	uint64_t held = 0, given = 0;
	for (size_t i = from; i < r->n; i++) {
		held += r->sp[i].b - r->sp[i].a;
		if (r->d[i] >= FOREVER || given + r->d[i] < given)
			given = FOREVER;   /* (work never timed: no proportion to keep) */
		else
			given += r->d[i];
	}
	for (size_t i = from; i < r->n; i++)
		r->d[i] = given && given < FOREVER ? (uint64_t)((double)held * (double)r->d[i] / (double)given)
						  : r->sp[i].b - r->sp[i].a;
}

/* A completion: what was queued before it was done by c->g. */
static void complete(struct replay *r, const struct cpt *c)
{
	int clipped = 0;
	for (size_t i = r->pending; i < r->n; i++) {
		if (r->sp[i].b > c->g) {
			r->sp[i].b = c->g;
			clipped = 1;
		}
		if (r->sp[i].a > r->sp[i].b)
			r->sp[i].a = r->sp[i].b;
	}
	if (clipped)
		share_out(r, r->pending);
	r->pending = r->n;
	if (c->exact && c->g > c->r + EMPTY_NS)
		r->qend = c->g;   /* the mark waited: busy until then */
	else if (r->qend > c->g)
		r->qend = c->g;
}

/* x minus the sorted, disjoint spans of y (both sorted), appended to out. */
static void subtract(struct acc *a, const struct ia_span *x, size_t nx, const struct ia_span *y, size_t ny,
		     struct ia_span **out, size_t *nout, size_t *cout)
{
	size_t j = 0;
	for (size_t i = 0; i < nx; i++) {
		uint64_t cur = x[i].a;
		while (j < ny && y[j].b <= cur)
			j++;
		for (size_t k = j; k < ny && y[k].a < x[i].b && cur < x[i].b; k++) {
			if (y[k].a > cur) {
				if (ia_grow((void **)out, cout, *nout + 1, sizeof **out) < 0) {
					a->oom = 1;
					return;
				}
				(*out)[(*nout)++] = (struct ia_span){ cur, y[k].a };
			}
			if (y[k].b > cur)
				cur = y[k].b;
		}
		if (cur < x[i].b) {
			if (ia_grow((void **)out, cout, *nout + 1, sizeof **out) < 0) {
				a->oom = 1;
				return;
			}
			(*out)[(*nout)++] = (struct ia_span){ cur, x[i].b };
		}
	}
}

void ia_gt_estimate(struct acc *a, const struct stream_acc *s, int q, uint64_t lo, uint64_t hi,
		    const struct ia_span *idle, size_t nidle, struct ia_span **out, size_t *nout, size_t *cout)
{
	struct replay r = { .a = a };
	size_t j = 0;
	for (size_t k = 0; k < s->nsub && !a->oom; k++) {
		const struct sub *w = &s->sub[k];
		while (j < s->ncp && s->cp[j].r <= w->a)
			complete(&r, &s->cp[j++]);
		uint64_t d, st;
		if (w->host_sync) {
			/* its own call timed it: the transfer ran inside the
			 * call, once the work queued before it was done */
			st = w->a > r.qend ? w->a : r.qend;
			d = w->b > st ? w->b - st : 0;
		} else {
			d = piece_ns(a, s->pid, w, q);
			st = w->b > r.qend ? w->b : r.qend;
		}
		r.qend = st + d;
		put(&r, st, d);
	}
	while (j < s->ncp)
		complete(&r, &s->cp[j++]);
	/* the median replay's pieces (one span per piece, in order) by kernel,
	 * or kind of copy or memset */
	for (size_t k = 0; q == 1 && k < r.n && k < s->nsub && !a->oom; k++) {
		uint64_t x = r.sp[k].a > lo ? r.sp[k].a : lo, y = r.sp[k].b < hi ? r.sp[k].b : hi;
		uint64_t len = r.sp[k].b - r.sp[k].a, in = y > x ? y - x : 0;
		/* its share, as much of it as its span has in the window */
		uint64_t ns = in == len ? r.d[k] : (uint64_t)((double)r.d[k] * (double)in / (double)len);
		if (s->sub[k].func && s->sub[k].a >= lo && s->sub[k].a < hi)
			ia_gt_kernel_add(a, s, s->sub[k].func, s->sub[k].launch, ns,
					 a->ph && ia_phase_at(a->ph, s->sub[k].a) == IA_PHASE_STEADY);
	}
	if (!a->oom) {
		size_t n = ia_spans_merge(r.sp, r.n, lo, hi);
		subtract(a, r.sp, n, idle, nidle, out, nout, cout);
	}
	free(r.sp);
	free(r.d);
}
