/*
 * test_analyzer_gate.c — the CI gate's statistics, config reader and
 * decisions, on seeded synthetic runs (no database: the report.db path is
 * covered by tests/e2e/gate_*.sh).
 *
 * The decisions are tested the way a CI user meets them: identical runs
 * pass; 20 pairs of noisy runs of the same distribution (different seeds)
 * all pass; slower syncs, a slower tail, more GPU idle, fewer calls per
 * second and a new HIGH chain each fail with the right check named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../analyzer/gate/gate_compare.h"
#include "../../analyzer/gate/gate_config.h"
#include "../../analyzer/gate/gate_stats.h"
#include "../../analyzer/gate/gate_summary.h"

/* --- synthetic runs ----------------------------------------------------------------- */

static double normal(uint64_t *s)
{
	double u1 = ((ia_gate_rand(s) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((ia_gate_rand(s) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* n log-normal latencies around median_ns; a fraction `tail` of them tail_x slower. */
static void make_api(struct ia_gate_api *g, const char *name, size_t n, double median_ns, double sigma,
		     double tail, double tail_x, uint64_t seed)
{
	uint64_t s = seed;
	memset(g, 0, sizeof *g);
	g->name = strdup(name);
	g->samples = malloc(n * sizeof *g->samples);
	for (size_t i = 0; i < n; i++) {
		double v = median_ns * exp(sigma * normal(&s));
		if (tail > 0 && (ia_gate_rand(&s) >> 11) / 9007199254740992.0 < tail)
			v *= tail_x;
		g->samples[i] = (uint64_t)llround(v);
	}
	qsort(g->samples, n, sizeof *g->samples, cmp_u64);
	g->count = n;
	g->p50_ns = ia_gate_quantile_sorted(g->samples, n, 0.50);
	g->p99_ns = ia_gate_quantile_sorted(g->samples, n, 0.99);
	g->max_ns = g->samples[n - 1];
	g->nsamples = ia_gate_decimate(g->samples, n, 10000);
}

struct run_spec {
	double sync_ms, copy_us, sync_tail, sync_tail_x;
	size_t nsync;                 /* calls of each API per run, and its steps */
	double steady_s;              /* steady state: nsync steps in this time */
	double rate_se;               /* steps per second: noise within the run */
	double idle, idle_se;         /* GPU idle estimate of the steady state, and its noise */
	const char *high_chain;       /* key of a HIGH chain, or NULL */
	double chain_pct;             /* its cost, % of the steady state */
	const char *chain_sev;        /* its severity, HIGH when NULL */
	double workers, startup_s;
	double launch_x;              /* launches this many times slower (0: as usual) */
};

static char *strdup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void make_run(struct ia_gate_summary *s, const struct run_spec *r, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->source = strdup("synthetic");
	s->apis = calloc(3, sizeof *s->apis);
	/* sorted by name, as the loader leaves them */
	make_api(&s->apis[0], "cudaLaunchKernel", 3 * r->nsync, 6000 * (r->launch_x ? r->launch_x : 1), 0.3, 0, 1,
		 seed * 3 + 1);
	make_api(&s->apis[1], "cudaMemcpyAsync", r->nsync, r->copy_us * 1000, 0.25, 0, 1, seed * 3 + 2);
	make_api(&s->apis[2], "cudaStreamSynchronize", r->nsync, r->sync_ms * 1e6, 0.2, r->sync_tail,
		 r->sync_tail_x, seed * 3 + 3);
	s->napis = 3;
	s->runs = calloc(1, sizeof *s->runs);
	s->nruns = 1;
	struct ia_gate_run *x = &s->runs[0];
	x->source = strdup("synthetic.db");
	x->steady = 1;
	x->steady_s = r->steady_s;
	x->window_s = r->steady_s + r->startup_s;
	x->step_calls = 5;
	x->step_launches = 3;
	x->steps = (double)r->nsync;
	x->steps_per_s = (double)r->nsync / r->steady_s;
	x->steps_per_s_se = r->rate_se;
	x->calls_per_s = 5 * x->steps_per_s;
	x->calls_per_s_se = 5 * r->rate_se;
	x->idle_measured = x->idle_has_est = 1;
	x->idle_low = x->idle_est = r->idle;
	x->idle_high = r->idle + 4;
	x->idle_low_se = x->idle_est_se = r->idle_se;
	x->blocks = 20;
	x->startup_s = r->startup_s;
	x->workers = r->workers;
	x->syncs = 1;
	for (size_t i = 0; i < s->napis; i++) {
		struct ia_gate_api *g = &s->apis[i];
		g->run_p50 = malloc(sizeof *g->run_p50);
		g->run_p99 = malloc(sizeof *g->run_p99);
		g->run_p50[0] = g->p50_ns;
		g->run_p99[0] = g->p99_ns;
	}
	s->chains = calloc(1, sizeof *s->chains);
	if (r->high_chain) {
		struct ia_gate_chain *c = &s->chains[0];
		c->severity = strdup(r->chain_sev ? r->chain_sev : "HIGH");
		c->key = strdup(r->high_chain);
		c->label = strdup_or_null(strncmp(r->high_chain, "gaps", 4) ? NULL : "gaps_host_busy");
		c->summary = strdup("synthetic chain");
		c->cause = strdup("synthetic cause");
		c->high_runs = !strcmp(c->severity, "HIGH");
		c->cost_pct = malloc(sizeof *c->cost_pct);
		c->cost_pct[0] = r->chain_pct ? r->chain_pct : 40;
		s->nchains = 1;
	}
}

static const struct run_spec healthy = {
	.sync_ms = 2.0, .copy_us = 300, .nsync = 2000, .steady_s = 10, .rate_se = 0.5, .idle = 10, .idle_se = 1,
	.workers = 4, .startup_s = 3,
};

static const struct ia_gate_check *find_check(const struct ia_gate_result *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->checks[i].name, name))
			return &r->checks[i];
	return NULL;
}

static void compare(const struct run_spec *b, uint64_t sb, const struct run_spec *c, uint64_t sc,
		    struct ia_gate_result *res)
{
	struct ia_gate_config cfg;
	struct ia_gate_summary base, cur;
	ia_gate_config_defaults(&cfg);
	make_run(&base, b, sb);
	make_run(&cur, c, sc);
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, res), 0);
	ia_gate_summary_free(&base);
	ia_gate_summary_free(&cur);
	ia_gate_config_free(&cfg);
}

/* --- statistics ------------------------------------------------------------------------ */

static void test_mwu_small(void **state)
{
	(void)state;
	uint64_t a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	struct ia_mwu m;
	ia_gate_mwu(a, 3, b, 3, &m);
	assert_true(fabs(m.u - 9) < 1e-9);
	assert_true(fabs(m.r - 1) < 1e-9);
	/* normal approximation with continuity correction: z = 4 / sqrt(5.25) */
	assert_true(fabs(m.z - 4 / sqrt(5.25)) < 1e-9);
	assert_true(fabs(m.p - 0.5 * erfc(4 / sqrt(5.25) / sqrt(2))) < 1e-12);
	ia_gate_mwu(b, 3, a, 3, &m);
	assert_true(m.p > 0.9);
	assert_true(fabs(m.r + 1) < 1e-9);
}

static void test_mwu_ties(void **state)
{
	(void)state;
	uint64_t a[] = { 5, 5, 5, 5 }, b[] = { 5, 5, 5 };
	struct ia_mwu m;
	ia_gate_mwu(a, 4, b, 3, &m);
	assert_true(m.p == 1);
	assert_true(fabs(m.r) < 1e-9);
	/* ties across samples get the average rank: U = 1*... checked against a hand count */
	uint64_t c[] = { 1, 2, 2, 3 }, d[] = { 2, 3, 4 };
	ia_gate_mwu(c, 4, d, 3, &m);
	/* pairs (d > c) + 0.5 * ties: 2:{1}+.5*2=2, 3:{1,2,2}+.5=3.5, 4:4 -> 9.5 */
	assert_true(fabs(m.u - 9.5) < 1e-9);
}

static void test_bootstrap_deterministic(void **state)
{
	(void)state;
	struct ia_gate_api a, b;
	make_api(&a, "x", 5000, 1e6, 0.3, 0, 1, 11);
	make_api(&b, "x", 5000, 2e6, 0.3, 0, 1, 12);
	double lo1, hi1, lo2, hi2;
	assert_int_equal(ia_gate_bootstrap_ratio(a.samples, a.nsamples, b.samples, b.nsamples, 0.99, 500,
						 0.01, 42, &lo1, &hi1), 0);
	assert_int_equal(ia_gate_bootstrap_ratio(a.samples, a.nsamples, b.samples, b.nsamples, 0.99, 500,
						 0.01, 42, &lo2, &hi2), 0);
	assert_true(lo1 == lo2 && hi1 == hi2);
	assert_true(lo1 > 1.7 && hi1 < 2.3 && lo1 < hi1);
	free(a.name); free(a.samples); free(b.name); free(b.samples);
}

static void test_decimate(void **state)
{
	(void)state;
	uint64_t v[1000];
	for (int i = 0; i < 1000; i++)
		v[i] = (uint64_t)i;
	size_t m = ia_gate_decimate(v, 1000, 10);
	assert_int_equal(m, 10);
	for (int i = 0; i < 10; i++)
		assert_int_equal(v[i], (uint64_t)(i * 100 + 50));
	assert_int_equal(ia_gate_decimate(v, 5, 10), 5);
	assert_int_equal(ia_gate_quantile_sorted(v, 10, 0.5), v[4]);
	assert_int_equal(ia_gate_quantile_sorted(v, 10, 0.99), v[9]);
}

/* --- config ---------------------------------------------------------------------------- */

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ingero-gate-cfg.XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_config_file(void **state)
{
	(void)state;
	struct ia_gate_config cfg;
	char err[256];
	ia_gate_config_defaults(&cfg);
	char *p = write_tmp("# thresholds\n"
			    "cudaStreamSynchronize.p99_growth_pct = 100%   # syncs are noisy\n"
			    "p50_growth_pct = 10\n"
			    "min_delta = 2us\n"
			    "gpu_idle_growth_pts = off\n"
			    "new_high_chains = warn\n"
			    "ignore_apis = cudaMalloc, cudaFree\n"
			    "\n");
	assert_int_equal(ia_gate_config_load(&cfg, p, err, sizeof err), 0);
	struct ia_gate_limits l = ia_gate_limits_for(&cfg, "cudaStreamSynchronize");
	assert_true(l.p99_growth_pct == 100);
	assert_true(l.p50_growth_pct == 10);   /* global set after the override still applies */
	assert_int_equal(l.min_delta_ns, 2000);
	assert_true(cfg.gpu_idle_growth_pts == IA_GATE_OFF);
	assert_int_equal(cfg.new_high_chains, IA_GATE_CHAINS_WARN);
	assert_true(ia_gate_limits_for(&cfg, "cudaMalloc").ignore);
	assert_true(ia_gate_limits_for(&cfg, "cudaFree").ignore);
	assert_false(ia_gate_limits_for(&cfg, "cudaMemcpyAsync").ignore);
	unlink(p);
	free(p);
	ia_gate_config_free(&cfg);
}

static void test_config_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"p50_growth = 20\n",            /* unknown key (the unit is part of the name) */
		"p50_growth_pct = -5\n",
		"p50_growth_pct = lots\n",
		"min_delta = 5\n",              /* a duration needs a unit */
		"alpha = 0.7\n",
		"new_high_chains = maybe\n",
		"just a line\n",
		".p50_growth_pct = 5\n",
		"bootstrap_resamples = 10\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ia_gate_config cfg;
		char err[256] = "";
		ia_gate_config_defaults(&cfg);
		char *p = write_tmp(bad[i]);
		assert_int_equal(ia_gate_config_load(&cfg, p, err, sizeof err), -1);
		assert_non_null(strstr(err, ":1:"));   /* the line is named */
		unlink(p);
		free(p);
		ia_gate_config_free(&cfg);
	}
	struct ia_gate_config cfg;
	char err[256];
	ia_gate_config_defaults(&cfg);
	assert_int_equal(ia_gate_config_load(&cfg, "/nonexistent/gate.conf", err, sizeof err), -1);
	ia_gate_config_free(&cfg);
}

