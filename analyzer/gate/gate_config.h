/*
 * gate_config.h — the CI gate's thresholds and how they are read.
 *
 * A gate config is a small text file of `key = value` lines ('#' starts a
 * comment).  Global keys set the defaults; `API.key = value` overrides a
 * per-API limit for one CUDA API (e.g. `cudaMalloc.ignore = yes`).  Every
 * key, its unit and its default are documented in docs/gate-config.md and
 * ingero-gate(1); an unknown key or a bad value is an input error (exit 2),
 * never silently ignored: a typo in a CI threshold must not disarm the gate.
 */
#ifndef IA_GATE_CONFIG_H
#define IA_GATE_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IA_GATE_OFF (-1.0)   /* a percentage threshold that is switched off */

/* Limits that can be set per API. */
struct ia_gate_limits {
	double p50_growth_pct;   /* fail when p50 grows more than this (and significantly) */
	double p99_growth_pct;   /* fail when the p99 ratio's CI lies above 1 + this/100 */
	uint64_t min_delta_ns;   /* ...and the quantile grew by at least this much */
	size_t min_samples;      /* fewer calls on either side: not judged */
	size_t p99_min_samples;  /* fewer: p99 not judged (it would be the max) */
	int ignore;              /* API left out of the gate */
};

/* what a check of that kind does with a regression: fail, warn (printed, exit 0) or nothing */
enum ia_gate_chain_policy { IA_GATE_CHAINS_FAIL, IA_GATE_CHAINS_WARN, IA_GATE_CHAINS_IGNORE };

/* An API's overrides: only the fields whose bit is in `set` replace the defaults,
 * so a file may set a global key after an override and still change the rest. */
enum {
	IA_GATE_SET_P50 = 1, IA_GATE_SET_P99 = 2, IA_GATE_SET_DELTA = 4,
	IA_GATE_SET_MIN = 8, IA_GATE_SET_P99MIN = 16, IA_GATE_SET_IGNORE = 32,
};
struct ia_gate_api_cfg {
	char *name;
	unsigned set;
	struct ia_gate_limits lim;
};

struct ia_gate_config {
	double alpha;              /* significance level of the U test and the bootstrap CI */
	unsigned resamples;        /* bootstrap resamples */
	uint64_t seed;             /* bootstrap seed */
	size_t max_samples;        /* latencies kept per API (baseline files, comparisons) */
	struct ia_gate_limits def; /* defaults for every API */
	double gpu_idle_growth_pts;   /* steady state's GPU idle, percentage points; IA_GATE_OFF disables */
	double throughput_drop_pct;   /* steady state's steps (or calls) per second; IA_GATE_OFF disables */
	enum ia_gate_chain_policy new_high_chains;
	/* noise: a steady figure or a chain's cost must also move by more than
	 * noise_multiple times its noise (gate_figures.h); 0 leaves only the limits */
	double noise_multiple;
	/* a baseline of one run knows nothing of how runs differ: the noise of
	 * the difference between two runs is taken as at least this much (GPU
	 * idle in points; throughput in percent of the baseline's) */
	double one_run_idle_pts, one_run_throughput_pct, one_run_latency_pct;
	double chain_cost_growth_pts; /* a new HIGH chain's cost share must rise this much; IA_GATE_OFF: any */
	/* a latency regression must cost this share of the steady state (its
	 * growth times its calls); IA_GATE_OFF: any */
	double min_cost_pct;
	/* a steady state shorter than this is not judged ("not enough steady state") */
	uint64_t min_steady_steps;
	uint64_t min_steady_ns;
	/* one-time phases (start-up, compilation, autotuning, epoch boundaries) */
	enum ia_gate_chain_policy phases;
	double phase_growth_pct;
	uint64_t phase_min_delta_ns;
	struct ia_gate_api_cfg *apis;  /* per-API overrides */
	size_t napis;
};

/* Fills cfg with the documented defaults. */
void ia_gate_config_defaults(struct ia_gate_config *cfg);

/* Reads PATH over the defaults already in cfg; -1 with a one-line reason in err. */
int ia_gate_config_load(struct ia_gate_config *cfg, const char *path, char *err, size_t errlen);

/* The same from an open stream; name is used in messages. */
int ia_gate_config_read(struct ia_gate_config *cfg, FILE *f, const char *name, char *err, size_t errlen);

/* Parses one `key = value` setting (the same syntax as a line of the file). */
int ia_gate_config_set(struct ia_gate_config *cfg, const char *key, const char *value,
		       char *err, size_t errlen);

/* Limits that apply to API name (its overrides, else the defaults). */
struct ia_gate_limits ia_gate_limits_for(const struct ia_gate_config *cfg, const char *api);

void ia_gate_config_free(struct ia_gate_config *cfg);

#endif
