/*
 * cli.c — what every subcommand shares: the error line, loading the trace
 * with the user's filter, the output file, and which exit status a failure
 * gets (cli.h).
 */
#include "base/progress.h"
#include "cli/cli.h"

#include "load/db.h"
#include "base/util.h"
#include "rules/nodes.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static int bad_pid;   /* the failure was -p of a process not in the trace: a usage error */

int ia_cli_load(const struct ia_cli *c, struct ia_trace *t, int what)
{
	char err[512];
	ia_phase("start");
	sqlite3 *db = ia_db_open(c->db_path, err, sizeof err);
	if (!db) {
		ia_err("%s", err);
		return -1;
	}
	int rc = ia_trace_load(t, db, &c->filter, what, err, sizeof err);
	if (rc < 0) {
		ia_err("%s", err);
		ia_trace_free(t);
		ia_db_close(db);
		bad_pid = rc == IA_TRACE_NO_PID;
		return -1;
	}
	return 0;
}

int ia_exit_status(int rc)
{
	if (rc != IA_EXIT_ERROR)
		return rc;
	if (bad_pid)
		return IA_EXIT_USAGE;
	return ia_db_input_bad() ? IA_EXIT_INPUT : IA_EXIT_RUNTIME;
}

int ia_cli_load_nodes(const struct ia_cli *c, struct ia_nodes *ns, int flags)
{
	const struct ia_filter *fl = &c->filter;
	memset(ns, 0, sizeof *ns);
	if (fl->pid || fl->has_from || fl->has_to || fl->has_since) {
		if (!strcmp(c->cmd, "merge"))
			ia_err("merge: no -p, --from, --to or --since (whole traces are merged)");
		else
			ia_err("several report.db: no -p, --from, --to or --since (one file's own view: %s FILE)", c->cmd);
		return IA_EXIT_USAGE;
	}
	size_t nn = 1 + (size_t)c->nmore;
	if (nn > IA_MAX_NODES) {
		ia_err("at most %d report.db at a time", IA_MAX_NODES);
		return IA_EXIT_USAGE;
	}
	const char *paths[IA_MAX_NODES];
	paths[0] = c->db_path;
	for (size_t i = 1; i < nn; i++)
		paths[i] = c->more_db[i - 1];
	char err[512];
	int rc = ia_nodes_load(ns, paths, nn, flags, err, sizeof err);
	if (rc < 0) {
		ia_err("%s", err);
		return rc == IA_NODES_USAGE ? IA_EXIT_USAGE : IA_EXIT_ERROR;
	}
	return IA_EXIT_OK;
}

int ia_cli_nodes_wanted(const struct ia_cli *c)
{
	const struct ia_filter *fl = &c->filter;
	if (c->nmore > 0)
		return 1;
	if (fl->pid || fl->has_from || fl->has_to || fl->has_since)
		return 0;
	return ia_nodes_merged(c->db_path) > 0;   /* (unreadable: the one file's view says why) */
}

void ia_cli_unload(struct ia_trace *t)
{
	sqlite3 *db = t->db;
	ia_trace_free(t);
	ia_db_close(db);
}

FILE *ia_cli_output(const struct ia_cli *c, const char *def)
{
	const char *path = c->out ? c->out : def;
	if (!path || !strcmp(path, "-")) {
		ia_progress_end();   /* the terminal is about to get the answer */
		return stdout;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		ia_err("%s: %s", path, strerror(errno));
	return f;
}

int ia_cli_close_output(const struct ia_cli *c, FILE *f)
{
	if (f == stdout)
		return fflush(f) == 0 && !ferror(f) ? 0 : -1;
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		ia_err("%s: write failed: %s", c->out ? c->out : "output", strerror(errno));
		return -1;
	}
	return 0;
}
