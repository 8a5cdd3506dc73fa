/*
 * step_breakdown.c — each steady step split into where its time went
 * (step_breakdown.h).
 *
 * The main process's calls (gaps.h keeps them in time order) are cut to
 * their union once, as figures.c cuts them, keeping each piece's kind
 * (sync, launch, other); then one walk over the steps with two cursors,
 * one into the pieces and one into the gaps: steps, pieces and gaps are
 * each sorted and disjoint.
 */
#include "measure/step_breakdown.h"

#include "base/util.h"
#include "measure/backward_line.h"
#include "measure/calls.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ia_step_threshold thresholds[IA_STEP_NPARTS] = {
	[IA_STEP_INPUT] = { 20, 5 },
	[IA_STEP_HOST] = { 20, 10 },
	[IA_STEP_LAUNCH] = { 20, 10 },
	[IA_STEP_SYNC] = { 20, 10 },
	[IA_STEP_DEVICE] = { 0, 0 },
	[IA_STEP_COLLECTIVES] = { 40, 10 },
	[IA_STEP_OTHER_WAIT] = { 20, 10 },
	[IA_STEP_CPU_WAIT] = { 20, 10 },
};

const struct ia_step_threshold *ia_step_threshold(enum ia_step_part p)
{
	return &thresholds[p < IA_STEP_NPARTS ? p : IA_STEP_DEVICE];
}

const char *ia_step_part_name(enum ia_step_part p)
{
	static const char *const n[IA_STEP_NPARTS] = {
		"input wait", "host compute", "launch overhead", "sync", "device compute", "collectives", "other waits",
		"CPU wait",
	};
	return p < IA_STEP_NPARTS ? n[p] : "";
}

const char *ia_step_part_key(enum ia_step_part p)
{
	static const char *const k[IA_STEP_NPARTS] = {
		"input_wait", "host_compute", "launch", "sync", "device_compute", "collectives", "other_wait",
		"cpu_wait",
	};
	return p < IA_STEP_NPARTS ? k[p] : "";
}

enum piece_kind { PIECE_OTHER, PIECE_SYNC, PIECE_LAUNCH };

struct piece {
	uint64_t start, end;
	int kind;
};

static int piece_kind(const struct ia_call *c)
{
	int cls = ingero_api_class(c->api);
	if (cls == INGERO_CLASS_SYNC || ia_call_is_waiting_free(c) ||
	    (cls == INGERO_CLASS_COPY && (ia_api_completes_work(c->api) || (c->flags & INGERO_FLAG_HOST_PAGEABLE))))
		return PIECE_SYNC;   /* the host waits for the device (a blocking copy too) */
	if (ia_api_queues_work(c->api))
		return PIECE_LAUNCH;   /* queues work: a launch, an async copy or memset */
	return PIECE_OTHER;
}

/* The union of the main process's calls, a call starting inside another
 * counted from where that one ended, as pieces in time order — made as the
 * steps need them and dropped behind them: a step's pieces at a time, not
 * one for each of the trace's calls (10 M calls: 240 MB). */
struct pieces {
	const struct ia_trace *t;
	const struct ia_gaps *g;
	size_t k;             /* the next main call to read */
	uint64_t until;       /* ia_call_clip's: where the union has reached */
	struct piece *p;
	size_t head, n, cap;  /* p[head..n) held */
};

/* Pieces read until one starts at or after e (or the calls end); 0, or -1
 * out of memory. */
static int pieces_to(struct pieces *q, uint64_t e)
{
	while (q->k < q->g->nmain_calls && (q->n == q->head || q->p[q->n - 1].start < e)) {
		const struct ia_call *c = &q->t->calls[q->g->main_calls[q->k++]];
		uint64_t a, b;
		if (!ia_call_clip(c, &q->until, &a, &b))
			continue;
		int kind = piece_kind(c);
		if (kind == PIECE_OTHER)
			continue;
		if (q->head && q->head * 2 >= q->n) {   /* what is behind the steps goes first */
			memmove(q->p, q->p + q->head, (q->n - q->head) * sizeof *q->p);
			q->n -= q->head;
			q->head = 0;
		}
		if (ia_grow((void **)&q->p, &q->cap, q->n + 1, sizeof *q->p) < 0)
			return -1;
		q->p[q->n++] = (struct piece){ a, b, kind };
	}
	return 0;
}

