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

#include <ingero/exit.h>

enum {
	IA_GATE_EXIT_PASS = INGERO_EXIT_OK,
	IA_GATE_EXIT_REGRESSION = INGERO_EXIT_FINDING,
	IA_GATE_EXIT_USAGE = INGERO_EXIT_USAGE,
	IA_GATE_EXIT_INPUT = INGERO_EXIT_INPUT,
	IA_GATE_EXIT_RUNTIME = INGERO_EXIT_RUNTIME,
};

int ia_cmd_gate(int argc, char **argv);

#endif
