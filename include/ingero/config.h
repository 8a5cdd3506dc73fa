/*
 * config.h — names both sides of the transport agree on, and every
 * environment variable the preload library reads (documented for users in
 * man/libingero_preload.7).
 */
#ifndef INGERO_CONFIG_H
#define INGERO_CONFIG_H

#include <string.h>
#include <strings.h>

/* nng endpoint; both the preload library and the collector read the variable. */
#define INGERO_ENV_ENDPOINT      "INGERO_ENDPOINT"
#define INGERO_DEFAULT_DIR       "/run/ingero"
#define INGERO_DEFAULT_ENDPOINT  "ipc:///run/ingero/ingero.sock"

/* Preload library settings. */
#define INGERO_ENV_DISABLE       "INGERO_DISABLE"        /* "1": pure pass-through */
#define INGERO_ENV_STACKS        "INGERO_STACKS"         /* which classes get stacks: e.g. "sync,copy", "all", "none" */
#define INGERO_ENV_STACK_DEPTH   "INGERO_STACK_DEPTH"    /* native frames, default 16 */
#define INGERO_ENV_LAUNCH_SAMPLE "INGERO_LAUNCH_SAMPLE"  /* 1 launch stack in N, default 256; 0 = none */
#define INGERO_ENV_PYTHON        "INGERO_PYTHON"         /* "0": no Python frames */
#define INGERO_ENV_STACK_BUDGET  "INGERO_STACK_BUDGET_PPM" /* share of a thread's time for stacks in ppm, default 500 */
#define INGERO_ENV_RING_EVENTS   "INGERO_RING_EVENTS"    /* shared ring capacity in events, power of two */
#define INGERO_ENV_LANES         "INGERO_LANES"          /* threads with a queue of their own (0-256), default 64; 0: all calls through the ring */
#define INGERO_ENV_GPU_MARKS     "INGERO_GPU_MARKS"      /* "0": no measured GPU time (CUDA event marks) */
#define INGERO_ENV_GPU_MARK_US   "INGERO_GPU_MARK_US"    /* program threads' marks where the GPU keeps up: one per N us per process, default 4000; 0 none */
#define INGERO_ENV_GPU_MARK_STEADY "INGERO_GPU_MARK_STEADY" /* the ration halves after this many of its marks with no new kernel (4 times at most), default 500; 0 never */
#define INGERO_ENV_GPU_POLL_US   "INGERO_GPU_POLL_US"    /* watcher poll period while marks are outstanding, default 1000 */
#define INGERO_ENV_CAPTURE       "INGERO_CAPTURE"        /* "cudaProfilerApi": record only between cudaProfilerStart and Stop */
#define INGERO_ENV_DEBUG         "INGERO_DEBUG"          /* "1": one line on stderr at init and on problems */
#define INGERO_ENV_SELF_TIME     "INGERO_SELF_TIME"      /* "1": time the library's own part of each recorded call, say it at exit */
#define INGERO_ENV_CLOCK_TSC     "INGERO_CLOCK_TSC"      /* "1": stamp with the TSC where the kernel's clocksource is a hypervisor's clock made from it (kvm-clock) */
#define INGERO_ENV_TRACER_BATCH  "INGERO_TRACER_BATCH"   /* "0": the tracer's threads keep the default policy, not SCHED_BATCH (sched_batch.h); the collector reads it too */

/* A yes/no variable's value: unset or empty is dflt; "0", "no", "off",
 * "false" (any case) are no, anything else yes (the library's reading, which
 * the collector shares). */
static inline int ingero_env_flag_value(const char *v, int dflt)
{
	if (!v || !*v)
		return dflt;
	return !(strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0 ||
		 strcasecmp(v, "false") == 0);
}

/* Whether a value of INGERO_CAPTURE asks to record only between
 * cudaProfilerStart and cudaProfilerStop: the library's reading, which the
 * collector shares to pause a program it launches from the start. */
static inline int ingero_capture_profiler(const char *v)
{
	return v && strcasecmp(v, "cudaProfilerApi") == 0;
}

#endif
