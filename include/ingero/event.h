/*
 * event.h — what one intercepted CUDA call says about itself.
 *
 * This is the decoded form shared by the preload library (which fills it),
 * the wire codec (which carries it, see wire.h) and the collector (which
 * stores it as one row of cuda_calls, see schema.h).  Field meanings are
 * the same in all three places.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds, the clock bpf_ktime_get_ns()
 * reads, so CUDA calls and kernel events line up without conversion.
 * Pids and tids are as the calling process sees them (getpid/gettid); the
 * collector maps them into the root pid namespace.
 */
#ifndef INGERO_EVENT_H
#define INGERO_EVENT_H

#include <stdint.h>

/* Direction of a copy (cuda_calls.dir). */
enum ingero_copy_dir {
	INGERO_DIR_NONE = 0,     /* not a copy */
	INGERO_DIR_HTOD = 1,
	INGERO_DIR_DTOH = 2,
	INGERO_DIR_DTOD = 3,
	INGERO_DIR_HTOH = 4,
	INGERO_DIR_DEFAULT = 5,  /* cudaMemcpyDefault: inferred from pointers by the driver */
	INGERO_DIR_PEER = 6,
};

/* Bits of cuda_calls.flags. */
enum ingero_call_flags {
	INGERO_FLAG_HOST_PINNED = 1u << 0,   /* host side of a copy is page-locked */
	INGERO_FLAG_HOST_PAGEABLE = 1u << 1, /* host side known to be pageable */
	INGERO_FLAG_ASYNC = 1u << 2,         /* the API is asynchronous by contract */
	INGERO_FLAG_STACK_SAMPLED = 1u << 3, /* stack_id set by sampling (launches) */
	INGERO_FLAG_STACK_WITHHELD = 1u << 4, /* a stack was due; the stack budget said no */
	INGERO_FLAG_NULL_FREE = 1u << 5,     /* a free of NULL (cudaFree(0): context set-up), which waits for nothing */
};

/* Default stream handles as CUDA defines them (cudaStreamLegacy, PerThread). */
#define INGERO_STREAM_LEGACY     0x1ull
#define INGERO_STREAM_PER_THREAD 0x2ull

struct ingero_cuda_call {
	uint16_t api;          /* enum ingero_api */
	uint8_t dir;           /* enum ingero_copy_dir */
	uint8_t flags;         /* enum ingero_call_flags */
	int32_t ret;           /* cudaError_t / CUresult returned to the program */
	uint32_t pid;
	uint32_t tid;
	uint64_t start_ns;     /* CLOCK_MONOTONIC at entry */
	uint64_t dur_ns;       /* until return to the caller */
	uint64_t stream;       /* stream handle as the program passed it (0 = default) */
	uint64_t bytes;        /* copies and memsets; allocations: size */
	uint64_t stack_id;     /* 0 = no stack; else an id sent in a STACK message */
	uint64_t kernel;       /* launches: function address, named by a KERNEL message */
	uint32_t grid[3];      /* launches: grid dimensions, 0 when unknown */
	uint32_t block[3];     /* launches: block dimensions */
};

#endif
