/*
 * gate_compare_steady.c — the gate's checks of the steady state (see
 * gate_compare.h, gate_compare_internal.h): is there enough of it to judge, its GPU
 * idle, its throughput, and the one-time phases set apart from it.
 *
 * Why the steady state: the window of a run holds its start-up, and the
 * length of the imports decided the old calls-per-second verdict (on the
 * H200, 9,322/s against 7,261/s for one script run twice, the same build:
 * 59,933 calls over 8.25 s of which the steady loop was a part).  The
 * steps per second of the steady state are what a user's job delivers;
 * start-up, compilation and autotuning vary with caches and imports and
 * are compared apart, as warnings unless the config gates them.
 *
 * Each steady figure fails only when its change exceeds the limit AND
 * noise_multiple times its noise: a short or uneven steady state (a few
 * gaps in a tenth of a second) has a wide noise and does not fail on it.
 * A steady state under min_steady_steps steps or min_steady_time is not
 * judged at all: "not enough steady state to judge", a warning.
 */
#include "gate/gate_compare_internal.h"

#include "base/util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIG(s, f, se, st) ia_gate_fig_of(s, offsetof(struct ia_gate_run, f), se, st)
#define SE(f) offsetof(struct ia_gate_run, f)

static int all_runs(const struct ia_gate_summary *s, int (*pred)(const struct ia_gate_run *))
{
	size_t n = 0;
	for (size_t i = 0; i < s->nruns; i++)
		n += s->runs[i].steady && pred(&s->runs[i]);
	return n > 0 && n == s->nruns;
}

static int has_steps(const struct ia_gate_run *r)
{
	return r->steps_per_s > 0;
}

static int has_est(const struct ia_gate_run *r)
{
	return r->idle_has_est;
}

/* Steps in the steady state, or its calls over 10 where no step was found
 * (a step of ten calls is typical of the corpus's small loops). */
static double judged_steps(const struct ia_gate_summary *s, double *secs)
{
	struct ia_gate_fig t = FIG(s, steady_s, IA_GATE_NO_SE, 1);
	*secs = t.v;
	if (all_runs(s, has_steps))
		return FIG(s, steps, IA_GATE_NO_SE, 1).v;
	double *v = calloc(s->nruns ? s->nruns : 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; v && i < s->nruns; i++)
		if (s->runs[i].steady)
			v[n++] = s->runs[i].calls_per_s * s->runs[i].steady_s / 10;
	double m = ia_gate_fig_values(v, n).v;
	free(v);
	return m;
}

static void fmt_steady(char *buf, size_t len, const struct ia_gate_summary *s, double steps, double secs)
{
	if (!FIG(s, steady_s, IA_GATE_NO_SE, 1).n)
		snprintf(buf, len, "none");
	else if (all_runs(s, has_steps))
		snprintf(buf, len, "%.0f steps, %.2fs", steps, secs);
	else
		snprintf(buf, len, "%.0f calls, %.2fs", steps * 10, secs);
}

int ia_gate_check_steady_state(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			       const struct ia_gate_summary *cur, struct ia_gate_result *r, int *enough)
{
	double bs, cs;
	double bsteps = judged_steps(base, &bs), csteps = judged_steps(cur, &cs);
	struct ia_gate_check *k = ia_gate_add(r, "steady", "steady state");
	if (!k)
		return -1;
	fmt_steady(k->baseline, sizeof k->baseline, base, bsteps, bs);
	fmt_steady(k->current, sizeof k->current, cur, csteps, cs);
	char d[32];
	snprintf(k->limit, sizeof k->limit, ">= %llu steps, %s", (unsigned long long)cfg->min_steady_steps,
		 ia_fmt_dur(d, sizeof d, cfg->min_steady_ns));
	double min_s = (double)cfg->min_steady_ns / 1e9;
	int b_ok = bsteps >= (double)cfg->min_steady_steps && bs >= min_s && bs > 0;
	int c_ok = csteps >= (double)cfg->min_steady_steps && cs >= min_s && cs > 0;
	*enough = b_ok && c_ok;
	if (*enough)
		return 0;
	snprintf(k->change, sizeof k->change, "too short");
	snprintf(k->why, sizeof k->why,
		 "not enough steady state to judge: %s has %s (needs at least %llu steps and %s; "
		 "min_steady_steps, min_steady_time): its GPU idle, throughput and chains are not judged",
		 !b_ok ? "the baseline" : "the current run", !b_ok ? k->baseline : k->current,
		 (unsigned long long)cfg->min_steady_steps, d);
	ia_gate_set(r, k, IA_GATE_WARN);
	return 0;
}

