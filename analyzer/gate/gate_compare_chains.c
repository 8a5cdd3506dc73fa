/*
 * gate_compare_chains.c — the causal chains in the gate: what changed
 * between the runs, and the check on new HIGH chains (see gate_compare.h,
 * gate_compare_internal.h).
 *
 * What changed is the chain diff — chains new, grown, gone, or with
 * another cause, by their cost as a share of the steady state — and the
 * facts of the steady state a cause is told by (gate_steady.h): worker
 * processes, copies from pageable memory, syncs and CPU time per step.  A
 * failing figure names the changes behind it: "GPU idle of the steady
 * state 12% -> 61%: new: the main thread's own work between CUDA calls …;
 * DataLoader worker processes 4 -> 0 (num_workers=0?)".  The hint in
 * parentheses is the usual code change behind such a fact, with a
 * question mark: the trace shows the fact, not the code.
 *
 * A new HIGH chain fails only when its cost rose by chain_cost_growth_pts
 * AND beyond noise_multiple times its noise: a severity that crossed its
 * line by a hair (29 % of the steady state in one run, 31 % in its twin)
 * is listed, not failed.  A chain's own noise within one run is not
 * measured (its rule runs once over the whole steady state); the steady
 * state's GPU idle, of which a chain's cost is a part, stands in for it,
 * and a baseline of several runs adds the spread of the chain's cost
 * between them.  One-time phases are the phase checks' to judge.
 */
#include "gate/gate_compare_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANGE_PTS 5.0   /* a chain's cost moved this many points of the steady state: listed */
/* sentinels of ia_gate_change.api: the change is about every copy / every sync */
#define ANY_COPY "*copy*"
#define ANY_SYNC "*sync*"

