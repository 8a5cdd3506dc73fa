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
 */
#include "gate/gate_compare.h"
#include "gate/gate_stats.h"
#include "base/util.h"

#include <math.h>
#include <stdarg.h>
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
	free(r->checks);
	memset(r, 0, sizeof *r);
}

static struct ia_gate_check *add(struct ia_gate_result *r, const char *group, const char *fmt, ...)
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

static void set_verdict(struct ia_gate_result *r, struct ia_gate_check *c, enum ia_gate_verdict v)
{
	c->verdict = v;
	if (v == IA_GATE_FAIL)
		r->fails++;
	else if (v == IA_GATE_WARN)
		r->warns++;
}

static void fmt_pct_change(char *buf, size_t len, double ratio)
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

static int check_p50(const struct ia_gate_config *cfg, const struct ia_gate_limits *lim,
		     const struct ia_gate_api *b, const struct ia_gate_api *c, struct ia_gate_result *r)
{
	struct ia_gate_check *k = add(r, "latency", "%s p50", b->name);
	if (!k)
		return -1;
	char t1[32];
	ia_fmt_dur(k->baseline, sizeof k->baseline, b->p50_ns);
	ia_fmt_dur(k->current, sizeof k->current, c->p50_ns);
	double ratio = safe_ratio(c->p50_ns, b->p50_ns);
	fmt_pct_change(k->change, sizeof k->change, ratio);
	if (lim->p50_growth_pct == IA_GATE_OFF) {
		snprintf(k->limit, sizeof k->limit, "off");
		snprintf(k->why, sizeof k->why, "p50 check switched off (p50_growth_pct = off)");
		set_verdict(r, k, IA_GATE_SKIP);
		return 0;
	}
	snprintf(k->limit, sizeof k->limit, "> +%g%%", lim->p50_growth_pct);

	struct ia_mwu up, down;
	ia_gate_mwu(b->samples, b->nsamples, c->samples, c->nsamples, &up);
	ia_gate_mwu(c->samples, c->nsamples, b->samples, b->nsamples, &down);
	snprintf(k->evidence, sizeof k->evidence, "U p=%.2g r=%+.2f", up.p < down.p ? up.p : down.p, up.r);

	double thr = 1 + lim->p50_growth_pct / 100;
	uint64_t delta_up = c->p50_ns > b->p50_ns ? c->p50_ns - b->p50_ns : 0;
	uint64_t delta_down = b->p50_ns > c->p50_ns ? b->p50_ns - c->p50_ns : 0;
	if (up.p < cfg->alpha && ratio > thr && delta_up >= lim->min_delta_ns) {
		set_verdict(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "%s got slower: median %s -> %s (%s, limit +%g%%); Mann-Whitney U one-sided p=%.2g < alpha %g",
			 b->name, k->baseline, k->current, k->change, lim->p50_growth_pct, up.p, cfg->alpha);
	} else if (down.p < cfg->alpha && ratio * thr < 1 && delta_down >= lim->min_delta_ns) {
		set_verdict(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "%s got faster: median %s -> %s", b->name, k->baseline,
			 ia_fmt_dur(t1, sizeof t1, c->p50_ns));
	}
	return 0;
}

static int check_p99(const struct ia_gate_config *cfg, const struct ia_gate_limits *lim,
		     const struct ia_gate_api *b, const struct ia_gate_api *c, struct ia_gate_result *r)
{
	struct ia_gate_check *k = add(r, "latency", "%s p99", b->name);
	if (!k)
		return -1;
	ia_fmt_dur(k->baseline, sizeof k->baseline, b->p99_ns);
	ia_fmt_dur(k->current, sizeof k->current, c->p99_ns);
	double ratio = safe_ratio(c->p99_ns, b->p99_ns);
	fmt_pct_change(k->change, sizeof k->change, ratio);
	if (lim->p99_growth_pct == IA_GATE_OFF) {
		snprintf(k->limit, sizeof k->limit, "off");
		snprintf(k->why, sizeof k->why, "p99 check switched off (p99_growth_pct = off)");
		set_verdict(r, k, IA_GATE_SKIP);
		return 0;
	}
	snprintf(k->limit, sizeof k->limit, "> +%g%%", lim->p99_growth_pct);
	if (b->count < lim->p99_min_samples || c->count < lim->p99_min_samples) {
		snprintf(k->why, sizeof k->why, "too few calls for a p99 (%llu and %llu, need %zu each)",
			 (unsigned long long)b->count, (unsigned long long)c->count, lim->p99_min_samples);
		set_verdict(r, k, IA_GATE_SKIP);
		return 0;
	}
	double thr = 1 + lim->p99_growth_pct / 100;
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
	if (up && lo > thr) {
		set_verdict(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "%s tail got slower: p99 %s -> %s (%s, limit +%g%%); bootstrap %g%% CI of the ratio x%.3g..x%.3g lies above x%.3g",
			 b->name, k->baseline, k->current, k->change, lim->p99_growth_pct,
			 100 * (1 - cfg->alpha), lo, hi, thr);
	} else if (down && hi * thr < 1) {
		set_verdict(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "%s tail got faster: p99 %s -> %s", b->name, k->baseline,
			 k->current);
	}
	return 0;
}

