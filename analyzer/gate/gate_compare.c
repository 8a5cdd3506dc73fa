/*
 * gate_compare.c — every check of the CI gate (see gate_compare.h).
 *
 * Why two conditions per latency check: with a few hundred calls a 2x
 * slowdown may not be statistically clear, and with ten million calls a
 * 1 % shift is "significant" but nobody wants a red build for it.  So a
 * latency regression needs both evidence (the U test, or the bootstrap
 * interval lying wholly above the limit) and size (growth above the
 * configured percentage and above an absolute floor, min_delta).  Runs of
 * one program that differ only by noise fail neither.
 *
 * The bootstrap runs only when the point estimate already crosses the
 * limit: its interval could not then lie wholly above it otherwise, and it
 * is the one costly step.  Its seed mixes the configured seed with the API
 * name, so each API's interval is reproducible on its own.
 *
 * A sync is a wait for the GPU: a host that got faster, or less busy, waits
 * longer in it (on a 2-CPU VM, one run's cudaEventSynchronize p50 3.7 us,
 * its twin's 4.4 ms: the host fell behind the GPU in one of them).  So is a
 * launch into a full queue (a GPU-bound loop's host runs ahead until the
 * queue is full, then waits in launches).  Such a call fails only when the
 * steady state's throughput fell too (a slower GPU shows there); with it
 * held, the check passes and says why.
 *
 * A latency change must also cost the user time: the calls' mean growth
 * times their number, as a share of the steady state, at least min_cost_pct
 * (a pinned copy's call 2.3 -> 4.0 us, a hundred of them in a second, is
 * +74 % and 0.02 % of the run).
 *
 * A baseline of several runs knows how much an API's p50 and p99 move from
 * run to run, which no test within one run can see: the limit is then at
 * least noise_multiple times that spread (the runs' standard deviation
 * over their median), the samples tested are those of all its runs pooled.
 */
#include "gate/gate_compare.h"

#include "base/util.h"
#include "gate/gate_compare_internal.h"
#include "gate/gate_stats.h"
#include "measure/gaps.h"

#include <ingero/api.h>

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ia_gate_verdict_name(enum ia_gate_verdict v)
{
	switch (v) {
	case IA_GATE_PASS: return "pass";
	case IA_GATE_IMPROVED: return "improved";
	case IA_GATE_SKIP: return "skip";
	case IA_GATE_WARN: return "warn";
	case IA_GATE_FAIL: return "FAIL";
	}
	return "?";
}

void ia_gate_result_free(struct ia_gate_result *r)
{
	for (size_t i = 0; i < r->nbase_runs; i++)
		free(r->base_runs[i]);
	free(r->base_runs);
	free(r->checks);
	free(r->changes);
	memset(r, 0, sizeof *r);
}

struct ia_gate_check *ia_gate_add(struct ia_gate_result *r, const char *group, const char *fmt, ...)
{
	if (ia_grow((void **)&r->checks, &r->cap, r->n + 1, sizeof *r->checks) < 0)
		return NULL;
	struct ia_gate_check *c = &r->checks[r->n++];
	memset(c, 0, sizeof *c);
	snprintf(c->group, sizeof c->group, "%s", group);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof c->name, fmt, ap);
	va_end(ap);
	c->verdict = IA_GATE_PASS;
	return c;
}

void ia_gate_set(struct ia_gate_result *r, struct ia_gate_check *c, enum ia_gate_verdict v)
{
	c->verdict = v;
	if (v == IA_GATE_FAIL)
		r->fails++;
	else if (v == IA_GATE_WARN)
		r->warns++;
}

