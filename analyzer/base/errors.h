/*
 * errors.h — how every part of the analyzer fails: one line on stderr,
 * prefixed "ingero-analyze: ", and an exit status of the project's
 * convention.
 */
#ifndef IA_ERRORS_H
#define IA_ERRORS_H

#include <ingero/exit.h>

/* Exit codes: the project's convention (include/ingero/exit.h; --help,
 * man/ingero-analyze.1).  A subcommand returns IA_EXIT_ERROR for any
 * failure after its one error line; ia_exit_status() (cli/cli.h) turns it into
 * IA_EXIT_USAGE (a -p PID not in the trace), IA_EXIT_INPUT (the file was
 * at fault: refused at open, corrupted, unreadable) or IA_EXIT_RUNTIME. */
enum {
	IA_EXIT_OK = INGERO_EXIT_OK,
	IA_EXIT_USAGE = INGERO_EXIT_USAGE,
	IA_EXIT_INPUT = INGERO_EXIT_INPUT,
	IA_EXIT_RUNTIME = INGERO_EXIT_RUNTIME,
	IA_EXIT_ERROR = -1,
};
/* One error line on stderr, prefixed "ingero-analyze: ". */
void ia_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
