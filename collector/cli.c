/*
 * cli.c — parsing ingero-collector's options with argp (as libbpf-tools
 * do).  The command to run follows "--" and is split off before argp sees
 * the rest, so its own options are never taken for ours.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingero/config.h"
#include "cli.h"
#include "tracer.h"
#include "version.h"

const char *argp_program_version = "ingero-collector " INGERO_COLLECTOR_VERSION;
const char *argp_program_bug_address = "https://github.com/ingero-io/ingero/issues";

/* argp prints "Usage: ingero-collector [OPTION...] " and args_doc itself:
 * the doc must not repeat it.  Lines stay under argp's 79 columns, or
 * argp wraps them mid-sentence. */
static const char args_doc[] = "-o FILE [-- CMD [ARGS...]]";
static const char doc[] =
"Trace a program's CUDA calls (through libingero_preload.so) and its\n"
"kernel-side evidence (off-CPU intervals, run-queue delay, page allocations,\n"
"on-CPU stacks) into one SQLite file.\n"
"\n"
"  -- CMD     run CMD with the preload library set, trace its process tree,\n"
"             stop when it exits and exit with its code (128+N if killed by N)\n"
"  -p PID     trace running processes and their future children\n"
"  neither    trace every process that announces itself through the preload\n"
"             library, until SIGINT/SIGTERM or --duration\n"
"\n"
"Needs root for eBPF; otherwise records CUDA calls only (said on stderr and\n"
"in session.mode).  Exit status: CMD's with -- CMD; else 0; 2 bad usage (also\n"
"-p of no process, FILE or the endpoint in use by another collector, a trace\n"
"in FILE without --force); 4 a failure while running (cannot create FILE,\n"
"cannot listen; a write failed, disk full: recording stopped, even with CMD).\n";

enum { OPT_SAMPLE_HZ = 1000, OPT_MAX_SIZE, OPT_BUCKET_MS, OPT_ENDPOINT, OPT_NO_BPF, OPT_DURATION, OPT_STATS,
       OPT_NO_PYTHON_FRAMES, OPT_NO_BLOCK_STACKS, OPT_FORCE, OPT_METRICS, OPT_METRICS_LINGER };

static const struct argp_option opts[] = {
	{ "output", 'o', "FILE", 0, "report database to write (an existing trace is kept: "
	  "see --force)", 0 },
	{ "force", OPT_FORCE, NULL, 0, "replace FILE if it holds a trace (never one another "
	  "collector is writing)", 0 },
	{ "pid", 'p', "PID", 0, "trace this running process and its children (repeatable)", 0 },
	{ "duration", OPT_DURATION, "SECONDS", 0, "stop after this long", 0 },
	{ "sample-hz", OPT_SAMPLE_HZ, "HZ", 0, "on-CPU stack samples per second per CPU "
	  "(default 99, 0 = off)", 0 },
	{ "max-size", OPT_MAX_SIZE, "MB", 0, "keep the file under MB: drop the oldest event "
	  "rows, counted in losses 'size_cap_rows'", 0 },
	{ "bucket-ms", OPT_BUCKET_MS, "MS", 0, "aggregation bucket of cpu_busy, page_allocs, "
	  "competitors (default 100)", 0 },
	{ "endpoint", OPT_ENDPOINT, "URL", 0, "nng endpoint (default $" INGERO_ENV_ENDPOINT
	  " or " INGERO_DEFAULT_ENDPOINT ")", 0 },
	{ "no-bpf", OPT_NO_BPF, NULL, 0, "CUDA calls only: load no BPF programs", 0 },
	{ "no-python-frames", OPT_NO_PYTHON_FRAMES, NULL, 0, "on-CPU samples without Python frames "
	  "(no reads of traced processes' interpreter memory)", 0 },
	{ "no-block-stacks", OPT_NO_BLOCK_STACKS, NULL, 0, "no stacks of traced threads as they block "
	  "(a few a second per thread, by default with the sampler)", 0 },
	{ "stats", OPT_STATS, "FILE", 0, "write key=value figures (calls, messages, losses, CPU "
	  "time) to FILE at exit", 0 },
	{ "quiet", 'q', NULL, 0, "no summary on stderr at the end", 0 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0, "serve explain's figures as Prometheus metrics on "
	  "http://ADDR:PORT/metrics (off by default)", 0 },
	{ "metrics-linger", OPT_METRICS_LINGER, "SECONDS", 0, "after the trace, keep serving its final "
	  "figures this long (default 0)", 0 },
	{ 0 },
};

