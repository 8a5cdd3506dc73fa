/*
 * config.h (preload) — the library's settings, read once from the
 * environment variables named in include/ingero/config.h.
 */
#ifndef INGERO_PRELOAD_CONFIG_H
#define INGERO_PRELOAD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

struct ingero_preload_config {
	bool disabled;             /* INGERO_DISABLE=1: pure pass-through */
	bool debug;                /* INGERO_DEBUG=1 */
	bool python;               /* INGERO_PYTHON (default on) */
	uint32_t stack_classes;    /* bit (1 << enum ingero_api_class): stacks for that class */
	uint32_t stack_depth;      /* native frames, 1..INGERO_WIRE_MAX_NATIVE; 0 = no native */
	uint32_t launch_sample;    /* 1 launch stack in N; 0 = none */
	uint32_t stack_budget_ppm; /* share of a thread's time for stacks (stack_budget.h); 1000000 = no limit */
	uint64_t ring_events;      /* slots, power of two */
	uint32_t lanes;            /* threads with a lane of their own (lane.h); 0: the ring only */
	bool gpu_marks;            /* INGERO_GPU_MARKS (default on): measured GPU time (gpu_marks.h) */
	uint32_t gpu_mark_us;      /* calling threads' marks (where the GPU keeps up): one per this many us; 0 none */
	uint32_t gpu_mark_steady;  /* the ration halves after this many of its marks with no new kernel; 0 never */
	uint32_t gpu_poll_us;      /* the watcher's poll period while marks are outstanding */
	bool capture_profiler;     /* INGERO_CAPTURE=cudaProfilerApi: start paused (capture.c) */
	bool self_time;            /* INGERO_SELF_TIME=1: the library times itself (record.h) */
	bool clock_tsc;            /* INGERO_CLOCK_TSC=1: the TSC on a hypervisor's clock made from it too (clock.c) */
	bool tracer_batch;         /* INGERO_TRACER_BATCH (default on): its sender under SCHED_BATCH (sched_batch.h) */
	char endpoint[512];
};

extern struct ingero_preload_config ingero_cfg;

/* Fills ingero_cfg from the environment (defaults for what is unset or bad;
 * a bad value is reported on stderr when INGERO_DEBUG=1). */
void ingero_config_load(void);

/* "sync,copy" / "all" / "none" / "" → class mask; -1 on an unknown word. */
int ingero_config_parse_classes(const char *s, uint32_t *mask);

/* One line on stderr, only with INGERO_DEBUG=1. */
void ingero_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In stack_classes beside the class bits: of the FREE class, only frees
 * that wait for the device (ingero_api_free_waits, not of NULL) — rare in a
 * training loop, and each one drains the GPU.  Only the default has it:
 * INGERO_STACKS=free means every free. */
#define INGERO_STACK_WAITING_FREES_ONLY (1u << 31)
#define INGERO_DEFAULT_STACK_CLASSES                                                         \
	((1u << INGERO_CLASS_SYNC) | (1u << INGERO_CLASS_COPY) | (1u << INGERO_CLASS_FREE) | \
	 INGERO_STACK_WAITING_FREES_ONLY)
#define INGERO_DEFAULT_STACK_DEPTH   16
/* One launch stack in 256: ~84 a second in the H200's launch-bound loop
 * (22,000 launches/s), thousands a minute for the analyzer's shares of
 * launches by line; 1 in 64 cost that loop ~0.3 us a launch on average
 * (~20 us a stack: INGERO_SELF_TIME, docs/gpu-runs.md section 9). */
#define INGERO_DEFAULT_LAUNCH_SAMPLE 256
/* 0.05 %.  A Python thread's repeated stacks are remembered, not unwound
 * (stack.c), so what the budget meets in steady state is threads without
 * Python frames (autograd's backward thread: each of its sampled launches
 * an unwind, 25-60 us in PyTorch), which want ~0.25 % in the H200's
 * launch-bound loop and took all of 0.2 %, a fifth of the tracer's cost
 * there (docs/gpu-runs.md section 12).  0.05 % still keeps ~10 unwinds a
 * second per thread, and its starting credit (ppm x 10 s: 5 ms) ~100. */
#define INGERO_DEFAULT_STACK_BUDGET  500
/* 8 MiB of slots: a burst of 65,536 calls before the sender runs is kept
 * whole.  A 2 MiB ring (16384) costs a big program less per call — its
 * slots come back to the caller still in the caches: 0.1 µs on the GPU
 * machine's Xeon, 0.6 on an EPYC (make bench-ring) — but dropped 3,616 of
 * a 20,000-call burst in tests/e2e/preload_apis.sh on 2 vCPUs; so it is a
 * setting (INGERO_RING_EVENTS), not the default (docs/benchmarks.md) */
#define INGERO_DEFAULT_RING_EVENTS   65536
/* 64 threads of a process tree with a lane of their own (128 KiB each,
 * faulted in when a thread claims it): the threads that make CUDA calls are
 * few (the main one, autograd's, a pin-memory thread); the rest share the
 * ring. */
#define INGERO_DEFAULT_LANES         64
#define INGERO_DEFAULT_GPU_MARK_US   4000
#define INGERO_DEFAULT_GPU_MARK_STEADY 500
#define INGERO_DEFAULT_GPU_POLL_US   1000

#endif
