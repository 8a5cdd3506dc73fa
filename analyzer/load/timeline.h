/*
 * timeline.h — the events of a window as data: CUDA calls and off-CPU
 * intervals of the selected processes, merged in time order.
 *
 * One walker feeds every consumer: the `timeline` command prints each event
 * (or --json), the MCP server's get_timeline takes the JSON tree, with no
 * printing and re-parsing in between.  The walk streams from SQLite (see
 * timeline.c for why and how), so an event's strings live only during the
 * callback.
 */
#ifndef IA_TIMELINE_H
#define IA_TIMELINE_H

#include "load/trace.h"

#include <cjson/cJSON.h>

struct ia_tl_event {
	uint64_t ts_rel;        /* since the trace start */
	int pid;
	uint32_t tid;
	const char *comm;       /* thread name, else process name */
	int is_call;
	/* a CUDA call */
	unsigned api;
	const char *api_name;
	uint64_t dur;           /* calls and off-CPU intervals */
	uint64_t bytes;
	int dir, flags, copy;   /* copy: the API copies (bytes and direction say how much, where) */
	const char *python;     /* innermost Python line of its stack, or NULL */
	/* an off-CPU interval */
	const char *reason;     /* "preempted", "blocked", "I/O wait (D)" */
	const char *syscall;    /* the system call it blocked in (syscalls.h), or NULL */
	const char *blocked_at; /* the Python line it blocked at, where a stack was taken of it (version 6), or NULL */
	uint64_t runq;          /* then waiting for a CPU */
	int next_pid;           /* who got the CPU, 0 = unknown */
};

/* Called per event in time order; return non-zero to stop. */
typedef int (*ia_tl_fn)(const struct ia_tl_event *e, void *ctx);

/* Walks the trace's window (its filter) calling fn for at most limit
 * events (0 = all); *more = 1 when events past the limit exist.  0, or -1
 * with a one-line reason (a read error). */
int ia_timeline_walk(const struct ia_trace *t, long limit, ia_tl_fn fn, void *ctx, int *more, char *err, size_t errlen);

/* {"events":[{ts_rel_ns, type:"cuda"|"off_cpu", pid, tid, ...}], "more":0|1}, or NULL with err. */
cJSON *ia_timeline_json(const struct ia_trace *t, long limit, char *err, size_t errlen);

/* "HtoD", "DtoH", ... for a copy direction. */
const char *ia_tl_dir_name(int dir);
/* "pinned", "pageable" or "" from a call's flags. */
const char *ia_tl_memory(int flags);

#endif
