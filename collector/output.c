/*
 * output.c — the report file is claimed before anything is written.
 *
 * The lock is flock(LOCK_EX) on the report file itself, taken through a
 * descriptor of our own that stays open until SQLite has closed the file:
 * a second collector given the same -o finds it held and stops with one
 * line, before it changes anything (flock and SQLite's own fcntl locks do
 * not meet on Linux; our descriptor is closed only after SQLite's, since
 * closing any descriptor of a file drops the process's fcntl locks on it).
 * The descriptor is close-on-exec: CMD must not hold the lock after us.
 *
 * A trace already at the path (a non-empty file, or a non-empty -wal: a
 * killed collector's trace may still live there) is never replaced unless
 * --force says so; then it is emptied in place, under the lock, rather
 * than unlinked (a new file at the path would be a second lock a third
 * collector could take).  An empty file is no trace: it is written over.
 * A stale -wal or -shm beside the file is removed, or SQLite would replay
 * the old WAL into the new trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ingero/exit.h>

#include "output.h"

void output_side_path(const char *path, const char *suffix, char *buf, unsigned size)
{
	snprintf(buf, size, "%s%s", path, suffix);
}

static off_t side_size(const char *path, const char *suffix)
{
	char side[4200];
	struct stat st;

	output_side_path(path, suffix, side, sizeof side);
	return stat(side, &st) == 0 ? st.st_size : 0;
}

static void remove_sides(const char *path)
{
	char side[4200];

	output_side_path(path, "-wal", side, sizeof side);
	unlink(side);
	output_side_path(path, "-shm", side, sizeof side);
	unlink(side);
}

/* The lock on an open descriptor of the file: 0, or the exit status (said). */
static int lock(struct output *o)
{
	if (flock(o->fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		fprintf(stderr, "ingero-collector: %s: another collector is writing it\n", o->path);
	else
		fprintf(stderr, "ingero-collector: cannot lock %s: %s\n", o->path, strerror(errno));
	close(o->fd);
	o->fd = -1;
	return errno == EWOULDBLOCK ? INGERO_EXIT_USAGE : INGERO_EXIT_RUNTIME;
}

int output_claim(struct output *o, const char *path, int force)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->fd = -1;
	/* open an existing file, else create it; a file created by someone
	 * else between the two is opened on the next turn */
	for (int turn = 0; turn < 8; turn++) {
		o->fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
		if (o->fd >= 0)
			break;
		if (errno != ENOENT) {
			fprintf(stderr, "ingero-collector: cannot open %s: %s\n", path, strerror(errno));
			return INGERO_EXIT_RUNTIME;
		}
		o->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
		if (o->fd >= 0) {
			o->created = 1;
			break;
		}
		if (errno != EEXIST) {
			fprintf(stderr, "ingero-collector: cannot create %s: %s\n", path, strerror(errno));
			return INGERO_EXIT_RUNTIME;
		}
	}
	if (o->fd < 0) {
		fprintf(stderr, "ingero-collector: cannot create %s: it keeps appearing and vanishing\n", path);
		return INGERO_EXIT_RUNTIME;
	}
	int rc = lock(o);
	if (rc) {
		/* ours, but another collector opened and locked it first: theirs now */
		o->created = 0;
		return rc;
	}
	if (fstat(o->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "ingero-collector: %s: not a regular file\n", path);
		output_release(o);
		return INGERO_EXIT_USAGE;
	}
	if (!o->created && (st.st_size > 0 || side_size(path, "-wal") > 0)) {
		if (!force) {
			fprintf(stderr, "ingero-collector: %s exists: a trace is not replaced "
				"without --force\n", path);
			output_release(o);
			return INGERO_EXIT_USAGE;
		}
		o->replace = 1;
	}
	return 0;
}

int output_prepare(struct output *o)
{
	if (o->replace && ftruncate(o->fd, 0) < 0) {
		fprintf(stderr, "ingero-collector: cannot empty %s: %s\n", o->path, strerror(errno));
		return -1;
	}
	o->emptied = o->replace;
	remove_sides(o->path);
	return 0;
}

void output_abandon(struct output *o)
{
	if (o->fd < 0)
		return;
	/* what we created or emptied holds no trace: leave nothing to misread */
	if (o->created || o->emptied) {
		unlink(o->path);
		remove_sides(o->path);
	}
	output_release(o);
}

void output_release(struct output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}
