/*
 * gate.h — `ingero-analyze gate`: the CI performance gate.
 *
 *   ingero-analyze gate [OPTIONS] BASELINE CURRENT
 *   ingero-analyze gate --save-baseline REPORT.db -o BASELINE.json
 *
 * Unlike the other subcommands it takes two inputs and its own options,
 * so main() hands it the arguments untouched (argv[0] = "gate").  Exit
 * status: 0 pass, 1 regression, 2 bad usage or unreadable input.
 * scripts/ingero-gate is a thin wrapper around it.
 */
#ifndef IA_GATE_H
#define IA_GATE_H

enum { IA_GATE_EXIT_PASS = 0, IA_GATE_EXIT_REGRESSION = 1, IA_GATE_EXIT_ERROR = 2 };

int ia_cmd_gate(int argc, char **argv);

#endif
