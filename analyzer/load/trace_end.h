/*
 * trace_end.h — how a trace ended (whole, or cut short: the collector
 * killed, still writing, a failed write, no evidence), as the loaded trace
 * holds it (trace.h); trace_status.h sets and says it.
 */
#ifndef IA_TRACE_END_H
#define IA_TRACE_END_H

#include <stdint.h>

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

#endif