static int number(const char *arg, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A bad value: one line ("ingero-collector: ... (see --help)") and exit 2.
 * argp_error() would add argp's two-line "Try --help" hint; argp keeps that
 * hint only for the options it rejects itself (unknown, value missing). */
#define usage_error(state, fmt, ...) \
	argp_failure(state, 2, 0, fmt " (see --help)", ##__VA_ARGS__)

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli *c = state->input;
	double v;

	switch (key) {
	case 'o':
		c->output = arg;
		break;
	case 'p':
		if (number(arg, 1, 4194304, &v) || v != (uint32_t)v)
			usage_error(state, "invalid pid: %s", arg);
		if (c->npids == sizeof c->pids / sizeof c->pids[0])
			usage_error(state, "too many -p (at most 64)");
		c->pids[c->npids++] = (uint32_t)v;
		break;
	case OPT_DURATION:
		if (number(arg, 0.001, 1e9, &c->duration_s))
			usage_error(state, "invalid --duration: %s", arg);
		break;
	case OPT_SAMPLE_HZ:
		if (number(arg, 0, 10000, &v) || v != (unsigned)v)
			usage_error(state, "invalid --sample-hz: %s (0..10000)", arg);
		c->sample_hz = (unsigned)v;
		break;
	case OPT_MAX_SIZE:
		if (number(arg, 1, 1e9, &v))
			usage_error(state, "invalid --max-size: %s (MB)", arg);
		c->max_bytes = (uint64_t)(v * 1048576);
		break;
	case OPT_BUCKET_MS:
		if (number(arg, 1, 60000, &v) || v != (unsigned)v)
			usage_error(state, "invalid --bucket-ms: %s (1..60000)", arg);
		c->bucket_ns = (uint64_t)v * 1000000ull;
		break;
	case OPT_ENDPOINT:
		c->endpoint = arg;
		break;
	case OPT_NO_PYTHON_FRAMES:
		c->no_python_frames = 1;
		break;
	case OPT_NO_BLOCK_STACKS:
		c->no_block_stacks = 1;
		break;
	case OPT_NO_BPF:
		c->no_bpf = 1;
		break;
	case OPT_FORCE:
		c->force = 1;
		break;
	case OPT_STATS:
		c->stats = arg;
		break;
	case 'q':
		c->quiet = 1;
		break;
	case OPT_METRICS:
		c->metrics = arg;
		break;
	case OPT_METRICS_LINGER: {
		char *end;
		c->metrics_linger_s = strtod(arg, &end);
		if (*end || !(c->metrics_linger_s >= 0 && c->metrics_linger_s <= 86400))
			usage_error(state, "invalid --metrics-linger: %s (seconds, 0 to 86400)", arg);
		break;
	}
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s' (put the command after --)", arg);
		break;
	case ARGP_KEY_END:
		if (!c->output)
			usage_error(state, "-o FILE is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* the collector's own benchmark setting (tracer.h), not the library's */
#define SPLIT_BPF_ENV "INGERO_SPLIT_BPF"

int cli_parse(int argc, char **argv, struct cli *c)
{
	static const struct argp argp = { opts, parse_opt, args_doc, doc, NULL, NULL, NULL };
	int n = argc;
	char *env;

	memset(c, 0, sizeof(*c));
	c->sample_hz = 99;
	c->bucket_ns = 100000000ull;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			n = i;
			if (i + 1 >= argc) {
				fprintf(stderr, "ingero-collector: nothing to run after --\n");
				return -1;
			}
			c->cmd = &argv[i + 1];
			break;
		}
	}
	/* argp exits on --help (0) and on errors (ARGP_ERR_EXIT_STATUS = 64); we want 2 */
	argp_err_exit_status = 2;
	if (argp_parse(&argp, n, argv, 0, NULL, c))
		return -1;
	if (!c->endpoint) {
		env = getenv(INGERO_ENV_ENDPOINT);
		c->endpoint = env && *env ? env : INGERO_DEFAULT_ENDPOINT;
	}
	env = getenv(SPLIT_BPF_ENV);
	c->split_bpf = tracer_split_parse(env);
	if (c->split_bpf < 0) {
		fprintf(stderr, "ingero-collector: %s=%s: not one of %s\n", SPLIT_BPF_ENV, env,
			tracer_split_choices());
		return -1;
	}
	return 0;
}
