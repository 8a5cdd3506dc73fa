/*
 * cmd_report.c — `ingero-analyze report --html -o FILE`: the analysis of
 * the trace written as one HTML page (render/report_html.h).
 */
#include "cli/cli.h"

#include "render/report_html.h"
#include "rules/analysis.h"

#include <stdio.h>

int ia_report_write(const struct ia_cli *c, struct ia_analysis *a)
{
	FILE *f = ia_cli_output(c, "report.html");
	if (!f)
		return IA_EXIT_ERROR;
	ia_report_html_write(f, a, c->db_path);
	return ia_cli_close_output(c, f) < 0 ? IA_EXIT_ERROR : IA_EXIT_OK;
}

int ia_cmd_report(const struct ia_cli *c)
{
	if (!c->html) {
		ia_err("report: --html is the one format (report --html -o report.html)");
		return IA_EXIT_USAGE;
	}
	return ia_cli_views(c, ia_report_write);
}
