/*
 * cmd_merge.c — `ingero-analyze merge -o OUT.db A.db B.db ...`: several
 * report.db, one a node of the same job, into one report.db on node 0's
 * clock (load/merged.h), moved by the offsets explain and export apply —
 * the same loader finds them (rules/nodes.h: the clock anchors, refined by
 * the collectives).  explain OUT.db then reads the job as explain A.db
 * B.db ... does.
 *
 * Nothing partial is ever left at OUT.db: the file is written under a
 * temporary name beside it and put in place whole — renamed without
 * replacing (RENAME_NOREPLACE) without --force, so that a file that
 * appeared meanwhile is kept, by rename(2) with it.  A failure, or SIGINT, SIGTERM, SIGHUP on the way,
 * removes the temporary file.
 */
#include "cli/cli.h"
#include "rules/nodes.h"

#include "base/util.h"
#include "load/db.h"
#include "load/merged.h"

#include <ingero/schema.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_path[4200];   /* the file being written, for the signal handler */

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int check_args(const struct ia_cli *c)
{
	struct stat st;
	if (!c->out || !strcmp(c->out, "-")) {
		ia_err("merge: -o OUT.db is required (the merged report.db: a file)");
		return IA_EXIT_USAGE;
	}
	if (c->nmore < 1) {
		ia_err("merge: two report.db or more, one a node of the job (got one: %s)", c->db_path);
		return IA_EXIT_USAGE;
	}
	for (int i = 0; i <= c->nmore; i++)
		if (same_file(c->out, i ? c->more_db[i - 1] : c->db_path)) {
			ia_err("merge: %s is one of the inputs", c->out);
			return IA_EXIT_USAGE;
		}
	if (!c->force && lstat(c->out, &st) == 0) {
		ia_err("%s exists: --force replaces it", c->out);
		return IA_EXIT_USAGE;
	}
	return IA_EXIT_OK;
}

/* Every pid and tid below the stride, so that node K's stay its own. */
static int pids_fit(const struct ia_nodes *ns)
{
	for (size_t k = 0; k < ns->nn; k++) {
		const struct ia_trace *t = &ns->nd[k].t;
		for (size_t i = 0; i < t->nthreads; i++)
			if (t->threads[i].tid >= INGERO_NODE_PID_STRIDE) {
				ia_err("%s: thread %u: pids and tids of %d or more cannot be merged", ns->nd[k].path,
				       t->threads[i].tid, INGERO_NODE_PID_STRIDE);
				return 0;
			}
		for (size_t i = 0; i < t->nprocs; i++)
			if (t->procs[i].pid < 0 || t->procs[i].pid >= INGERO_NODE_PID_STRIDE) {
				ia_err("%s: process %d: pids and tids of %d or more cannot be merged", ns->nd[k].path,
				       t->procs[i].pid, INGERO_NODE_PID_STRIDE);
				return 0;
			}
	}
	return 1;
}

/* Every node's times on node 0's clock at 0 or later (CLOCK_MONOTONIC
 * counts from the boot: a node booted before node 0 may begin before it) —
 * its trace's start, and its processes' that began before it. */
static int times_fit(const struct ia_nodes *ns)
{
	for (size_t k = 1; k < ns->nn; k++) {
		const struct ia_trace *t = &ns->nd[k].t;
		const char *s = ia_session(t, "start_mono_ns");
		int64_t start = s ? strtoll(s, NULL, 10) : 0;
		for (size_t i = 0; i < t->nprocs; i++)
			if (t->procs[i].start_ns && (int64_t)t->procs[i].start_ns < start)
				start = (int64_t)t->procs[i].start_ns;
		if (start + ia_nodes_shift(ns, k) < 0) {
			ia_err("%s began before node 0's clock did (%s booted later): give the node that booted first "
			       "as node 0 (the first file)", ns->nd[k].path, ns->nd[0].path);
			return 0;
		}
	}
	return 1;
}