/* --- decisions ------------------------------------------------------------------------- */

static void test_identical_runs_pass(void **state)
{
	(void)state;
	struct ia_gate_result r;
	compare(&healthy, 7, &healthy, 7, &r);
	assert_int_equal(r.fails, 0);
	assert_int_equal(r.warns, 0);
	for (size_t i = 0; i < r.n; i++)
		assert_int_not_equal(r.checks[i].verdict, IA_GATE_IMPROVED);
	ia_gate_result_free(&r);
}

static void test_noisy_equal_runs_pass(void **state)
{
	(void)state;
	/* 20 seeded trials: same distributions, different draws, also with a
	 * natural tail, and smaller runs where the noise is larger */
	struct run_spec small = healthy;
	small.nsync = 300;
	struct run_spec tail = healthy;
	tail.sync_tail = 0.02;
	tail.sync_tail_x = 10;
	struct run_spec smalltail = tail;
	smalltail.nsync = 60;
	const struct run_spec *specs[] = { &healthy, &small, &tail, &smalltail };
	for (int s = 0; s < 4; s++)
		for (uint64_t t = 0; t < 20; t++) {
			struct ia_gate_result r;
			struct run_spec c = *specs[s];
			/* run-to-run jitter of the single-number figures */
			c.steady_s *= 1 + 0.05 * ((int)(t % 5) - 2) / 2.0;
			c.idle += (double)(t % 3);
			c.startup_s *= 1 + 0.3 * (double)(t % 2);
			compare(specs[s], 1000 + t, &c, 2000 + t, &r);
			if (r.fails) {
				for (size_t i = 0; i < r.n; i++)
					if (r.checks[i].verdict == IA_GATE_FAIL)
						print_error("spec %d trial %llu: %s\n", s, (unsigned long long)t,
							    r.checks[i].why);
			}
			assert_int_equal(r.fails, 0);
			ia_gate_result_free(&r);
		}
}

