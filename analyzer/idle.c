/*
 * idle.c — the GPU-idle figures of one analysis (see idle.h).
 */
#include "idle.h"

#include "json_out.h"

#include <stdlib.h>
#include <string.h>

/* Measured: the steady state's bounds are the measured idle and busy spans
 * inside its windows (gpu_time.h), not the steady gaps. */
static void measured_steady(const struct ia_gaps *g, const struct ia_phases *ph, struct ia_idle *out)
{
	size_t n = 0;
	uint64_t *w = ph ? ia_phases_steady_windows(ph, g->win_start, g->win_end, &n) : NULL;
	uint64_t idle = 0, busy = 0;
	if (!w) {   /* no phases (or no memory): the steady state is the window */
		idle = g->gpu.idle_low_ns;
		busy = g->gpu.busy_ns;
	}
	for (size_t k = 0; w && k < n; k++) {
		idle += ia_spans_within(g->gpu.idle, g->gpu.nidle, w[2 * k], w[2 * k + 1]);
		busy += ia_spans_within(g->gpu.busy, g->gpu.nbusy, w[2 * k], w[2 * k + 1]);
	}
	free(w);
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
	uint64_t win = g->win_end > g->win_start ? g->win_end - g->win_start : 0;
	out->window_ns = win;
	out->low_ns = g->idle_low_ns;
	out->high_ns = g->idle_high_ns;
	uint64_t phases = 0;
	for (int p = 1; p < IA_PHASE_N; p++) {
		out->phase_ns[p] = ia_phases_time_in(ph, (enum ia_phase)p, g->win_start, g->win_end);
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
}

double ia_idle_share(const struct ia_idle *i, uint64_t ns)
{
	return i->steady_ns ? (double)ns / (double)i->steady_ns : 0;
}

double ia_idle_impact(const struct ia_idle *i, uint64_t ns)
{
	return i->window_ns ? (double)ns / (double)i->window_ns : 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
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
	cJSON_AddStringToObject(idle, "basis", i->measured
		? "measured: CUDA events the preload library put behind the program's work, timed on the GPU; "
		  "low = time every marked stream was certainly idle; high = window minus time some stream "
		  "certainly had unfinished work; steady_* = the same over the steady state (the window minus "
		  "start-up, compilation and autotuning)"
		: "host evidence only (no GPU timestamps): low = time with no CUDA work queued by the main process; "
		  "high = window minus time the GPU was known busy (host waiting in syncs or blocking copies); "
		  "steady_* = the same over the steady state (the window minus start-up, compilation and autotuning)");
	return idle;
}
