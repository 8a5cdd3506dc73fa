/*
 * progress.h — a one-line progress indicator on the terminal for long
 * analyzer operations (loading tens of millions of rows, big exports).
 *
 * It draws on stderr, and only when stderr is a terminal (not in pipes, CI
 * logs or --json consumers' captures), TERM is not "dumb" and
 * INGERO_PROGRESS is not "0".  Nothing is drawn for the first half second,
 * so short runs never flicker; after that it redraws at most ten times a
 * second, and ia_progress_end() erases the line, leaving the terminal as
 * it was.  There is one indicator per process (the analyzer does one thing
 * at a time), so calls need no handle and are cheap no-ops when it is off.
 *
 * Two ways to drive it:
 *   - row counts: ia_progress_begin("reading cuda_calls", total) then
 *     ia_progress_update(done) in the loop (cheap: it looks at the clock
 *     once every 4096 updates) -> "reading cuda_calls  45%  4.5M/10M  3.2s";
 *     threads that share the work call ia_progress_add(rows) per chunk;
 *   - SQLite: ia_progress_attach(db) makes SQLite's progress handler tick
 *     it during long statements whose row count is unknown -> a spinner
 *     with the elapsed time.
 * ia_progress_phase("gaps") renames the current line between phases.
 * begin, phase, attach and end are for the main thread; update, add and
 * the SQLite ticks may come from any thread.
 */
#ifndef IA_PROGRESS_H
#define IA_PROGRESS_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Starts (or restarts) the indicator; total 0 = unknown (spinner). */
void ia_progress_begin(const char *label, uint64_t total);
/* Work done so far, in the unit of total (per row: cheap). */
void ia_progress_update(uint64_t done);
/* n more units done; for threads sharing the work, called per chunk. */
void ia_progress_add(uint64_t n);
/* A new phase: new label, unknown total, same start time. */
void ia_progress_phase(const char *label);
/* Ticks the indicator from SQLite's progress handler while statements run
 * on db; ia_progress_end() (or ia_progress_detach) removes the handler. */
void ia_progress_attach(sqlite3 *db);
void ia_progress_detach(void);
/* Erases the line (if one was drawn) and stops. */
void ia_progress_end(void);

/* Tests: draw on f regardless of the terminal check, with no start delay
 * and no rate limit when immediate is set.  f NULL restores the default. */
void ia_progress_output(FILE *f, int immediate);

#endif
