/*
 * gate_summary.h — what the CI gate knows about one run.
 *
 * A run is summarised from a report.db (through the analyzer's own stats,
 * explain and GPU-idle code, plus each API's latencies) or read back from
 * a baseline file the gate saved earlier.  The baseline file is JSON:
 *
 *   {"ingero_gate_baseline": 1,
 *    "source": "report.db", "command": "python3 bench.py",
 *    "duration_s": 12.5, "calls": 123456,
 *    "gpu_idle_pct": {"low": 12.0, "high": 15.5},        (or null)
 *    "apis": [{"api": "cudaStreamSynchronize", "count": N,
 *              "p50_ns": N, "p99_ns": N, "max_ns": N,
 *              "samples_ns": [sorted latencies, at most max_samples]}, ...],
 *    "chains": [{"severity": "HIGH", "key": "...", "label": "...", "api": "...", "summary": "..."}, ...]}
 *
 * samples_ns are evenly spaced order statistics of all the API's latencies
 * (gate_stats.h, ia_gate_decimate), so the file stays small (10,000 values
 * per API by default) and keeps the distribution's shape.
 */
#ifndef IA_GATE_SUMMARY_H
#define IA_GATE_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#define IA_GATE_BASELINE_VERSION 1

struct ia_gate_api {
	char *name;
	uint64_t count;                /* all calls of the API */
	uint64_t p50_ns, p99_ns, max_ns;
	uint64_t *samples;             /* sorted ascending, at most max_samples */
	size_t nsamples;
};

struct ia_gate_chain {
	char *severity;                /* "HIGH", "MEDIUM", "LOW" */
	char *key;                     /* identity of the chain across runs */
	char *label;                   /* what it is called in tables (kind, + API/line) */
	char *api;                     /* may be NULL */
	char *summary;
};

struct ia_gate_summary {
	char *source;                  /* file it came from */
	char *command;                 /* traced command, NULL when unknown */
	int from_baseline;             /* 1: a saved JSON baseline */
	double duration_s;             /* traced time; 0 when unknown */
	uint64_t calls;                /* every CUDA call */
	int has_idle;
	double idle_low, idle_high;    /* GPU idle share estimate, percent */
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

/* Writes s as a baseline file (atomically: temp file + rename). */
int ia_gate_summary_save(const struct ia_gate_summary *s, const char *path, char *err, size_t errlen);

const struct ia_gate_api *ia_gate_summary_api(const struct ia_gate_summary *s, const char *name);

void ia_gate_summary_free(struct ia_gate_summary *s);

#endif
