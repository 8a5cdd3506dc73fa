/*
 * cli.h — the command line shared by every subcommand, and the entry point
 * of each.  Subcommands only print: the analysis lives in the modules whose
 * headers they include (stats.h, per_process.h, chains.h, ...), which the
 * MCP server calls directly.
 */
#ifndef IA_CLI_H
#define IA_CLI_H

#include "load/trace.h"

#include <ingero/exit.h>

#include <stdio.h>

struct ia_cli {
	const char *cmd;
	const char *db_path;
	struct ia_filter filter;
	int json;
	int pretty;            /* JSON indentation (default on; --compact turns it off) */
	const char *out;       /* -o FILE */
	const char *format;    /* export --format */
	int html;              /* report --html */
	long limit;            /* timeline: max lines, 0 = all */
	int verbose;
};

/* Exit codes: the project's convention (include/ingero/exit.h; --help,
 * man/ingero-analyze.1).  A subcommand returns IA_EXIT_ERROR for any
 * failure after its one error line; ia_exit_status() (main) turns it into
 * IA_EXIT_USAGE (a -p PID not in the trace), IA_EXIT_INPUT (the file was
 * at fault: refused at open, corrupted, unreadable) or IA_EXIT_RUNTIME. */
enum {
	IA_EXIT_OK = INGERO_EXIT_OK,
	IA_EXIT_USAGE = INGERO_EXIT_USAGE,
	IA_EXIT_INPUT = INGERO_EXIT_INPUT,
	IA_EXIT_RUNTIME = INGERO_EXIT_RUNTIME,
	IA_EXIT_ERROR = -1,
};
int ia_exit_status(int rc);

/* The --help text of SUBCOMMAND (explain, stats, ...), or the program's
 * when NULL (usage.c). */
const char *ia_usage(const char *subcommand);

int ia_cmd_stats(const struct ia_cli *c);
int ia_cmd_explain(const struct ia_cli *c);
int ia_cmd_per_process(const struct ia_cli *c);
int ia_cmd_timeline(const struct ia_cli *c);
int ia_cmd_export(const struct ia_cli *c);
int ia_cmd_report(const struct ia_cli *c);

/* Opens the database and loads the trace; prints the error line and returns -1. */
int ia_cli_load(const struct ia_cli *c, struct ia_trace *t, int what);
void ia_cli_unload(struct ia_trace *t);
/* One error line on stderr, prefixed "ingero-analyze: ". */
void ia_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Opens -o FILE (or stdout); NULL with the error printed. */
FILE *ia_cli_output(const struct ia_cli *c, const char *def);
int ia_cli_close_output(const struct ia_cli *c, FILE *f);

#endif
