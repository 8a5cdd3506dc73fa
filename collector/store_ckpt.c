/*
 * store_ckpt.c — the checkpointer: a thread of its own with a second
 * connection copies the WAL into the file (PASSIVE passes, with their two
 * fsyncs), so that the writer never waits for them; without it the writer
 * checkpoints itself, as SQLite does by default.
 */
#include <stdio.h>

#include "store_internal.h"

/* After each commit: how big the WAL is.  Only the writer thread commits
 * (sometimes with the lock held), and only it reads wal_frames: no lock. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store *s = arg;

	(void)db;
	(void)name;
	s->wal_frames = frames;
	return SQLITE_OK;
}

/* Called with the lock held after a commit: wake the checkpointer when enough
 * was added, or when the writer has nothing queued (fold the burst back now). */
void store_ckpt_poke_locked(struct store *s)
{
	int fresh;

	if (s->wal_frames < s->ckpt_frames_done)
		s->ckpt_frames_done = 0;   /* the writer restarted the WAL from its start */
	fresh = s->wal_frames - s->ckpt_frames_done;
	if (fresh >= CKPT_FRAMES || (fresh >= CKPT_IDLE_FRAMES && batch_rows(&s->pending) == 0)) {
		s->ckpt_asked = 1;
		pthread_cond_signal(&s->ckpt_wake);
	}
}

/* PASSIVE checkpoints only: they take no lock the writer needs, so the writer
 * keeps appending while the WAL is copied into the file.  The WAL restarts
 * from its beginning on the first commit after a pass that copied all of it. */
static void *ckpt_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		int log = 0, done = 0, rc;
		uint64_t covers;

		while (!s->ckpt_asked && !s->ckpt_stop)
			pthread_cond_wait(&s->ckpt_wake, &s->lock);
		if (!s->ckpt_asked)
			break;
		s->ckpt_asked = 0;
		covers = s->calls_committed_at;   /* committed before this pass reads the WAL */
		pthread_mutex_unlock(&s->lock);
		rc = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
		pthread_mutex_lock(&s->lock);
		s->ckpt_last_end = mono_ns();
		if (rc == SQLITE_OK) {
			s->ckpt_frames_done = log;
			if (log == done && covers > s->calls_folded_of) {
				s->calls_folded_of = covers;
				s->calls_folded_at = s->ckpt_last_end;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Stop the checkpointer (if it started) and close its connection. */
void store_ckpt_shutdown(struct store *s)
{
	if (s->ckpt_started) {
		pthread_mutex_lock(&s->lock);
		s->ckpt_stop = 1;
		pthread_cond_signal(&s->ckpt_wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->ckpt, NULL);
	}
	sqlite3_close(s->ckpt_db);
	s->ckpt_db = NULL;
}

/* The checkpointer's connection and thread; the writer's WAL size watched
 * for it.  PASSIVE passes take no lock the writer's transactions need; only
 * its RESTART past WAL_HARD_FRAMES waits for the checkpointer (and
 * readers), and at most a second: then it gives up and retries after a
 * later commit. */
void store_ckpt_start(struct store *s, const char *path)
{
	sqlite3_busy_timeout(s->db, 1000);
	if (sqlite3_open_v2(path, &s->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ||
	    store_exec_sql(s->ckpt_db, "PRAGMA synchronous=NORMAL") ||
	    pthread_create(&s->ckpt, NULL, ckpt_main, s)) {
		/* no checkpointer: the writer checkpoints itself, as SQLite does by default */
		sqlite3_close(s->ckpt_db);
		s->ckpt_db = NULL;
		sqlite3_wal_autocheckpoint(s->db, CKPT_FRAMES);
	} else {
		s->ckpt_started = 1;
		sqlite3_wal_hook(s->db, wal_hook, s);
	}
}
