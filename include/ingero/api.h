/*
 * api.h — the CUDA entry points Ingero knows, with stable numeric ids.
 *
 * The id of an API is what travels on the wire and what is stored in
 * report.db (cuda_calls.api, apis.id), so an id is never reused or
 * renumbered: new entry points are appended with new ids.  Each API is
 * stored under the exact name the program called (cudaMemcpyAsync_ptsz is
 * not folded into cudaMemcpyAsync); the class groups them for analysis.
 *
 * Ranges: 1..199 runtime (libcudart), 200..399 driver (libcuda).
 */
#ifndef INGERO_API_H
#define INGERO_API_H

#include <stdint.h>

enum ingero_api_class {
	INGERO_CLASS_OTHER = 0,
	INGERO_CLASS_COPY = 1,    /* moves bytes; may block the host */
	INGERO_CLASS_SYNC = 2,    /* host waits for the device */
	INGERO_CLASS_LAUNCH = 3,  /* queues a kernel or a graph */
	INGERO_CLASS_ALLOC = 4,   /* device or pinned host allocation */
	INGERO_CLASS_FREE = 5,
	INGERO_CLASS_MEMSET = 6,
	INGERO_CLASS_WAIT = 7,    /* stream waits on an event: device-side dependency */
};

/* X(id, ENUM_SUFFIX, "name", class) */
#define INGERO_API_LIST(X) \
	X(1,   CUDA_MEMCPY,                   "cudaMemcpy",                    COPY)   \
	X(2,   CUDA_MEMCPY_PTDS,              "cudaMemcpy_ptds",               COPY)   \
	X(3,   CUDA_MEMCPY_ASYNC,             "cudaMemcpyAsync",               COPY)   \
	X(4,   CUDA_MEMCPY_ASYNC_PTSZ,        "cudaMemcpyAsync_ptsz",          COPY)   \
	X(5,   CUDA_MEMCPY_2D,                "cudaMemcpy2D",                  COPY)   \
	X(6,   CUDA_MEMCPY_2D_PTDS,           "cudaMemcpy2D_ptds",             COPY)   \
	X(7,   CUDA_MEMCPY_2D_ASYNC,          "cudaMemcpy2DAsync",             COPY)   \
	X(8,   CUDA_MEMCPY_2D_ASYNC_PTSZ,     "cudaMemcpy2DAsync_ptsz",        COPY)   \
	X(9,   CUDA_MEMCPY_PEER,              "cudaMemcpyPeer",                COPY)   \
	X(10,  CUDA_MEMCPY_PEER_ASYNC,        "cudaMemcpyPeerAsync",           COPY)   \
	X(11,  CUDA_MEMSET_ASYNC,             "cudaMemsetAsync",               MEMSET) \
	X(12,  CUDA_MEMSET_ASYNC_PTSZ,        "cudaMemsetAsync_ptsz",          MEMSET) \
	X(13,  CUDA_STREAM_SYNCHRONIZE,       "cudaStreamSynchronize",         SYNC)   \
	X(14,  CUDA_STREAM_SYNCHRONIZE_PTSZ,  "cudaStreamSynchronize_ptsz",    SYNC)   \
	X(15,  CUDA_DEVICE_SYNCHRONIZE,       "cudaDeviceSynchronize",         SYNC)   \
	X(16,  CUDA_EVENT_SYNCHRONIZE,        "cudaEventSynchronize",          SYNC)   \
	X(17,  CUDA_STREAM_WAIT_EVENT,        "cudaStreamWaitEvent",           WAIT)   \
	X(18,  CUDA_STREAM_WAIT_EVENT_PTSZ,   "cudaStreamWaitEvent_ptsz",      WAIT)   \
	X(19,  CUDA_LAUNCH_KERNEL_STUB,       "__cudaLaunchKernel",            LAUNCH) \
	X(20,  CUDA_LAUNCH_KERNEL_STUB_PTSZ,  "__cudaLaunchKernel_ptsz",       LAUNCH) \
	X(21,  CUDA_LAUNCH_KERNEL,            "cudaLaunchKernel",              LAUNCH) \
	X(22,  CUDA_LAUNCH_KERNEL_PTSZ,       "cudaLaunchKernel_ptsz",         LAUNCH) \
	X(23,  CUDA_LAUNCH_KERNEL_EXC,        "cudaLaunchKernelExC",           LAUNCH) \
	X(24,  CUDA_LAUNCH_KERNEL_EXC_PTSZ,   "cudaLaunchKernelExC_ptsz",      LAUNCH) \
	X(25,  CUDA_GRAPH_LAUNCH,             "cudaGraphLaunch",               LAUNCH) \
	X(26,  CUDA_GRAPH_LAUNCH_PTSZ,        "cudaGraphLaunch_ptsz",          LAUNCH) \
	X(27,  CUDA_MALLOC,                   "cudaMalloc",                    ALLOC)  \
	X(28,  CUDA_FREE,                     "cudaFree",                      FREE)   \
	X(29,  CUDA_MALLOC_HOST,              "cudaMallocHost",                ALLOC)  \
	X(30,  CUDA_HOST_ALLOC,               "cudaHostAlloc",                 ALLOC)  \
	X(31,  CUDA_HOST_REGISTER,            "cudaHostRegister",              ALLOC)  \
	X(32,  CUDA_FREE_HOST,                "cudaFreeHost",                  FREE)   \
	X(33,  CUDA_HOST_UNREGISTER,          "cudaHostUnregister",            FREE)   \
	X(34,  CUDA_MALLOC_ASYNC,             "cudaMallocAsync",               ALLOC)  \
	X(35,  CUDA_FREE_ASYNC,               "cudaFreeAsync",                 FREE)   \
	X(36,  CUDA_MALLOC_ASYNC_PTSZ,        "cudaMallocAsync_ptsz",          ALLOC)  \
	X(37,  CUDA_FREE_ASYNC_PTSZ,          "cudaFreeAsync_ptsz",            FREE)   \
	X(200, CU_LAUNCH_KERNEL,              "cuLaunchKernel",                LAUNCH) \
	X(201, CU_LAUNCH_KERNEL_PTSZ,         "cuLaunchKernel_ptsz",           LAUNCH) \
	X(202, CU_LAUNCH_KERNEL_EX,           "cuLaunchKernelEx",              LAUNCH) \
	X(203, CU_LAUNCH_KERNEL_EX_PTSZ,      "cuLaunchKernelEx_ptsz",         LAUNCH) \
	X(204, CU_STREAM_SYNCHRONIZE,         "cuStreamSynchronize",           SYNC)   \
	X(205, CU_STREAM_SYNCHRONIZE_PTSZ,    "cuStreamSynchronize_ptsz",      SYNC)   \
	X(206, CU_CTX_SYNCHRONIZE,            "cuCtxSynchronize",              SYNC)   \
	X(207, CU_EVENT_SYNCHRONIZE,          "cuEventSynchronize",            SYNC)   \
	X(208, CU_STREAM_WAIT_EVENT,          "cuStreamWaitEvent",             WAIT)   \
	X(209, CU_MEMCPY,                     "cuMemcpy",                      COPY)   \
	X(210, CU_MEMCPY_ASYNC,               "cuMemcpyAsync",                 COPY)   \
	X(211, CU_MEMCPY_HTOD_V2,             "cuMemcpyHtoD_v2",               COPY)   \
	X(212, CU_MEMCPY_DTOH_V2,             "cuMemcpyDtoH_v2",               COPY)   \
	X(213, CU_MEMCPY_DTOD_V2,             "cuMemcpyDtoD_v2",               COPY)   \
	X(214, CU_MEMCPY_HTOD_ASYNC_V2,       "cuMemcpyHtoDAsync_v2",          COPY)   \
	X(215, CU_MEMCPY_DTOH_ASYNC_V2,       "cuMemcpyDtoHAsync_v2",          COPY)   \
	X(216, CU_MEMCPY_DTOD_ASYNC_V2,       "cuMemcpyDtoDAsync_v2",          COPY)   \
	X(217, CU_MEMCPY_2D_ASYNC_V2,         "cuMemcpy2DAsync_v2",            COPY)   \
	X(218, CU_MEMSET_D8_ASYNC,            "cuMemsetD8Async",               MEMSET) \
	X(219, CU_MEMSET_D32_ASYNC,           "cuMemsetD32Async",              MEMSET) \
	X(220, CU_MEM_ALLOC_V2,               "cuMemAlloc_v2",                 ALLOC)  \
	X(221, CU_MEM_FREE_V2,                "cuMemFree_v2",                  FREE)   \
	X(222, CU_MEM_ALLOC_ASYNC,            "cuMemAllocAsync",               ALLOC)  \
	X(223, CU_MEM_FREE_ASYNC,             "cuMemFreeAsync",                FREE)   \
	X(224, CU_MEM_ALLOC_HOST_V2,          "cuMemAllocHost_v2",             ALLOC)  \
	X(225, CU_MEM_HOST_ALLOC,             "cuMemHostAlloc",                ALLOC)  \
	X(226, CU_MEM_HOST_REGISTER_V2,       "cuMemHostRegister_v2",          ALLOC)  \
	X(227, CU_MEM_FREE_HOST,              "cuMemFreeHost",                 FREE)   \
	X(228, CU_MEM_HOST_UNREGISTER,        "cuMemHostUnregister",           FREE)   \
	X(229, CU_GRAPH_LAUNCH,               "cuGraphLaunch",                 LAUNCH) \
	X(230, CU_MEM_ALLOC_FROM_POOL_ASYNC,  "cuMemAllocFromPoolAsync",       ALLOC)  \
	X(231, CU_STREAM_WAIT_EVENT_PTSZ,     "cuStreamWaitEvent_ptsz",        WAIT)   \
	X(232, CU_MEMCPY_PTDS,                "cuMemcpy_ptds",                 COPY)   \
	X(233, CU_MEMCPY_ASYNC_PTSZ,          "cuMemcpyAsync_ptsz",            COPY)   \
	X(234, CU_MEMCPY_HTOD_V2_PTDS,        "cuMemcpyHtoD_v2_ptds",          COPY)   \
	X(235, CU_MEMCPY_DTOH_V2_PTDS,        "cuMemcpyDtoH_v2_ptds",          COPY)   \
	X(236, CU_MEMCPY_DTOD_V2_PTDS,        "cuMemcpyDtoD_v2_ptds",          COPY)   \
	X(237, CU_MEMCPY_HTOD_ASYNC_V2_PTSZ,  "cuMemcpyHtoDAsync_v2_ptsz",     COPY)   \
	X(238, CU_MEMCPY_DTOH_ASYNC_V2_PTSZ,  "cuMemcpyDtoHAsync_v2_ptsz",     COPY)   \
	X(239, CU_MEMCPY_DTOD_ASYNC_V2_PTSZ,  "cuMemcpyDtoDAsync_v2_ptsz",     COPY)   \
	X(240, CU_MEMCPY_2D_ASYNC_V2_PTSZ,    "cuMemcpy2DAsync_v2_ptsz",       COPY)   \
	X(241, CU_MEMSET_D8_ASYNC_PTSZ,       "cuMemsetD8Async_ptsz",          MEMSET) \
	X(242, CU_MEMSET_D32_ASYNC_PTSZ,      "cuMemsetD32Async_ptsz",         MEMSET) \
	X(243, CU_MEM_ALLOC_ASYNC_PTSZ,       "cuMemAllocAsync_ptsz",          ALLOC)  \
	X(244, CU_MEM_FREE_ASYNC_PTSZ,        "cuMemFreeAsync_ptsz",           FREE)   \
	X(245, CU_GRAPH_LAUNCH_PTSZ,          "cuGraphLaunch_ptsz",            LAUNCH) \
	X(246, CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ, "cuMemAllocFromPoolAsync_ptsz", ALLOC)

