/*
 * stats.h — per-API latency statistics of a loaded trace.
 *
 * For every API with at least one call: count, total, mean, min, p50, p90,
 * p99, max (nearest-rank percentiles, exact), and for copies the bytes and
 * achieved bandwidth split by host memory kind (pinned, pageable, unknown).
 * `ingero-analyze stats --json` prints ia_stats_json(); its keys are a
 * contract (issue 2): api, count, p50_ns, p99_ns, max_ns stay.
 */
#ifndef IA_STATS_H
#define IA_STATS_H

#include "load/trace.h"

#include <cjson/cJSON.h>

struct ia_copy_part {
	uint64_t count, bytes, dur_ns;
};

struct ia_api_stats {
	uint16_t api;
	int cls;                         /* enum ingero_api_class */
	uint64_t count, total_ns, min_ns, max_ns, p50_ns, p90_ns, p99_ns;
	double mean_ns;
	uint64_t bytes;                  /* copies and memsets */
	uint64_t stacks;                 /* calls with a call stack */
	uint64_t stacks_withheld;        /* calls whose stack the preload's budget withheld */
	struct ia_copy_part pinned, pageable, unknown;   /* copies only */
};

/* One API within one process (copies' memory split is per API only). */
struct ia_proc_api_stats {
	uint32_t proc;                   /* index into trace.procs */
	uint16_t api;
	uint64_t count, total_ns, min_ns, max_ns, p50_ns, p90_ns, p99_ns;
	double mean_ns;
};

struct ia_stats {
	struct ia_api_stats *apis;       /* by total time, longest first (ties: api id) */
	size_t napis;
	struct ia_api_stats *by_id[INGERO_API_MAX];
	struct ia_proc_api_stats *proc_apis;   /* by pid, then total time */
	size_t nproc_apis;
};

int ia_stats_compute(const struct ia_trace *t, struct ia_stats *s);
void ia_stats_free(struct ia_stats *s);

/* Achieved bandwidth in GB/s (10^9 bytes per second); 0 when no time. */
double ia_gbps(uint64_t bytes, uint64_t dur_ns);

/* [{"api":…,"count":…,"p50_ns":…}, …] */
cJSON *ia_stats_apis_json(const struct ia_trace *t, const struct ia_stats *s);

/* The whole `stats --json` document: {"apis":[…],"processes":[…],"trace":{…}}. */
struct ia_per_process;
cJSON *ia_stats_report_json(const struct ia_trace *t, const struct ia_stats *s,
			    const struct ia_per_process *pp);

#endif
