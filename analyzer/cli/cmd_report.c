/*
 * cmd_report.c — `ingero-analyze report --html -o FILE`: the analysis of
 * the trace written as one HTML page (render/report_html.h).
 */
#include "cli/cli.h"

#include "render/report_html.h"
#include "rules/analysis.h"

#include <stdio.h>

int ia_cmd_report(const struct ia_cli *c)
{
	if (!c->html) {
		ia_err("report: --html is the one format (report --html -o report.html)");
		return IA_EXIT_USAGE;
	}
	struct ia_trace t;
	struct ia_analysis a;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL | IA_LOAD_CHECK_LATE) < 0)
		return IA_EXIT_ERROR;
	if (ia_analyze(&t, &a, err, sizeof err) < 0) {
		ia_err("%s", err);
		ia_analysis_free(&a);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, "report.html");
	if (!f) {
		ia_analysis_free(&a);
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	ia_report_html_write(f, &a, c->db_path);
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	ia_analysis_free(&a);
	ia_cli_unload(&t);
	return rc;
}
