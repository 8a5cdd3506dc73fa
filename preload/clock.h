/*
 * clock.h — timestamps for the hot path.
 *
 * Every timestamp Ingero stores is CLOCK_MONOTONIC nanoseconds.  Reading
 * that clock costs ~55 ns in a VM (twice per call: most of the library's
 * cost), while the TSC costs ~14 ns.  So when the TSC is invariant and the
 * kernel itself keeps time with it (or with a hypervisor's clock made from
 * it, under INGERO_CLOCK_TSC=1), calls are stamped with raw TSC ticks
 * and the sender thread converts them to CLOCK_MONOTONIC by interpolating
 * between (TSC, CLOCK_MONOTONIC) pairs it samples every few milliseconds
 * (clock.c).  Otherwise calls read CLOCK_MONOTONIC directly.  Each ring
 * record says which it carries.
 */
#ifndef INGERO_PRELOAD_CLOCK_H
#define INGERO_PRELOAD_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <x86intrin.h>

#include "record.h"

/* A timestamp: TSC ticks when ingero_hot.use_tsc, else CLOCK_MONOTONIC ns. */
static inline uint64_t ingero_ticks(void)
{
	return ingero_stamp(ingero_hot.use_tsc);
}

/* Constructor: may the TSC be used (invariant per CPUID)?  Takes the first
 * calibration pair. */
void ingero_clock_init(void);
/* First CUDA call of a process: the kernel must keep time with the TSC too
 * (INGERO_CLOCK_TSC: or with a paravirtual clock, kvm-clock and the like). */
void ingero_clock_check(void);

/* Sender: sample a (TSC, CLOCK_MONOTONIC) pair if the last is older than
 * min_gap_ns (0: now). */
void ingero_clock_calibrate(uint64_t min_gap_ns);
/* The TSC's rate since the constructor, in ticks per microsecond (1000 when
 * ticks are ns; 0 when too little time has passed to tell).  Any thread. */
uint64_t ingero_clock_ticks_per_us(void);
/* Sender: TSC ticks → CLOCK_MONOTONIC ns. */
uint64_t ingero_clock_ns(uint64_t tsc);

#endif
