/*
 * idle.c — the GPU-idle figures of one analysis (see idle.h).
 */
#include "measure/idle.h"

#include "base/json_out.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Measured: the steady state's bounds are the measured idle and busy spans
 * inside its windows (gpu_time.h), not the steady gaps. */
static void measured_steady(const struct ia_gaps *g, const struct ia_phases *ph, struct ia_idle *out)
{
	size_t n = 0;
	uint64_t *w = ph ? ia_phases_steady_windows(ph, g->win_start, g->win_end, &n) : NULL;
	uint64_t whole[2] = { g->win_start, g->win_end };
	if (!w) {   /* no phases (or no memory): the steady state is the window */
		w = whole;
		n = 1;
	}
	uint64_t idle = ia_spans_within_windows(g->gpu.idle, g->gpu.nidle, w, n);
	uint64_t busy = ia_spans_within_windows(g->gpu.busy, g->gpu.nbusy, w, n), est[3];
	for (int q = 0; q < 3; q++)
		est[q] = ia_spans_within_windows(g->gpu.est[q], g->gpu.nest[q], w, n);
	if (w != whole)
		free(w);
	/* the estimate's busy spans: p75 times -> most busy -> least idle;
	 * over the recorded part of the window (out->window_ns) */
	const struct ia_capture *c = g->capture;
	for (int q = 0; q < 3; q++) {
		uint64_t b = ia_spans_within(g->gpu.est[2 - q], g->gpu.nest[2 - q], g->win_start, g->win_end);
		uint64_t in = c ? ia_spans_within_windows(g->gpu.est[2 - q], g->gpu.nest[2 - q], c->paused, c->npaused) : 0;
		b = b > in ? b - in : 0;
		out->est_ns[q] = out->window_ns > b ? out->window_ns - b : 0;
		out->steady_est_ns[q] = out->steady_ns > est[2 - q] ? out->steady_ns - est[2 - q] : 0;
	}
	out->ntimed = g->gpu.ntimed;
	out->nwork = g->gpu.nwork;
	out->nwork_alike = g->gpu.nwork_alike;
	out->measured = 1;
	out->nmarks = g->gpu.nmarks;
	out->nstreams = g->gpu.nstreams;
	out->nunmarked = g->gpu.nunmarked;
	out->steady_low_ns = idle;
	out->steady_high_ns = out->steady_ns > busy ? out->steady_ns - busy : 0;
	if (out->steady_high_ns < out->steady_low_ns)
		out->steady_high_ns = out->steady_low_ns;
}

void ia_idle_compute(const struct ia_gaps *g, const struct ia_phases *ph, struct ia_idle *out)
{
	memset(out, 0, sizeof *out);
	/* W is the recorded part of the window: the time between capture
	 * windows is neither steady nor a one-time phase */
	uint64_t span = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	uint64_t win = span > g->paused_ns ? span - g->paused_ns : 0;
	out->window_ns = win;
	out->low_ns = g->idle_low_ns;
	out->high_ns = g->idle_high_ns;
	uint64_t phases = 0;
	for (int p = 1; p < IA_PHASE_N; p++) {
		out->phase_ns[p] = p == IA_PHASE_PAUSED ? g->paused_ns
							: ia_phases_time_in(ph, (enum ia_phase)p, g->win_start, g->win_end);
		if (p != IA_PHASE_PAUSED)
			phases += out->phase_ns[p];
	}
	out->steady_ns = win > phases ? win - phases : 0;
	out->phase_ns[IA_PHASE_STEADY] = out->steady_ns;
	out->pre_window_startup_ns = ia_phases_time_in(ph, IA_PHASE_STARTUP, ph->t0, g->win_start);
	/* the steady state's bounds: its gaps (the phases' are set apart), and
	 * its time minus what was known busy outside the phases */
	out->steady_low_ns = g->total_ns;
	uint64_t busy = g->known_busy_ns > g->known_busy_phase_ns ? g->known_busy_ns - g->known_busy_phase_ns : 0;
	out->steady_high_ns = out->steady_ns > busy ? out->steady_ns - busy : 0;
	if (out->steady_high_ns < out->steady_low_ns)
		out->steady_high_ns = out->steady_low_ns;
	if (g->gpu.measured)
		measured_steady(g, ph, out);
	if (out->steady_low_ns > out->steady_ns)   /* phase time is counted in slices: keep the bounds inside */
		out->steady_low_ns = out->steady_high_ns = out->steady_ns;
	/* the estimate lies within the bounds (a stream left out of the
	 * measured idle may have replayed work into it) */
	for (int q = 0; q < 3; q++) {
		out->est_ns[q] = clamp(out->est_ns[q], out->low_ns, out->high_ns);
		out->steady_est_ns[q] = clamp(out->steady_est_ns[q], out->steady_low_ns, out->steady_high_ns);
	}
}

/* The estimate is said when enough work was timed alone to stand in for the
 * rest, and most of the work had alike work timed (else the range says
 * little but the bounds again). */
#define EST_MIN_TIMED 20

