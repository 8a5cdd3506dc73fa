/*
 * series.h — the bucketed kernel evidence: CPU busy time per CPU, page
 * allocations per process, CPU time of untraced competitors.
 *
 * The collector aggregates these in time buckets (schema.h: cpu_busy,
 * page_allocs, competitors); here they are summed over all CPUs / kept
 * per process, sorted by bucket, so "how saturated were the CPUs during
 * [a, b)" or "how many pages did the workers allocate then" is a binary
 * search plus a short walk, with partial buckets counted pro rata.  The
 * bucket width is not in the schema; it is inferred as the smallest gap
 * between consecutive buckets of one series.
 */
#ifndef IA_SERIES_H
#define IA_SERIES_H

#include "load/trace.h"

struct ia_bucket { uint64_t t, v; };

struct ia_series {
	struct ia_bucket *b; size_t n;   /* sorted by t */
	uint64_t width;                  /* 0 when fewer than 2 buckets */
};

struct ia_competitor {
	int pid;
	char comm[32];
	struct ia_series cpu;            /* cpu_ns per bucket */
	uint64_t total_cpu_ns, preemptions;
};

struct ia_evidence {
	struct ia_series busy;           /* busy ns summed over CPUs */
	int ncpus;                       /* session.cpus, else CPUs seen in cpu_busy */
	struct ia_series *pages;         /* per trace.procs index: pages per bucket */
	size_t npages;
	struct ia_competitor *comp; size_t ncomp;
};

int ia_evidence_load(const struct ia_trace *t, struct ia_evidence *e, char *err, size_t errlen);
void ia_evidence_free(struct ia_evidence *e);

/* Sum of the series over [a, b), partial buckets pro rata. */
uint64_t ia_series_sum(const struct ia_series *s, uint64_t a, uint64_t b);
/* CPU saturation over [a, b) as a fraction 0..1; -1 when there is no cpu_busy evidence. */
double ia_cpu_saturation(const struct ia_evidence *e, uint64_t a, uint64_t b);

#endif
