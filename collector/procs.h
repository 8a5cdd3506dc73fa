/*
 * procs.h — enrolling processes and describing them in the processes and
 * threads tables, with or without BPF (CUDA-only mode passes t = NULL).
 */
#ifndef INGERO_COLLECTOR_PROCS_H
#define INGERO_COLLECTOR_PROCS_H

#include <stdint.h>

struct tracer;
struct store;

/* Start tracing pid: the kernel's traced map, the process tree, a
 * processes row and its threads from /proc.  With `children`, also every
 * live descendant (for -p). */
int procs_enroll(struct tracer *t, struct store *st, uint32_t pid, int children);

/* Convert /proc/PID/stat's start time to CLOCK_MONOTONIC ns (-1 unknown). */
int64_t procs_start_ns(uint32_t pid);

#endif
