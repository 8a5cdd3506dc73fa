/*
 * usage.c — the --help texts of ingero-analyze and of each subcommand that
 * main.c parses (gate and mcp keep theirs beside their own parsers).
 *
 * Every subcommand accepts the same options (main.c parses them once), but
 * its help lists only those that change what it does, so that
 * `ingero-analyze timeline --help` answers the question a user of the
 * timeline has.  The exit status lines follow include/ingero/exit.h; the
 * man page (man/ingero-analyze.1) says the same, and tests/e2e/man_lint.sh
 * checks that every option named here is in it.
 */
#include "cli/cli.h"

#include <string.h>

#define WINDOW \
	"  --from T, --to T  only this window; T is a time since the trace start: 12.5, 1500ms, 2s\n" \
	"  --since D         only the last D of the trace (e.g. 30s)\n" \
	"  -p, --pid PID     only process PID and its descendants\n"
#define JSON \
	"  --json            machine-readable output (JSON)\n" \
	"  --compact         JSON on one line\n"
#define OUTPUT "  -o, --output FILE write to FILE instead of standard output\n"
#define HELP "  -h, --help        this text;  -V, --version  the version\n"
#define EXIT \
	"\nExit status: 0 done; 2 bad usage (also -p of a process not in the trace);\n" \
	"3 bad input: report.db missing, not a report, of another schema version,\n" \
	"truncated or corrupted; 4 a failure while running (output not written).\n"

static const char general[] =
"Usage: ingero-analyze [SUBCOMMAND] [OPTIONS] report.db\n"
"\n"
"Explains why a GPU program starved, from a report.db written by ingero-collector.\n"
"\n"
"Subcommands (SUBCOMMAND --help for each):\n"
"  explain       causal chains, most severe first, with root cause and fixes (default)\n"
"  stats         per CUDA API: count, total, mean, p50/p90/p99/max; copy bandwidth;\n"
"                per process: calls, context switches, off-CPU, run-queue delay, CPU\n"
"  per-process   the process tree with roles (main, worker, other) and host evidence\n"
"  timeline      events in a window (--from/--to), one line each\n"
"  export        --format perfetto -o trace.json: Chrome trace-event JSON for ui.perfetto.dev\n"
"  report        --html -o report.html: one self-contained HTML file with SVG charts\n"
"  gate          BASELINE CURRENT: CI gate on GPU starvation (ingero-gate(1); gate --help)\n"
"  mcp           report.db: Model Context Protocol server over stdio (mcp --help)\n"
"\n"
"Options:\n"
"  --json            machine-readable output (stats, explain, per-process, timeline)\n"
"  --compact         JSON on one line\n"
WINDOW
OUTPUT
"  --format FMT      export format (perfetto)\n"
"  --html            report format (html)\n"
"  --limit N         timeline: at most N lines (default 5000, 0 = all)\n"
HELP
EXIT
"The gate exits 1 on a regression (gate --help).\n";

static const struct { const char *cmd, *text; } subs[] = {
	{ "explain",
	"Usage: ingero-analyze explain [OPTIONS] report.db\n"
	"       ingero-analyze [OPTIONS] report.db   (explain is the default)\n"
	"\n"
	"Why the GPU starved: causal chains, most severe first (slow CUDA calls and gaps\n"
	"between calls), each with a timeline of the evidence aligned call by call, the\n"
	"root cause and fixes with values for this machine; then the GPU idle share as\n"
	"bounds (an estimate from host evidence), what was lost while tracing, and the\n"
	"processes.\n"
	"\n"
	"Options:\n"
	JSON WINDOW OUTPUT HELP EXIT },
	{ "stats",
	"Usage: ingero-analyze stats [OPTIONS] report.db\n"
	"\n"
	"Per CUDA API: count, total, mean, p50/p90/p99/max latency, bytes and copy\n"
	"bandwidth split pinned/pageable host memory; per process: CUDA calls, context\n"
	"switches, off-CPU time, run-queue delay, page allocations, CPU time.\n"
	"\n"
	"Options:\n"
	JSON WINDOW OUTPUT HELP EXIT },
	{ "per-process",
	"Usage: ingero-analyze per-process [OPTIONS] report.db\n"
	"\n"
	"The traced process tree with roles (main: drives the GPU; worker: its\n"
	"descendants, e.g. DataLoader workers; other) and, per process, CUDA calls, CPU\n"
	"time, context switches, off-CPU time and worst stall, run-queue delay, page\n"
	"allocations, and for workers their share of the main thread's waiting.\n"
	"\n"
	"Options:\n"
	JSON WINDOW OUTPUT HELP EXIT },
	{ "timeline",
	"Usage: ingero-analyze timeline [OPTIONS] report.db\n"
	"\n"
	"The events of a window in time order, one line each: CUDA calls (API,\n"
	"duration, bytes, direction, pinned or pageable, the Python line) and off-CPU\n"
	"intervals of traced threads (preempted or blocked, for how long, then how long\n"
	"waiting for a CPU, who got the CPU).\n"
	"\n"
	"Options:\n"
	"  --limit N         at most N events (default 5000, 0 = all)\n"
	JSON WINDOW OUTPUT HELP EXIT },
	{ "export",
	"Usage: ingero-analyze export --format perfetto -o trace.json [OPTIONS] report.db\n"
	"\n"
	"The trace as Chrome trace-event JSON for ui.perfetto.dev: a track per thread\n"
	"with its CUDA calls and off-CPU intervals, the estimated GPU-idle stretches,\n"
	"CPU busy and page allocation counters.\n"
	"\n"
	"Options:\n"
	"  --format FMT      perfetto (the one format; required)\n"
	"  -o, --output FILE where to write (required)\n"
	WINDOW HELP EXIT },
	{ "report",
	"Usage: ingero-analyze report --html -o report.html [OPTIONS] report.db\n"
	"\n"
	"One self-contained HTML file (inline CSS and SVG, no script, no network): the\n"
	"causal chains, the GPU idle estimate, a timeline of GPU waiting vs host\n"
	"activity, latency histograms per API, the process and API tables.\n"
	"\n"
	"Options:\n"
	"  --html            HTML (the one format; required)\n"
	"  -o, --output FILE where to write (default report.html)\n"
	WINDOW HELP EXIT },
};

const char *ia_usage(const char *subcommand)
{
	for (size_t i = 0; subcommand && i < sizeof subs / sizeof subs[0]; i++)
		if (!strcmp(subcommand, subs[i].cmd))
			return subs[i].text;
	return general;
}
