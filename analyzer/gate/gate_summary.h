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

#include "gate/gate_run.h"

/*
 * Loads PATH, a report.db or a saved baseline (told apart by content, not
 * by name).  max_samples bounds the latencies kept per API.  -1 with a
 * one-line reason in err.
 */
int ia_gate_summary_load(struct ia_gate_summary *s, const char *path, size_t max_samples,
			 char *err, size_t errlen);

/* One run's summary from an analysis already made (what load does with a
 * report.db after analysing it; --also baseline=FILE of explain, cli/views.c).
 * PATH is the run's source.  0, or -1 with a one-line reason. */
struct ia_analysis;
int ia_gate_summary_of(struct ia_gate_summary *s, const char *path, const struct ia_analysis *a,
		       size_t max_samples, char *err, size_t errlen);

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


void ia_gate_summary_free(struct ia_gate_summary *s);

#endif
