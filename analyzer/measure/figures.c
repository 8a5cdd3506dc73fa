/*
 * figures.c — the headline figures of one analysis (figures.h).
 *
 * The main thread's partition of the steady state is one walk: the main
 * process's calls in time order (gaps.h keeps them), cut to their union
 * (a call that starts inside another counts from where that one ended, as
 * gaps.c does), each piece's time inside the steady windows less its time
 * inside the gaps; the gaps bring their own on-CPU / blocked / run-queue
 * split (gaps.c); what is left of the steady state is host work while the
 * GPU had work.  Pieces, steady windows and gaps are each sorted and
 * disjoint, so two cursors suffice.
 */
#include "measure/figures.h"

#include "measure/calls.h"
#include "measure/collectives.h"
#include "base/util.h"

#include <ingero/api.h>

#include <stdlib.h>
#include <string.h>

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

const char *ia_main_part_name(enum ia_main_part p)
{
	switch (p) {
	case IA_MAIN_GAP_ONCPU: return "on a CPU";
	case IA_MAIN_GAP_BLOCKED: return "blocked";
	case IA_MAIN_GAP_RUNQ: return "waiting for a CPU";
	case IA_MAIN_SYNC: return "syncs";
	case IA_MAIN_COPY: return "copies";
	case IA_MAIN_LAUNCH: return "launches";
	case IA_MAIN_OTHER_CUDA: return "other CUDA calls";
	case IA_MAIN_COLLECTIVE: return "gloo's collectives (its threads' syncs and copies)";
	default: return "host work while the GPU had work";
	}
}

const char *ia_main_part_key(enum ia_main_part p)
{
	static const char *const k[IA_MAIN_N] = {
		"gap_oncpu_ns", "gap_blocked_ns", "gap_waiting_for_cpu_ns", "in_syncs_ns", "in_copies_ns",
		"in_launches_ns", "in_other_cuda_ns", "in_collectives_ns", "host_work_gpu_busy_ns",
	};
	return p < IA_MAIN_N ? k[p] : "";
}

/* Time of [a, b) inside the windows w (pairs, sorted), from cursor *wi on;
 * the cursor never passes a window that may still meet a later piece. */
static uint64_t within(const uint64_t *w, size_t nw, size_t *wi, uint64_t a, uint64_t b)
{
	while (*wi < nw && w[2 * *wi + 1] <= a)
		(*wi)++;
	uint64_t in = 0;
	for (size_t k = *wi; k < nw && w[2 * k] < b; k++)
		in += ia_overlap(a, b, w[2 * k], w[2 * k + 1]);
	return in;
}

/* Time of [a, b) inside both the steady windows and the gaps. */
static uint64_t within_both(const uint64_t *w, size_t nw, const struct ia_gaps *g, size_t *gi, uint64_t a,
			    uint64_t b)
{
	while (*gi < g->n && g->g[*gi].end <= a)
		(*gi)++;
	uint64_t in = 0;
	for (size_t k = *gi; k < g->n && g->g[k].start < b; k++) {
		uint64_t x0 = a > g->g[k].start ? a : g->g[k].start, x1 = b < g->g[k].end ? b : g->g[k].end;
		size_t wi = 0;
		if (x1 > x0)
			in += within(w, nw, &wi, x0, x1);
	}
	return in;
}

static enum ia_main_part call_part(unsigned api)
{
	switch (ingero_api_class(api)) {
	case INGERO_CLASS_SYNC: return IA_MAIN_SYNC;
	case INGERO_CLASS_COPY: return IA_MAIN_COPY;
	case INGERO_CLASS_LAUNCH: return IA_MAIN_LAUNCH;
	default: return IA_MAIN_OTHER_CUDA;
	}
}

static int main_partition(const struct ia_trace *t, const struct ia_gaps *g, const struct ia_phases *ph,
			  const struct ia_coll_tids *gloo, struct ia_figures *out)
{
	size_t nw = 0;
	uint64_t *w = ia_phases_steady_windows(ph, g->win_start, g->win_end, &nw);
	if (!w && out->steady_ns)
		return -1;   /* a steady state, but no memory for its windows */
	size_t wi = 0, gi = 0;
	uint64_t until = 0;
	for (size_t k = 0; k < g->nmain_calls; k++) {
		const struct ia_call *c = &t->calls[g->main_calls[k]];
		uint64_t a, b;
		if (!ia_call_clip(c, &until, &a, &b))
			continue;
		uint64_t in = within(w, nw, &wi, a, b), gap = within_both(w, nw, g, &gi, a, b);
		enum ia_main_part part = gloo && ia_coll_tids_has(gloo, t->threads[c->th].tid) ? IA_MAIN_COLLECTIVE
					 : call_part(c->api);
		out->main_ns[part] += in > gap ? in - gap : 0;
	}
	free(w);
	for (size_t i = 0; i < g->n; i++) {
		const struct ia_gap *x = &g->g[i];
		uint64_t len = x->end - x->start;
		out->main_ns[IA_MAIN_GAP_RUNQ] += x->main_runq_ns;
		out->main_ns[IA_MAIN_GAP_BLOCKED] += x->main_off_ns - x->main_runq_ns;
		out->main_ns[IA_MAIN_GAP_ONCPU] += len > x->main_off_ns ? len - x->main_off_ns : 0;
	}
	uint64_t used = 0;
	for (int p = 0; p < IA_MAIN_HOST_QUEUED; p++)
		used += out->main_ns[p];
	out->main_ns[IA_MAIN_HOST_QUEUED] = out->steady_ns > used ? out->steady_ns - used : 0;
	return 0;
}

int ia_figures_compute(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_gaps *g,
		       const struct ia_phases *ph, const struct ia_idle *i, const struct ia_coll_tids *gloo,
		       struct ia_figures *out)
{
	memset(out, 0, sizeof *out);
	out->traced_ns = t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
	out->have = pp->main >= 0 && i->window_ns > 0;
	out->measured = i->measured;
	out->window_ns = i->window_ns;
	out->steady_ns = i->steady_ns;
	memcpy(out->phase_ns, i->phase_ns, sizeof out->phase_ns);
	out->window_low = pct(i->low_ns, i->window_ns);
	out->window_high = pct(i->high_ns, i->window_ns);
	out->steady_low = pct(i->steady_low_ns, i->steady_ns);
	out->steady_high = pct(i->steady_high_ns, i->steady_ns);
	out->has_steady_about = ia_idle_about(i, 1);
	out->has_window_about = ia_idle_about(i, 0);
	out->steady_about = pct(i->steady_est_ns[1], i->steady_ns);
	out->window_about = pct(i->est_ns[1], i->window_ns);
	out->ntimed = i->ntimed;
	out->streams = i->nstreams;
	out->unmarked_streams = i->nunmarked;
	out->ngaps = g->n;
	out->gaps_ns = g->total_ns;
	out->nworkers = pp->nworkers;
	out->step_calls = ph->steps.calls;
	out->step_ns = ph->steps.ns;
	out->main_known = out->have && pp->main_thread != UINT32_MAX;
	if (out->main_known && main_partition(t, g, ph, gloo, out) < 0)
		return -1;
	return 0;
}