/* The class: the first part at its high tier, else at its moderate one. */
const enum ia_step_part ia_step_class_order[] = {
	IA_STEP_INPUT, IA_STEP_OTHER_WAIT, IA_STEP_CPU_WAIT, IA_STEP_COLLECTIVES, IA_STEP_SYNC, IA_STEP_HOST,
	IA_STEP_LAUNCH,
};
const size_t ia_step_class_order_n = sizeof ia_step_class_order / sizeof *ia_step_class_order;

static void classify(struct ia_step_breakdown *b)
{
	const enum ia_step_part *order = ia_step_class_order;
	static const char *const bound[IA_STEP_NPARTS] = {
		[IA_STEP_INPUT] = "input-bound", [IA_STEP_HOST] = "host-bound", [IA_STEP_LAUNCH] = "launch-bound",
		[IA_STEP_SYNC] = "sync-bound", [IA_STEP_COLLECTIVES] = "collective-bound",
		[IA_STEP_OTHER_WAIT] = "wait-bound", [IA_STEP_CPU_WAIT] = "CPU-starved",
	};
	b->cls_part = -1;
	for (int tier = 0; tier < 2 && b->cls_part < 0; tier++)
		for (size_t i = 0; i < ia_step_class_order_n; i++) {
			const struct ia_step_threshold *th = ia_step_threshold(order[i]);
			if (b->share_pct[order[i]] >= (tier ? th->moderate_pct : th->high_pct)) {
				b->cls_part = (int)order[i];
				b->cls_moderate = tier;
				break;
			}
		}
	if (b->cls_part >= 0)
		snprintf(b->cls, sizeof b->cls, "%s%s", b->cls_moderate ? "somewhat " : "", bound[b->cls_part]);
	else
		snprintf(b->cls, sizeof b->cls, "%s", b->share_pct[IA_STEP_DEVICE] >= 50 ? "device-bound" : "balanced");
}

static void summarize(struct ia_step_breakdown *b)
{
	uint64_t *v = malloc(b->n * sizeof *v);
	for (int p = 0; p < IA_STEP_NPARTS; p++) {
		for (size_t i = 0; i < b->n; i++)
			b->sum_ns[p] += b->part_ns[p][i];
		b->share_pct[p] = b->total_ns ? 100.0 * (double)b->sum_ns[p] / (double)b->total_ns : 0;
		if (!v)
			continue;
		memcpy(v, b->part_ns[p], b->n * sizeof *v);
		static const double pc[] = { 50, 90 };
		uint64_t out[2];
		ia_percentiles(v, b->n, pc, out, 2);
		b->p50_ns[p] = out[0];
		b->p90_ns[p] = out[1];
	}
	free(v);
	classify(b);
}

#define HOST_AHEAD_MEAN 2.0   /* the steps' mean over their median, at least */

/* The main process's time in CUDA calls that began inside [from, to),
 * summed (its threads' calls may overlap: an upper bound). */
static uint64_t calls_in(const struct ia_trace *t, const struct ia_gaps *g, uint64_t from, uint64_t to)
{
	uint64_t sum = 0;
	for (size_t k = ia_gaps_first_call_at(t, g, from); k < g->nmain_calls; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		if (c->start >= to)
			break;
		sum += c->dur;
	}
	return sum;
}

static int host_ahead(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_step_times *st,
		      const struct ia_step_breakdown *b)
{
	if (!b->n || b->cls_part >= 0 || b->share_pct[IA_STEP_DEVICE] < 50 || !st->p50 ||
	    st->mean < HOST_AHEAD_MEAN * (double)st->p50)
		return 0;
	size_t nlong = 0, waited = 0;
	for (size_t i = 0; i < st->n; i++)
		if (st->ns[i] >= 2 * st->p50) {
			nlong++;
			waited += 2 * calls_in(t, g, st->start[i], st->start[i] + st->ns[i]) >= st->ns[i] - st->p50;
		}
	return nlong && 2 * waited >= nlong;
}