static void test_slower_syncs_fail(void **state)
{
	(void)state;
	struct run_spec slow = healthy;
	slow.sync_ms = 4.0;
	slow.steady_s = 14;   /* 2,000 syncs 2 ms longer: the steps wait for them */
	struct ia_gate_result r;
	compare(&healthy, 3, &slow, 4, &r);
	assert_true(r.fails >= 1);
	const struct ia_gate_check *k = find_check(&r, "cudaStreamSynchronize p50");
	assert_non_null(k);
	assert_int_equal(k->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(k->why, "cudaStreamSynchronize"));
	/* the other APIs did not change and are not blamed */
	assert_int_not_equal(find_check(&r, "cudaMemcpyAsync p50")->verdict, IA_GATE_FAIL);
	assert_int_not_equal(find_check(&r, "cudaLaunchKernel p99")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	/* the same syncs while the steps per second held: the host waits with
	 * more slack (a faster host waits longer), not a regression */
	slow.steady_s = 10;
	compare(&healthy, 3, &slow, 4, &r);
	assert_int_equal(r.fails, 0);
	assert_non_null(strstr(find_check(&r, "cudaStreamSynchronize p50")->why, "throughput held"));
	ia_gate_result_free(&r);
}

static void test_launches_into_a_full_queue(void **state)
{
	(void)state;
	/* launches 10x slower while the steps held: with the GPU busy 95 % they
	 * waited for room in a full queue (the host ran further ahead) */
	struct run_spec b = healthy, c = healthy;
	b.idle = c.idle = 5;
	c.launch_x = 10;
	struct ia_gate_result r;
	compare(&b, 1, &c, 2, &r);
	assert_int_equal(r.fails, 0);
	assert_non_null(strstr(find_check(&r, "cudaLaunchKernel p50")->why, "waits longer for the GPU"));
	ia_gate_result_free(&r);
	/* the same with the GPU idle 30 % of the time: host time, a regression */
	b.idle = c.idle = 30;
	compare(&b, 1, &c, 2, &r);
	assert_int_equal(find_check(&r, "cudaLaunchKernel p50")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
}

static void test_small_growth_passes(void **state)
{
	(void)state;
	/* +10 % with 20k calls is highly significant, but under the 20 % limit */
	struct run_spec b = healthy, c = healthy;
	b.nsync = c.nsync = 20000;
	c.sync_ms = 2.2;
	struct ia_gate_result r;
	compare(&b, 5, &c, 6, &r);
	assert_int_equal(r.fails, 0);
	ia_gate_result_free(&r);
}

static void test_tail_regression_fails(void **state)
{
	(void)state;
	/* the median is unchanged; 5 % of syncs became 20x slower */
	struct run_spec t = healthy;
	t.sync_tail = 0.05;
	t.sync_tail_x = 20;
	t.steady_s = 13.8;   /* 100 syncs 38 ms longer */
	struct ia_gate_result r;
	compare(&healthy, 8, &t, 9, &r);
	assert_int_not_equal(find_check(&r, "cudaStreamSynchronize p50")->verdict, IA_GATE_FAIL);
	assert_int_equal(find_check(&r, "cudaStreamSynchronize p99")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
}

static void test_new_high_chain_fails(void **state)
{
	(void)state;
	struct run_spec c = healthy;
	c.high_chain = "gap:main-blocked-on-workers";
	c.idle = 45;   /* the chain's cost is GPU idle */
	struct ia_gate_result r;
	compare(&healthy, 1, &c, 1, &r);
	assert_int_equal(r.fails, 2);   /* the chain and the GPU idle */
	const struct ia_gate_check *k = find_check(&r, "new HIGH chain: gap:main-blocked-on-workers");
	assert_non_null(k);
	assert_int_equal(k->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(find_check(&r, "GPU idle of the steady state")->why, "new: synthetic cause"));
	ia_gate_result_free(&r);
	/* a chain the baseline already had is not new */
	compare(&c, 1, &c, 2, &r);
	assert_int_equal(r.fails, 0);
	ia_gate_result_free(&r);
	/* and one that went away is an improvement */
	compare(&c, 1, &healthy, 2, &r);
	assert_int_equal(r.fails, 0);
	assert_non_null(find_check(&r, "resolved HIGH chain: gap:main-blocked-on-workers"));
	ia_gate_result_free(&r);
}

static void test_gap_chain_cause_change_is_not_new(void **state)
{
	(void)state;
	/* num_workers=0 -> 4: the main thread stops collating and waits on
	 * workers; one problem (GPU idle in gaps), another cause */
	struct ia_gate_summary base, cur;
	struct ia_gate_config cfg;
	struct ia_gate_result r;
	make_run(&base, &healthy, 1);
	make_run(&cur, &healthy, 2);
	base.chains[0].severity = strdup("HIGH");
	base.chains[0].key = strdup("gaps");
	base.chains[0].label = strdup("gaps_host_busy");
	base.chains[0].high_runs = 1;
	base.chains[0].cost_pct = calloc(1, sizeof(double));
	base.nchains = 1;
	cur.chains[0].severity = strdup("HIGH");
	cur.chains[0].key = strdup("gaps");
	cur.chains[0].label = strdup("gaps_waiting_workers");
	cur.chains[0].high_runs = 1;
	cur.chains[0].cost_pct = calloc(1, sizeof(double));
	cur.nchains = 1;
	ia_gate_config_defaults(&cfg);
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, &r), 0);
	assert_int_equal(r.fails, 0);
	const struct ia_gate_check *k = find_check(&r, "HIGH chain gaps: cause changed");
	assert_non_null(k);
	assert_string_equal(k->baseline, "gaps_host_busy");
	assert_string_equal(k->current, "gaps_waiting_workers");
	ia_gate_result_free(&r);
	ia_gate_summary_free(&base);
	ia_gate_summary_free(&cur);
	ia_gate_config_free(&cfg);
}

static void test_idle_and_rate_fail(void **state)
{
	(void)state;
	struct run_spec c = healthy;
	c.idle = 40;
	struct ia_gate_result r;
	compare(&healthy, 1, &c, 2, &r);
	assert_int_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	c = healthy;
	c.steady_s = 30;   /* the same steps in three times the time: beyond a one-run baseline's 3 x 21 % */
	compare(&healthy, 1, &c, 2, &r);
	const struct ia_gate_check *k = find_check(&r, "steps per second (steady state)");
	assert_int_equal(k->verdict, IA_GATE_FAIL);
	/* the syncs of the same calls were not what slowed (their latency is the same) */
	assert_int_not_equal(find_check(&r, "cudaStreamSynchronize p50")->verdict, IA_GATE_FAIL);
	/* start-up is no part of it */
	ia_gate_result_free(&r);
	c = healthy;
	c.startup_s = 30;   /* imports ten times as long: warned, not failed */
	compare(&healthy, 1, &c, 2, &r);
	assert_int_equal(r.fails, 0);
	assert_int_equal(find_check(&r, "start-up time")->verdict, IA_GATE_WARN);
	ia_gate_result_free(&r);
}

static void test_noise_and_hairs_pass(void **state)
{
	(void)state;
	struct ia_gate_result r;
	/* a severity that crossed its line by a hair: MEDIUM 28 % -> HIGH 31 % */
	struct run_spec b = healthy, c = healthy;
	b.high_chain = c.high_chain = "gaps";
	b.chain_sev = "MEDIUM";
	b.chain_pct = 28;
	c.chain_pct = 31;
	compare(&b, 1, &c, 2, &r);
	assert_int_equal(r.fails, 0);
	const struct ia_gate_check *k = find_check(&r, "new HIGH chain: gaps_host_busy");
	assert_non_null(k);
	assert_int_equal(k->verdict, IA_GATE_PASS);
	assert_non_null(strstr(k->why, "crossed its line"));
	ia_gate_result_free(&r);
	/* GPU idle +15 pts in runs whose idle swings by 8 pts within each: noise */
	b = healthy;
	c = healthy;
	b.idle_se = c.idle_se = 8;
	c.idle = 25;
	compare(&b, 1, &c, 2, &r);
	assert_int_not_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	/* the same +15 pts from steady runs: a one-run baseline does not know
	 * how runs differ (the H200's A/A: one loader run of ten 15 pts less
	 * idle), so it is within the one-run floor (7 pts, 3x: 21) and says so */
	b.idle_se = c.idle_se = 1;
	compare(&b, 1, &c, 2, &r);
	const struct ia_gate_check *g = find_check(&r, "GPU idle of the steady state");
	assert_int_not_equal(g->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(g->evidence, "one-run baseline: at least +-7 pts between runs"));
	ia_gate_result_free(&r);
	/* +25 pts passes the floor too: fails */
	c.idle = 35;
	compare(&b, 1, &c, 2, &r);
	assert_int_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	/* and +15 pts fails where the floor is turned off, or the baseline has
	 * several steady runs (their own spread is the noise) */
	c.idle = 25;
	struct ia_gate_config cfg;
	struct ia_gate_summary base, cur, in[3];
	char err[256];
	ia_gate_config_defaults(&cfg);
	assert_int_equal(ia_gate_config_set(&cfg, "one_run_noise_idle_pts", "off", err, sizeof err), 0);
	make_run(&base, &b, 1);
	make_run(&cur, &c, 2);
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, &r), 0);
	assert_int_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	ia_gate_summary_free(&base);
	ia_gate_config_free(&cfg);
	ia_gate_config_defaults(&cfg);
	for (int i = 0; i < 3; i++)
		make_run(&in[i], &b, 10 + (uint64_t)i);
	assert_int_equal(ia_gate_summary_merge(&base, in, 3, 10000, err, sizeof err), 0);
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, &r), 0);
	assert_int_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	ia_gate_summary_free(&base);
	ia_gate_summary_free(&cur);
	for (int i = 0; i < 3; i++)
		ia_gate_summary_free(&in[i]);
	ia_gate_config_free(&cfg);
}

