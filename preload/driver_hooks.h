/*
 * driver_hooks.h — the libcuda entry points we wrap.  X(base, sym, sym_pt,
 * min_version) lists them: `base` is the name cuGetProcAddress is asked
 * for, `sym` the legacy-stream definition it returns (also our exported
 * symbol), `sym_pt` the per-thread-stream one (or none), `min_version` the
 * CUDA version from which `sym` is what a request for `base` returns
 * (older requests get older ABIs, which we pass through unwrapped).
 */
#ifndef INGERO_PRELOAD_DRIVER_HOOKS_H
#define INGERO_PRELOAD_DRIVER_HOOKS_H

#include "hooks.h"

#define INGERO_DRV_HOOKS(X, N)                                                             \
	X(cuLaunchKernel, cuLaunchKernel, cuLaunchKernel_ptsz, 4000)                         \
	X(cuLaunchKernelEx, cuLaunchKernelEx, cuLaunchKernelEx_ptsz, 11060)                  \
	X(cuStreamSynchronize, cuStreamSynchronize, cuStreamSynchronize_ptsz, 2000)          \
	N(cuCtxSynchronize, cuCtxSynchronize, 2000)                                          \
	N(cuEventSynchronize, cuEventSynchronize, 2000)                                      \
	X(cuStreamWaitEvent, cuStreamWaitEvent, cuStreamWaitEvent_ptsz, 3020)                \
	X(cuMemcpy, cuMemcpy, cuMemcpy_ptds, 4000)                                           \
	X(cuMemcpyAsync, cuMemcpyAsync, cuMemcpyAsync_ptsz, 4000)                            \
	X(cuMemcpyHtoD, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, 3020)                         \
	X(cuMemcpyDtoH, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, 3020)                         \
	X(cuMemcpyDtoD, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, 3020)                         \
	X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, 3020)          \
	X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, 3020)          \
	X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, 3020)          \
	X(cuMemcpy2DAsync, cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, 3020)                \
	X(cuMemsetD8Async, cuMemsetD8Async, cuMemsetD8Async_ptsz, 3020)                      \
	X(cuMemsetD32Async, cuMemsetD32Async, cuMemsetD32Async_ptsz, 3020)                   \
	N(cuMemAlloc, cuMemAlloc_v2, 3020)                                                   \
	N(cuMemFree, cuMemFree_v2, 3020)                                                     \
	X(cuMemAllocAsync, cuMemAllocAsync, cuMemAllocAsync_ptsz, 11020)                     \
	X(cuMemFreeAsync, cuMemFreeAsync, cuMemFreeAsync_ptsz, 11020)                        \
	X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz, 11020) \
	N(cuMemAllocHost, cuMemAllocHost_v2, 3020)                                           \
	N(cuMemHostAlloc, cuMemHostAlloc, 2020)                                              \
	N(cuMemHostRegister, cuMemHostRegister_v2, 6050)                                     \
	N(cuMemFreeHost, cuMemFreeHost, 2000)                                                \
	N(cuMemHostUnregister, cuMemHostUnregister, 4000)                                    \
	X(cuGraphLaunch, cuGraphLaunch, cuGraphLaunch_ptsz, 10000)                           \
	N(cuStreamDestroy, cuStreamDestroy_v2, 4000)

/* One row of the list, with our wrappers and the slots of the real functions. */
struct ingero_drv_entry {
	const char *base, *sym, *sym_pt;   /* sym_pt NULL: no per-thread variant */
	int min_version;
	void *wrap, *wrap_pt;
	_Atomic(void *) *real, *real_pt;
};

extern const struct ingero_drv_entry ingero_drv_table[];

/* The real driver's own pointer for a base name at a CUDA version (never
 * one of our wrappers): for the library's own driver calls (gpu_driver.c). */
void *ingero_real_drv_proc(const char *name, int version);
extern const unsigned ingero_drv_count;

#endif
