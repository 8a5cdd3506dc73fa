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

struct ia_trace;

enum ia_trace_end {
	IA_END_WRITTEN = 0,     /* the collector closed the trace */
	IA_END_NONE,            /* no end: the collector was killed (or crashed) */
	IA_END_STILL_WRITING,   /* no end yet: a collector holds the file */
	IA_END_WRITE_FAILED,    /* recording stopped: a write failed (session.store_error) */
};

struct ia_trace_status {
	enum ia_trace_end end;
	int no_evidence;        /* not one CUDA call or off-CPU interval in the file */
	int wal;                /* read with a WAL no collector writes: its last checkpoint did not finish */
	uint64_t stopped_at;    /* absolute ns: the end written, else the last evidence */
	const char *why;        /* session.store_error */
};

/* Set by ia_trace_load from the session, the evidence's extent and the
 * file (db.h). */
void ia_trace_status_set(struct ia_trace *t, int has_end, uint64_t end, uint64_t last_evidence,
			 int evidence);
/* "incomplete: ..." in buf (one line, no newline) and 1, or 0 when whole. */
int ia_trace_incomplete(const struct ia_trace *t, char *buf, size_t size);
/* The lines a text view starts with: "Incomplete: ..." and the WAL read. */
void ia_trace_status_print(FILE *f, const struct ia_trace *t);
/* The same into a JSON object: "incomplete" {reason, stopped_at_rel_ns,
 * text} and "read_with_wal", only when they apply. */
void ia_trace_status_json(cJSON *obj, const struct ia_trace *t);

#endif
