/*
 * cmd_export.c — `ingero-analyze export --format perfetto -o FILE`: loads
 * the trace, analyses it once (the same analysis every view renders) and
 * writes it through render/export_perfetto.h.
 */
#include "cli/cli.h"

#include "base/progress.h"
#include "render/export_perfetto.h"
#include "rules/analysis.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ia_cmd_export(const struct ia_cli *c)
{
	if (!c->format || strcmp(c->format, "perfetto")) {
		ia_err("export: --format perfetto is the one format (got %s)", c->format ? c->format : "none");
		return IA_EXIT_USAGE;
	}
	if (!c->out) {
		ia_err("export: -o FILE is required (the trace can be large); -o - writes to standard output");
		return IA_EXIT_USAGE;
	}
	struct ia_trace t;
	struct ia_analysis a;
	char err[512];
	if (ia_cli_load(c, &t, IA_LOAD_ALL) < 0)
		return IA_EXIT_ERROR;
	int rc = IA_EXIT_OK;
	if (ia_analyze(&t, &a, err, sizeof err) < 0) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		goto out;
	}
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		rc = IA_EXIT_ERROR;
		goto out;
	}
	ia_perfetto_write(f, &a);
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	if (ia_stack_names_error(a.names, err, sizeof err) < 0) {   /* a Python line could not be read */
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		if (c->out && strcmp(c->out, "-"))
			unlink(c->out);   /* leave no trace that looks whole */
	}
out:
	ia_analysis_free(&a);
	ia_cli_unload(&t);
	return rc;
}
