/*
 * cmd_export.c — `ingero-analyze export --format perfetto -o FILE`: loads
 * the trace, analyses it once (the same analysis every view renders) and
 * writes it through render/export_perfetto.h, with the trace's collectives
 * one by one (measure/collective_list.h).  Several report.db, one a node
 * of the same job, go into one file: loaded and put on node 0's clock as
 * explain reads them (rules/nodes.h), each node analysed on its own, their
 * collectives matched across the nodes on that clock; so do the nodes of a
 * merged file.
 */
#include "cli/cli.h"

#include "base/progress.h"
#include "measure/collective_list.h"
#include "render/export_perfetto.h"
#include "rules/analysis.h"
#include "rules/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* After the file is written: a Python line that could not be read makes it
 * incomplete; it is removed. */
static int names_ok(const struct ia_cli *c, const struct ia_analysis *a)
{
	char err[512];
	if (ia_stack_names_error(a->names, err, sizeof err) == 0)
		return 1;
	ia_err("%s", err);
	if (c->out && strcmp(c->out, "-"))
		unlink(c->out);   /* leave no trace that looks whole */
	return 0;
}

/* The collectives of the nodes listed (one for one file) into coll, then the
 * output opened; NULL with the error said */
static FILE *collectives_then_output(const struct ia_cli *c, const struct ia_coll_list_node *cn, size_t n,
				     struct ia_coll_list *coll)
{
	char err[512];
	if (ia_coll_list_build(cn, n, coll, err, sizeof err) < 0) {
		ia_err("%s", err);
		return NULL;
	}
	return ia_cli_output(c, NULL);
}

static int export_nodes(const struct ia_cli *c)
{
	struct ia_nodes ns;
	struct ia_analysis *a = calloc(IA_MAX_NODES, sizeof *a);   /* 23 KB each: not on the stack */
	struct ia_perfetto_node pn[IA_MAX_NODES];
	struct ia_coll_list_node cn[IA_MAX_NODES];
	struct ia_coll_list coll = { 0 };
	char label[IA_MAX_NODES][128], err[512];
	size_t na = 0;
	int rc = ia_cli_load_nodes(c, &ns, 0);
	if (rc == IA_EXIT_OK && !a) {
		ia_err("out of memory");
		rc = IA_EXIT_ERROR;
	}
	if (rc != IA_EXIT_OK)
		goto out;
	for (; na < ns.nn; na++) {
		const struct ia_node *n = &ns.nd[na];
		const struct ia_clock_fit *fit = &ns.job->fit[na];
		if (ia_analyze(&n->t, &a[na], err, sizeof err) < 0) {
			ia_err("%s: %s", n->path, err);
			ia_analysis_free(&a[na]);
			rc = IA_EXIT_ERROR;
			goto out;
		}
		snprintf(label[na], sizeof label[na], "node %zu (%s)", na, n->host ? n->host : "?");
		pn[na] = (struct ia_perfetto_node){
			.a = &a[na], .rk = &n->rk, .label = label[na], .path = n->path, .host = n->host, .boot = n->boot,
			.shift_ns = ia_nodes_shift(&ns, na), .anchor_offset_ns = ia_nodes_anchor_offset(&ns, na),
			.correction_ns = fit->correction_ns, .anchor_unc_ns = n->anchor_unc,
			.collectives_used = na ? fit->used : 0, .uncertainty_ns = fit->uncertainty_ns,
		};
		cn[na] = (struct ia_coll_list_node){ &n->t, &n->rk, pn[na].shift_ns };
	}
	FILE *f = collectives_then_output(c, cn, ns.nn, &coll);
	if (!f) {
		rc = IA_EXIT_ERROR;
		goto out;
	}
	ia_perfetto_write_nodes(f, pn, ns.nn, &coll);
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	for (size_t i = 0; i < na && rc == IA_EXIT_OK; i++)
		if (!names_ok(c, &a[i]))
			rc = IA_EXIT_ERROR;
out:
	ia_coll_list_free(&coll);
	for (size_t i = 0; i < na; i++)
		ia_analysis_free(&a[i]);
	free(a);
	ia_nodes_free(&ns);
	return rc;
}

int ia_export_write(const struct ia_cli *c, struct ia_analysis *a)
{
	struct ia_ranks rk = { 0 };
	struct ia_coll_list coll = { 0 };
	char err[512];
	int rc = IA_EXIT_OK;
	if (ia_ranks_compute(a->t, &rk, err, sizeof err) < 0) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
		goto out;
	}
	struct ia_coll_list_node one = { a->t, &rk, 0 };
	FILE *f = collectives_then_output(c, &one, 1, &coll);
	if (!f) {
		rc = IA_EXIT_ERROR;
		goto out;
	}
	ia_perfetto_write(f, a, &coll);
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	if (!names_ok(c, a))
		rc = IA_EXIT_ERROR;
out:
	ia_coll_list_free(&coll);
	ia_ranks_free(&rk);
	return rc;
}

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
	if (ia_cli_nodes_wanted(c))
		return c->nalso ? ia_cli_no_also(c) : export_nodes(c);
	return ia_cli_views(c, ia_export_write);
}
