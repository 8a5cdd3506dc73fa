/*
 * db.h — opening a report.db for reading, and reporting what is wrong with
 * it in one line.
 *
 * The file is always opened read-only.  When no write-ahead log sits next to
 * it (the collector is done), it is opened as immutable: SQLite then takes no
 * locks and needs no -shm file, so a report on a read-only medium works.  A
 * file that is missing, not SQLite, truncated, empty, of another schema
 * version or missing a table is refused before any analysis starts.
 */
#ifndef IA_DB_H
#define IA_DB_H

#include <sqlite3.h>
#include <stddef.h>

/* Opens and validates PATH. On failure returns NULL with a one-line reason in err. */
sqlite3 *ia_db_open(const char *path, char *err, size_t errlen);
void ia_db_close(sqlite3 *db);
/* A second read-only connection to an already validated file (for a scan
 * on another thread); no checks repeated. */
sqlite3 *ia_db_reopen(const char *path, char *err, size_t errlen);

/* The URI that opens PATH read-only as ia_db_open() does (immutable when
 * no WAL is beside it), for sqlite3_open_v2 with SQLITE_OPEN_URI or an
 * ATTACH on such a connection; malloc'd, NULL when out of memory. */
char *ia_db_uri(const char *path);

/* Prepares SQL; on failure a one-line reason in err, NULL returned. */
sqlite3_stmt *ia_db_prepare(sqlite3 *db, const char *sql, char *err, size_t errlen);
/* sqlite3_exec of sql (several statements): 0, or -1 with SQLite's message in err */
int ia_db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* Describes a failed sqlite3_step() (corruption, I/O) as one line:
 * "PATH is corrupted: ..." for SQLITE_CORRUPT/NOTADB. */
void ia_db_step_error(sqlite3 *db, int rc, char *err, size_t errlen);

/* The check after a step loop `while ((rc = sqlite3_step(st)) == SQLITE_ROW)`:
 * 0 when rc is SQLITE_DONE (all rows read) or SQLITE_ROW (the loop stopped
 * on purpose); anything else is an error — a corrupted page, an I/O error —
 * described in err by ia_db_step_error(), and -1.  Without it a loop takes
 * an error for the end of the rows, and a damaged file gives other output
 * with exit 0. */
int ia_db_done(sqlite3_stmt *st, int rc, char *err, size_t errlen);
/* The same at a scan's end, st finalized: SQLITE_NOMEM (the loop's own
 * allocation failed, or SQLite's) is "out of memory", -1. */
int ia_db_finish(sqlite3_stmt *st, int rc, char *err, size_t errlen);

/* "PATH is corrupted: " and the rest as printf: for damage found by our
 * own checks (a call block's count out of range).  Marks the input bad. */
void ia_db_corrupt(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "PATH: " and the rest as printf: the file is sound but not what a
 * command can read (no trace in it).  Marks the input bad. */
void ia_db_bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The error about to be reported is the input's fault (found outside
 * this file: a source a copy read damaged, report_copy.c). */
void ia_db_blame_input(void);

/* Whether an error so far was the input's fault (a file refused at open,
 * a corrupted page, a read error): the exit status says so (cli.h). */
int ia_db_input_bad(void);

/* Whether a table exists (optional tables of later schema growth). */
int ia_db_has_table(sqlite3 *db, const char *name);
/* Whether TABLE has COLUMN: 1, 0, or -1 (unreadable). */
int ia_db_has_column(sqlite3 *db, const char *table, const char *column);

/* Path of the open database, for messages. */
const char *ia_db_path(void);

/* About the file ia_db_open() opened last: read together with a WAL beside
 * it (a collector still writing, or one whose last checkpoint did not
 * finish: killed, a full disk), and whether a collector still held its
 * lock (collector/output.c) then. */
int ia_db_wal_read(void);
int ia_db_writer_alive(void);

/* Called by the process that writes the files it then opens
 * (ingero-collector --metrics reading its own report): each is taken as
 * still being written, and ia_db_open() opens no descriptor of it outside
 * SQLite (no header or lock check) — closing one would drop every fcntl
 * lock this process holds on the file, its writer's SQLite locks among them. */
void ia_db_opened_by_writer(void);

#endif
