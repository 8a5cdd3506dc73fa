/*
 * check.h — the pages of the tables a command reads, checked while the
 * trace loads (check.c), so that a damaged page is refused, naming its
 * table, rather than read as other numbers.
 */
#ifndef IA_CHECK_H
#define IA_CHECK_H

#include <stddef.h>

struct ia_check;

/* Starts checking the report at PATH (validated by ia_db_open) on a
 * thread of its own; NULL when out of memory (ia_check_finish then checks
 * there and then). */
struct ia_check *ia_check_start(const char *path);
/* Waits for the check: 0 when every table read is sound, else -1 and
 * "PATH is corrupted: table T (...)" in err (the input marked bad). */
int ia_check_finish(struct ia_check *c, const char *path, char *err, size_t errlen);
/* The same in two steps, for a check waited for after the load
 * (ia_trace_checked): the wait answers the same each time it is asked;
 * the free waits if no one did. */
int ia_check_wait(struct ia_check *c, char *err, size_t errlen);
void ia_check_free(struct ia_check *c);

#endif
