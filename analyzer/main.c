/*
 * main.c — ingero-analyze: argument parsing and dispatch to a subcommand.
 *
 *   ingero-analyze [explain|stats|per-process|timeline|export|report|stacks] [OPTIONS] report.db
 *   ingero-analyze merge -o OUT.db [--force] node0.db node1.db ...
 *
 * The subcommand may be left out (explain).  Options may come before or
 * after the database path.  Exit codes (include/ingero/exit.h): 0 success,
 * 2 bad usage, 3 the database is missing, not a report or corrupted, 4 a
 * failure while running; one line on stderr says why.  The help texts are
 * in usage.c: `SUBCOMMAND --help` prints that subcommand's.
 */
#include "base/progress.h"
#include "cli/cli.h"
#include "gate/gate.h"
#include "mcp/mcp.h"
#include "base/util.h"
#include "base/wrap.h"

#include <ingero/version.h>

#include <getopt.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const char *const subcommands[] = {
	"explain", "stats", "per-process", "timeline", "export", "report", "stacks", "merge",
};

int main(int argc, char **argv)
{
	/* Decoding a call block allocates and frees msgpack's object tree (a
	 * few hundred KB): left to glibc's defaults, each free gave the top of
	 * the heap back to the kernel (brk, or madvise in a thread's arena) and
	 * the next block faulted it in again, zeroed — 19,000 brk and 9,800
	 * madvise calls and a third of explain's CPU on a 10M-call trace
	 * (docs/benchmarks.md).  Kept in the heap instead, as the collector
	 * does; arrays over 64 MB are still their own mappings. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
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
		if (!strcmp(argv[1], "help")) {   /* help [SUBCOMMAND] */
			fputs(ia_usage(argc > 2 ? argv[2] : NULL), stdout);
			return IA_EXIT_OK;
		}
	}
	enum { O_JSON = 256, O_FROM, O_TO, O_SINCE, O_FORMAT, O_HTML, O_LIMIT, O_COMPACT, O_WIDTH, O_KERNELS, O_OFFCPU, O_FORCE, O_ALSO };
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
		{ "width", required_argument, 0, O_WIDTH },
		{ "kernels", no_argument, 0, O_KERNELS },
		{ "offcpu", no_argument, 0, O_OFFCPU },
		{ "force", no_argument, 0, O_FORCE },
		{ "also", required_argument, 0, O_ALSO },
		{ "verbose", no_argument, 0, 'v' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	int sub_argc = argc - first + 1;
	char **sub_argv = argv + first - 1;
	static struct ia_also also[32];   /* --also VIEW=FILE: more than every view twice over is refused */
	c.also = also;
	c.baseline_of = ia_gate_baseline_of;
	int o;
	opterr = 0;
	while ((o = getopt_long(sub_argc, sub_argv, ":p:o:hvV", opts, NULL)) != -1) {
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
			c.limit_given = 1;
			if (*end || c.limit < 0) {
				ia_err("--limit: not a count: %s", optarg);
				return IA_EXIT_USAGE;
			}
			break;
		case O_WIDTH: {
			long v = strtol(optarg, &end, 10);
			if (*end || v < IA_WIDTH_MIN || v > 10000) {
				ia_err("--width: not a width of %d to 10000 columns: %s", IA_WIDTH_MIN, optarg);
				return IA_EXIT_USAGE;
			}
			ia_width_set((int)v);
			break;
		}
		case 'v': c.verbose = 1; break;
		case O_KERNELS: c.kernels = 1; break;
		case O_OFFCPU: c.offcpu = 1; break;
		case O_FORCE: c.force = 1; break;
		case O_ALSO: {
			char *eq = strchr(optarg, '=');
			if (eq)
				*eq = 0;
			if (c.nalso == (int)(sizeof also / sizeof also[0])) {
				ia_err("--also: at most %zu of them", sizeof also / sizeof also[0]);
				return IA_EXIT_USAGE;
			}
			if (!eq || !ia_view_known(optarg) || !eq[1] || !strcmp(eq + 1, "-")) {
				ia_err("--also: expected VIEW=FILE, VIEW one of %s: %s%s%s", ia_view_names(), optarg,
				       eq ? "=" : "", eq ? eq + 1 : "");
				return IA_EXIT_USAGE;
			}
			also[c.nalso++] = (struct ia_also){ optarg, eq + 1 };
			break;
		}
		case 'h': fputs(ia_usage(first > 1 ? c.cmd : NULL), stdout); return IA_EXIT_OK;
		case 'V': printf("ingero-analyze %s\n", INGERO_VERSION); return IA_EXIT_OK;
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
	/* explain, export and merge read several report.db as one job (one a node: rules/nodes.h) */
	if (sub_argc - optind > 1 && strcmp(c.cmd, "explain") && strcmp(c.cmd, "export") && strcmp(c.cmd, "merge")) {
		ia_err("unexpected argument %s (one report.db at a time; subcommand first)", sub_argv[optind + 1]);
		return IA_EXIT_USAGE;
	}
	if (c.nalso && strcmp(c.cmd, "explain") && strcmp(c.cmd, "stats") && strcmp(c.cmd, "per-process") &&
	    strcmp(c.cmd, "report") && strcmp(c.cmd, "export")) {
		ia_err("--also: %s has no analysis to share (explain, stats, per-process, report, export)", c.cmd);
		return IA_EXIT_USAGE;
	}
	/* (report's own file is report.html without -o) */
	const char *own = c.out ? c.out : !strcmp(c.cmd, "report") ? "report.html" : "";
	for (int i = 0; i < c.nalso; i++)
		for (int j = -1; j < i; j++)
			if (!strcmp(also[i].path, j < 0 ? own : also[j].path)) {
				ia_err("--also: %s is written twice", also[i].path);
				return IA_EXIT_USAGE;
			}
	c.db_path = sub_argv[optind];
	c.more_db = (const char *const *)sub_argv + optind + 1;
	c.nmore = sub_argc - optind - 1;

	int rc;
	if (!strcmp(c.cmd, "stats"))
		rc = ia_cmd_stats(&c);
	else if (!strcmp(c.cmd, "per-process"))
		rc = ia_cmd_per_process(&c);
	else if (!strcmp(c.cmd, "timeline"))
		rc = ia_cmd_timeline(&c);
	else if (!strcmp(c.cmd, "export"))
		rc = ia_cmd_export(&c);
	else if (!strcmp(c.cmd, "report"))
		rc = ia_cmd_report(&c);
	else if (!strcmp(c.cmd, "stacks"))
		rc = ia_cmd_stacks(&c);
	else if (!strcmp(c.cmd, "merge"))
		rc = ia_cmd_merge(&c);
	else
		rc = ia_cmd_explain(&c);
	return ia_exit_status(rc);
}
