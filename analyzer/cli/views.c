/*
 * views.c — one analysis, several views (--also VIEW=FILE).
 *
 * A CI job wants explain's text for its log, the JSON for its dashboard,
 * the HTML report and the Perfetto trace as artifacts and a gate baseline
 * for the next run; each subcommand alone loads and analyses the trace
 * again, which on a long job is most of the time spent.  Here the command
 * loads and analyses once and every view is written from that one result,
 * through the same writer its own subcommand uses — so a view written with
 * --also is byte for byte the subcommand's (tests/e2e/analyzer_also.sh).
 */
#include "cli/cli.h"

#include "rules/analysis.h"

#include <string.h>

static int baseline_write(const struct ia_cli *c, struct ia_analysis *a);

/* The views --also writes: each is a subcommand's output, in the form its
 * flags would pick (json) — the flags that are not a form (--width,
 * --compact, --verbose, -p, the window) come from the command line. */
static const struct view {
	const char *name;
	ia_view_write_fn write;
	int json;
} views[] = {
	{ "explain", ia_explain_write, 0 },
	{ "explain-json", ia_explain_write, 1 },
	{ "stats", ia_stats_write, 0 },
	{ "stats-json", ia_stats_write, 1 },
	{ "per-process", ia_per_process_write, 0 },
	{ "per-process-json", ia_per_process_write, 1 },
	{ "html", ia_report_write, 0 },
	{ "perfetto", ia_export_write, 0 },
	{ "baseline", baseline_write, 0 },
};

static const struct view *find(const char *name)
{
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
		if (!strcmp(views[i].name, name))
			return &views[i];
	return NULL;
}

int ia_view_known(const char *name)
{
	return find(name) != NULL;
}

const char *ia_view_names(void)
{
	return "explain, explain-json, stats, stats-json, per-process, per-process-json, html, perfetto, baseline";
}

/* The gate's baseline of this one run (ingero-gate --save-baseline REPORT.db
 * with the default configuration): a CI job's next gate compares against it.
 * The gate's own code, handed over by main.c (gate and cli are front ends
 * side by side: neither includes the other). */
static int baseline_write(const struct ia_cli *c, struct ia_analysis *a)
{
	char err[1024];
	if (!c->baseline_of || c->baseline_of(a, c->db_path, c->out, err, sizeof err) < 0) {
		ia_err("%s", c->baseline_of ? err : "--also baseline: not in this build");
		return IA_EXIT_ERROR;
	}
	return IA_EXIT_OK;
}

int ia_cli_no_also(const struct ia_cli *c)
{
	(void)c;
	ia_err("--also: one report.db's analysis only (several nodes are analysed one by one)");
	return IA_EXIT_USAGE;
}

int ia_cli_views(const struct ia_cli *c, ia_view_write_fn write)
{
	struct ia_trace t;
	struct ia_analysis a;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL | IA_LOAD_CHECK_LATE) < 0)
		return IA_EXIT_ERROR;
	int rc = IA_EXIT_OK;
	if (ia_analyze(&t, &a, err, sizeof err) < 0) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
	} else {
		rc = write(c, &a);
		for (int i = 0; i < c->nalso; i++) {
			const struct view *v = find(c->also[i].view);
			struct ia_cli one = *c;
			one.out = c->also[i].path;
			one.json = v->json;
			one.kernels = 0;
			if (v->write(&one, &a) != IA_EXIT_OK)
				rc = IA_EXIT_ERROR;
		}
	}
	ia_analysis_free(&a);
	ia_cli_unload(&t);
	return rc;
}
