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

/* Prepares SQL; on failure a one-line reason in err, NULL returned. */
sqlite3_stmt *ia_db_prepare(sqlite3 *db, const char *sql, char *err, size_t errlen);

/* Describes a failed sqlite3_step() (corruption, I/O) as one line. */
void ia_db_step_error(sqlite3 *db, int rc, char *err, size_t errlen);

/* Whether a table exists (optional tables of later schema growth). */
int ia_db_has_table(sqlite3 *db, const char *name);

/* Path of the open database, for messages. */
const char *ia_db_path(void);

#endif
