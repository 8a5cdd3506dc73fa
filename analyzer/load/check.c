/*
 * check.c — the tables a command reads are checked before its numbers are
 * trusted.
 *
 * SQLite notices a damaged page when it cannot parse it, but a leaf whose
 * cells still parse — bytes zeroed or overwritten inside it — reads as
 * other rows: explain and stats then exit 0 with other numbers (issue 40:
 * "2527 s of evidence" for 13.5 s, a pid 0 from nowhere).  SQLite's
 * PRAGMA quick_check walks a table's b-trees (the table's and its
 * indexes') and accounts for every byte of every page: cells inside the
 * page and not overlapping, keys in order, free space as the header says.
 * A span of bytes overwritten over cells breaks that accounting.  (It
 * does not compare indexes with their tables, nor see a value changed
 * inside a cell whose bytes still add up: a blob's bytes, an overflow
 * page's; the call block decoder checks those it reads.)
 *
 * The check runs table by table on a connection and a thread of its own
 * while the trace loads (ia_trace_load starts it and waits for it), so on
 * a machine with cores to spare it costs a core, not time (on the 2-CPU
 * dev VM it took the 10 M + 10 M bench's explain from ~4.5 s to ~7.3 s:
 * the scan's two threads and the check read the file at once).  A command
 * that computes before it prints waits for it after its analysis instead
 * (IA_LOAD_CHECK_LATE, ia_trace_checked), and where the scan's threads
 * would share their CPUs with it, it starts after the scan, beside the
 * analysis's mostly single thread.  A file
 * found sound before and unchanged since is not checked again
 * (check_cache.h): explain, stats, the report and MCP read one file in turn.  Its tables: every one the analysis reads
 * in full or by time, and frames (schema 8: each distinct frame once, a
 * small table, read by id); not stack_frames of older files, read by stack
 * id only (most of a file's pages in long traces with Python frames;
 * SQLite checks each page it reads as it reads it).
 */
#include "load/check.h"

#include "load/check_cache.h"
#include "load/db.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tables[] = {
	"session", "apis", "processes", "threads", "losses", "capture", "call_blocks", "cuda_calls",
	"off_cpu", "off_cpu_stacks", "cpu_samples", "cpu_busy", "page_allocs", "competitors",
	"gpu_marks", "kernels", "stacks", "frames",
};

struct ia_check {
	char path[4096];
	pthread_t th;
	int started;
	int known;       /* found sound before, unchanged since (check_cache.h): not checked again */
	struct ia_check_key key;   /* the file as it was when the check began */
	int no_db;       /* bad says why the check could not open the file (not damage) */
	int done;        /* waited for: bad is the answer */
	char bad[512];   /* the first damage found, one line; "" when sound */
};

/* One table: "" when sound (or absent: optional tables), else one line in bad. */
static void check_table(sqlite3 *db, const char *table, char *bad, size_t size)
{
	char sql[128];
	sqlite3_stmt *st = NULL;

	snprintf(sql, sizeof sql, "PRAGMA quick_check(\"%s\")", table);
	if (ia_db_has_table(db, table) == 0)
		return;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *m = (const char *)sqlite3_column_text(st, 0);
		if (!m || !strcmp(m, "ok"))
			continue;
		if (!strncmp(m, "*** in database main ***", 24)) {   /* a heading, not the damage */
			m += 24;
			if (!*m)
				continue;
		}
		snprintf(bad, size, "table %s (%s)", table, m + strspn(m, "\n "));
		for (char *p = bad; *p; p++)
			if (*p == '\n')
				*p = ' ';
		break;
	}
	if (!bad[0] && rc != SQLITE_DONE && rc != SQLITE_ROW)
		snprintf(bad, size, "table %s (%s)", table, sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

static void *check_main(void *arg)
{
	struct ia_check *c = arg;
	char err[512];
	sqlite3 *db = ia_db_reopen(c->path, err, sizeof err);

	if (!db) {
		snprintf(c->bad, sizeof c->bad, "%s", err);
		c->no_db = 1;
		return NULL;
	}
	for (size_t i = 0; i < sizeof tables / sizeof tables[0] && !c->bad[0]; i++)
		check_table(db, tables[i], c->bad, sizeof c->bad);
	sqlite3_close(db);
	return NULL;
}

struct ia_check *ia_check_start(const char *path)
{
	struct ia_check *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	snprintf(c->path, sizeof c->path, "%s", path);
	ia_check_key_of(path, &c->key);
	if ((c->known = ia_check_cache_has(&c->key)))
		return c;
	c->started = pthread_create(&c->th, NULL, check_main, c) == 0;
	return c;
}

/* The thread's end, once: the result kept in c, a sound file listed. */
static void check_join(struct ia_check *c)
{
	if (c->done || c->known) {
		c->done = 1;
		return;
	}
	if (c->started)
		pthread_join(c->th, NULL);
	else
		check_main(c);
	c->done = 1;
	if (!c->bad[0])
		ia_check_cache_add(c->path, &c->key);
}

int ia_check_wait(struct ia_check *c, char *err, size_t errlen)
{
	check_join(c);
	if (!c->bad[0])
		return 0;
	if (c->no_db)
		snprintf(err, errlen, "%s", c->bad);
	else
		ia_db_corrupt(err, errlen, "%s", c->bad);
	return -1;
}

void ia_check_free(struct ia_check *c)
{
	if (!c)
		return;
	check_join(c);
	free(c);
}

int ia_check_finish(struct ia_check *c, const char *path, char *err, size_t errlen)
{
	struct ia_check inline_check;

	if (!c) {   /* no memory for a thread's state: check here, unlisted */
		memset(&inline_check, 0, sizeof inline_check);
		snprintf(inline_check.path, sizeof inline_check.path, "%s", path);
		check_main(&inline_check);
		inline_check.done = 1;   /* (not listed: no key was taken) */
		return ia_check_wait(&inline_check, err, errlen);
	}
	int rc = ia_check_wait(c, err, errlen);
	free(c);
	return rc;
}
