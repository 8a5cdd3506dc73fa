/*
 * gate_report.h — the gate's verdict written three ways: an aligned table
 * for the terminal and CI logs, Markdown for a pull-request comment or
 * $GITHUB_STEP_SUMMARY, and JUnit XML for CI test reporters.  All three
 * list the same checks in the same order (gate_compare.h).
 */
#ifndef IA_GATE_REPORT_H
#define IA_GATE_REPORT_H

#include "gate/gate_compare.h"

#include <stdio.h>

struct ia_gate_names {
	const char *baseline, *current;   /* paths, as given */
};

void ia_gate_report_text(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n,
			 int verbose);
int ia_gate_report_markdown(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n);
int ia_gate_report_junit(FILE *out, const struct ia_gate_result *r, const struct ia_gate_names *n);

#endif
