/*
 * steps.h — the step of a training loop, as the period of its call pattern.
 *
 * A loop queues the same sequence of CUDA calls every step: the same APIs,
 * the same kernels, in the same order.  The smallest period P (in calls)
 * with which the main process's (API, kernel) sequence repeats over a
 * stretch of time is one step: P calls, of which some launches.  Found by
 * comparing the sequence with itself shifted by P, P = 2, 3, ..., for at
 * least three repeats and 95 % of the positions (a data-dependent branch
 * or an occasional sync does not break it).  A sequence too uniform to
 * tell a step apart (P = 1: one API, no kernel ids) has no period.  When
 * the calls have none, their launches alone are compared: a loss read every
 * N steps (a copy and a sync more) or an allocator's call now and then
 * shifts the calls, not the kernels' order; calls per step are then the
 * stretch's mean.  A training loop stopped every N steps by a pass of
 * other work (validation, a checkpoint) repeats with its step only between
 * the passes: a shorter period that matches over 2/3 of the positions, its
 * mismatches in a few clusters, and switches threads every step (backward
 * on autograd's thread) is the step, not the cycle (steps.c).  A stretch
 * that begins with something else (an evaluation pass, the first step's
 * one-time calls) is looked at again without its first quarter, then half.
 */
#ifndef IA_STEPS_H
#define IA_STEPS_H

#include "load/trace.h"

#define IA_STEPS_MAX_CALLS 20000   /* calls read from the stretch */
#define IA_STEPS_MAX_PERIOD 4096   /* longest step looked for, in calls */
/* A second look where the first found no step: a large model's step is
 * more calls than the first look holds three of (GPT-2 small, 4
 * micro-batches a step: 3,862 calls, c79; a 7B model's dozens of layers
 * and micro-batches, tens of thousands).  Only then: the first look's
 * stretch and result stay as they were wherever it found a step. */
#define IA_STEPS_LONG_CALLS 80000
#define IA_STEPS_LONG_PERIOD 24000

struct ia_steps {
	uint32_t calls, launches;   /* per step; 0 = no period found */
	uint64_t ns;                /* time per step in the stretch looked at (0 = none) */
	uint64_t first_ns;          /* start of the first call of the stretch's first full step
				       (what ran before it in the stretch is the loop's set-up) */
	int by_calls;               /* the calls repeat as the step (their copies and syncs in
				       place), not only its launches, all on one thread */
};

/* The period of process pid's calls in [a, b) (the first max_calls of
 * them, at most IA_STEPS_LONG_CALLS), at most max_period calls (<=
 * IA_STEPS_LONG_PERIOD).  0, or -1 with a reason (a read error). */
int ia_steps_find(const struct ia_trace *t, int pid, uint64_t a, uint64_t b, uint32_t max_period, size_t max_calls,
		  struct ia_steps *out, char *err, size_t errlen);

#endif
