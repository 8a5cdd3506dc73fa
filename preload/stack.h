/*
 * stack.h — the calling thread's stack for one event: native frames
 * (libunwind) and the innermost Python frames, hashed into a 64-bit id;
 * each distinct stack goes into the ring once per process (intern.h).
 */
#ifndef INGERO_PRELOAD_STACK_H
#define INGERO_PRELOAD_STACK_H

#include "ingero/fnv.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The stack id of the current call site (0 if none could be taken);
 * `what` tells calls apart that the same Python frames make (API, kernel);
 * `sampled`: a launch's sample, which a thread of a Python process that
 * runs no Python takes only 1 in INGERO_NOPY_SAMPLE_EVERY times (stack.c). */
uint64_t ingero_stack_take(uint32_t pid, uint64_t what, bool sampled);
#define INGERO_NOPY_SAMPLE_EVERY 16
/* Stacks taken by unwinding, given again from a thread's memo, and launch
 * samples passed over on threads without Python frames; the time all of
 * them took (ns, record.c): said at exit with INGERO_SELF_TIME. */
extern _Atomic uint64_t ingero_stacks_unwound, ingero_stacks_remembered, ingero_stacks_thinned, ingero_stacks_ns;

/* Constructor: find our own code's address range (frames to leave out). */
void ingero_stack_init(void);


#endif
