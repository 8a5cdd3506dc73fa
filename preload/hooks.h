/*
 * hooks.h — what the wrappers share: the CUDA types they need (declared
 * here, ABI-identical to the CUDA 13 headers, which the product does not
 * include), the wrapper boilerplate, and the registries that dlsym and
 * cuGetProcAddress consult to hand out wrappers.
 */
#ifndef INGERO_PRELOAD_HOOKS_H
#define INGERO_PRELOAD_HOOKS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ingero/api.h"
#include "ingero/event.h"
#include "real.h"
#include "clock.h"
#include "fork.h"
#include "gpu_marks.h"
#include "prefetch.h"
#include "record.h"

#define INGERO_EXPORT __attribute__((visibility("default")))

/* --- CUDA types (cuda_runtime_api.h, driver_types.h, cuda.h) -------------- */
typedef int cudaError_t;
typedef int CUresult;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
typedef void *cudaGraphExec_t;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef void *CUgraphExec;
typedef void *CUmemoryPool;
typedef uint64_t cuuint64_t;

typedef struct {
	unsigned int x, y, z;
} dim3;

typedef struct {
	dim3 gridDim;
	dim3 blockDim;
	size_t dynamicSmemBytes;
	cudaStream_t stream;
	void *attrs;
	unsigned int numAttrs;
} cudaLaunchConfig_t;

typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	void *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_ARRAY = 3, CU_MEMORYTYPE_UNIFIED = 4 };
enum { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
       cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };

#define CUDART_ERROR_NO_SYMBOL 999   /* cudaErrorUnknown: the real function is missing */
#define CU_ERROR_NO_SYMBOL 500       /* CUDA_ERROR_NOT_FOUND */

/* --- wrapper boilerplate ------------------------------------------------------------
 * HOOK_CALL(api, call, err, fill, kind): forwards `call` (an expression using
 * fn_) and records it when this is the outermost interposed call.  `fill`
 * is a statement that completes ev_ (stream, bytes, dir, ...).  Start and
 * duration are in TSC ticks when tsc_ (the sender converts them, clock.h).
 * The API's class is found here, where the API is a constant and the
 * look-up folds away: one cache line fewer per call in a big program.
 * A launch's wrapper uses HOOK_CALL_LAUNCH (its record is a lane unit). */
#define HOOK_CALL(API, CALL, ERR, FILL, KIND)                                             \
	do {                                                                              \
		HOOK_FORWARD(CALL, ERR);                                                  \
		HOOK_RECORD(API, CALL, FILL, KIND);                                       \
	} while (0)

/* The forwarding half of HOOK_CALL: returns unless the call is to be
 * recorded — no real function, nested (as a tail call), or paused (an
 * outermost call, forwarded at depth 1). */
#define HOOK_FORWARD(CALL, ERR)                                                           \
	do {                                                                              \
		if (__builtin_expect(!fn_, 0))                                            \
			return (ERR);                                                     \
		if (__builtin_expect(ingero_nested(), 0))                                 \
			return (CALL);                                                    \
		if (!ingero_recording_now()) {                                            \
			if (__builtin_expect(ingero_hot.self_time, 0))                    \
				HOOK_PAUSED_TIMED(CALL);                                  \
			ingero_enter();                                                   \
			int p_ = (CALL);                                                  \
			ingero_leave();                                                   \
			return p_;                                                        \
		}                                                                         \
	} while (0)

/* INGERO_SELF_TIME's paused call: timed, for the real functions' and the
 * program's time by capture mode (record.h) */
#define HOOK_PAUSED_TIMED(CALL)                                                           \
	do {                                                                              \
		bool tp_ = ingero_hot.use_tsc;                                            \
		ingero_enter();                                                           \
		uint64_t i_ = ingero_stamp(tp_);                                          \
		int p_ = (CALL);                                                          \
		uint64_t o_ = ingero_stamp(tp_);                                          \
		ingero_leave();                                                           \
		ingero_mode_time_add(0, o_ - i_, i_, o_);                                 \
		return p_;                                                                \
	} while (0)

/* Before a recorded call's real function (microseconds of the driver's
 * work): the lines its record will read or write after it, fetched
 * meanwhile — a big program has evicted them since its last call, and each
 * was a miss the call waited for.  Only addresses known without a load
 * that could miss (a prefetch waiting for one would hold the call up as
 * the load itself did, docs/gpu-runs.md section 9): what this thread's TLS
 * line, read already, points at.  (The globals a call reads are ingero_hot's
 * one line, read before the call: nothing to fetch for them.) */
static inline __attribute__((always_inline)) void ingero_prefetch_record(void)
{
	struct ingero_tls *t = &ingero_tls;
	if (__builtin_expect(t->lane.lane != NULL, 1)) {
		ingero_prefetch_write(t->lane.lane->units[t->lane.tail & (INGERO_LANE_UNITS - 1)]);
		ingero_prefetch_write(&t->lane.lane->tail);
	}
	if (t->gpu_slot)
		ingero_prefetch_write(t->gpu_slot);
}

/* The recording half of HOOK_CALL, for a wrapper that records out of line
 * after HOOK_FORWARD (driver_hooks.c: the nested pass-through then needs
 * no frame of its own): HOOK_RECORD_BEGIN, the real call timed, ev_ filled
 * in and given to ingero_emit, HOOK_RECORD_END.  INGERO_SELF_TIME's calls
 * take a copy of the whole path of their own (TIMED 1, each a constant):
 * the recorded path carries no self-time stamp across the real call, a
 * register saved and a test, ~26 bytes of the launch path's code. */
