/*
 * report_copy.h — the rows of one report.db copied into another, moved
 * onto another clock and into another id space.  `ingero-analyze merge`
 * copies each node's trace into one file with it, and a merged file is
 * read back as its nodes with it (load/merged.h): the one move the
 * inverse of the other.
 *
 * SQLite does the copying: the source is ATTACHed read-only and each table
 * goes over in one INSERT ... SELECT whose expressions move its times and
 * ids — every CLOCK_MONOTONIC column, every pid and tid, every CPU number,
 * stack and frame ids (docs/schema.md names them).  Only what SQL cannot
 * reach is done in C: the calls inside a call block's blob
 * (include/ingero/call_block.h: decoded and encoded again, each call's
 * tid, start and stack moved).  Every table of the current schema is filled
 * from the columns the source has: an older version lacks some (they stay
 * NULL or their default; ia_copy.absent names them), and a version 7 or
 * older source's stack_frames rows become frames and lists as version 8
 * stores them.  Version 1 (calls as rows, a pre-release layout) is refused.
 */
#ifndef IA_REPORT_COPY_H
#define IA_REPORT_COPY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct ia_copy {
	int64_t shift_ns;        /* added to every CLOCK_MONOTONIC time */
	int64_t pid_delta;       /* added to every pid and tid but 0 (none, the idle task); to losses' pid 0 too */
	int64_t cpu_delta;       /* added to every CPU number */
	int64_t frame_delta;     /* added to frame ids: frames.id and the stacks' lists */
	uint64_t fresh_salt;     /* non-zero: a stack id the output holds already is given a new one, in every row */
	/* ranged: only the rows of pids in [pid_lo, pid_hi), of CPUs in [cpu_lo, cpu_hi) (cpu_busy) and
	 * the frames in (frame_lo, frame_hi]; else every row */
	int ranged;
	int64_t pid_lo, pid_hi, cpu_lo, cpu_hi, frame_lo, frame_hi;
	const char *session_from;  /* the session keys under this prefix, less it ("merge." ones left out); NULL: all */
	const char *session_to;    /* the prefix they are written under; NULL: none */
	int count_cpus;            /* fill cpu_max */
	/* out */
	int version;               /* the source's schema version */
	char absent[256];          /* what of the current schema the source lacks: "table" and "table.column" words */
	int64_t cpu_max;           /* count_cpus: the largest CPU number in the source's rows, -1 none */
};

/* An empty report.db in `out` (a writable connection opened with
 * SQLITE_OPEN_URI): the current schema, user_version `version`.  0, or -1. */
int ia_report_create(sqlite3 *out, int version, char *err, size_t errlen);

/* The source file's rows into `out` as m says (the source validated by
 * ia_db_open before).  0, or -1 with one line in err: a damaged source is
 * "SRC is corrupted: ..." and marks the input bad (db.h). */
int ia_report_copy(sqlite3 *out, const char *src_path, struct ia_copy *m, char *err, size_t errlen);

/* The tables and columns ia_copy.absent names dropped from `out` (before
 * rows are copied in): a part of a merged file read back as the version its
 * node was.  Names outside the current schema's tables are refused.  0, -1. */
int ia_report_drop(sqlite3 *out, const char *absent, char *err, size_t errlen);

#endif