enum ingero_api {
	INGERO_API_NONE = 0,
#define INGERO_API_ENUM_(id, e, name, cls) INGERO_API_##e = id,
	INGERO_API_LIST(INGERO_API_ENUM_)
#undef INGERO_API_ENUM_
	INGERO_API_MAX = 400,  /* ids are < INGERO_API_MAX */
};

/* Name of an API id, or NULL when the id is unknown. */
static inline const char *ingero_api_name(unsigned id)
{
	switch (id) {
#define INGERO_API_NAME_(id, e, name, cls) case id: return name;
	INGERO_API_LIST(INGERO_API_NAME_)
#undef INGERO_API_NAME_
	default: return 0;
	}
}

/* Class of an API id; INGERO_CLASS_OTHER when unknown. */
static inline enum ingero_api_class ingero_api_class(unsigned id)
{
	switch (id) {
#define INGERO_API_CLASS_(id, e, name, cls) case id: return INGERO_CLASS_##cls;
	INGERO_API_LIST(INGERO_API_CLASS_)
#undef INGERO_API_CLASS_
	default: return INGERO_CLASS_OTHER;
	}
}

static inline const char *ingero_api_class_name(enum ingero_api_class c)
{
	static const char *const names[] = {
		"other", "copy", "sync", "launch", "alloc", "free", "memset", "wait",
	};
	return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "other";
}

/* The frees that wait until the device is idle before they return —
 * cudaFree, cudaFreeHost and their driver forms (the reason the
 * stream-ordered cudaFreeAsync exists); a free of NULL waits for nothing
 * (INGERO_FLAG_NULL_FREE). */
static inline int ingero_api_free_waits(unsigned id)
{
	return id == INGERO_API_CUDA_FREE || id == INGERO_API_CUDA_FREE_HOST || id == INGERO_API_CU_MEM_FREE_V2 ||
	       id == INGERO_API_CU_MEM_FREE_HOST;
}

#endif