#define HOOK_RECORD_BEGIN(TIMED)                                                          \
	ingero_enter();                                                                   \
	bool tsc_ = ingero_hot.use_tsc;                                                   \
	uint64_t e_ = (TIMED) ? ingero_stamp(tsc_) : 0;                                   \
	INGERO_SEG_START(e_);                                                             \
	ingero_prefetch_record()
#define HOOK_RECORD_END(TIMED)                                                            \
	INGERO_SEG(5);                                                                    \
	if (TIMED) {                                                                      \
		uint64_t x_ = ingero_stamp(tsc_);                                         \
		ingero_self_time_add(x_ - e_ - (t1_ - t0_));                              \
		ingero_mode_time_add(1, t1_ - t0_, e_, x_);                               \
	}                                                                                 \
	ingero_leave();                                                                   \
	return r_
#define HOOK_RECORD_(API, CALL, FILL, KIND, TIMED)                                        \
	do {                                                                              \
		HOOK_RECORD_BEGIN(TIMED);                                                 \
		uint64_t t0_ = ingero_stamp(tsc_);                                        \
		INGERO_SEG(0);                                                            \
		int r_ = (CALL);                                                          \
		uint64_t t1_ = ingero_stamp(tsc_);                                        \
		INGERO_SEG_START(t1_);                                                    \
		struct ingero_cuda_call ev_ = { .api = (API), .ret = r_, .start_ns = t0_, \
						.dur_ns = t1_ - t0_ };                    \
		FILL;                                                                     \
		ingero_emit(&ev_, ingero_api_class(API), (KIND), tsc_);                   \
		HOOK_RECORD_END(TIMED);                                                   \
	} while (0)
/* REC's two copies: INGERO_SELF_TIME's (TIMED 1) and the recorded path's */
#define HOOK_SELF_TIMED(REC, API, CALL, FILL, KIND)                                       \
	do {                                                                              \
		if (__builtin_expect(ingero_hot.self_time, 0))                            \
			REC(API, CALL, FILL, KIND, 1);                                    \
		REC(API, CALL, FILL, KIND, 0);                                            \
	} while (0)
#define HOOK_RECORD(API, CALL, FILL, KIND) HOOK_SELF_TIMED(HOOK_RECORD_, API, CALL, FILL, KIND)

/* A launch (INGERO_CLASS_LAUNCH): the lane unit it will most likely be,
 * one line of the stack (record.h, ingero_emit_launch).  FILL, which sets
 * its stream, kernel, grid, block and flags (named as a cuda_call's) from
 * the arguments alone, runs before the real call: the arguments go
 * straight into the unit, not kept aside for after it. */
#define HOOK_RECORD_LAUNCH_(API, CALL, FILL, KIND, TIMED)                                 \
	do {                                                                              \
		HOOK_RECORD_BEGIN(TIMED);                                                 \
		struct ingero_lane_short ev_ = { .api = (API) };                          \
		FILL;                                                                     \
		uint64_t t0_ = ingero_stamp(tsc_);                                        \
		INGERO_SEG(0);                                                            \
		int r_ = (CALL);                                                          \
		uint64_t t1_ = ingero_stamp(tsc_);                                        \
		INGERO_SEG_START(t1_);                                                    \
		ev_.tag = INGERO_LANE_SHORT | (tsc_ ? INGERO_LANE_TSC : 0);               \
		ev_.ret = r_;                                                             \
		ev_.start = t0_;                                                          \
		ev_.dur = t1_ - t0_;                                                      \
		ingero_emit_launch(&ev_, (KIND));                                         \
		HOOK_RECORD_END(TIMED);                                                   \
	} while (0)
#define HOOK_RECORD_LAUNCH(API, CALL, FILL, KIND) HOOK_SELF_TIMED(HOOK_RECORD_LAUNCH_, API, CALL, FILL, KIND)

#define HOOK_CALL_LAUNCH(API, CALL, ERR, FILL, KIND)                                      \
	do {                                                                              \
		HOOK_FORWARD(CALL, ERR);                                                  \
		HOOK_RECORD_LAUNCH(API, CALL, FILL, KIND);                                \
	} while (0)

/* A free's fill: a NULL pointer (cudaFree(0), the context set-up idiom)
 * frees nothing and waits for nothing; the analyzer must not see a sync. */
#define NULL_FREE_FILL(p_) (ev_.flags |= (p_) ? 0 : INGERO_FLAG_NULL_FREE)

/* Copy direction and pinned/pageable flags of a runtime copy. */
void ingero_fill_copy(struct ingero_cuda_call *ev, int kind, const void *dst, const void *src);
/* Same for a driver copy: host pointers known by the API. */
void ingero_fill_host(struct ingero_cuda_call *ev, const void *host);

/* --- registries ------------------------------------------------------------------------ */
struct ingero_hook {
	const char *name;
	void *wrapper;
	_Atomic(void *) *real;
};

/* Runtime wrappers by exported name (runtime_hooks.c). */
const struct ingero_hook *ingero_rt_hook(const char *name);
/* dlsym / cuGetProcAddress / cudaGetDriverEntryPoint: given the symbol a
 * program asked for and the real pointer the library returned, our wrapper
 * (or the real pointer when we do not wrap it).  `per_thread` selects the
 * _ptsz/_ptds wrapper for base names; version is the CUDA version asked. */
void *ingero_drv_wrap(const char *name, void *real, int version, int per_thread);
/* Whether p is one of our driver wrappers (never store it as "real"). */
int ingero_is_drv_wrapper(const void *p);

#endif
