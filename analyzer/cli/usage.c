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
#define ALSO \
	"  --also VIEW=FILE  also write VIEW of the same analysis to FILE (repeatable):\n" \
	"                    explain, explain-json, stats, stats-json, per-process,\n" \
	"                    per-process-json, html, perfetto, baseline (the gate's);\n" \
	"                    each as its subcommand writes it with these options\n"
#define HELP "  -h, --help        this text;  -V, --version  the version\n"
#define TEXT \
	"  --width N         fit text to N columns (default: the terminal's; 80 into a file or pipe)\n" \
	"  -v, --verbose     internal counters too (losses by source, the estimate's basis, full paths)\n"
#define EXIT \
	"\nExit status: 0 done; 2 bad usage (also -p of a process not in the trace);\n" \
	"3 bad input: report.db missing, not a report, of another schema version,\n" \
	"truncated or corrupted; 4 a failure while running (output not written).\n"

static const char general[] =
"Usage: ingero-analyze [SUBCOMMAND] [OPTIONS] report.db\n"
"       ingero-analyze merge -o JOB.db [--force] node0.db node1.db ...\n"
"\n"
"Explains why a GPU program starved, from a report.db written by ingero-collector.\n"
"\n"
"Subcommands (SUBCOMMAND --help for each):\n"
"  explain       causal chains, most severe first, with root cause and fixes (default)\n"
"  stats         per CUDA API: count, total, mean, p50/p90/p99/max; copy bandwidth;\n"
"                per process: calls, context switches, off-CPU, run-queue delay, CPU\n"
"  per-process   the process tree with roles (main, worker, other) and host evidence\n"
"  timeline      events in a window (--from/--to; else the steady state's first steps)\n"
"  export        --format perfetto -o trace.json: Chrome trace-event JSON for ui.perfetto.dev\n"
"  report        --html -o report.html: one self-contained HTML file with SVG charts\n"
"  stacks        sampled stacks for a flame graph: folded lines or --format speedscope\n"
"  merge         -o JOB.db node0.db node1.db ...: one report.db of several nodes' traces\n"
"  gate          BASELINE CURRENT: CI gate on GPU starvation (ingero-gate(1); gate --help)\n"
"  mcp           report.db: Model Context Protocol server over stdio (mcp --help)\n"
"\n"
"Options:\n"
"  --json            machine-readable output (stats, explain, per-process, timeline)\n"
"  --compact         JSON on one line\n"
WINDOW
OUTPUT
"  --format FMT      export: perfetto; stacks: folded or speedscope\n"
"  --html            report format (html)\n"
"  --limit N         timeline: at most N lines (default 5000, 0 = all)\n"
"  --kernels         stats: GPU time per kernel (count, time, share, mean/p50/max)\n"
"  --offcpu          stacks: where threads blocked, not on-CPU samples\n"
"  --force           merge: replace JOB.db if it exists\n"
"  --also VIEW=FILE  explain, stats, per-process, report, export: also write VIEW\n"
"                    of the same analysis to FILE (explain --help)\n"
TEXT
HELP
EXIT
"The gate exits 1 on a regression (gate --help).\n";

