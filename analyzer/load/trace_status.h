/*
 * trace_status.h — whether a trace is whole: a collector killed before it
 * wrote the end, one whose writes failed (a full disk), one still writing,
 * or a file with no evidence at all says so in every view and its JSON
 * (trace_status.c), rather than passing for a complete, quiet trace.
 */
#ifndef IA_TRACE_STATUS_H
#define IA_TRACE_STATUS_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "load/trace.h"


/* "incomplete: ..." in buf (one line, no newline) and 1, or 0 when whole. */
int ia_trace_incomplete(const struct ia_trace *t, char *buf, size_t size);
/* The lines a text view starts with: "Incomplete: ..." and the WAL read. */
void ia_trace_status_print(FILE *f, const struct ia_trace *t);
/* The same into a JSON object: "incomplete" {reason, stopped_at_rel_ns,
 * text} and "read_with_wal", only when they apply. */
void ia_trace_status_json(cJSON *obj, const struct ia_trace *t);

#endif