static void test_short_steady_state_warns(void **state)
{
	(void)state;
	struct run_spec b = healthy, c = healthy;
	c.nsync = 40;   /* 40 calls of each API, 12 steps in the steady state */
	c.steady_s = 0.2;
	c.idle = 75;    /* three gaps in a tenth of a second */
	c.high_chain = "gaps";
	c.chain_pct = 75;
	c.nsync = 12;
	struct ia_gate_result r;
	compare(&b, 1, &c, 2, &r);
	assert_int_equal(r.fails, 0);
	const struct ia_gate_check *k = find_check(&r, "steady state");
	assert_int_equal(k->verdict, IA_GATE_WARN);
	assert_non_null(strstr(k->why, "not enough steady state to judge"));
	assert_int_equal(find_check(&r, "GPU idle of the steady state")->verdict, IA_GATE_SKIP);
	assert_int_equal(find_check(&r, "new HIGH chain: gaps_host_busy")->verdict, IA_GATE_SKIP);
	ia_gate_result_free(&r);
}

static void test_cause_named(void **state)
{
	(void)state;
	/* num_workers 4 -> 0: the steps fall to a third (-70 % on the H200), a gaps chain appears */
	struct run_spec c = healthy;
	c.steady_s = 30;
	c.idle = 55;
	c.workers = 0;
	c.high_chain = "gaps";
	c.chain_pct = 50;
	struct ia_gate_result r;
	compare(&healthy, 1, &c, 2, &r);
	const struct ia_gate_check *k = find_check(&r, "steps per second (steady state)");
	assert_int_equal(k->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(k->why, ": new: synthetic cause (gaps_host_busy HIGH, 50% of the steady state)"));
	assert_non_null(strstr(k->why, "DataLoader worker processes 4 -> 0 (num_workers=0?)"));
	assert_true(r.nchanges >= 2);
	ia_gate_result_free(&r);
}

