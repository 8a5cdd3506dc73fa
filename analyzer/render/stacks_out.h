/*
 * stacks_out.h — `ingero-analyze stacks`: a window's sampled stacks
 * (load/stack_walk.h) as a flame graph's input.
 *   folded      one line a (thread, stack): "process pid;thread tid;outer;…;leaf VALUE",
 *               the format of Brendan Gregg's flamegraph.pl, inferno and
 *               speedscope's import; VALUE: samples on-CPU, microseconds
 *               blocked (estimated) off-CPU
 *   speedscope  speedscope's file format (www.speedscope.app): one sampled
 *               profile per thread, weights in nanoseconds (on-CPU: samples
 *               times the sampling period, when the trace says it)
 */
#ifndef IA_STACKS_OUT_H
#define IA_STACKS_OUT_H

#include "load/trace.h"

#include <stdio.h>

enum ia_stacks_format { IA_STACKS_FOLDED, IA_STACKS_SPEEDSCOPE };

/* 0; -1 with err (a read error, out of memory).  *rows: stacks written. */
int ia_stacks_write(FILE *f, const struct ia_trace *t, int offcpu, enum ia_stacks_format fmt, size_t *rows, char *err,
		    size_t errlen);

#endif