int ia_idle_estimated(const struct ia_idle *i)
{
	return i->measured && i->ntimed >= EST_MIN_TIMED && 2 * i->nwork_alike >= i->nwork;
}

int ia_idle_about(const struct ia_idle *i, int steady)
{
	uint64_t w = steady ? i->steady_ns : i->window_ns;
	uint64_t lo = steady ? i->steady_low_ns : i->low_ns, hi = steady ? i->steady_high_ns : i->high_ns;
	return ia_idle_estimated(i) && w && llround(pct(lo, w)) != llround(pct(hi, w));
}

char *ia_idle_fmt_steady(const struct ia_idle *i, char *buf, size_t len)
{
	char rng[32], est[32];
	ia_fmt_pct_range(rng, sizeof rng, pct(i->steady_low_ns, i->steady_ns), pct(i->steady_high_ns, i->steady_ns));
	if (!ia_idle_about(i, 1))
		snprintf(buf, len, "%s", rng);
	else
		snprintf(buf, len, "%s (about %s)", rng,
			 ia_fmt_pct_range(est, sizeof est, pct(i->steady_est_ns[1], i->steady_ns),
					  pct(i->steady_est_ns[1], i->steady_ns)));
	return buf;
}

double ia_idle_share(const struct ia_idle *i, uint64_t ns)
{
	return i->steady_ns ? (double)ns / (double)i->steady_ns : 0;
}

double ia_idle_impact(const struct ia_idle *i, uint64_t ns)
{
	return i->window_ns ? (double)ns / (double)i->window_ns : 0;
}


cJSON *ia_idle_json(const struct ia_idle *i)
{
	cJSON *idle = cJSON_CreateObject();
	if (i->window_ns) {
		ia_json_round(idle, "low", pct(i->low_ns, i->window_ns), 1);
		ia_json_round(idle, "high", pct(i->high_ns, i->window_ns), 1);
	} else {   /* no CUDA work queued in the selection: no estimate */
		cJSON_AddNullToObject(idle, "low");
		cJSON_AddNullToObject(idle, "high");
	}
	if (i->steady_ns) {
		ia_json_round(idle, "steady_low", pct(i->steady_low_ns, i->steady_ns), 1);
		ia_json_round(idle, "steady_high", pct(i->steady_high_ns, i->steady_ns), 1);
	} else {
		cJSON_AddNullToObject(idle, "steady_low");
		cJSON_AddNullToObject(idle, "steady_high");
	}
	cJSON_AddBoolToObject(idle, "estimate", !i->measured);
	cJSON_AddBoolToObject(idle, "measured", i->measured);
	if (i->measured) {
		ia_json_u64(idle, "marks", i->nmarks);
		ia_json_u64(idle, "streams", i->nstreams);
		ia_json_u64(idle, "unmarked_streams", i->nunmarked);
	}
	if (ia_idle_estimated(i)) {
		cJSON *e = cJSON_AddObjectToObject(idle, "estimate_from_timed_work");
		if (i->window_ns) {
			ia_json_round(e, "idle", pct(i->est_ns[1], i->window_ns), 1);
			ia_json_round(e, "low", pct(i->est_ns[0], i->window_ns), 1);
			ia_json_round(e, "high", pct(i->est_ns[2], i->window_ns), 1);
		}
		if (i->steady_ns) {
			ia_json_round(e, "steady", pct(i->steady_est_ns[1], i->steady_ns), 1);
			ia_json_round(e, "steady_low", pct(i->steady_est_ns[0], i->steady_ns), 1);
			ia_json_round(e, "steady_high", pct(i->steady_est_ns[2], i->steady_ns), 1);
		}
		ia_json_u64(e, "timed_alone", i->ntimed);
		ia_json_u64(e, "work_queued", i->nwork);
		ia_json_u64(e, "work_alike_timed", i->nwork_alike);
		cJSON_AddStringToObject(e, "basis",
			"within the measured bounds: each stream's work replayed one piece after another, each "
			"piece taking the GPU time of alike work (same kernel and geometry; same kind and size "
			"of copy) timed alone by a mark right behind it (median; low/high with the ends of the "
			"median's 95% confidence interval, widened to hold the mean, within the quartiles), held "
			"to the measured completions; work never timed alike takes none "
			"(high), all the time it can (low), and the process's median piece in the estimate");
	}
	cJSON_AddStringToObject(idle, "basis", i->measured
		? "measured: CUDA events the preload library put behind the program's work, timed on the GPU; "
		  "low = time every marked stream was certainly idle; high = window minus time some stream "
		  "certainly had unfinished work; the window leaves out the time between capture windows; "
		  "steady_* = the same over the steady state (the window minus start-up, compilation, "
		  "autotuning and epoch boundaries)"
		: "host evidence only (no GPU timestamps): low = time with no CUDA work queued by the main process; "
		  "high = window minus time the GPU was known busy (host waiting in syncs or blocking copies); "
		  "the window leaves out the time between capture windows; steady_* = the same over the steady state (the window minus start-up, compilation, "
		  "autotuning and epoch boundaries)");
	return idle;
}
