/*
 * main.c — ingero-analyze: argument parsing and dispatch to a subcommand.
 *
 *   ingero-analyze [explain|stats|per-process|timeline|export|report] [OPTIONS] report.db
 *
 * The subcommand may be left out (explain).  Options may come before or
 * after the database path.  Exit codes: 0 success, 1 the database could not
 * be read or analysed (one line on stderr says why), 2 bad usage.
 */
#include "progress.h"
#include "cli.h"
#include "gate.h"
#include "mcp.h"
#include "util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define IA_VERSION "0.1.0"

static const char usage[] =
"Usage: ingero-analyze [SUBCOMMAND] [OPTIONS] report.db\n"
"\n"
"Explains why a GPU program starved, from a report.db written by ingero-collector.\n"
"\n"
"Subcommands:\n"
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
"  --from T, --to T  only this window; T is a time since the trace start: 12.5, 1500ms, 2s\n"
"  --since D         only the last D of the trace (e.g. 30s)\n"
"  -p, --pid PID     only process PID and its descendants\n"
"  -o, --output FILE write to FILE instead of standard output\n"
"  --format FMT      export format (perfetto)\n"
"  --html            report format (html)\n"
"  --limit N         timeline: at most N lines (default 5000, 0 = all)\n"
"  -h, --help        this text;  -V, --version  the version\n"
"\n"
"Exit status: 0 done, 1 the database could not be read or analysed, 2 bad usage.\n";

static const char *const subcommands[] = {
	"explain", "stats", "per-process", "timeline", "export", "report",
};

int main(int argc, char **argv)
{
	atexit(ia_progress_end);   /* never leave a half-drawn progress line behind */
	if (argc > 1 && !strcmp(argv[1], "gate"))   /* own arguments: two inputs (gate.h) */
		return ia_cmd_gate(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "mcp"))    /* MCP server over stdio (mcp.h) */
		return ia_cmd_mcp(argc - 1, argv + 1);
	struct ia_cli c;
	memset(&c, 0, sizeof c);
	c.cmd = "explain";
	c.pretty = 1;
	c.limit = 5000;
	int first = 1;
	if (argc > 1) {
		for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
			if (!strcmp(argv[1], subcommands[i])) {
				c.cmd = subcommands[i];
				first = 2;
			}
		if (!strcmp(argv[1], "help")) {
			fputs(usage, stdout);
			return IA_EXIT_OK;
		}
	}
	enum { O_JSON = 256, O_FROM, O_TO, O_SINCE, O_FORMAT, O_HTML, O_LIMIT, O_COMPACT };
	static const struct option opts[] = {
		{ "json", no_argument, 0, O_JSON },
		{ "compact", no_argument, 0, O_COMPACT },
		{ "from", required_argument, 0, O_FROM },
		{ "to", required_argument, 0, O_TO },
		{ "since", required_argument, 0, O_SINCE },
		{ "pid", required_argument, 0, 'p' },
		{ "output", required_argument, 0, 'o' },
		{ "format", required_argument, 0, O_FORMAT },
		{ "html", no_argument, 0, O_HTML },
		{ "limit", required_argument, 0, O_LIMIT },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	int sub_argc = argc - first + 1;
	char **sub_argv = argv + first - 1;
	int o;
	opterr = 0;
	while ((o = getopt_long(sub_argc, sub_argv, ":p:o:hV", opts, NULL)) != -1) {
		char *end;
		switch (o) {
		case O_JSON: c.json = 1; break;
		case O_COMPACT: c.pretty = 0; break;
		case O_FROM:
			if (ia_parse_dur(optarg, &c.filter.from_rel) < 0) {
				ia_err("--from: not a time: %s", optarg);
				return IA_EXIT_USAGE;
			}
			c.filter.has_from = 1;
			break;
		case O_TO:
			if (ia_parse_dur(optarg, &c.filter.to_rel) < 0) {
				ia_err("--to: not a time: %s", optarg);
				return IA_EXIT_USAGE;
			}
			c.filter.has_to = 1;
			break;
		case O_SINCE:
			if (ia_parse_dur(optarg, &c.filter.since) < 0 || c.filter.since == 0) {
				ia_err("--since: not a duration: %s", optarg);
				return IA_EXIT_USAGE;
			}
			c.filter.has_since = 1;
			break;
		case 'p': {
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 0x7fffffff) {
				ia_err("-p: not a pid: %s", optarg);
				return IA_EXIT_USAGE;
			}
			c.filter.pid = (int)v;
			break;
		}
		case 'o': c.out = optarg; break;
		case O_FORMAT: c.format = optarg; break;
		case O_HTML: c.html = 1; break;
		case O_LIMIT:
			c.limit = strtol(optarg, &end, 10);
			if (*end || c.limit < 0) {
				ia_err("--limit: not a count: %s", optarg);
				return IA_EXIT_USAGE;
			}
			break;
		case 'h': fputs(usage, stdout); return IA_EXIT_OK;
		case 'V': printf("ingero-analyze %s\n", IA_VERSION); return IA_EXIT_OK;
		case ':':
			ia_err("option %s needs a value (see --help)", sub_argv[optind - 1]);
			return IA_EXIT_USAGE;
		default:
			ia_err("unknown option %s (see --help)", sub_argv[optind - 1]);
			return IA_EXIT_USAGE;
		}
	}
	if (c.filter.has_since && (c.filter.has_from || c.filter.has_to)) {
		ia_err("--since cannot be combined with --from/--to");
		return IA_EXIT_USAGE;
	}
	if (optind >= sub_argc) {
		ia_err("no report.db given (see --help)");
		return IA_EXIT_USAGE;
	}
	if (sub_argc - optind > 1) {
		ia_err("unexpected argument %s (one report.db at a time; subcommand first)", sub_argv[optind + 1]);
		return IA_EXIT_USAGE;
	}
	c.db_path = sub_argv[optind];

	if (!strcmp(c.cmd, "stats"))
		return ia_cmd_stats(&c);
	if (!strcmp(c.cmd, "per-process"))
		return ia_cmd_per_process(&c);
	if (!strcmp(c.cmd, "timeline"))
		return ia_cmd_timeline(&c);
	if (!strcmp(c.cmd, "export"))
		return ia_cmd_export(&c);
	if (!strcmp(c.cmd, "report"))
		return ia_cmd_report(&c);
	return ia_cmd_explain(&c);
}
