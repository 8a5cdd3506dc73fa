/*
 * output.h — claiming the report file before anything is written to it:
 * an exclusive lock on the file itself (a second collector on the same -o
 * fails at once, touching nothing), no replacing of an existing trace
 * without --force, and the removal of what a collector that failed to
 * start created (no empty file left behind for the analyzer to misread).
 */
#ifndef INGERO_COLLECTOR_OUTPUT_H
#define INGERO_COLLECTOR_OUTPUT_H

struct output {
	const char *path;
	int fd;            /* holds the flock until output_release(); -1 = none */
	int created;       /* this collector created the file */
	int replace;       /* an existing trace, to be replaced (--force) */
	int emptied;       /* ... and output_prepare() emptied it */
};

/* Takes the file: 0, or the exit status with one line said on stderr
 * (2: another collector writes it, or a trace is there without --force;
 * 4: it cannot be opened or created).  Nothing is changed yet. */
int output_claim(struct output *o, const char *path, int force);
/* Empties an existing trace being replaced and removes stale -wal/-shm
 * files beside it (they would be replayed into the new file); 0 or -1
 * (said). */
int output_prepare(struct output *o);
/* The collector failed before its trace began: the file it created (or
 * emptied) is removed with its -wal and -shm, and the lock released. */
void output_abandon(struct output *o);
/* The trace is closed (every SQLite connection): release the lock. */
void output_release(struct output *o);

/* The side files of a trace: PATH-wal, PATH-shm. */
void output_side_path(const char *path, const char *suffix, char *buf, unsigned size);

#endif
