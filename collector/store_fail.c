/*
 * store_fail.c — when a write fails (the disk is full, an I/O error):
 * recording stops cleanly, and what was not stored is counted.
 *
 * The transaction that failed is rolled back whole, so the file holds
 * exactly the transactions committed before it (WAL: each one complete or
 * absent).  Its rows, and every row queued after it, are not written but
 * counted by kind in losses 'not_stored_<table>' (CUDA calls one by one).
 *
 * Room for saying so is set aside at the start: a reserve file beside the
 * trace (PATH-reserve, RESERVE_BYTES), cut down to FINAL_RESERVE_BYTES at
 * the first failure, so that on a full disk one last transaction still
 * fits — the loss counters, session.store_error (why) and
 * session.end_mono_ns (the evidence ends there) — and the checkpoints that
 * fold the WAL back into the file get the room it frees.  When the
 * collector stops, the rest is removed and the counters are written once
 * more (what arrived after the failure): the checkpoints had taken all the
 * room freed at the failure, on a loaded machine, and that last write
 * failed (the file's count short of what --stats said: a CI run, 2 of 9
 * loaded runs here; 0 of 16 with the room kept).  A trace
 * whose last checkpoint could not finish keeps its WAL beside it: SQLite
 * (and the analyzer) read the two together.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingero/schema.h"
#include "store_internal.h"

/* The last transaction needs a few pages of WAL; the rest goes to the
 * checkpoints that fold the WAL back. */
#define RESERVE_BYTES (1u << 20)
#define FINAL_RESERVE_BYTES (64u << 10)   /* the last counters' few WAL pages */

int store_reserve_make(struct store *s, const char *path)
{
	size_t n = strlen(path) + sizeof "-reserve";
	int fd, rc;

	s->reserve_path = malloc(n);
	if (!s->reserve_path)
		return -1;
	snprintf(s->reserve_path, n, "%s-reserve", path);
	fd = open(s->reserve_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "ingero-collector: cannot create %s: %s\n", s->reserve_path, strerror(errno));
		goto fail;
	}
	rc = posix_fallocate(fd, 0, RESERVE_BYTES);
	close(fd);
	if (rc) {
		fprintf(stderr, "ingero-collector: no room for %s: %s (the trace needs %u KiB "
			"set aside, and more)\n", path, strerror(rc), RESERVE_BYTES >> 10);
		unlink(s->reserve_path);
		goto fail;
	}
	return 0;
fail:
	free(s->reserve_path);
	s->reserve_path = NULL;
	return -1;
}

/* The failure's room freed, the last write's kept (removed if it cannot be cut). */
static void reserve_shrink(struct store *s)
{
	if (s->reserve_path && truncate(s->reserve_path, FINAL_RESERVE_BYTES))
		store_reserve_drop(s);
}

void store_reserve_drop(struct store *s)
{
	if (!s->reserve_path)
		return;
	unlink(s->reserve_path);
	free(s->reserve_path);
	s->reserve_path = NULL;
}

int store_rc_fatal(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL: case SQLITE_IOERR: case SQLITE_CORRUPT: case SQLITE_NOTADB:
	case SQLITE_CANTOPEN: case SQLITE_READONLY: case SQLITE_NOMEM: case SQLITE_PERM:
		return 1;
	default:
		return 0;
	}
}

/* The rows of b, counted by kind (the session's keys are no evidence). */
static void count_lost(struct store *s, const struct batch *b)
{
	const struct sample_row *sm = b->samples.p;
	uint64_t blocked = 0;
	static const char *const p = INGERO_LOSS_NOT_STORED_PREFIX;
	char name[64];

	for (size_t i = 0; i < b->samples.n; i++)
		blocked += sm[i].blocked != 0;
#define LOST_(what, n) do { \
		snprintf(name, sizeof name, "%s%s", p, what); \
		if (n) \
			store_loss_add(s, name, 0, n); \
	} while (0)
	LOST_("calls", b->calls.n);
	LOST_("off_cpu", b->offcpu.n);
	LOST_("processes", b->procs.n);
	LOST_("threads", b->threads.n);
	LOST_("cpu_busy", b->busy.n);
	LOST_("page_allocs", b->pages.n);
	LOST_("competitors", b->comps.n);
	LOST_("cpu_samples", b->samples.n - blocked);
	LOST_("off_cpu_stacks", blocked);
	LOST_("stacks", b->stacks.n);
	LOST_("kernels", b->kernels.n);
	LOST_("gpu_marks", b->gpu.n);
	LOST_("capture", b->capture.n);
	LOST_("collectives", b->coll.n);
	LOST_("nvtx_ranges", b->range.n);
