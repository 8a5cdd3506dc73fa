/*
 * finding.h — rendering a finding (struct ia_chain, chains.h) for people
 * and for programs, once.
 *
 * A finding is data: its kind (enum), severity, what it cost the run,
 * source line, fixes, timeline lines and evidence figures.  One renderer
 * decides what a person reads and in which order (severity and summary,
 * the timeline, the root cause, the fixes, the source); a *sink* decides
 * only the markup: plain text for explain, HTML for the report.  One JSON
 * renderer gives explain --json's chain objects, which the MCP server's
 * get_causal_chains and the CI gate read through ia_explain_json.
 */
#ifndef IA_FINDING_H
#define IA_FINDING_H

#include "rules/chains.h"

#include <stdio.h>

enum ia_finding_part { IA_PART_TIMELINE, IA_PART_ROOT_CAUSE, IA_PART_FIXES, IA_PART_SOURCE };

struct ia_finding_sink {
	void (*begin)(void *ctx, const char *severity, const char *summary);
	/* a list (timeline, fixes) with n > 0 items, each item numbered from 1 */
	void (*list_begin)(void *ctx, enum ia_finding_part part, int n);
	void (*list_item)(void *ctx, enum ia_finding_part part, int number, const char *text);
	void (*list_end)(void *ctx, enum ia_finding_part part);
	/* a single text (root cause, source) */
	void (*field)(void *ctx, enum ia_finding_part part, const char *text);
	void (*end)(void *ctx);
};

/* The part's title for people: "Timeline", "Root cause", "Fixes", "Source". */
const char *ia_finding_part_title(enum ia_finding_part part);
/* Walks c's parts in reading order through the sink. */
void ia_finding_render(const struct ia_chain *c, const struct ia_finding_sink *sink, void *ctx);
/* explain's text of one finding (a blank line, then its lines). */
void ia_finding_print(FILE *f, const struct ia_chain *c);
/* explain --json's object of one finding. */
cJSON *ia_finding_json(const struct ia_analysis *a, const struct ia_chain *c);

#endif