static void test_several_runs_know_their_noise(void **state)
{
	(void)state;
	/* five baseline runs whose syncs' p50 swing by +-30 % (1.4 - 2.6 ms) */
	struct ia_gate_summary in[5], base, cur;
	struct ia_gate_config cfg;
	char err[256];
	ia_gate_config_defaults(&cfg);
	static const double p50[5] = { 1.4, 2.0, 2.6, 1.7, 2.3 };
	for (int i = 0; i < 5; i++) {
		struct run_spec b = healthy;
		b.sync_ms = p50[i];
		b.idle = 10 + 2 * i;
		make_run(&in[i], &b, 10 + (uint64_t)i);
	}
	assert_int_equal(ia_gate_summary_merge(&base, in, 5, 10000, err, sizeof err), 0);
	assert_int_equal(base.nruns, 5);
	assert_int_equal(ia_gate_summary_api(&base, "cudaStreamSynchronize")->nsamples, 10000);
	/* a run 60 % slower than their median: within 3x their spread, not a regression */
	struct run_spec c = healthy;
	c.sync_ms = 3.2;
	c.steady_s = 11;   /* the steps barely moved */
	make_run(&cur, &c, 99);
	struct ia_gate_result r;
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, &r), 0);
	const struct ia_gate_check *k = find_check(&r, "cudaStreamSynchronize p50");
	assert_int_not_equal(k->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(k->limit, "(spread)"));
	assert_int_equal(r.nbase_runs, 5);
	ia_gate_result_free(&r);
	/* against its first run alone (1.4 ms: +129 %) the same run fails: beyond the
	 * one-run floor, which is all one run knows of the spread */
	assert_int_equal(ia_gate_compare(&cfg, &in[0], &cur, &r), 0);
	k = find_check(&r, "cudaStreamSynchronize p50");
	assert_int_equal(k->verdict, IA_GATE_FAIL);
	assert_non_null(strstr(k->limit, "(one-run noise)"));
	ia_gate_result_free(&r);
	/* and a baseline of steady runs judges finer than one run can: +30 % over
	 * runs within +-5 % fails against them, passes against one of them */
	struct ia_gate_summary tight_in[5], tight;
	static const double tight_p50[5] = { 1.9, 2.0, 2.1, 1.95, 2.05 };
	for (int i = 0; i < 5; i++) {
		struct run_spec b = healthy;
		b.sync_ms = tight_p50[i];
		make_run(&tight_in[i], &b, 20 + (uint64_t)i);
	}
	assert_int_equal(ia_gate_summary_merge(&tight, tight_in, 5, 10000, err, sizeof err), 0);
	struct ia_gate_summary slower;
	c.sync_ms = 2.6;
	make_run(&slower, &c, 98);
	assert_int_equal(ia_gate_compare(&cfg, &tight, &slower, &r), 0);
	assert_int_equal(find_check(&r, "cudaStreamSynchronize p50")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	assert_int_equal(ia_gate_compare(&cfg, &tight_in[1], &slower, &r), 0);
	assert_int_not_equal(find_check(&r, "cudaStreamSynchronize p50")->verdict, IA_GATE_FAIL);
	ia_gate_result_free(&r);
	ia_gate_summary_free(&slower);
	ia_gate_summary_free(&tight);
	for (int i = 0; i < 5; i++)
		ia_gate_summary_free(&tight_in[i]);
	/* saved and read back, the baseline judges the same */
	char path[] = "/tmp/ingero-gate-multi.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	struct ia_gate_summary back;
	struct ia_gate_result r1, r2;
	assert_int_equal(ia_gate_summary_save(&base, path, err, sizeof err), 0);
	assert_int_equal(ia_gate_summary_load(&back, path, 10000, err, sizeof err), 0);
	assert_int_equal(back.nruns, 5);
	assert_int_equal(ia_gate_compare(&cfg, &base, &cur, &r1), 0);
	assert_int_equal(ia_gate_compare(&cfg, &back, &cur, &r2), 0);
	assert_int_equal(r1.n, r2.n);
	for (size_t i = 0; i < r1.n; i++) {
		assert_string_equal(r1.checks[i].name, r2.checks[i].name);
		assert_int_equal(r1.checks[i].verdict, r2.checks[i].verdict);
	}
	ia_gate_result_free(&r1);
	ia_gate_result_free(&r2);
	unlink(path);
	ia_gate_summary_free(&back);
	ia_gate_summary_free(&cur);
	ia_gate_summary_free(&base);
	for (int i = 0; i < 5; i++)
		ia_gate_summary_free(&in[i]);
	ia_gate_config_free(&cfg);
}

