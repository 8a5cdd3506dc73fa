/*
 * cli.h — the command line shared by every subcommand, and the entry point
 * of each.  Subcommands only print: the analysis lives in the modules whose
 * headers they include (stats.h, per_process.h, chains.h, ...), which the
 * MCP server calls directly.
 */
#ifndef IA_CLI_H
#define IA_CLI_H

#include "load/trace.h"

#include "base/errors.h"

#include <stdio.h>

struct ia_analysis;
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
	int limit_given;       /* --limit was on the command line */
	int verbose;           /* internal counters too */
	int kernels;           /* stats --kernels */
	int offcpu;            /* stacks --offcpu */
	int force;             /* merge --force: replace OUT.db */
	const char *const *more_db;   /* explain, export, merge: more report.db, one a node of the same job */
	int nmore;
	const struct ia_also *also;   /* --also VIEW=FILE: more views of the same analysis (views.c) */
	int nalso;
	/* --also baseline: the gate's writer (gate.h), set by main.c */
	int (*baseline_of)(const struct ia_analysis *a, const char *source, const char *path, char *err,
			   size_t errlen);
};

/* One --also VIEW=FILE: VIEW one of ia_view_names(), FILE where it goes. */
struct ia_also {
	const char *view;
	const char *path;
};

int ia_exit_status(int rc);

/* Whether NAME is a view --also can write; the list for the error line. */
int ia_view_known(const char *name);
const char *ia_view_names(void);

/* What explain, stats, per-process, report and export of one report.db
 * share (views.c): the trace loaded with c's filter, analysed once, the
 * command's own view written by WRITE, then each --also view from the same
 * analysis, byte for byte what its own subcommand would write with these
 * options.  An --also file that cannot be written is said and the others
 * are still written; the status is then an error. */
struct ia_analysis;
typedef int (*ia_view_write_fn)(const struct ia_cli *c, struct ia_analysis *a);
int ia_cli_views(const struct ia_cli *c, ia_view_write_fn write);
/* --also given where it has no one analysis to share (several report.db,
 * a merged file read whole): the error line; IA_EXIT_USAGE. */
int ia_cli_no_also(const struct ia_cli *c);

/* Each subcommand's view of one analysis into c's output (-o or standard
 * output); IA_EXIT_OK or IA_EXIT_ERROR with the error said.  c->json picks
 * the JSON form where there is one. */
int ia_explain_write(const struct ia_cli *c, struct ia_analysis *a);
int ia_stats_write(const struct ia_cli *c, struct ia_analysis *a);
int ia_per_process_write(const struct ia_cli *c, struct ia_analysis *a);
int ia_report_write(const struct ia_cli *c, struct ia_analysis *a);
int ia_export_write(const struct ia_cli *c, struct ia_analysis *a);

/* The --help text of SUBCOMMAND (explain, stats, ...), or the program's
 * when NULL (usage.c). */
const char *ia_usage(const char *subcommand);

int ia_cmd_stats(const struct ia_cli *c);
int ia_cmd_explain(const struct ia_cli *c);
int ia_cmd_per_process(const struct ia_cli *c);
int ia_cmd_timeline(const struct ia_cli *c);
int ia_cmd_export(const struct ia_cli *c);
int ia_cmd_report(const struct ia_cli *c);
int ia_cmd_stacks(const struct ia_cli *c);
/* several report.db, one a node of one job, into one (cmd_merge.c) */
int ia_cmd_merge(const struct ia_cli *c);
/* explain of several report.db as one job (cmd_explain_nodes.c) */
int ia_cmd_explain_nodes(const struct ia_cli *c);
/* explain's text of one analysis (cmd_explain.c), WIDTH its processes' table's */
void ia_explain_print(FILE *f, const struct ia_analysis *a, int verbose, int width);

/* Opens the database and loads the trace; prints the error line and returns -1. */
int ia_cli_load(const struct ia_cli *c, struct ia_trace *t, int what);
void ia_cli_unload(struct ia_trace *t);
/* explain, export, merge of several report.db (c->db_path, c->more_db):
 * refuses a window or -p (per file), loads and aligns them (rules/nodes.h;
 * flags as ia_nodes_load's: 1, IA_NODES_CAUSE, the straggler's own cause).  IA_EXIT_OK, or IA_EXIT_USAGE /
 * IA_EXIT_ERROR with the error line printed; free with ia_nodes_free
 * either way. */
struct ia_nodes;
int ia_cli_load_nodes(const struct ia_cli *c, struct ia_nodes *ns, int flags);
/* Whether c's files are read as several nodes: more than one, or one
 * merged file read whole (with -p or a window, a merged file is read as
 * one trace, its pids and CPUs as the merge numbered them). */
int ia_cli_nodes_wanted(const struct ia_cli *c);
/* Opens -o FILE (or stdout); NULL with the error printed. */
FILE *ia_cli_output(const struct ia_cli *c, const char *def);
int ia_cli_close_output(const struct ia_cli *c, FILE *f);

#endif
