/*
 * stack_walk.h — the sampled stacks of a window as whole frame lists, for
 * flame graphs (`ingero-analyze stacks`): on-CPU samples (cpu_samples),
 * or where threads blocked (off_cpu_stacks, version 6), per thread and
 * per stack, with their weight.
 *
 * A stack's frames, outermost first: its Python frames (the user's code
 * and the libraries', "function (file:line)"), then the native frames
 * deeper than the Python interpreter (what a Python call ran in C/C++:
 * at::native::stack, memcpy; all of them when the stack has no Python
 * frames), then kernel frames ("[k] name").  The interpreter's own frames
 * between Python frames are left out: they say "Python ran", which the
 * Python frames say better.
 *
 * Weights: on-CPU, samples (each 1 / session.sample_hz of a CPU); off-CPU,
 * the estimated blocked time in ns — each sampled block's blocked time
 * over the chance it had of being taken (docs/schema.md, off_cpu_stacks).
 */
#ifndef IA_STACK_WALK_H
#define IA_STACK_WALK_H

#include "load/trace.h"

struct ia_stack_row {
	int pid;
	uint32_t tid;
	const char *thread;      /* the thread's name (comm), else its process's */
	const char *process;
	const char *const *frames;   /* outermost first */
	size_t nframes;
	double weight;           /* samples, or ns */
};

typedef int (*ia_stack_row_fn)(const struct ia_stack_row *r, void *ctx);

/* Calls fn for each (thread, stack) of the trace's window and selected
 * processes (the tracer's own threads left out), in order of tid then
 * stack.  offcpu: where threads blocked, else on-CPU samples.  0, -1 with
 * a one-line reason (a read error), or fn's non-zero return. */
int ia_stack_walk(const struct ia_trace *t, int offcpu, ia_stack_row_fn fn, void *ctx, char *err, size_t errlen);
/* The trace's sampling rate (session.sample_hz), 0 when not known. */
double ia_sample_hz(const struct ia_trace *t);

#endif