static int add_change(struct ia_gate_result *r, enum ia_gate_change_kind kind, double growth, int steady,
		      const char *api, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int add_change(struct ia_gate_result *r, enum ia_gate_change_kind kind, double growth, int steady,
		      const char *api, const char *fmt, ...)
{
	if (r->nchanges == r->ccap) {
		size_t cap = r->ccap ? 2 * r->ccap : 8;
		struct ia_gate_change *c = realloc(r->changes, cap * sizeof *c);
		if (!c)
			return -1;
		r->changes = c;
		r->ccap = cap;
	}
	struct ia_gate_change *c = &r->changes[r->nchanges++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->growth = growth;
	c->steady = steady;
	snprintf(c->api, sizeof c->api, "%s", api ? api : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->text, sizeof c->text, fmt, ap);
	va_end(ap);
	return 0;
}

/* The chain of s with that key (the first; a baseline has one per key). */
static const struct ia_gate_chain *chain_of(const struct ia_gate_summary *s, const char *key)
{
	for (size_t i = 0; i < s->nchains; i++)
		if (!strcmp(s->chains[i].key, key))
			return &s->chains[i];
	return NULL;
}

/* A chain's cost over s's runs: every chain of that key added in each run. */
static struct ia_gate_fig cost_of(const struct ia_gate_summary *s, const char *key)
{
	double *v = calloc(s->nruns ? s->nruns : 1, sizeof *v);
	struct ia_gate_fig f = { 0, 0, 0 };
	if (!v)
		return f;
	for (size_t i = 0; i < s->nchains; i++)
		if (!strcmp(s->chains[i].key, key) && s->chains[i].cost_pct)
			for (size_t r = 0; r < s->nruns; r++)
				v[r] += s->chains[i].cost_pct[r];
	f = ia_gate_fig_values(v, s->nruns);
	free(v);
	return f;
}

static unsigned high_runs(const struct ia_gate_summary *s, const char *key)
{
	unsigned n = 0;
	for (size_t i = 0; i < s->nchains; i++)
		if (!strcmp(s->chains[i].key, key))
			n += s->chains[i].high_runs;
	return n;
}

static const char *words(const struct ia_gate_chain *c)
{
	return c->cause ? c->cause : c->label ? c->label : c->key;
}

/* --- what changed ----------------------------------------------------------------------- */

static int diff_chain(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		      const struct ia_gate_summary *cur, const char *key, struct ia_gate_result *r)
{
	const struct ia_gate_chain *b = chain_of(base, key), *c = chain_of(cur, key);
	const struct ia_gate_chain *x = c ? c : b;
	if (x->phase)
		return 0;   /* the phase checks' */
	struct ia_gate_fig fb = cost_of(base, key), fc = cost_of(cur, key);
	const char *label = x->label ? x->label : x->key;
	double d = fc.v - fb.v;
	if (!b)
		return add_change(r, IA_GATE_NEW, d, 1, c->api, "new: %s (%s %s, %.0f%% of the steady state)", words(c),
				  label, c->severity, fc.v);
	if (!c)
		return add_change(r, IA_GATE_GONE, d, 1, b->api, "gone: %s (%s, %.0f%% -> 0%% of the steady state)",
				  words(b), label, fb.v);
	double need = cfg->noise_multiple * fb.noise;
	if (b->label && c->label && strcmp(b->label, c->label))
		return add_change(r, IA_GATE_CAUSE, d, 1, c->api, "%scause changed: %s -> %s (%s, %.0f%% -> %.0f%% of the steady state)",
				  d >= CHANGE_PTS && d > need ? "grown, " : "", b->label, c->label, words(c), fb.v, fc.v);
	if (d >= CHANGE_PTS && d > need)
		return add_change(r, IA_GATE_GROWN, d, 1, c->api, "grown: %s (%s %s -> %s, %.0f%% -> %.0f%% of the steady state)",
				  words(c), label, b->severity, c->severity, fb.v, fc.v);
	if (-d >= CHANGE_PTS && -d > need)
		return add_change(r, IA_GATE_SHRUNK, d, 1, c->api, "shrunk: %s (%s, %.0f%% -> %.0f%% of the steady state)",
				  words(c), label, fb.v, fc.v);
	return 0;
}

static struct ia_gate_fig fact(const struct ia_gate_summary *s, size_t off)
{
	return ia_gate_fig_of(s, off, IA_GATE_NO_SE, 1);
}
#define FACT(s, f) fact(s, offsetof(struct ia_gate_run, f))

static int steps_everywhere(const struct ia_gate_summary *s)
{
	for (size_t i = 0; i < s->nruns; i++)
		if (!s->runs[i].steady || s->runs[i].steps <= 0)
			return 0;
	return s->nruns > 0;
}

/* The facts that moved, with the code change usually behind each. */
static int diff_facts(const struct ia_gate_summary *base, const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	struct ia_gate_fig bw = ia_gate_fig_of(base, offsetof(struct ia_gate_run, workers), IA_GATE_NO_SE, 0);
	struct ia_gate_fig cw = ia_gate_fig_of(cur, offsetof(struct ia_gate_run, workers), IA_GATE_NO_SE, 0);
	if (bw.n && cw.n && lround(bw.v) != lround(cw.v)) {
		char hint[64];
		if (lround(cw.v) == 0)
			snprintf(hint, sizeof hint, " (num_workers=0?)");
		else
			snprintf(hint, sizeof hint, " (num_workers %ld -> %ld?)", lround(bw.v), lround(cw.v));
		if (add_change(r, IA_GATE_FACT, 0, 1, NULL, "DataLoader worker processes %ld -> %ld%s", lround(bw.v),
			       lround(cw.v), hint) < 0)
			return -1;
	}
	int bs = steps_everywhere(base), cs = steps_everywhere(cur);
	if (!FACT(base, steady_s).n || !FACT(cur, steady_s).n || bs != cs)
		return 0;   /* per step in one, per second in the other: not comparable */
	const char *per = bs ? "per step" : "per second";

	double bpin = FACT(base, h2d_pinned_mb).v, bpage = FACT(base, h2d_pageable_mb).v;
	double cpin = FACT(cur, h2d_pinned_mb).v, cpage = FACT(cur, h2d_pageable_mb).v;
	double bshare = bpin + bpage > 0 ? bpage / (bpin + bpage) : 0, cshare = cpin + cpage > 0 ? cpage / (cpin + cpage) : 0;
	if (cshare - bshare >= 0.5 &&
	    add_change(r, IA_GATE_FACT, 0, 1, ANY_COPY,
		       "host-to-device copies from pageable memory: %.0f%% -> %.0f%% of %.3g MB %s%s", 100 * bshare,
		       100 * cshare, cpin + cpage, per, bpin > 0 ? " (pin_memory removed?)" : "") < 0)
		return -1;
	if (bshare - cshare >= 0.5 &&
	    add_change(r, IA_GATE_FACT, 0, 0, ANY_COPY, "host-to-device copies from pinned memory now: %.0f%% -> %.0f%% pageable",
		       100 * bshare, 100 * cshare) < 0)
		return -1;

	/* one sync a step more: a loop with one (its throttle) that gains an
	 * .item() goes 1 -> 2, exactly the double — a threshold of twice the
	 * baseline was on the edge (0.98 -> 1.96 in a loaded run: not named) */
	struct ia_gate_fig b = FACT(base, syncs), c = FACT(cur, syncs);
	if (c.v - b.v >= (bs ? 0.5 : 5) && c.v >= 1.5 * b.v &&
	    add_change(r, IA_GATE_FACT, 0, 1, ANY_SYNC, "syncs %s %.2g -> %.2g%s", per, b.v, c.v,
		       bs ? " (an .item(), .cpu() or a print of a tensor every step?)" : "") < 0)
		return -1;
	static const struct { size_t off; const char *who, *hint; } cpu[] = {
		{ offsetof(struct ia_gate_run, main_cpu_ms), "the main thread's", " (more host work in the loop: a CPU-heavy step?)" },
		{ offsetof(struct ia_gate_run, workers_cpu_ms), "the DataLoader workers'",
		  " (a costlier __getitem__ or transform?)" },
	};
	for (size_t i = 0; i < 2; i++) {
		b = fact(base, cpu[i].off);
		c = fact(cur, cpu[i].off);
		double floor = bs ? 1 : 50;   /* ms per step, ms per second */
		if (c.v >= 1.5 * b.v && c.v - b.v >= floor &&
		    add_change(r, IA_GATE_FACT, 0, 1, NULL, "%s CPU time %s %.3g ms -> %.3g ms%s", cpu[i].who, per, b.v,
			       c.v, cpu[i].hint) < 0)
			return -1;
	}
	return 0;
}

int ia_gate_diff(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		 const struct ia_gate_summary *cur, struct ia_gate_result *r)
{
	for (size_t i = 0; i < cur->nchains; i++) {
		const char *key = cur->chains[i].key;
		if (chain_of(cur, key) == &cur->chains[i] && diff_chain(cfg, base, cur, key, r) < 0)
			return -1;
	}
	for (size_t i = 0; i < base->nchains; i++) {
		const char *key = base->chains[i].key;
		if (!chain_of(cur, key) && chain_of(base, key) == &base->chains[i] && diff_chain(cfg, base, cur, key, r) < 0)
			return -1;
	}
	return diff_facts(base, cur, r);
}

/* Whether a change is about the API of a latency check. */
static int about_api(const struct ia_gate_change *c, const char *api)
{
	if (!strcmp(c->api, ANY_COPY))
		return strstr(api, "emcpy") != NULL;
	if (!strcmp(c->api, ANY_SYNC))
		return strstr(api, "ynchronize") != NULL;
	return c->api[0] && !strcmp(c->api, api);
}

void ia_gate_why_causes(const struct ia_gate_result *r, struct ia_gate_check *k, int steady, const char *api)
{
	/* the chains that came or grew, most first, then the facts: at most two of each */
	const struct ia_gate_change *pick[4];
	size_t n = 0;
	for (int facts = 0; facts < 2; facts++) {
		size_t taken = 0;
		int used[64] = { 0 };
		while (taken < 2) {
			const struct ia_gate_change *best = NULL;
			size_t bi = 0;
			for (size_t i = 0; i < r->nchanges && i < 64; i++) {
				const struct ia_gate_change *c = &r->changes[i];
				/* a chain that came or grew by less than CHANGE_PTS is listed, not cited */
				int fits = facts ? c->kind == IA_GATE_FACT
						 : c->kind == IA_GATE_CAUSE ||
							   ((c->kind == IA_GATE_NEW || c->kind == IA_GATE_GROWN) &&
							    c->growth >= CHANGE_PTS);
				if (used[i] || !fits || !(steady ? c->steady : about_api(c, api)))
					continue;
				if (!best || c->growth > best->growth)
					best = c, bi = i;
			}
			if (!best)
				break;
			used[bi] = 1;
			pick[n++] = best;
			taken++;
		}
	}
	size_t l = strlen(k->why);
	for (size_t i = 0; i < n; i++) {
		const char *parts[2] = { i ? "; " : ": ", pick[i]->text };
		for (int p = 0; p < 2; p++) {   /* appended as far as it fits */
			size_t m = strlen(parts[p]);
			if (m > sizeof k->why - 1 - l)
				m = sizeof k->why - 1 - l;
			memcpy(k->why + l, parts[p], m);
			l += m;
		}
		k->why[l] = 0;
	}
}

/* --- new HIGH chains ---------------------------------------------------------------------- */

/* Whether chain i of s repeats the identity of an earlier HIGH chain of s. */
static int seen_before(const struct ia_gate_summary *s, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (s->chains[j].high_runs && !strcmp(s->chains[j].key, s->chains[i].key))
			return 1;
	return 0;
}

static size_t count_high(const struct ia_gate_summary *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nchains; i++)
		n += s->chains[i].high_runs > 0 && !s->chains[i].phase;
	return n;
}

static int new_high(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		    const struct ia_gate_summary *cur, const struct ia_gate_chain *ch, int enough, double idle_noise,
		    struct ia_gate_result *r)
{
	struct ia_gate_check *k = ia_gate_add(r, "chains", "new HIGH chain: %s", ch->label ? ch->label : ch->key);
	if (!k)
		return -1;
	struct ia_gate_fig fb = cost_of(base, ch->key), fc = cost_of(cur, ch->key);
	double d = fc.v - fb.v, noise = sqrt(fb.noise * fb.noise + idle_noise * idle_noise);
	double need = cfg->noise_multiple * noise, t = cfg->chain_cost_growth_pts == IA_GATE_OFF ? 0 : cfg->chain_cost_growth_pts;
	snprintf(k->baseline, sizeof k->baseline, chain_of(base, ch->key) ? "%.0f%%" : "-", fb.v);
	snprintf(k->current, sizeof k->current, "HIGH, %.0f%%", fc.v);
	snprintf(k->change, sizeof k->change, "new, %+.0f pts", d);
	snprintf(k->limit, sizeof k->limit, "+%g pts of the steady state", t);
	snprintf(k->evidence, sizeof k->evidence, "%s", ch->summary ? ch->summary : "");
	if (!enough) {
		snprintf(k->why, sizeof k->why, "not enough steady state to judge");
		ia_gate_set(r, k, IA_GATE_SKIP);
		return 0;
	}
	if (d >= t && d > need) {
		snprintf(k->why, sizeof k->why,
			 "new HIGH causal chain: %s, %.0f%% -> %.0f%% of the steady state (%+.0f pts, limit +%g pts, %g x noise %.1f pts): %s",
			 words(ch), fb.v, fc.v, d, t, cfg->noise_multiple, noise, ch->summary ? ch->summary : ch->key);
		ia_gate_set(r, k, cfg->new_high_chains == IA_GATE_CHAINS_FAIL ? IA_GATE_FAIL : IA_GATE_WARN);
	} else {
		snprintf(k->why, sizeof k->why,
			 "HIGH now, but its cost rose only %+.0f pts (%.0f%% -> %.0f%%; needs +%g pts and %g x noise %.1f pts): a severity that crossed its line, not a regression",
			 d, fb.v, fc.v, t, cfg->noise_multiple, noise);
	}
	return 0;
}

int ia_gate_check_chains(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			 const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r)
{
	if (cfg->new_high_chains == IA_GATE_CHAINS_IGNORE)
		return 0;
	struct ia_gate_fig ib, ic;
	int est;
	ia_gate_idle_figs(base, cur, &ib, &ic, &est);
	double idle_noise = ia_gate_idle_noise(cfg, base, ib, ic);
	size_t nnew = 0;
	/* one row per new chain identity: what a reviewer has to look at */
	for (size_t i = 0; i < cur->nchains; i++) {
		const struct ia_gate_chain *ch = &cur->chains[i];
		if (!ch->high_runs || ch->phase || high_runs(base, ch->key) || seen_before(cur, i))
			continue;
		nnew++;
		if (new_high(cfg, base, cur, ch, enough, idle_noise, r) < 0)
			return -1;
	}
	for (size_t i = 0; i < base->nchains; i++) {
		const struct ia_gate_chain *ch = &base->chains[i];
		if (!ch->high_runs || ch->phase || high_runs(cur, ch->key) || seen_before(base, i))
			continue;
		struct ia_gate_check *k = ia_gate_add(r, "chains", "resolved HIGH chain: %s", ch->label ? ch->label : ch->key);
		if (!k)
			return -1;
		snprintf(k->baseline, sizeof k->baseline, "HIGH");
		snprintf(k->current, sizeof k->current, "-");
		snprintf(k->change, sizeof k->change, "resolved");
		snprintf(k->evidence, sizeof k->evidence, "%s", ch->summary ? ch->summary : "");
		ia_gate_set(r, k, IA_GATE_IMPROVED);
	}
	/* same problem, other cause (gaps_host_busy -> gaps_waiting_workers): worth a line, not a failure */
	for (size_t i = 0; i < cur->nchains; i++) {
		const struct ia_gate_chain *ch = &cur->chains[i];
		if (!ch->high_runs || ch->phase || !ch->label || seen_before(cur, i))
			continue;
		for (size_t j = 0; j < base->nchains; j++) {
			const struct ia_gate_chain *bh = &base->chains[j];
			if (!bh->high_runs || strcmp(bh->key, ch->key) || !bh->label || !strcmp(bh->label, ch->label))
				continue;
			struct ia_gate_check *k = ia_gate_add(r, "chains", "HIGH chain %s: cause changed", ch->key);
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
		struct ia_gate_check *k = ia_gate_add(r, "chains", "new HIGH chains");
		if (!k)
			return -1;
		snprintf(k->baseline, sizeof k->baseline, "%zu HIGH", count_high(base));
		snprintf(k->current, sizeof k->current, "%zu HIGH", count_high(cur));
		snprintf(k->change, sizeof k->change, "none new");
		snprintf(k->limit, sizeof k->limit, "no new HIGH");
	}
	return 0;
}
