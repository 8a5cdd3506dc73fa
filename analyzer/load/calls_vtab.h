/*
 * calls_vtab.h — the cuda_calls virtual table: the call blocks of a
 * version-2 report.db (include/ingero/call_block.h) shown as one row per
 * call, with the columns version 1 stored.  Every connection the analyzer
 * opens has it, so SQL (MCP run_sql, timeline, the host-bound rule) reads
 * cuda_calls whatever the version; a version-1 file's real cuda_calls table
 * takes precedence over it.  Built a second time as a SQLite extension
 * (libingero_sqlite.so) for the sqlite3 shell:
 *   sqlite3 -cmd '.load /usr/local/lib/libingero_sqlite' report.db
 * Beware ATTACH: an eponymous table does not learn the schema it was named
 * with, so cuda_calls and other.cuda_calls both read main's call_blocks.
 * For an attached report, name it:
 *   CREATE VIRTUAL TABLE temp.other_calls USING cuda_calls(other);
 */
#ifndef IA_CALLS_VTAB_H
#define IA_CALLS_VTAB_H

#include <sqlite3.h>

/* The table it shows (the columns version 1 stored, without NOT NULL):
 * declared to SQLite from here, and quoted by run_sql's description. */
#define IA_CUDA_CALLS_SQL \
"CREATE TABLE cuda_calls(pid INTEGER, tid INTEGER, api INTEGER, start_ns INTEGER,\n" \
"  dur_ns INTEGER, stream INTEGER, bytes INTEGER, dir INTEGER, flags INTEGER, ret INTEGER,\n" \
"  stack_id INTEGER, kernel INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,\n" \
"  block_x INTEGER, block_y INTEGER, block_z INTEGER);\n"

/* SQLITE_OK or an SQLite error code. */
int ia_calls_vtab_register(sqlite3 *db);

#endif
