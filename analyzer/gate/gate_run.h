/*
 * gate_run.h — the figures the CI gate compares, for one run or the runs
 * of a baseline (the types of gate_summary.h, apart so that the parts that
 * fill them — gate_analysis.c, gate_steady.c, gate_baseline.c — and the
 * comparison need nothing of the summary's loading and saving).
 */
#ifndef IA_GATE_RUN_H
#define IA_GATE_RUN_H

#include <stddef.h>
#include <stdint.h>

#define IA_GATE_BASELINE_VERSION 2

struct ia_gate_api {
	char *name;
	uint64_t count;                /* calls (a baseline of several runs: its smallest run's) */
	uint64_t p50_ns, p99_ns, max_ns;   /* several runs: the median of their p50s, p99s; the max */
	uint64_t *run_p50, *run_p99;   /* per run of a baseline (nruns of the summary), else NULL */
	uint64_t *samples;             /* sorted ascending, at most max_samples */
	size_t nsamples;
};

struct ia_gate_chain {
	char *severity;                /* "HIGH", "MEDIUM", "LOW": the highest of the runs */
	char *key;                     /* identity of the chain across runs */
	char *label;                   /* what it is called in tables (kind, + API/line) */
	char *api;                     /* may be NULL */
	char *summary;                 /* the run's where it cost the most */
	char *cause;                   /* its cause in words (verdict.h), may be NULL */
	int phase;                     /* a one-time or per-epoch phase, not the steady state */
	unsigned high_runs;            /* runs in which it was HIGH */
	double *cost_pct;              /* per run: its cost, % of the steady state (phases: of
					  the window); 0 in a run without it */
};

/* One traced run's figures (gate_steady.c): the steady state's and the
 * one-time phases'.  _se are standard errors within the run, from the
 * steady state cut into blocks (ia_gate_steady_compute). */
struct ia_gate_run {
	char *source, *command;
	int steady;                    /* a steady state with CUDA work */
	double steady_s, window_s;
	double step_calls, step_launches, step_s;   /* the loop's step; 0: none found */
	double steps;                  /* steps in the steady state (0: no step found) */
	double steps_per_s, steps_per_s_se;         /* 0 without a step */
	double calls_per_s, calls_per_s_se;         /* the main process's calls */
	int idle_measured, idle_has_est;            /* bounds from GPU marks; the estimate inside them */
	double idle_low, idle_high, idle_est;       /* GPU idle, % of the steady state */
	double idle_low_se, idle_est_se;            /* points */
	unsigned blocks;               /* the blocks the noise came from */
	/* one-time phases, seconds */
	double startup_s, compilation_s, autotuning_s, epochs_s;
	/* facts a cause is told by: DataLoader worker processes; per step (per
	 * second without a step) the main thread's CPU time outside CUDA calls
	 * and the workers' CPU time in ms, the main process's syncs, and MiB of
	 * host-to-device copies of at least 1 MiB from pinned and from pageable
	 * memory */
	double workers, main_cpu_ms, workers_cpu_ms, syncs, h2d_pinned_mb, h2d_pageable_mb;
};

struct ia_gate_summary {
	char *source;                  /* file it came from */
	char *command;                 /* traced command, NULL when unknown */
	int from_baseline;             /* 1: a saved JSON baseline */
	struct ia_gate_run *runs;      /* one per traced run, at least one */
	size_t nruns;
	struct ia_gate_api *apis;
	size_t napis;
	struct ia_gate_chain *chains;
	size_t nchains;
};

/* The API of that name in a summary, or NULL. */
const struct ia_gate_api *ia_gate_summary_api(const struct ia_gate_summary *s, const char *name);

#endif
