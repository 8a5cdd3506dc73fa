/*
 * exit.h — the exit status every Ingero program uses, one convention for
 * all (README "Exit status", the EXIT STATUS section of each man page):
 *
 *   0  success; for the gate: no regression
 *   1  a finding that fails the caller: the gate found a regression (only
 *      the gate has findings that are failures)
 *   2  bad usage: an unknown option, a missing or malformed argument, a
 *      -p PID that is not there
 *   3  bad input: a report.db, baseline or gate config that is missing,
 *      unreadable, not one, of another version, truncated or corrupted
 *   4  a failure while running that is not the input's fault: the output
 *      cannot be written, out of memory, the collector's socket, BPF
 *      programs or database writes fail
 *
 * A program that runs a command exits with that command's status instead
 * (128+N when signal N ended it): ingero-collector -- CMD, ingero-run.
 * ingero-run's own failures are 125 (as env(1) and timeout(1)), so that
 * they cannot be taken for the command's.  Scripts (scripts/ingero-run,
 * scripts/ingero-gate) use the same numbers.
 */
#ifndef INGERO_EXIT_H
#define INGERO_EXIT_H

enum ingero_exit {
	INGERO_EXIT_OK = 0,
	INGERO_EXIT_FINDING = 1,
	INGERO_EXIT_USAGE = 2,
	INGERO_EXIT_INPUT = 3,
	INGERO_EXIT_RUNTIME = 4,
};

#endif
