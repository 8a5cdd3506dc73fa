/*
 * runtime_hooks.h — the libcudart entry points we wrap: the list (one
 * place), their prototypes, and the slots holding the real functions.
 */
#ifndef INGERO_PRELOAD_RUNTIME_HOOKS_H
#define INGERO_PRELOAD_RUNTIME_HOOKS_H

#include "hooks.h"

/* X(name) for every wrapped runtime function (exports.map lists the same). */
#define INGERO_RT_HOOKS(X)                                                                 \
	X(cudaMemcpy) X(cudaMemcpy_ptds) X(cudaMemcpyAsync) X(cudaMemcpyAsync_ptsz)          \
	X(cudaMemcpy2D) X(cudaMemcpy2D_ptds) X(cudaMemcpy2DAsync) X(cudaMemcpy2DAsync_ptsz)  \
	X(cudaMemcpyPeer) X(cudaMemcpyPeerAsync) X(cudaMemsetAsync) X(cudaMemsetAsync_ptsz)  \
	X(cudaStreamSynchronize) X(cudaStreamSynchronize_ptsz) X(cudaDeviceSynchronize)      \
	X(cudaEventSynchronize) X(cudaStreamWaitEvent) X(cudaStreamWaitEvent_ptsz)           \
	X(__cudaLaunchKernel) X(__cudaLaunchKernel_ptsz) X(cudaLaunchKernel)                 \
	X(cudaLaunchKernel_ptsz) X(cudaLaunchKernelExC) X(cudaLaunchKernelExC_ptsz)          \
	X(cudaGraphLaunch) X(cudaGraphLaunch_ptsz) X(cudaMalloc) X(cudaFree)                 \
	X(cudaMallocHost) X(cudaHostAlloc) X(cudaHostRegister) X(cudaFreeHost)               \
	X(cudaHostUnregister) X(cudaMallocAsync) X(cudaMallocAsync_ptsz) X(cudaFreeAsync)    \
	X(cudaFreeAsync_ptsz) X(cudaGetDriverEntryPoint) X(cudaGetDriverEntryPoint_ptsz)     \
	X(cudaGetDriverEntryPointByVersion) X(cudaGetDriverEntryPointByVersion_ptsz)     \
	X(cudaProfilerStart) X(cudaProfilerStop)

#define INGERO_RT_SLOT_(n) extern _Atomic(void *) ingero_real_##n;
INGERO_RT_HOOKS(INGERO_RT_SLOT_)
#undef INGERO_RT_SLOT_

#define RT_REAL(n) INGERO_REAL(ingero_real_##n, #n, INGERO_LIBCUDART)

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind);
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, int kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, cudaStream_t s);
cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, int kind, cudaStream_t s);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t w, size_t h,
			 int kind);
cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t w,
			      size_t h, int kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t w,
			      size_t h, int kind, cudaStream_t s);
cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t w,
				   size_t h, int kind, cudaStream_t s);
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
				cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s);
cudaError_t cudaMemsetAsync_ptsz(void *p, int value, size_t count, cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags);
cudaError_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args, size_t shmem,
			       cudaStream_t s);
cudaError_t __cudaLaunchKernel_ptsz(const void *kernel, dim3 grid, dim3 block, void **args,
				    size_t shmem, cudaStream_t s);
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
			     cudaStream_t s);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
				  cudaStream_t s);
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *func, void **args);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *cfg, const void *func, void **args);
cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t s);
cudaError_t cudaMalloc(void **p, size_t size);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t size);
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags);
cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaHostUnregister(void *p);
cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s);
cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s);
cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStop(void);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags, int *status);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn, unsigned long long flags,
					 int *status);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
					     unsigned long long flags, int *status);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn, unsigned int version,
						  unsigned long long flags, int *status);

#endif
