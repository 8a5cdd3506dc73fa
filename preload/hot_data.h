/*
 * hot_data.h — what every recorded call reads, in one cache line: a big
 * program evicts the library's lines (and their pages' TLB entries)
 * between two of its calls, and each line a call touches is then a miss
 * (`make bench-lines` counts them).  So the fields a call reads of the
 * library's switches, of the process (fork.h's ingero_self holds the rest)
 * and of the GPU marks (gpu_marks.h's ingero_gpu holds the rest) live
 * here, together; hot_data.c places the three in one page.  A few of its
 * fields are written now and then (a GPU mark's budget by each mark, one
 * per INGERO_GPU_MARK_US; a new kernel; a retired stream; a pause; the
 * ration stretched), which costs every other thread one miss on its next
 * call: rare enough.
 */
#ifndef INGERO_PRELOAD_HOT_DATA_H
#define INGERO_PRELOAD_HOT_DATA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ingero_shm;

struct __attribute__((aligned(64))) ingero_hot {
	/* the library's switches */
	bool on;                  /* the library records at all (not INGERO_DISABLE, a ring) */
	_Atomic bool recording;   /* on, less the spans the program paused (capture.c); hooks stay */
	bool use_tsc;             /* stamps are TSC ticks, else CLOCK_MONOTONIC ns (clock.c) */
	bool self_time;           /* INGERO_SELF_TIME: time the library's own part of each call */
	/* ingero_cfg's, copied at load (never changed after): which calls take stacks */
	uint32_t stack_classes, launch_sample;
	/* the process (fork.h) */
	_Atomic int state;        /* enum ingero_self_state */
	_Atomic unsigned gen;     /* bumped in every fork child: per-thread caches compare it */
	uint32_t pid;
	/* the GPU marks (gpu_marks.h) */
	_Atomic int gpu_on;                 /* 0 off, 1 watcher running (marks allowed), -1 gave up */
	_Atomic uint32_t gpu_fresh_n;       /* new kernels with marks owed (gpu_fresh.c) */
	_Atomic uint32_t gpu_slots_gen;     /* bumped when a slot is retired: threads' cached slots are stale */
	bool owner;               /* shm is ours: our sender thread drains it */
	struct ingero_shm *shm;   /* the ring this process writes into */
	_Atomic uint64_t gpu_next_mark;     /* ticks: when the calling threads may mark next */
	_Atomic uint64_t gpu_burst_ticks;   /* INGERO_GPU_MARK_BURST marks' worth: what they may mark back to back */
};
_Static_assert(sizeof(struct ingero_hot) == 64, "what every call reads is one cache line");

extern struct ingero_hot ingero_hot;

#endif
