/*
 * nvtx.h — the program's own NVTX ranges (table nvtx_ranges, schema 11)
 * set against the GPU's idle time: per range name of the main process, how
 * many, how long, and how much of the GPU's idle time (the gaps, gaps.h)
 * fell inside them — "your range 'data' holds 95 % of the GPU's idle
 * time" says where to look in the user's own words.
 */
#ifndef IA_NVTX_H
#define IA_NVTX_H

#include "measure/gaps.h"

#include <cjson/cJSON.h>

struct ia_nvtx_name {
	char *name;
	uint32_t count;
	uint64_t total_ns, p50_ns, max_ns;
	uint64_t idle_ns;          /* gaps' time inside its ranges */
	uint32_t depth;            /* the shallowest it was pushed at */
};

struct ia_nvtx {
	int present;               /* the trace has the table (schema 11) */
	struct ia_nvtx_name *names; size_t n;   /* most time first */
	uint64_t nranges, nmarks;  /* the main process's, in the window */
	uint64_t idle_ns;          /* all the gaps' time, for shares */
};

/* The main process's (pid) ranges in the trace's window against g's gaps.
 * 0, or -1 with a one-line reason. */
int ia_nvtx_compute(const struct ia_trace *t, int pid, const struct ia_gaps *g, struct ia_nvtx *out, char *err,
		    size_t errlen);
void ia_nvtx_free(struct ia_nvtx *n);
/* The user's own word for where the GPU waited: of the names holding at
 * least half of all the GPU's idle time, the one with the least time of
 * its own (the most specific: "data" inside "step"); NULL when none does. */
const struct ia_nvtx_name *ia_nvtx_idle_home(const struct ia_nvtx *n);
/* explain --json's "nvtx_ranges"; NULL when the trace has none. */
cJSON *ia_nvtx_json(const struct ia_nvtx *n);

#endif