int ia_step_breakdown_compute(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_hostbound *hb,
			      const struct ia_step_times *st, const struct ia_span *cw, size_t ncw,
			      struct ia_step_breakdown *out)
{
	memset(out, 0, sizeof *out);
	out->cls_part = -1;
	if (!st->n)
		return 0;
	for (int p = 0; p < IA_STEP_NPARTS; p++)
		if (!(out->part_ns[p] = calloc(st->n, sizeof *out->part_ns[p]))) {
			ia_step_breakdown_free(out);
			return -1;
		}
	struct pieces pq = { .t = t, .g = g };
	/* host-bound stretches: only without GPU marks; with them, the
	 * estimate's idle outside the gaps (see the header) */
	const uint64_t *hw = hb && !g->gpu.measured ? hb->w : NULL;
	size_t nh = hw ? hb->n : 0, hi = 0, hq = 0;
	const struct ia_span *es = g->gpu.measured && g->gpu.nest[1] ? g->gpu.est[1] : NULL;
	size_t nes = es ? g->gpu.nest[1] : 0;
	/* the GIL (gaps.h): the main thread's waits on a lock in the gaps are
	 * for another thread's Python code — host compute, not input (c06: a
	 * logger thread; read as 70 % input wait) — its futex share of them */
	double gil = 0;
	if (ia_gaps_gil(g) && g->main_blocked_ns)
		gil = (double)ia_gaps_wait_ns(g->main_sys_ns, IA_WAIT_FUTEX) / (double)g->main_blocked_ns;
	size_t gi = 0;
	for (size_t i = 0; i < st->n; i++) {
		uint64_t s = st->start[i], e = s + st->ns[i];
		/* the gaps in the step: their time and the main thread blocked in them */
		while (gi < g->n && g->g[gi].end <= s)
			gi++;
		uint64_t gap = 0;
		double blocked = 0, other_wait = 0, host_wait = 0, cpu_wait = 0;
		for (size_t k = gi; k < g->n && g->g[k].start < e; k++) {
			const struct ia_gap *x = &g->g[k];
			uint64_t ov = ia_overlap(s, e, x->start, x->end), len = x->end - x->start;
			uint64_t off = x->main_off_ns < len ? x->main_off_ns : len;
			uint64_t runq = x->main_runq_ns < off ? x->main_runq_ns : off;
			gap += ov;
			if (len) {
				blocked += (double)(off - runq) * (double)ov / (double)len;
				cpu_wait += (double)runq * (double)ov / (double)len;
				/* blocked writing, syncing, for a child — or while a
				 * subprocess it waited for lived (gaps.h) */
				uint64_t ow = x->main_other_wait_ns;
				if (ow > off - runq)
					ow = off - runq;
				other_wait += (double)ow * (double)ov / (double)len;
				/* a gap autograd's engine thread ended (it queued the
				 * next work): the main thread blocked in backward()
				 * while that thread did the host's work — host compute;
				 * else, with the GIL, its lock-wait share of the gap */
				if (!(x->cut & IA_GAP_CUT_END) && t->threads &&
				    ia_is_autograd_thread(t->threads[t->calls[x->end_call].th].comm))
					host_wait += (double)(off - runq - ow) * (double)ov / (double)len;
				else
					host_wait += gil * (double)(off - runq - ow) * (double)ov / (double)len;
			}
		}
		/* the collectives in the step, and in its gaps */
		uint64_t coll = ia_spans_within(cw, ncw, s, e), coll_gap = 0;
		for (size_t k = gi; coll && k < g->n && g->g[k].start < e; k++) {
			uint64_t a = g->g[k].start > s ? g->g[k].start : s, b = g->g[k].end < e ? g->g[k].end : e;
			if (b > a)
				coll_gap += ia_spans_within(cw, ncw, a, b);
		}
		/* syncs and launches inside those gaps, outside the collectives
		 * (a sync waiting for a collective's result is the collective's) */
		if (pieces_to(&pq, e) < 0) {
			free(pq.p);
			ia_step_breakdown_free(out);
			return -1;
		}
		while (pq.head < pq.n && pq.p[pq.head].end <= s)
			pq.head++;
		const struct piece *pc = pq.p;
		size_t pi = pq.head, np = pq.n;
		/* and, with the estimate, the launches' time neither in a gap nor
		 * held busy by it (below) */
		uint64_t in[3] = { 0, 0, 0 }, launch_paced = 0;
		size_t gk = gi;
		for (size_t q = pi; q < np && pc[q].start < e; q++) {
			uint64_t a = pc[q].start > s ? pc[q].start : s, b = pc[q].end < e ? pc[q].end : e;
			while (gk < g->n && g->g[gk].end <= a)
				gk++;
			uint64_t in_gaps = 0;
			for (size_t m = gk; m < g->n && g->g[m].start < b; m++) {
				uint64_t x = g->g[m].start > a ? g->g[m].start : a, y = g->g[m].end < b ? g->g[m].end : b;
				if (y > x) {
					in_gaps += y - x;
					in[pc[q].kind] += (y - x) - (coll_gap ? ia_spans_within(cw, ncw, x, y) : 0);
				}
			}
			if (es && pc[q].kind == PIECE_LAUNCH && b > a) {
				uint64_t held = in_gaps + ia_spans_within(es, nes, a, b);
				launch_paced += b - a > held ? b - a - held : 0;
			}
		}
		/* host-bound stretches in the step (never in a gap), and the launches in them */
		while (hi < nh && hw[2 * hi + 1] <= s)
			hi++;
		uint64_t hbt = 0, hbl = 0;
		for (size_t k = hi; k < nh && hw[2 * k] < e; k++)
			hbt += ia_overlap(s, e, hw[2 * k], hw[2 * k + 1]);
		hq = hi;
		for (size_t q = pi; hbt && q < np && pc[q].start < e; q++) {
			if (pc[q].kind != PIECE_LAUNCH)
				continue;
			uint64_t a = pc[q].start > s ? pc[q].start : s, b = pc[q].end < e ? pc[q].end : e;
			while (hq < nh && hw[2 * hq + 1] <= a)
				hq++;
			for (size_t m = hq; m < nh && hw[2 * m] < b; m++)
				hbl += ia_overlap(a, b, hw[2 * m], hw[2 * m + 1]);
		}
		/* with marks and an estimate: the step's time outside the gaps that
		 * the estimate does not hold busy (the GPU done with one short
		 * kernel before the host queued the next: idles under the gaps'
		 * 50 us) — the host set the pace there, as in a host-bound stretch;
		 * of it, the launches' part */
		if (es) {
			uint64_t busy = ia_spans_within(es, nes, s, e), outside = st->ns[i] - gap;
			hbt = outside > busy ? outside - busy : 0;
			hbl = hbt ? launch_paced : 0;
		}
		if (hbt > st->ns[i] - gap)
			hbt = st->ns[i] - gap;
		if (hbl > hbt)
			hbl = hbt;
		/* collective and sync time out of the blocked time, launch time
		 * out of the on-CPU time (each from the other when it runs short) */
		double input = blocked, oncpu = (double)gap - blocked;
		input -= (double)coll_gap;
		if (input < 0) {
			oncpu += input;
			input = 0;
		}
		input -= (double)in[PIECE_SYNC];
		if (input < 0) {
			oncpu += input;
			input = 0;
		}
		oncpu -= (double)in[PIECE_LAUNCH];
		if (oncpu < 0) {
			input += oncpu;
			oncpu = 0;
		}
		uint64_t rest = gap - in[PIECE_SYNC] - in[PIECE_LAUNCH] - coll_gap;
		uint64_t inp = input > 0 ? (uint64_t)(input + 0.5) : 0;
		if (inp > rest)
			inp = rest;
		/* of the blocked time left, what was not a wait for input (the
		 * syncs and collectives came out of it first) */
		uint64_t ow = other_wait > 0 ? (uint64_t)(other_wait + 0.5) : 0;
		if (ow > inp)
			ow = inp;
		inp -= ow;
		uint64_t hw_ns = host_wait > 0 ? (uint64_t)(host_wait + 0.5) : 0;   /* (autograd's, the GIL's) */
		inp -= hw_ns < inp ? hw_ns : inp;
		out->part_ns[IA_STEP_OTHER_WAIT][i] = ow;
		out->part_ns[IA_STEP_SYNC][i] = in[PIECE_SYNC];
		out->part_ns[IA_STEP_LAUNCH][i] = in[PIECE_LAUNCH] + hbl;
		out->part_ns[IA_STEP_INPUT][i] = inp;
		/* of the gap's time left, what the main thread spent runnable
		 * (its launches and syncs came out of its on-CPU time first) */
		uint64_t host = rest - inp - ow, cw_ns = cpu_wait > 0 ? (uint64_t)(cpu_wait + 0.5) : 0;
		if (cw_ns > host)
			cw_ns = host;
		out->part_ns[IA_STEP_CPU_WAIT][i] = cw_ns;
		out->part_ns[IA_STEP_HOST][i] = host - cw_ns + (hbt - hbl);
		uint64_t device = st->ns[i] - gap - hbt, coll_dev = coll - coll_gap < device ? coll - coll_gap : device;
		out->part_ns[IA_STEP_COLLECTIVES][i] = coll_gap + coll_dev;
		out->part_ns[IA_STEP_DEVICE][i] = device - coll_dev;
		out->total_ns += st->ns[i];
	}
	free(pq.p);
	out->n = st->n;
	summarize(out);
	out->host_ahead = host_ahead(t, g, st, out);
	return 0;
}

void ia_step_breakdown_free(struct ia_step_breakdown *b)
{
	for (int p = 0; p < IA_STEP_NPARTS; p++)
		free(b->part_ns[p]);
	memset(b, 0, sizeof *b);
	b->cls_part = -1;
}