/* The nodes into the file at tmp_path. */
static int write_nodes(const struct ia_nodes *ns, char *err, size_t errlen)
{
	sqlite3 *out = NULL;
	if (sqlite3_open_v2(tmp_path, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", tmp_path, out ? sqlite3_errmsg(out) : "cannot open");
		sqlite3_close(out);
		return -1;
	}
	/* a file nobody sees until it is whole: no journal, no syncs but the last */
	int rc = ia_db_exec(out, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF", err, errlen);
	if (!rc)
		rc = ia_merged_create(out, err, errlen);
	for (size_t k = 0; !rc && k < ns->nn; k++) {
		const struct ia_node *n = &ns->nd[k];
		const struct ia_clock_fit *fit = &ns->job->fit[k];
		struct ia_merge_node mn = {
			.path = n->file, .name = n->path, .shift_ns = ia_nodes_shift(ns, k),
			.anchor_offset_ns = ia_nodes_anchor_offset(ns, k), .correction_ns = fit->correction_ns,
			.collectives_used = k ? fit->used : 0, .uncertainty_ns = fit->uncertainty_ns, .cpus = n->t.cpus,
		};
		rc = ia_merged_add(out, k, &mn, err, errlen);
	}
	if (!rc)
		rc = ia_merged_finish(out, ns->nn, err, errlen);
	if (sqlite3_close(out) != SQLITE_OK && !rc) {
		snprintf(err, errlen, "%s: cannot close", tmp_path);
		rc = -1;
	}
	if (!rc) {   /* on the disk before it takes OUT's name */
		FILE *f = fopen(tmp_path, "r+");
		if (!f || fsync(fileno(f)) < 0) {
			snprintf(err, errlen, "%s: %s", tmp_path, strerror(errno));
			rc = -1;
		}
		if (f)
			fclose(f);
	}
	return rc;
}

/* OUT.db's place taken by the whole file: never over a file that
 * appeared meanwhile without --force (RENAME_NOREPLACE, or link(2) where
 * the file system has no such rename). */
static int publish(const struct ia_cli *c)
{
	int rc = c->force ? rename(tmp_path, c->out) : renameat2(AT_FDCWD, tmp_path, AT_FDCWD, c->out, RENAME_NOREPLACE);
	if (rc < 0 && !c->force && (errno == EINVAL || errno == ENOSYS) && (rc = link(tmp_path, c->out)) == 0)
		unlink(tmp_path);
	if (rc < 0) {
		int e = errno;
		if (e == EEXIST)
			ia_err("%s exists: --force replaces it", c->out);
		else
			ia_err("%s: %s", c->out, strerror(e));
		return e == EEXIST ? IA_EXIT_USAGE : IA_EXIT_ERROR;
	}
	return IA_EXIT_OK;
}

static void summary(const struct ia_cli *c, const struct ia_nodes *ns)
{
	char d1[32], d2[32];
	printf("%s: %zu nodes on node 0's clock", c->out, ns->nn);
	for (size_t k = 1; k < ns->nn; k++) {
		int64_t s = ia_nodes_shift(ns, k);
		const struct ia_clock_fit *fit = &ns->job->fit[k];
		printf("; node %zu %s%s", k, s < 0 ? "-" : "+", ia_fmt_dur(d1, sizeof d1, (uint64_t)(s < 0 ? -s : s)));
		if (fit->used)
			printf(" (±%s, %zu collectives)", ia_fmt_dur(d2, sizeof d2, fit->uncertainty_ns), fit->used);
		else
			printf(" (the clock anchors alone)");
	}
	printf("\n");
}

int ia_cmd_merge(const struct ia_cli *c)
{
	int rc = check_args(c);
	if (rc != IA_EXIT_OK)
		return rc;
	struct ia_nodes ns;
	rc = ia_cli_load_nodes(c, &ns, IA_NODES_UNIQUE);
	char err[sizeof tmp_path + 512] = "";
	if (rc == IA_EXIT_OK && !pids_fit(&ns))
		rc = IA_EXIT_ERROR;
	if (rc == IA_EXIT_OK && !times_fit(&ns))
		rc = IA_EXIT_USAGE;
	if (rc != IA_EXIT_OK) {
		ia_nodes_free(&ns);
		return rc;
	}
	snprintf(tmp_path, sizeof tmp_path, "%s.merge-XXXXXX", c->out);
	int fd = mkstemp(tmp_path);
	if (fd < 0) {
		ia_err("%s: %s", tmp_path, strerror(errno));
		tmp_path[0] = 0;
		ia_nodes_free(&ns);
		return IA_EXIT_ERROR;
	}
	mode_t mask = umask(0);   /* (mkstemp's 0600: the mode a new file gets instead) */
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0)
		mask = 0;   /* (left private: not worth failing for) */
	close(fd);
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	void (*old[3])(int);
	for (int i = 0; i < 3; i++)
		old[i] = signal(sigs[i], on_signal);
	if (write_nodes(&ns, err, sizeof err) < 0) {
		ia_err("%s", err);
		rc = IA_EXIT_ERROR;
	} else {
		rc = publish(c);
	}
	if (rc != IA_EXIT_OK)
		unlink(tmp_path);
	tmp_path[0] = 0;
	for (int i = 0; i < 3; i++)
		signal(sigs[i], old[i]);
	if (rc == IA_EXIT_OK)
		summary(c, &ns);
	ia_nodes_free(&ns);
	return rc;
}
