/*
 * cli.h — ingero-collector's command line (man/ingero-collector.8 and
 * --help say the same).
 */
#ifndef INGERO_COLLECTOR_CLI_H
#define INGERO_COLLECTOR_CLI_H

#include <stddef.h>
#include <stdint.h>

struct cli {
	const char *output;        /* -o */
	int force;                 /* --force: replace a trace in -o */
	double duration_s;         /* --duration; 0 = until stopped */
	uint32_t pids[64];         /* -p, repeatable */
	size_t npids;
	char **cmd;                /* after --; NULL when absent */
	unsigned sample_hz;        /* --sample-hz; 0 = no on-CPU sampling */
	uint64_t max_bytes;        /* --max-size */
	uint64_t bucket_ns;        /* --bucket-ms */
	const char *endpoint;      /* --endpoint, else $INGERO_ENDPOINT, else default */
	int no_bpf;                /* --no-bpf: CUDA-only on purpose */
	int no_python_frames;      /* --no-python-frames */
	int no_block_stacks;       /* --no-block-stacks */
	const char *stats;         /* --stats FILE: key=value figures at exit */
	int split_bpf;             /* $INGERO_SPLIT_BPF: enum tracer_split (tracer.h), for benchmarks */
	int quiet;
	const char *metrics;       /* --metrics ADDR:PORT: serve /metrics (Prometheus); NULL = off */
	double metrics_linger_s;   /* --metrics-linger: keep serving the final figures this long */
};

/* 0: run; 1: --help/--version printed, exit 0; -1: error printed, exit 2. */
int cli_parse(int argc, char **argv, struct cli *c);

#endif