static const struct { const char *cmd, *text; } subs[] = {
	{ "explain",
	"Usage: ingero-analyze explain [OPTIONS] report.db\n"
	"       ingero-analyze explain [--json] [-o FILE] node0.db node1.db ...\n"
	"       ingero-analyze [OPTIONS] report.db   (explain is the default)\n"
	"\n"
	"Why the GPU starved.  First the headline every view shares: GPU idle of the\n"
	"steady state (measured bounds; \"about\" an estimate inside them), the whole\n"
	"window with its phases, the step, where the main thread's steady state went.\n"
	"Then a one-line verdict and the findings, most severe first, each with a\n"
	"timeline of the evidence, the root cause, fixes with values for this machine\n"
	"and the Source line; the processes.  README \"How to read explain\" says what\n"
	"each term means.\n"
	"--also writes the other views from this one analysis (a CI job's artifacts:\n"
	"explain --also explain-json=x.json --also html=r.html --also baseline=b.json).\n"
	"A job of several ranks: when each arrived at the collectives, the straggler\n"
	"and its own cause first.  Several report.db (one a node of one job): put on\n"
	"one timeline by the collectors' clock anchors, refined by the collectives,\n"
	"the remaining uncertainty stated; no window or -p then.  A merged file\n"
	"(merge --help) is read as the nodes it holds.\n"
	"\n"
	"Options:\n"
	JSON WINDOW OUTPUT ALSO TEXT HELP EXIT },
	{ "stats",
	"Usage: ingero-analyze stats [OPTIONS] report.db\n"
	"\n"
	"The headline, the steady state's step times (p50/p90/p99/max and a histogram),\n"
	"per CUDA API: count, total, mean, p50/p90/p99/max time inside the call, copies\n"
	"by host memory (pinned/pageable); per process: CUDA calls, CPU, off-CPU,\n"
	"switches (thread time), run-queue delay, page allocations.  --kernels: the\n"
	"GPU's time per kernel (and kind of copy), from the GPU marks.\n"
	"\n"
	"Options:\n"
	"  --kernels         GPU time per kernel: launches, GPU time, share, mean/p50/max\n"
	JSON WINDOW OUTPUT ALSO TEXT HELP EXIT },
	{ "per-process",
	"Usage: ingero-analyze per-process [OPTIONS] report.db\n"
	"\n"
	"The traced process tree with roles (main: drives the GPU; worker: its\n"
	"descendants, e.g. DataLoader workers; other) and, per process, CUDA calls, CPU\n"
	"time, context switches, off-CPU time and worst stall, run-queue delay, page\n"
	"allocations, and for workers their share of the main thread's waiting.\n"
	"\n"
	"Options:\n"
	JSON WINDOW OUTPUT ALSO TEXT HELP EXIT },
	{ "timeline",
	"Usage: ingero-analyze timeline [OPTIONS] report.db\n"
	"\n"
	"The events of a window in time order, one line each: CUDA calls (API,\n"
	"duration, bytes, direction, pinned or pageable, the Python line) and off-CPU\n"
	"intervals of traced threads (preempted or blocked, for how long, then how long\n"
	"waiting for a CPU, who got the CPU).  Without --from/--to: the steady state's\n"
	"first steps, and where the phases are.\n"
	"\n"
	"Options:\n"
	"  --limit N         at most N events (default 5000, 0 = all)\n"
	JSON WINDOW OUTPUT TEXT HELP EXIT },
	{ "export",
	"Usage: ingero-analyze export --format perfetto -o trace.json [OPTIONS] report.db\n"
	"       ingero-analyze export --format perfetto -o job.json node0.db node1.db ...\n"
	"\n"
	"The trace as Chrome trace-event JSON for ui.perfetto.dev: a track per thread\n"
	"with its CUDA calls and off-CPU intervals, the GPU's measured busy and idle\n"
	"stretches, a track per stream with the kernels timed on the GPU, flows from\n"
	"queued work to the sync that waited for it, CPU busy and page allocations;\n"
	"a \"collectives\" track per rank (each NCCL or gloo collective, its args) and\n"
	"flows from the rank that arrived last to the ranks that waited for it.\n"
	"Several report.db (one a node of one job): one file, each node's times on\n"
	"node 0's clock as explain puts them, its processes named \"node N (host) ·\n"
	"rank R · ...\" (pid N*10000000+pid), offsets and the remaining uncertainty in\n"
	"otherData.nodes; no window then.  A merged file (merge --help): its nodes.\n"
	"\n"
	"Options:\n"
	"  --format FMT      perfetto (the one format; required)\n"
	"  -o, --output FILE where to write (required)\n"
	WINDOW ALSO HELP EXIT },
	{ "report",
	"Usage: ingero-analyze report --html -o report.html [OPTIONS] report.db\n"
	"\n"
	"One self-contained HTML file (inline CSS and SVG, no script, no network): the\n"
	"headline and verdict, the main thread's steady state, a timeline (the GPU\n"
	"measured busy/idle, the main thread, workers and the threads the findings\n"
	"name, CPUs; phases shaded, steps marked), step times, the findings, latency\n"
	"histograms, GPU time per kernel, the process and API tables.\n"
	"\n"
	"Options:\n"
	"  --html            HTML (the one format; required)\n"
	"  -o, --output FILE where to write (default report.html)\n"
	WINDOW ALSO HELP EXIT },
	{ "stacks",
	"Usage: ingero-analyze stacks [--offcpu] [--format folded|speedscope] [OPTIONS] report.db\n"
	"\n"
	"The window's sampled stacks for a flame graph, per thread: on-CPU samples, or\n"
	"with --offcpu where threads blocked (a sample of their blocks, weighed into an\n"
	"estimate of the blocked time).  folded (the default): one line a stack,\n"
	"\"process pid;thread tid;outer;...;leaf VALUE\" (VALUE: samples, or microseconds\n"
	"blocked) for flamegraph.pl, inferno or speedscope; speedscope: its JSON file\n"
	"format, one profile per thread.  Frames: Python frames, then the native ones\n"
	"under the interpreter, then the kernel's ([k]).\n"
	"\n"
	"Options:\n"
	"  --offcpu          where threads blocked, not where they ran\n"
	"  --format FMT      folded (default) or speedscope\n"
	OUTPUT WINDOW HELP EXIT },
	{ "merge",
	"Usage: ingero-analyze merge -o JOB.db [--force] node0.db node1.db ...\n"
	"\n"
	"Several report.db, one a node of the same job, into one report.db: each\n"
	"node's times put on node 0's clock by the offsets explain of the same files\n"
	"applies (the clock anchors, refined by the collectives), node N's pids and\n"
	"tids numbered N*10000000+pid and its CPUs after the nodes' before it, frames\n"
	"and stacks renumbered so that they still resolve, every row and loss kept.\n"
	"Each node's own session (host, boot id, clock anchor), the offset applied\n"
	"and the uncertainty that remains are in the file's session table (node.N.*;\n"
	"docs/schema.md, \"Merged files\"); table node_processes gives each process's\n"
	"node and own pid.  explain and export of JOB.db read it as the job of its\n"
	"nodes (the same output as of the files); the other views read it as one\n"
	"trace.  Nothing is left at JOB.db unless the merge succeeds; the same trace\n"
	"given twice, one file only, or an existing JOB.db without --force is refused.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE the merged report.db (required)\n"
	"  --force           replace FILE if it exists\n"
	HELP EXIT },
};

const char *ia_usage(const char *subcommand)
{
	for (size_t i = 0; subcommand && i < sizeof subs / sizeof subs[0]; i++)
		if (!strcmp(subcommand, subs[i].cmd))
			return subs[i].text;
	return general;
}