static void test_too_few_samples_skip(void **state)
{
	(void)state;
	struct run_spec b = healthy, c = healthy;
	b.nsync = c.nsync = 10;
	c.sync_ms = 20;
	struct ia_gate_result r;
	compare(&b, 1, &c, 2, &r);
	const struct ia_gate_check *k = find_check(&r, "cudaStreamSynchronize");
	assert_non_null(k);
	assert_int_equal(k->verdict, IA_GATE_SKIP);
	ia_gate_result_free(&r);
}

static void test_baseline_roundtrip(void **state)
{
	(void)state;
	struct ia_gate_summary s, back;
	struct run_spec c = healthy;
	c.high_chain = "slow:cudaStreamSynchronize";
	make_run(&s, &c, 77);
	char path[] = "/tmp/ingero-gate-base.XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	char err[256];
	assert_int_equal(ia_gate_summary_save(&s, path, err, sizeof err), 0);
	assert_int_equal(ia_gate_summary_load(&back, path, 10000, err, sizeof err), 0);
	assert_int_equal(back.from_baseline, 1);
	assert_int_equal(back.napis, s.napis);
	for (size_t i = 0; i < s.napis; i++) {
		assert_string_equal(back.apis[i].name, s.apis[i].name);
		assert_int_equal(back.apis[i].p99_ns, s.apis[i].p99_ns);
		assert_int_equal(back.apis[i].nsamples, s.apis[i].nsamples);
		assert_memory_equal(back.apis[i].samples, s.apis[i].samples,
				    s.apis[i].nsamples * sizeof *s.apis[i].samples);
	}
	assert_int_equal(back.nchains, 1);
	assert_string_equal(back.chains[0].key, "slow:cudaStreamSynchronize");

	/* the saved baseline judges exactly like the run it came from */
	struct ia_gate_config cfg;
	struct ia_gate_result r1, r2;
	struct ia_gate_summary cur;
	struct run_spec slow = healthy;
	slow.sync_ms = 3;
	ia_gate_config_defaults(&cfg);
	make_run(&cur, &slow, 78);
	assert_int_equal(ia_gate_compare(&cfg, &s, &cur, &r1), 0);
	assert_int_equal(ia_gate_compare(&cfg, &back, &cur, &r2), 0);
	assert_int_equal(r1.n, r2.n);
	for (size_t i = 0; i < r1.n; i++) {
		assert_string_equal(r1.checks[i].name, r2.checks[i].name);
		assert_int_equal(r1.checks[i].verdict, r2.checks[i].verdict);
	}
	ia_gate_result_free(&r1);
	ia_gate_result_free(&r2);
	ia_gate_summary_free(&cur);
	ia_gate_config_free(&cfg);
	unlink(path);
	ia_gate_summary_free(&s);
	ia_gate_summary_free(&back);
}

