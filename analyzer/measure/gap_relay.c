/*
 * gap_relay.c — the main process's GPU driven by threads one after another
 * (gaps.h relay): a thread per prompt or request, as Hugging Face's
 * streamer examples start model.generate with Thread(target=...).  The
 * main thread of per_process.c made the most calls, so it lived through
 * one of them: the other threads' gaps read as its on-CPU time (nothing of
 * it off-CPU there).  Each gap is read on the thread driving it then.
 */
#include "measure/gaps.h"

#include <stdlib.h>

/* A relay (gaps.h): threads of the main process with a share of its calls
 * each (1 %, 100 calls at least) whose calls do not overlap in time, that
 * made 80 % of them together — where a training loop's threads (the main
 * thread and autograd's, gloo's, a pin-memory thread) interleave.  The main
 * thread of per_process.c is one of them where it made the most calls; the
 * process's first thread, where it made a tenth of the loop's calls (a
 * server's, between many short requests), may not be.  0, or -1 out of
 * memory. */
#define RELAY_MIN_CALLS 100
struct relay_span { uint64_t a, b, calls; uint32_t th; };

static int by_span_start(const void *x, const void *y)
{
	const struct relay_span *a = x, *b = y;
	return a->a < b->a ? -1 : a->a > b->a;
}

int ia_gap_relay_find(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g)
{
	const uint32_t *ix = g->main_calls;
	size_t n = g->nmain_calls;
	if (pp->main_thread == UINT32_MAX || n < 2 * RELAY_MIN_CALLS)
		return 0;
	struct relay_span *s = calloc(t->nthreads, sizeof *s);
	if (!s)
		return -1;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		struct relay_span *r = &s[c->th];
		if (!r->calls++)
			r->a = c->start;
		if (c->start + c->dur > r->b)
			r->b = c->start + c->dur;
	}
	size_t m = 0;
	uint64_t sum = 0, min = n / 100 > RELAY_MIN_CALLS ? n / 100 : RELAY_MIN_CALLS;
	for (size_t th = 0; th < t->nthreads; th++)
		if (s[th].calls >= min) {
			s[th].th = (uint32_t)th;
			sum += s[th].calls;
			s[m++] = s[th];   /* (m <= th: an entry is moved down only once read) */
		}
	qsort(s, m, sizeof *s, by_span_start);
	int relay = m >= 2 && sum * 5 >= (uint64_t)n * 4;
	for (size_t i = 0; relay && i + 1 < m; i++)
		relay = s[i].b <= s[i + 1].a;
	if (relay) {
		if (!(g->relay = malloc(m * sizeof *g->relay))) {
			free(s);
			return -1;
		}
		for (size_t i = 0; i < m; i++)
			g->relay[i] = s[i].th;
		g->nrelay = m;
		/* each gap: the relay's thread that drove the GPU around it — the one
		 * whose call ends it, else the one whose call opened it, else the
		 * main thread */
		for (size_t i = 0; i < g->n; i++) {
			struct ia_gap *x = &g->g[i];
			uint32_t e = t->calls[x->end_call].th, o = t->calls[x->open_call].th;
			if (!(x->cut & IA_GAP_CUT_END) && ia_gaps_in_relay(g, e))
				x->th = e;
			else if (!(x->cut & IA_GAP_CUT_START) && ia_gaps_in_relay(g, o))
				x->th = o;
		}
	}
	free(s);
	return 0;
}

int ia_gaps_in_relay(const struct ia_gaps *g, uint32_t th)
{
	for (size_t i = 0; i < g->nrelay; i++)
		if (g->relay[i] == th)
			return 1;
	return 0;
}