void ia_gate_fmt_change(char *buf, size_t len, double ratio)
{
	double pct = (ratio - 1) * 100;
	if (fabs(pct) >= 1000)
		snprintf(buf, len, "x%.0f", ratio);
	else
		snprintf(buf, len, "%+.0f%%", pct);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static double safe_ratio(uint64_t cur, uint64_t base)
{
	return (double)cur / (double)(base ? base : 1);
}

struct ia_gate_fig ia_gate_fig_values(double *v, size_t n)
{
	struct ia_gate_fig f = { 0, 0, n };
	f.noise = ia_gate_sd(v, n);
	f.v = ia_gate_median(v, n);
	if (n >= 3) {
		/* from three runs on, the median absolute deviation (scaled to a
		 * standard deviation): one run of a busy machine among them does
		 * not widen every limit */
		double *d = malloc(n * sizeof *d);
		if (d) {
			for (size_t i = 0; i < n; i++)
				d[i] = fabs(v[i] - f.v);
			f.noise = 1.4826 * ia_gate_median(d, n);
			free(d);
		}
	}
	return f;
}

struct ia_gate_fig ia_gate_fig_of(const struct ia_gate_summary *s, size_t off, size_t se_off, int steady_only)
{
	struct ia_gate_fig f = { 0, 0, 0 };
	double *v = calloc(s->nruns ? s->nruns : 1, sizeof *v), *se = calloc(s->nruns ? s->nruns : 1, sizeof *se);
	size_t n = 0;
	for (size_t i = 0; v && se && i < s->nruns; i++) {
		const struct ia_gate_run *x = &s->runs[i];
		if (steady_only && !x->steady)
			continue;
		v[n] = *(const double *)((const char *)x + off);
		se[n++] = se_off == IA_GATE_NO_SE ? 0 : *(const double *)((const char *)x + se_off);
	}
	if (n == 1) {
		f.v = v[0], f.noise = se[0], f.n = 1;
	} else if (n > 1) {
		f = ia_gate_fig_values(v, n);
		double within = ia_gate_median(se, n);
		if (within > f.noise)
			f.noise = within;
	}
	free(v);
	free(se);
	return f;
}

double ia_gate_noise2(struct ia_gate_fig b, struct ia_gate_fig c)
{
	return sqrt(b.noise * b.noise + c.noise * c.noise);
}

double ia_gate_idle_noise(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			  struct ia_gate_fig b, struct ia_gate_fig c)
{
	double n = ia_gate_noise2(b, c);
	return base->nruns < 2 && n < cfg->one_run_idle_pts ? cfg->one_run_idle_pts : n;
}

double ia_gate_throughput_noise(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
				struct ia_gate_fig b, struct ia_gate_fig c)
{
	double n = ia_gate_noise2(b, c), floor = b.v * cfg->one_run_throughput_pct / 100;
	return base->nruns < 2 && n < floor ? floor : n;
}

const char *ia_gate_noise_source(const struct ia_gate_config *cfg, const struct ia_gate_summary *base, int idle,
				 char *buf, size_t n)
{
	if (base->nruns > 1)
		snprintf(buf, n, " (spread of runs)");
	else if (idle ? cfg->one_run_idle_pts > 0 : cfg->one_run_throughput_pct > 0)
		snprintf(buf, n, " (one-run baseline: at least +-%g%s between runs)",
			 idle ? cfg->one_run_idle_pts : cfg->one_run_throughput_pct, idle ? " pts" : "%");
	else
		buf[0] = 0;
	return buf;
}

/* How much an API's quantile moves between a baseline's runs, relative to
 * their median (0 with one run): the runs where it was called count. */
static double run_spread(const uint64_t *q, size_t nruns)
{
	if (!q || nruns < 2)
		return 0;
	double *v = calloc(nruns, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; v && i < nruns; i++)
		if (q[i])
			v[n++] = (double)q[i];
	struct ia_gate_fig f = ia_gate_fig_values(v, n);
	free(v);
	return n >= 2 && f.v > 0 ? f.noise / f.v : 0;
}

/* The growth limit of a quantile, in percent: the configured one, or
 * noise_multiple times the baseline's spread between runs when larger.  A
 * baseline of one run has no spread: it takes the floor measured between
 * identical runs (one_run_noise_latency_pct), since a whole run's host calls
 * shift together with the machine's state (on the H200, a launch loop's
 * cudaLaunchKernel median 4.7-6.6 us over ten identical runs). */
static double growth_limit(const struct ia_gate_config *cfg, double pct, const uint64_t *runs, size_t nruns)
{
	double spread = cfg->noise_multiple * (nruns < 2 ? cfg->one_run_latency_pct : 100 * run_spread(runs, nruns));
	return spread > pct ? spread : pct;
}

static const char *limit_source(size_t nruns)
{
	return nruns < 2 ? " (one-run noise)" : " (spread)";
}

/* Whether a call of the API waits for the GPU: a sync (api.h class SYNC),
 * or a launch or memset while the GPU was busy IA_QUEUE_FULL_BUSY of the
 * current run's steady state (gpu_busy, 0..1: it waited for room in a full
 * queue, as the slow-calls rule reads it; not a copy, whose time may be the
 * host's staging from pageable memory). */
static int waits_for_gpu(const char *name, double gpu_busy)
{
	for (unsigned id = 1; id < INGERO_API_MAX; id++) {
		const char *n = ingero_api_name(id);
		if (!n || strcmp(n, name))
			continue;
		enum ingero_api_class c = ingero_api_class(id);
		return c == INGERO_CLASS_SYNC ||
		       ((c == INGERO_CLASS_LAUNCH || c == INGERO_CLASS_MEMSET) && gpu_busy >= IA_QUEUE_FULL_BUSY);
	}
	return 0;
}

/* A call that waits longer for the GPU while the steps did not slow down: said, not failed. */
static int sync_with_slack(struct ia_gate_check *k, const struct ia_gate_api *b, int steps_held, double gpu_busy)
{
	if (steps_held != 1 || !waits_for_gpu(b->name, gpu_busy))
		return 0;
	snprintf(k->why, sizeof k->why,
		 "%s waits longer for the GPU while the steady state's throughput held: the host has more slack, "
		 "not a regression (a slower GPU would show in the throughput)", b->name);
	return 1;
}

/* The extra time of a slower API, as a share of the current run's steady
 * state (its window without one), in percent: its calls' mean growth times
 * their number over that time.  The mean, not the quantile that grew: an
 * API that mixes calls (a 12 MB copy and an 8-byte one each step) may move
 * its p50 a little and its time a lot. */
static double mean_ns(const struct ia_gate_api *g)
{
	double sum = 0;
	for (size_t i = 0; i < g->nsamples; i++)
		sum += (double)g->samples[i];
	return g->nsamples ? sum / (double)g->nsamples : 0;
}

static double cost_pct(const struct ia_gate_api *b, const struct ia_gate_api *c, double secs)
{
	double grew = mean_ns(c) - mean_ns(b);
	if (grew <= 0)
		return 0;
	return secs > 0 ? 100.0 * grew * (double)c->count / 1e9 / secs : 100;
}

/* Whether that extra time matters (min_cost_pct); said in the check when not. */
static int material(const struct ia_gate_config *cfg, struct ia_gate_check *k, double pct)
{
	if (cfg->min_cost_pct == IA_GATE_OFF || pct >= cfg->min_cost_pct)
		return 1;
	snprintf(k->why, sizeof k->why,
		 "slower, but its extra time is %.2g%% of the steady state (min_cost_pct %g%%): not a cost a user sees",
		 pct, cfg->min_cost_pct);
	size_t l = strlen(k->evidence);
	snprintf(k->evidence + l, sizeof k->evidence - l, ", cost %.2g%%", pct);
	return 0;
}

static int check_p50(const struct ia_gate_config *cfg, const struct ia_gate_limits *lim,
		     const struct ia_gate_api *b, const struct ia_gate_api *c, size_t nruns, double secs,
		     int steps_held, double gpu_busy, struct ia_gate_result *r)
{
	struct ia_gate_check *k = ia_gate_add(r, "latency", "%s p50", b->name);
	if (!k)
		return -1;
	char t1[32];
	ia_fmt_dur(k->baseline, sizeof k->baseline, b->p50_ns);
	ia_fmt_dur(k->current, sizeof k->current, c->p50_ns);
	double ratio = safe_ratio(c->p50_ns, b->p50_ns);
	ia_gate_fmt_change(k->change, sizeof k->change, ratio);
	if (lim->p50_growth_pct == IA_GATE_OFF) {
		snprintf(k->limit, sizeof k->limit, "off");
		snprintf(k->why, sizeof k->why, "p50 check switched off (p50_growth_pct = off)");
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	double lim_pct = growth_limit(cfg, lim->p50_growth_pct, b->run_p50, nruns);
	snprintf(k->limit, sizeof k->limit, "> +%.3g%%%s", lim_pct, lim_pct > lim->p50_growth_pct ? limit_source(nruns) : "");

	struct ia_mwu up, down;
	ia_gate_mwu(b->samples, b->nsamples, c->samples, c->nsamples, &up);
	ia_gate_mwu(c->samples, c->nsamples, b->samples, b->nsamples, &down);
	snprintf(k->evidence, sizeof k->evidence, "U p=%.2g r=%+.2f", up.p < down.p ? up.p : down.p, up.r);

	double thr = 1 + lim_pct / 100;
	uint64_t delta_up = c->p50_ns > b->p50_ns ? c->p50_ns - b->p50_ns : 0;
	uint64_t delta_down = b->p50_ns > c->p50_ns ? b->p50_ns - c->p50_ns : 0;
	if (up.p < cfg->alpha && ratio > thr && delta_up >= lim->min_delta_ns &&
	    material(cfg, k, cost_pct(b, c, secs)) && !sync_with_slack(k, b, steps_held, gpu_busy)) {
		ia_gate_set(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "%s got slower: median %s -> %s (%s, limit +%.3g%%); Mann-Whitney U one-sided p=%.2g < alpha %g",
			 b->name, k->baseline, k->current, k->change, lim_pct, up.p, cfg->alpha);
		ia_gate_why_causes(r, k, 0, b->name);
	} else if (down.p < cfg->alpha && ratio * thr < 1 && delta_down >= lim->min_delta_ns) {
		ia_gate_set(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "%s got faster: median %s -> %s", b->name, k->baseline,
			 ia_fmt_dur(t1, sizeof t1, c->p50_ns));
	}
	return 0;
}

static int check_p99(const struct ia_gate_config *cfg, const struct ia_gate_limits *lim,
		     const struct ia_gate_api *b, const struct ia_gate_api *c, size_t nruns, double secs,
		     int steps_held, double gpu_busy, struct ia_gate_result *r)
{
	struct ia_gate_check *k = ia_gate_add(r, "latency", "%s p99", b->name);
	if (!k)
		return -1;
	ia_fmt_dur(k->baseline, sizeof k->baseline, b->p99_ns);
	ia_fmt_dur(k->current, sizeof k->current, c->p99_ns);
	double ratio = safe_ratio(c->p99_ns, b->p99_ns);
	ia_gate_fmt_change(k->change, sizeof k->change, ratio);
	if (lim->p99_growth_pct == IA_GATE_OFF) {
		snprintf(k->limit, sizeof k->limit, "off");
		snprintf(k->why, sizeof k->why, "p99 check switched off (p99_growth_pct = off)");
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	double lim_pct = growth_limit(cfg, lim->p99_growth_pct, b->run_p99, nruns);
	snprintf(k->limit, sizeof k->limit, "> +%.3g%%%s", lim_pct, lim_pct > lim->p99_growth_pct ? limit_source(nruns) : "");
	if (b->count < lim->p99_min_samples || c->count < lim->p99_min_samples) {
		snprintf(k->why, sizeof k->why, "too few calls for a p99 (%llu and %llu, need %zu each)",
			 (unsigned long long)b->count, (unsigned long long)c->count, lim->p99_min_samples);
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	double thr = 1 + lim_pct / 100;
	uint64_t delta_up = c->p99_ns > b->p99_ns ? c->p99_ns - b->p99_ns : 0;
	uint64_t delta_down = b->p99_ns > c->p99_ns ? b->p99_ns - c->p99_ns : 0;
	int up = ratio > thr && delta_up >= lim->min_delta_ns;
	int down = ratio * thr < 1 && delta_down >= lim->min_delta_ns;
	if (!up && !down) {
		snprintf(k->evidence, sizeof k->evidence, "ratio x%.2f", ratio);
		return 0;
	}
	double lo, hi;
	if (ia_gate_bootstrap_ratio(b->samples, b->nsamples, c->samples, c->nsamples, 0.99,
				    cfg->resamples, cfg->alpha, cfg->seed ^ name_hash(b->name), &lo, &hi) < 0)
		return -1;
	snprintf(k->evidence, sizeof k->evidence, "%g%% CI x%.3g..x%.3g", 100 * (1 - cfg->alpha), lo, hi);
	if (up && lo > thr && material(cfg, k, cost_pct(b, c, secs)) &&
	    !sync_with_slack(k, b, steps_held, gpu_busy)) {
		ia_gate_set(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "%s tail got slower: p99 %s -> %s (%s, limit +%.3g%%); bootstrap %g%% CI of the ratio x%.3g..x%.3g lies above x%.3g",
			 b->name, k->baseline, k->current, k->change, lim_pct,
			 100 * (1 - cfg->alpha), lo, hi, thr);
		ia_gate_why_causes(r, k, 0, b->name);
	} else if (down && hi * thr < 1) {
		ia_gate_set(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "%s tail got faster: p99 %s -> %s", b->name, k->baseline,
			 k->current);
	}
	return 0;
}

static int check_apis(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		      const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	/* the time the current run's calls are set against */
	double secs = ia_gate_fig_of(cur, offsetof(struct ia_gate_run, steady_s), IA_GATE_NO_SE, 1).v;
	if (secs <= 0)
		secs = ia_gate_fig_of(cur, offsetof(struct ia_gate_run, window_s), IA_GATE_NO_SE, 0).v;
	int held = ia_gate_steps_held(cfg, base, cur);
	/* how busy the current run's GPU was: the estimate, else the least the bounds allow */
	struct ia_gate_fig ib, ic;
	int est;
	ia_gate_idle_figs(base, cur, &ib, &ic, &est);
	double idle_hi = est ? ic.v : ia_gate_fig_of(cur, offsetof(struct ia_gate_run, idle_high), IA_GATE_NO_SE, 1).v;
	double busy = ic.n ? 1 - idle_hi / 100 : 0;
	/* every API of either run, in name order (both lists are sorted) */
	size_t i = 0, j = 0;
	while (i < base->napis || j < cur->napis) {
		const struct ia_gate_api *b = i < base->napis ? &base->apis[i] : NULL;
		const struct ia_gate_api *c = j < cur->napis ? &cur->apis[j] : NULL;
		int d = !b ? 1 : !c ? -1 : strcmp(b->name, c->name);
		if (d < 0)
			c = NULL, i++;
		else if (d > 0)
			b = NULL, j++;
		else
			i++, j++;
		const char *name = b ? b->name : c->name;
		struct ia_gate_limits lim = ia_gate_limits_for(cfg, name);
		if (lim.ignore)
			continue;
		if (!b || !c) {
			struct ia_gate_check *k = ia_gate_add(r, "latency", "%s", name);
			if (!k)
				return -1;
			const struct ia_gate_api *x = b ? b : c;
			char n[32];
			snprintf(b ? k->baseline : k->current, sizeof k->baseline, "%s call%s",
				 ia_fmt_count(n, sizeof n, x->count), x->count == 1 ? "" : "s");
			snprintf(b ? k->current : k->baseline, sizeof k->current, "-");
			snprintf(k->change, sizeof k->change, b ? "gone" : "new");
			snprintf(k->why, sizeof k->why, b ? "%s is not called in the current run"
				 : "%s is new in the current run: no baseline to compare with", name);
			ia_gate_set(r, k, IA_GATE_SKIP);
			continue;
		}
		if (b->count < lim.min_samples || c->count < lim.min_samples ||
		    !b->nsamples || !c->nsamples) {
			struct ia_gate_check *k = ia_gate_add(r, "latency", "%s", name);
			if (!k)
				return -1;
			snprintf(k->baseline, sizeof k->baseline, "%llu call%s", (unsigned long long)b->count,
				 b->count == 1 ? "" : "s");
			snprintf(k->current, sizeof k->current, "%llu call%s", (unsigned long long)c->count,
				 c->count == 1 ? "" : "s");
			snprintf(k->why, sizeof k->why, "too few calls to judge (need %zu on each side; min_samples)",
				 lim.min_samples);
			ia_gate_set(r, k, IA_GATE_SKIP);
			k->minor = 1;
			continue;
		}
		if (check_p50(cfg, &lim, b, c, base->nruns, secs, held, busy, r) < 0 ||
		    check_p99(cfg, &lim, b, c, base->nruns, secs, held, busy, r) < 0)
			return -1;
	}
	return 0;
}

int ia_gate_compare(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		    const struct ia_gate_summary *cur, struct ia_gate_result *out)
{
	memset(out, 0, sizeof *out);
	out->base_runs = calloc(base->nruns ? base->nruns : 1, sizeof *out->base_runs);
	if (!out->base_runs)
		return -1;
	for (size_t i = 0; i < base->nruns; i++)
		if (!(out->base_runs[out->nbase_runs++] = strdup(base->runs[i].source ? base->runs[i].source : "?")))
			goto oom;
	int enough = 0;
	if (ia_gate_diff(cfg, base, cur, out) < 0 || check_apis(cfg, base, cur, out) < 0 ||
	    ia_gate_check_steady_state(cfg, base, cur, out, &enough) < 0 ||
	    ia_gate_check_idle(cfg, base, cur, enough, out) < 0 ||
	    ia_gate_check_throughput(cfg, base, cur, enough, out) < 0 ||
	    ia_gate_check_chains(cfg, base, cur, enough, out) < 0 || ia_gate_check_phases(cfg, base, cur, out) < 0)
		goto oom;
	return 0;
oom:
	ia_gate_result_free(out);
	return -1;
}