#undef LOST_
	pthread_mutex_lock(&s->lock);
	s->not_stored_calls += b->calls.n;
	pthread_mutex_unlock(&s->lock);
}

static void rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static void session_row(struct store *s, const char *key, const char *value)
{
	sqlite3_stmt *st = s->st[ST_SESSION];

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	store_step(s, st);
}

/* Writes the changed loss counters (and the session rows given) in one
 * transaction; 0, or -1 (rolled back). */
static int write_losses(struct store *s, const char *why, uint64_t end_ns)
{
	char end[32];

	s->txn_rc = 0;
	store_step(s, s->st[ST_BEGIN]);
	if (why) {
		snprintf(end, sizeof end, "%llu", (unsigned long long)end_ns);
		session_row(s, "store_error", why);
		session_row(s, "end_mono_ns", end);
	}
	pthread_mutex_lock(&s->lock);
	store_write_losses_locked(s);
	pthread_mutex_unlock(&s->lock);
	store_step(s, s->st[ST_COMMIT]);
	if (s->txn_rc || !sqlite3_get_autocommit(s->db)) {
		rollback(s);
		return -1;
	}
	return 0;
}

static void all_losses_dirty(struct store *s)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_losses; i++)
		s->losses[i].dirty = 1;
	s->losses_dirty = 1;
	pthread_mutex_unlock(&s->lock);
}

void store_break(struct store *s, const struct batch *b)
{
	int rc = s->txn_rc ? s->txn_rc : sqlite3_extended_errcode(s->db);
	uint64_t now = mono_ns();
	char why[sizeof s->broken_why];

	snprintf(why, sizeof why, "%s", sqlite3_errstr(rc));
	rollback(s);
	pthread_mutex_lock(&s->lock);
	s->broken = 1;
	s->broken_at = now;
	snprintf(s->broken_why, sizeof s->broken_why, "%s", why);
	pthread_mutex_unlock(&s->lock);
	all_losses_dirty(s);   /* the failed transaction held some */
	count_lost(s, b);
	reserve_shrink(s);
	if (write_losses(s, why, now))
		fprintf(stderr, "ingero-collector: the losses could not be written either (%s)\n",
			sqlite3_errmsg(s->db));
	/* fold what fits of the WAL back now, while the room freed is there */
	sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

void store_drop_batch(struct store *s, const struct batch *b)
{
	count_lost(s, b);
}

void store_final_losses(struct store *s)
{
	int dirty;

	pthread_mutex_lock(&s->lock);
	dirty = s->losses_dirty;
	pthread_mutex_unlock(&s->lock);
	store_reserve_drop(s);   /* the room set aside for this write */
	if (dirty && write_losses(s, NULL, 0))
		fprintf(stderr, "ingero-collector: the losses counted after the failed write could not "
			"be written (%s)\n", sqlite3_errmsg(s->db));
}

int store_broken(struct store *s, char *why, size_t size)
{
	int b;

	pthread_mutex_lock(&s->lock);
	b = s->broken;
	if (b && why && size)
		snprintf(why, size, "%s", s->broken_why);
	pthread_mutex_unlock(&s->lock);
	return b;
}

uint64_t store_not_stored_calls(struct store *s)
{
	uint64_t v;

	pthread_mutex_lock(&s->lock);
	v = s->not_stored_calls;
	pthread_mutex_unlock(&s->lock);
	return v;
}
