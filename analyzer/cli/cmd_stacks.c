/*
 * cmd_stacks.c — `ingero-analyze stacks [--offcpu] [--format folded|speedscope]`:
 * the window's sampled stacks for a flame graph (render/stacks_out.h):
 * on-CPU samples, or with --offcpu where threads blocked; per thread; the
 * window and processes from --from/--to/--since/-p.
 */
#include "cli/cli.h"

#include "render/stacks_out.h"

#include <stdio.h>
#include <string.h>

int ia_cmd_stacks(const struct ia_cli *c)
{
	enum ia_stacks_format fmt = IA_STACKS_FOLDED;
	if (c->format && !strcmp(c->format, "speedscope"))
		fmt = IA_STACKS_SPEEDSCOPE;
	else if (c->format && strcmp(c->format, "folded")) {
		ia_err("stacks: --format folded or speedscope (got %s)", c->format);
		return IA_EXIT_USAGE;
	}
	struct ia_trace t;
	char err[512];
	if (ia_cli_load(c, &t, 0) < 0)
		return IA_EXIT_ERROR;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	size_t rows = 0;
	int rc = IA_EXIT_OK;
	if (ia_stacks_write(f, &t, c->offcpu, fmt, &rows, err, sizeof err) < 0) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	if (rc == IA_EXIT_OK && !rows)   /* said where it is read, not in the output */
		fprintf(stderr, "ingero-analyze: stacks: no %s in this window%s\n",
			c->offcpu ? "stacks of blocks (off_cpu_stacks: traces of schema version 6 with the sampler on)"
				  : "on-CPU samples (the collector's sampler: --sample-hz)",
			c->filter.has_from || c->filter.has_to || c->filter.has_since || c->filter.pid
				? " and selection" : "");
	ia_cli_unload(&t);
	return rc;
}