/* one run with no steady state and every phase and fact: a baseline's start */
#define RUN_OK "{\"ingero_gate_baseline\": 2, \"runs\": [{\"source\": \"a\", \"window_s\": 1, \"steady\": null," \
	" \"phases\": {\"startup_s\": 0, \"compilation_s\": 0, \"autotuning_s\": 0, \"epochs_s\": 0}," \
	" \"facts\": {\"workers\": 0, \"main_cpu_ms\": 0, \"workers_cpu_ms\": 0, \"syncs\": 0," \
	" \"h2d_pinned_mb\": 0, \"h2d_pageable_mb\": 0}}]"

static void test_bad_baseline_files(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",                                   /* empty */
		"not json at all",
		"{\"something\": 1}",                 /* JSON, not a baseline */
		"{\"ingero_gate_baseline\": 99}",     /* future version */
		"{\"ingero_gate_baseline\": 1, \"duration_s\": 1, \"calls\": 1, \"apis\": [], \"chains\": []}",   /* old */
		"{\"ingero_gate_baseline\": 2, \"runs\": [], \"apis\": [], \"chains\": []}",   /* no run */
		"{\"ingero_gate_baseline\": 2, \"runs\": [{\"source\": \"a\", \"window_s\": 1, \"steady\": null,"
		" \"phases\": {}, \"facts\": {}}], \"apis\": [], \"chains\": []}",   /* phases without figures */
		"{\"ingero_gate_baseline\": 2, \"runs\": [{\"source\": \"a\", \"window_s\": -1}], \"apis\": [], \"chains\": []}",
		RUN_OK ", \"apis\": [{\"api\": \"x\", \"count\": 1, \"p50_ns\": 1, \"p99_ns\": 1, \"max_ns\": 1,"
		" \"runs_p50_ns\": [1], \"runs_p99_ns\": [1], \"samples_ns\": [1, \"two\"]}], \"chains\": []}",
		RUN_OK ", \"apis\": [{\"api\": \"x\", \"count\": 1, \"p50_ns\": 1, \"p99_ns\": 1, \"max_ns\": 1,"
		" \"runs_p50_ns\": [1, 2], \"runs_p99_ns\": [1], \"samples_ns\": [1]}], \"chains\": []}",   /* runs != 1 */
		RUN_OK ", \"apis\": [], \"chains\": [{\"severity\": \"HIGH\", \"key\": \"gaps\", \"phase\": false,"
		" \"high_runs\": 2, \"costs_pct\": [1]}]}",   /* HIGH in more runs than there are */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ia_gate_summary s;
		char err[512] = "";
		char *p = write_tmp(bad[i]);
		assert_int_equal(ia_gate_summary_load(&s, p, 10000, err, sizeof err), -1);
		assert_true(strlen(err) > 0 && !strchr(err, '\n'));
		ia_gate_summary_free(&s);
		unlink(p);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mwu_small),
		cmocka_unit_test(test_mwu_ties),
		cmocka_unit_test(test_bootstrap_deterministic),
		cmocka_unit_test(test_decimate),
		cmocka_unit_test(test_config_file),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_identical_runs_pass),
		cmocka_unit_test(test_noisy_equal_runs_pass),
		cmocka_unit_test(test_slower_syncs_fail),
		cmocka_unit_test(test_small_growth_passes),
		cmocka_unit_test(test_launches_into_a_full_queue),
		cmocka_unit_test(test_tail_regression_fails),
		cmocka_unit_test(test_new_high_chain_fails),
		cmocka_unit_test(test_gap_chain_cause_change_is_not_new),
		cmocka_unit_test(test_idle_and_rate_fail),
		cmocka_unit_test(test_noise_and_hairs_pass),
		cmocka_unit_test(test_short_steady_state_warns),
		cmocka_unit_test(test_cause_named),
		cmocka_unit_test(test_several_runs_know_their_noise),
		cmocka_unit_test(test_too_few_samples_skip),
		cmocka_unit_test(test_baseline_roundtrip),
		cmocka_unit_test(test_bad_baseline_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