static int check_apis(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		      const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
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
			struct ia_gate_check *k = add(r, "latency", "%s", name);
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
			set_verdict(r, k, IA_GATE_SKIP);
			continue;
		}
		if (b->count < lim.min_samples || c->count < lim.min_samples ||
		    !b->nsamples || !c->nsamples) {
			struct ia_gate_check *k = add(r, "latency", "%s", name);
			if (!k)
				return -1;
			snprintf(k->baseline, sizeof k->baseline, "%llu call%s", (unsigned long long)b->count,
				 b->count == 1 ? "" : "s");
			snprintf(k->current, sizeof k->current, "%llu call%s", (unsigned long long)c->count,
				 c->count == 1 ? "" : "s");
			snprintf(k->why, sizeof k->why, "too few calls to judge (need %zu on each side; min_samples)",
				 lim.min_samples);
			set_verdict(r, k, IA_GATE_SKIP);
			k->minor = 1;
			continue;
		}
		if (check_p50(cfg, &lim, b, c, r) < 0 || check_p99(cfg, &lim, b, c, r) < 0)
			return -1;
	}
	return 0;
}

static int check_idle(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		      const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	if (cfg->gpu_idle_growth_pts == IA_GATE_OFF)
		return 0;
	struct ia_gate_check *k = add(r, "gpu_idle", "GPU idle share (estimate)");
	if (!k)
		return -1;
	snprintf(k->limit, sizeof k->limit, "> +%g pts", cfg->gpu_idle_growth_pts);
	if (!base->has_idle || !cur->has_idle) {
		snprintf(k->baseline, sizeof k->baseline, base->has_idle ? "%.0f-%.0f%%" : "-",
			 base->idle_low, base->idle_high);
		snprintf(k->current, sizeof k->current, cur->has_idle ? "%.0f-%.0f%%" : "-",
			 cur->idle_low, cur->idle_high);
		snprintf(k->why, sizeof k->why, "no GPU-idle estimate in %s",
			 !base->has_idle ? "the baseline" : "the current run");
		set_verdict(r, k, IA_GATE_SKIP);
		return 0;
	}
	snprintf(k->baseline, sizeof k->baseline, "%.0f-%.0f%%", base->idle_low, base->idle_high);
	snprintf(k->current, sizeof k->current, "%.0f-%.0f%%", cur->idle_low, cur->idle_high);
	double dlo = cur->idle_low - base->idle_low, dhi = cur->idle_high - base->idle_high;
	snprintf(k->change, sizeof k->change, "%+.0f/%+.0f pts", dlo, dhi);
	snprintf(k->evidence, sizeof k->evidence, "both bounds compared");
	double t = cfg->gpu_idle_growth_pts;
	if (dlo > t && dhi > t) {
		set_verdict(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "the GPU waits more: estimated idle share %s -> %s (both bounds up by more than %g points)",
			 k->baseline, k->current, t);
	} else if (dlo < -t && dhi < -t) {
		set_verdict(r, k, IA_GATE_IMPROVED);
		snprintf(k->why, sizeof k->why, "the GPU waits less: %s -> %s", k->baseline, k->current);
	}
	return 0;
}

static int check_rate(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		      const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	if (cfg->calls_per_sec_drop_pct == IA_GATE_OFF)
		return 0;
	struct ia_gate_check *k = add(r, "throughput", "CUDA calls per second");
	if (!k)
		return -1;
	snprintf(k->limit, sizeof k->limit, "< -%g%%", cfg->calls_per_sec_drop_pct);
	double rb = base->duration_s > 0 ? base->calls / base->duration_s : 0;
	double rc = cur->duration_s > 0 ? cur->calls / cur->duration_s : 0;
	snprintf(k->baseline, sizeof k->baseline, "%.0f/s", rb);
	snprintf(k->current, sizeof k->current, "%.0f/s", rc);
	if (rb <= 0 || rc <= 0) {
		snprintf(k->why, sizeof k->why, "no CUDA activity span in %s",
			 rb <= 0 ? "the baseline" : "the current run");
		set_verdict(r, k, IA_GATE_SKIP);
		return 0;
	}
	double ratio = rc / rb;
	fmt_pct_change(k->change, sizeof k->change, ratio);
	snprintf(k->evidence, sizeof k->evidence, "%llu calls in %.2fs",
		 (unsigned long long)cur->calls, cur->duration_s);
	double drop = (1 - ratio) * 100;
	if (drop > cfg->calls_per_sec_drop_pct) {
		set_verdict(r, k, IA_GATE_FAIL);
		snprintf(k->why, sizeof k->why,
			 "throughput fell: %s -> %s CUDA calls per second (%s, limit -%g%%)",
			 k->baseline, k->current, k->change, cfg->calls_per_sec_drop_pct);
	} else if (-drop > cfg->calls_per_sec_drop_pct) {
		set_verdict(r, k, IA_GATE_IMPROVED);
	}
	return 0;
}

