/*
 * python.h — Python frames in on-CPU samples: finding CPython in a traced
 * process (for bpf/samples.bpf.c's walk) and naming the frames it reports.
 */
#ifndef INGERO_COLLECTOR_PYTHON_H
#define INGERO_COLLECTOR_PYTHON_H

#include <stdint.h>

#include "store.h"

struct tracer;
struct py_frame;
struct pythons;

struct pythons *pythons_new(void);
void pythons_free(struct pythons *p);

/* A sample from pid arrived: on the first (and now and then while pid is
 * not known to run CPython) look for CPython there and, when found, give
 * samples.bpf.c the runtime's address and layout. */
void python_seen(struct tracer *t, uint32_t pid);
void python_fork(struct tracer *t, uint32_t child, uint32_t parent);
void python_exec(struct tracer *t, uint32_t pid);
/* pid exited: its map entry and names go (its slot stays, reset). */
void python_exit(struct tracer *t, uint32_t pid);

/* Names the n frames of a sample (innermost first) into rows of kind
 * "python" (depth from 0); returns the rows written (frames whose code
 * object cannot be read, or that run no code object, are left out).
 * Strings stay valid while the collector runs. */
int python_rows(struct tracer *t, uint32_t pid, const struct py_frame *f, int n, struct frame_row *rows);

#endif
