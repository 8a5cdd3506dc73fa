/*
 * processes.h — the traced process tree as text tables, one wording for
 * explain, stats and per-process.  CPU, off-CPU and context switches add
 * up a process's threads (the tracer's own left out): thread time, said so
 * under the table, so that "off-CPU 154s" in a 8 s window reads as the sum
 * of 62 threads' time that it is.
 */
#ifndef IA_PROCESSES_H
#define IA_PROCESSES_H

#include "measure/per_process.h"

#include <stdio.h>

/* The tree: role, pid, name, threads, CUDA calls, CPU, off-CPU, switches
 * and a worker's share of the main thread's waiting; with full, a second
 * table of scheduling evidence (voluntary/involuntary switches, worst
 * stall, run-queue delay p50/p99, page allocations). */
void ia_processes_print(FILE *f, const struct ia_trace *t, const struct ia_per_process *pp, int full, int width);

#endif