static int has_high(const struct ia_gate_summary *s, const char *key)
{
	for (size_t i = 0; i < s->nchains; i++)
		if (!strcmp(s->chains[i].severity, "HIGH") && !strcmp(s->chains[i].key, key))
			return 1;
	return 0;
}

static size_t count_high(const struct ia_gate_summary *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nchains; i++)
		n += !strcmp(s->chains[i].severity, "HIGH");
	return n;
}

/* Whether chain i of s repeats the identity of an earlier HIGH chain of s. */
static int seen_before(const struct ia_gate_summary *s, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->chains[j].severity, "HIGH") && !strcmp(s->chains[j].key, s->chains[i].key))
			return 1;
	return 0;
}

static int check_chains(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	if (cfg->new_high_chains == IA_GATE_CHAINS_IGNORE)
		return 0;
	size_t nnew = 0;
	/* one row per new chain identity: what a reviewer has to look at */
	for (size_t i = 0; i < cur->nchains; i++) {
		const struct ia_gate_chain *ch = &cur->chains[i];
		if (strcmp(ch->severity, "HIGH") || has_high(base, ch->key) || seen_before(cur, i))
			continue;
		struct ia_gate_check *k = add(r, "chains", "new HIGH chain: %s", ch->label ? ch->label : ch->key);
		if (!k)
			return -1;
		nnew++;
		snprintf(k->baseline, sizeof k->baseline, "-");
		snprintf(k->current, sizeof k->current, "HIGH");
		snprintf(k->change, sizeof k->change, "new");
		snprintf(k->limit, sizeof k->limit, "no new HIGH");
		snprintf(k->evidence, sizeof k->evidence, "%s", ch->summary ? ch->summary : "");
		snprintf(k->why, sizeof k->why, "new HIGH causal chain: %s", ch->summary ? ch->summary : ch->key);
		set_verdict(r, k, cfg->new_high_chains == IA_GATE_CHAINS_FAIL ? IA_GATE_FAIL : IA_GATE_WARN);
	}
	for (size_t i = 0; i < base->nchains; i++) {
		const struct ia_gate_chain *ch = &base->chains[i];
		if (strcmp(ch->severity, "HIGH") || has_high(cur, ch->key) || seen_before(base, i))
			continue;
		struct ia_gate_check *k = add(r, "chains", "resolved HIGH chain: %s", ch->label ? ch->label : ch->key);
		if (!k)
			return -1;
		snprintf(k->baseline, sizeof k->baseline, "HIGH");
		snprintf(k->current, sizeof k->current, "-");
		snprintf(k->change, sizeof k->change, "resolved");
		snprintf(k->evidence, sizeof k->evidence, "%s", ch->summary ? ch->summary : "");
		set_verdict(r, k, IA_GATE_IMPROVED);
	}
	/* same problem, other cause (gaps_host_busy -> gaps_waiting_workers): worth a line, not a failure */
	for (size_t i = 0; i < cur->nchains; i++) {
		const struct ia_gate_chain *ch = &cur->chains[i];
		if (strcmp(ch->severity, "HIGH") || !ch->label || seen_before(cur, i))
			continue;
		for (size_t j = 0; j < base->nchains; j++) {
			const struct ia_gate_chain *bh = &base->chains[j];
			if (strcmp(bh->severity, "HIGH") || strcmp(bh->key, ch->key) || !bh->label ||
			    !strcmp(bh->label, ch->label))
				continue;
			struct ia_gate_check *k = add(r, "chains", "HIGH chain %s: cause changed", ch->key);
			if (!k)
				return -1;
			snprintf(k->baseline, sizeof k->baseline, "%s", bh->label);
			snprintf(k->current, sizeof k->current, "%s", ch->label);
			snprintf(k->change, sizeof k->change, "cause changed");
			snprintf(k->evidence, sizeof k->evidence, "%s", ch->summary ? ch->summary : "");
			break;
		}
	}
	if (!nnew) {
		struct ia_gate_check *k = add(r, "chains", "new HIGH chains");
		if (!k)
			return -1;
		snprintf(k->baseline, sizeof k->baseline, "%zu HIGH", count_high(base));
		snprintf(k->current, sizeof k->current, "%zu HIGH", count_high(cur));
		snprintf(k->change, sizeof k->change, "none new");
		snprintf(k->limit, sizeof k->limit, "no new HIGH");
	}
	return 0;
}

int ia_gate_compare(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		    const struct ia_gate_summary *cur, struct ia_gate_result *out)
{
	memset(out, 0, sizeof *out);
	if (check_apis(cfg, base, cur, out) < 0 || check_idle(cfg, base, cur, out) < 0 ||
	    check_rate(cfg, base, cur, out) < 0 || check_chains(cfg, base, cur, out) < 0) {
		ia_gate_result_free(out);
		return -1;
	}
	return 0;
}
