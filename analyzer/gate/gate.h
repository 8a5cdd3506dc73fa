/*
 * gate.h — `ingero-analyze gate`: the CI performance gate.
 *
 *   ingero-analyze gate [OPTIONS] BASELINE CURRENT
 *   ingero-analyze gate --save-baseline REPORT.db -o BASELINE.json
 *
 * Unlike the other subcommands it takes two inputs and its own options,
 * so main() hands it the arguments untouched (argv[0] = "gate").  Exit
 * status (include/ingero/exit.h): 0 pass, 1 regression, 2 bad usage,
 * 3 bad input (a report.db, baseline or config that cannot be read),
 * 4 a failure while running (a report file cannot be written).
 * scripts/ingero-gate is a thin wrapper around it.
 */
#ifndef IA_GATE_H
#define IA_GATE_H

#include <stddef.h>

#include <ingero/exit.h>

enum {
	IA_GATE_EXIT_PASS = INGERO_EXIT_OK,
	IA_GATE_EXIT_REGRESSION = INGERO_EXIT_FINDING,
	IA_GATE_EXIT_USAGE = INGERO_EXIT_USAGE,
	IA_GATE_EXIT_INPUT = INGERO_EXIT_INPUT,
	IA_GATE_EXIT_RUNTIME = INGERO_EXIT_RUNTIME,
};

int ia_cmd_gate(int argc, char **argv);

/* The baseline of one run already analysed, saved to PATH as
 * `ingero-gate --save-baseline SOURCE -o PATH` saves it with the default
 * configuration (explain's --also baseline=FILE: main.c hands it to the
 * command line, cli/views.c).  0, or -1 with a one-line reason in err. */
struct ia_analysis;
int ia_gate_baseline_of(const struct ia_analysis *a, const char *source, const char *path, char *err,
			size_t errlen);

#endif