/* A steady check that the steady state is too short for. */
static void not_enough(struct ia_gate_result *r, struct ia_gate_check *k)
{
	snprintf(k->why, sizeof k->why, "not enough steady state to judge");
	ia_gate_set(r, k, IA_GATE_SKIP);
}

void ia_gate_idle_figs(const struct ia_gate_summary *base, const struct ia_gate_summary *cur,
		       struct ia_gate_fig *b, struct ia_gate_fig *c, int *est)
{
	*est = all_runs(base, has_est) && all_runs(cur, has_est);
	if (*est) {
		*b = FIG(base, idle_est, SE(idle_est_se), 1);
		*c = FIG(cur, idle_est, SE(idle_est_se), 1);
	} else {
		*b = FIG(base, idle_low, SE(idle_low_se), 1);
		*c = FIG(cur, idle_low, SE(idle_low_se), 1);
	}
}

int ia_gate_check_idle(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		       const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r)
{
	if (cfg->gpu_idle_growth_pts == IA_GATE_OFF)
		return 0;
	struct ia_gate_check *k = ia_gate_add(r, "gpu_idle", "GPU idle of the steady state");
	if (!k)
		return -1;
	snprintf(k->limit, sizeof k->limit, "> +%g pts", cfg->gpu_idle_growth_pts);
	struct ia_gate_fig b, c;
	int est;
	ia_gate_idle_figs(base, cur, &b, &c, &est);
	struct ia_gate_fig bh = FIG(base, idle_high, IA_GATE_NO_SE, 1), ch = FIG(cur, idle_high, IA_GATE_NO_SE, 1);
	if (!b.n || !c.n) {
		snprintf(k->baseline, sizeof k->baseline, "-");
		snprintf(k->current, sizeof k->current, "-");
		snprintf(k->why, sizeof k->why, "no steady state with CUDA work in %s",
			 !b.n ? "the baseline" : "the current run");
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	if (est) {
		snprintf(k->baseline, sizeof k->baseline, "about %.0f%%", b.v);
		snprintf(k->current, sizeof k->current, "about %.0f%%", c.v);
	} else {
		snprintf(k->baseline, sizeof k->baseline, "%.0f-%.0f%%", b.v, bh.v);
		snprintf(k->current, sizeof k->current, "%.0f-%.0f%%", c.v, ch.v);
	}
	double d = c.v - b.v, dh = ch.v - bh.v, noise = ia_gate_idle_noise(cfg, base, b, c);
	double need = cfg->noise_multiple * noise;
	char src[80];
	snprintf(k->change, sizeof k->change, est ? "%+.0f pts" : "%+.0f/%+.0f pts", d, dh);
	snprintf(k->evidence, sizeof k->evidence, "%s; noise +-%.1f pts%s", est ? "estimate" : "both bounds",
		 noise, ia_gate_noise_source(cfg, base, 1, src, sizeof src));
	if (!enough) {
		not_enough(r, k);
		return 0;
	}
	double t = cfg->gpu_idle_growth_pts;
	if (d > t && d > need && (est || dh > t)) {
		ia_gate_set(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "GPU idle of the steady state %s -> %s (%+.0f pts, limit +%g pts, %g x noise %.1f pts)",
			 k->baseline, k->current, d, t, cfg->noise_multiple, noise);
		ia_gate_why_causes(r, k, 1, NULL);
	} else if (d < -t && -d > need && (est || dh < -t)) {
		ia_gate_set(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "the GPU waits less: %s -> %s", k->baseline, k->current);
	}
	return 0;
}

/* The throughput both sides have: steps per second where every run found
 * a step (a step that changed its calls, a sync added, is still a step),
 * else calls per second.  1 for steps. */
static int throughput_figs(const struct ia_gate_summary *base, const struct ia_gate_summary *cur,
			   struct ia_gate_fig *b, struct ia_gate_fig *c)
{
	int steps = all_runs(base, has_steps) && all_runs(cur, has_steps);
	*b = steps ? FIG(base, steps_per_s, SE(steps_per_s_se), 1) : FIG(base, calls_per_s, SE(calls_per_s_se), 1);
	*c = steps ? FIG(cur, steps_per_s, SE(steps_per_s_se), 1) : FIG(cur, calls_per_s, SE(calls_per_s_se), 1);
	return steps;
}

int ia_gate_steps_held(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		       const struct ia_gate_summary *cur)
{
	struct ia_gate_fig b, c;
	throughput_figs(base, cur, &b, &c);
	if (!b.n || !c.n || b.v <= 0 || c.v <= 0)
		return -1;
	/* the runs' own noise, not the one-run floor: a call that got slower
	 * by its own test while the steps fell beyond their noise is judged */
	return b.v - c.v <= cfg->noise_multiple * ia_gate_noise2(b, c);
}

int ia_gate_check_throughput(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			     const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r)
{
	if (cfg->throughput_drop_pct == IA_GATE_OFF)
		return 0;
	struct ia_gate_fig b, c;
	int steps = throughput_figs(base, cur, &b, &c);
	const char *unit = steps ? "steps" : "CUDA calls";
	struct ia_gate_check *k = ia_gate_add(r, "throughput", "%s per second (steady state)", unit);
	if (!k)
		return -1;
	snprintf(k->limit, sizeof k->limit, "< -%g%%", cfg->throughput_drop_pct);
	snprintf(k->baseline, sizeof k->baseline, "%.4g/s", b.v);
	snprintf(k->current, sizeof k->current, "%.4g/s", c.v);
	if (!b.n || !c.n || b.v <= 0 || c.v <= 0) {
		snprintf(k->why, sizeof k->why, "no steady state with CUDA work in %s",
			 !b.n || b.v <= 0 ? "the baseline" : "the current run");
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	double ratio = c.v / b.v, noise = ia_gate_throughput_noise(cfg, base, b, c), need = cfg->noise_multiple * noise;
	char src[80];
	ia_gate_fmt_change(k->change, sizeof k->change, ratio);
	snprintf(k->evidence, sizeof k->evidence, "noise +-%.3g/s%s", noise, ia_gate_noise_source(cfg, base, 0, src, sizeof src));
	if (!enough) {
		not_enough(r, k);
		return 0;
	}
	double drop = (1 - ratio) * 100;
	if (drop > cfg->throughput_drop_pct && b.v - c.v > need) {
		ia_gate_set(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "throughput of the steady state fell: %.4g -> %.4g %s per second (%s, limit -%g%%, %g x noise %.3g/s)",
			 b.v, c.v, unit, k->change, cfg->throughput_drop_pct, cfg->noise_multiple, noise);
		ia_gate_why_causes(r, k, 1, NULL);
	} else if (-drop > cfg->throughput_drop_pct && c.v - b.v > need) {
		ia_gate_set(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "the steady state runs faster: %.4g -> %.4g %s per second", b.v, c.v, unit);
	}
	return 0;
}

int ia_gate_check_phases(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			 const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	static const struct { const char *name; size_t off; } phases[] = {
		{ "start-up", offsetof(struct ia_gate_run, startup_s) },
		{ "compilation", offsetof(struct ia_gate_run, compilation_s) },
		{ "autotuning", offsetof(struct ia_gate_run, autotuning_s) },
		{ "epoch boundaries", offsetof(struct ia_gate_run, epochs_s) },
	};
	if (cfg->phases == IA_GATE_CHAINS_IGNORE)
		return 0;
	for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
		struct ia_gate_fig b = ia_gate_fig_of(base, phases[i].off, IA_GATE_NO_SE, 0);
		struct ia_gate_fig c = ia_gate_fig_of(cur, phases[i].off, IA_GATE_NO_SE, 0);
		if (b.v <= 0 && c.v <= 0)
			continue;   /* neither run had it */
		struct ia_gate_check *k = ia_gate_add(r, "phases", "%s time", phases[i].name);
		if (!k)
			return -1;
		char d[32];
		snprintf(k->baseline, sizeof k->baseline, "%.2fs", b.v);
		snprintf(k->current, sizeof k->current, "%.2fs", c.v);
		ia_gate_fmt_change(k->change, sizeof k->change, b.v > 0 ? c.v / b.v : 1e9);
		if (b.v <= 0)
			snprintf(k->change, sizeof k->change, "new");
		snprintf(k->limit, sizeof k->limit, "> +%g%% and +%s", cfg->phase_growth_pct,
			 ia_fmt_dur(d, sizeof d, cfg->phase_min_delta_ns));
		snprintf(k->evidence, sizeof k->evidence, "%s", cfg->phases == IA_GATE_CHAINS_FAIL ? "gated (phases = fail)"
				 : "warned only (phases = warn)");
		double grew = c.v - b.v, need = cfg->noise_multiple * ia_gate_noise2(b, c);
		if (grew > (double)cfg->phase_min_delta_ns / 1e9 && grew > need &&
		    (b.v <= 0 || cfg->phase_growth_pct == IA_GATE_OFF || 100 * grew / b.v > cfg->phase_growth_pct)) {
			snprintf(k->why, sizeof k->why,
				 "%s took longer: %s -> %s (%s; one-time, it varies with caches and imports%s)",
				 phases[i].name, k->baseline, k->current, k->change,
				 cfg->phases == IA_GATE_CHAINS_FAIL ? "; gated: phases = fail" : "; phases = fail gates it");
			ia_gate_set(r, k, cfg->phases == IA_GATE_CHAINS_FAIL ? IA_GATE_FAIL : IA_GATE_WARN);
		}
	}
	return 0;
}
