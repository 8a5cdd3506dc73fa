/*
 * gate_summary.h — what the CI gate knows about a run, or about the runs
 * of a baseline.
 *
 * A run is summarised from a report.db through the analyzer's own modules
 * (stats, phases, steps, GPU idle, chains: gate_summary.c, gate_steady.c)
 * or read back from a baseline file the gate saved earlier.  A baseline
 * holds one run or several (`--save-baseline A.db B.db C.db`): each run's
 * steady-state figures with their noise, the chains' costs per run, and per
 * API the latencies of all its runs pooled.  The baseline file is JSON:
 *
 *   {"ingero_gate_baseline": 2,
 *    "runs": [{"source": "a.db", "command": "python3 bench.py",
 *              "steady": {see struct ia_gate_run}, "phases": {...}, "facts": {...}}, ...],
 *    "apis": [{"api": "cudaStreamSynchronize", "count": N, "p50_ns": N, "p99_ns": N, "max_ns": N,
 *              "runs_p50_ns": [per run], "runs_p99_ns": [per run],
 *              "samples_ns": [sorted latencies of every run, at most max_samples]}, ...],
 *    "chains": [{"key": "...", "label": "...", "api": "...", "severity": "HIGH", "summary": "...",
 *                "cause": "...", "phase": false, "high_runs": N, "costs_pct": [per run]}, ...]}
 *
 * samples_ns are evenly spaced order statistics (gate_stats.h,
 * ia_gate_decimate), so the file stays small and keeps the shape.  The
 * latencies are those of the steady state (the calls in one-time phases
 * are compared as phases), all of them when the run has no steady state.
 */
#ifndef IA_GATE_SUMMARY_H
#define IA_GATE_SUMMARY_H

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

/*
 * Loads PATH, a report.db or a saved baseline (told apart by content, not
 * by name).  max_samples bounds the latencies kept per API.  -1 with a
 * one-line reason in err.
 */
int ia_gate_summary_load(struct ia_gate_summary *s, const char *path, size_t max_samples,
			 char *err, size_t errlen);

/* Parses a baseline from memory (what load does with a file that is not a
 * report.db); name is used in messages.  For tests and the fuzz target. */
int ia_gate_summary_parse(struct ia_gate_summary *s, const char *name, const char *text, size_t len,
			  size_t max_samples, char *err, size_t errlen);

/* Merges the runs of in[0..n) (report.db summaries or baselines) into one
 * baseline of all their runs: latencies pooled, per-run figures kept.  0,
 * or -1 with a reason. */
int ia_gate_summary_merge(struct ia_gate_summary *out, struct ia_gate_summary *in, size_t n,
			  size_t max_samples, char *err, size_t errlen);

/* Writes s as a baseline file (atomically: temp file + rename). */
int ia_gate_summary_save(const struct ia_gate_summary *s, const char *path, char *err, size_t errlen);

const struct ia_gate_api *ia_gate_summary_api(const struct ia_gate_summary *s, const char *name);

void ia_gate_summary_free(struct ia_gate_summary *s);

#endif
