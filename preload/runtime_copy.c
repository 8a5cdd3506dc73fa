/*
 * runtime_copy.c — libcudart copies and memsets: one event each, with bytes,
 * direction and whether the host side is pinned (pinned.c).
 */
#include "runtime_hooks.h"

typedef cudaError_t (*memcpy_fn)(void *, const void *, size_t, int);
typedef cudaError_t (*memcpy_async_fn)(void *, const void *, size_t, int, cudaStream_t);
typedef cudaError_t (*memcpy2d_fn)(void *, size_t, const void *, size_t, size_t, size_t, int);
typedef cudaError_t (*memcpy2d_async_fn)(void *, size_t, const void *, size_t, size_t, size_t, int,
					 cudaStream_t);
typedef cudaError_t (*memcpy_peer_fn)(void *, int, const void *, int, size_t);
typedef cudaError_t (*memcpy_peer_async_fn)(void *, int, const void *, int, size_t, cudaStream_t);
typedef cudaError_t (*memset_async_fn)(void *, int, size_t, cudaStream_t);

#define COPY_FILL(stream_, bytes_, kind_, dst_, src_, async_)                  \
	ev_.stream = (uint64_t)(uintptr_t)(stream_);                           \
	ev_.bytes = (bytes_);                                                  \
	if (async_)                                                            \
		ev_.flags |= INGERO_FLAG_ASYNC;                                \
	ingero_fill_copy(&ev_, (kind_), (dst_), (src_))

INGERO_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, int kind)
{
	memcpy_fn fn_ = (memcpy_fn)RT_REAL(cudaMemcpy);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY, fn_(dst, src, count, kind), CUDART_ERROR_NO_SYMBOL,
		  COPY_FILL(0, count, kind, dst, src, 0), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, int kind)
{
	memcpy_fn fn_ = (memcpy_fn)RT_REAL(cudaMemcpy_ptds);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_PTDS, fn_(dst, src, count, kind), CUDART_ERROR_NO_SYMBOL,
		  COPY_FILL(0, count, kind, dst, src, 0), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind,
					  cudaStream_t s)
{
	memcpy_async_fn fn_ = (memcpy_async_fn)RT_REAL(cudaMemcpyAsync);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_ASYNC, fn_(dst, src, count, kind, s), CUDART_ERROR_NO_SYMBOL,
		  COPY_FILL(s, count, kind, dst, src, 1), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, int kind,
					       cudaStream_t s)
{
	memcpy_async_fn fn_ = (memcpy_async_fn)RT_REAL(cudaMemcpyAsync_ptsz);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_ASYNC_PTSZ, fn_(dst, src, count, kind, s),
		  CUDART_ERROR_NO_SYMBOL, COPY_FILL(s, count, kind, dst, src, 1), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
				       size_t w, size_t h, int kind)
{
	memcpy2d_fn fn_ = (memcpy2d_fn)RT_REAL(cudaMemcpy2D);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_2D, fn_(dst, dpitch, src, spitch, w, h, kind),
		  CUDART_ERROR_NO_SYMBOL, COPY_FILL(0, (uint64_t)w * h, kind, dst, src, 0),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
					    size_t w, size_t h, int kind)
{
	memcpy2d_fn fn_ = (memcpy2d_fn)RT_REAL(cudaMemcpy2D_ptds);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_2D_PTDS, fn_(dst, dpitch, src, spitch, w, h, kind),
		  CUDART_ERROR_NO_SYMBOL, COPY_FILL(0, (uint64_t)w * h, kind, dst, src, 0),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
					    size_t w, size_t h, int kind, cudaStream_t s)
{
	memcpy2d_async_fn fn_ = (memcpy2d_async_fn)RT_REAL(cudaMemcpy2DAsync);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_2D_ASYNC, fn_(dst, dpitch, src, spitch, w, h, kind, s),
		  CUDART_ERROR_NO_SYMBOL, COPY_FILL(s, (uint64_t)w * h, kind, dst, src, 1),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
						 size_t spitch, size_t w, size_t h, int kind,
						 cudaStream_t s)
{
	memcpy2d_async_fn fn_ = (memcpy2d_async_fn)RT_REAL(cudaMemcpy2DAsync_ptsz);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_2D_ASYNC_PTSZ, fn_(dst, dpitch, src, spitch, w, h, kind, s),
		  CUDART_ERROR_NO_SYMBOL, COPY_FILL(s, (uint64_t)w * h, kind, dst, src, 1),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
					 size_t count)
{
	memcpy_peer_fn fn_ = (memcpy_peer_fn)RT_REAL(cudaMemcpyPeer);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_PEER, fn_(dst, dstDevice, src, srcDevice, count),
		  CUDART_ERROR_NO_SYMBOL, (ev_.bytes = count, ev_.dir = INGERO_DIR_PEER),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
					      size_t count, cudaStream_t s)
{
	memcpy_peer_async_fn fn_ = (memcpy_peer_async_fn)RT_REAL(cudaMemcpyPeerAsync);
	HOOK_CALL(INGERO_API_CUDA_MEMCPY_PEER_ASYNC, fn_(dst, dstDevice, src, srcDevice, count, s),
		  CUDART_ERROR_NO_SYMBOL,
		  (ev_.bytes = count, ev_.dir = INGERO_DIR_PEER, ev_.flags |= INGERO_FLAG_ASYNC,
		   ev_.stream = (uint64_t)(uintptr_t)s),
		  INGERO_KERNEL_NONE);
}

#define MEMSET_FILL(s_, count_) \
	(ev_.stream = (uint64_t)(uintptr_t)(s_), ev_.bytes = (count_), ev_.flags |= INGERO_FLAG_ASYNC)

INGERO_EXPORT cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s)
{
	memset_async_fn fn_ = (memset_async_fn)RT_REAL(cudaMemsetAsync);
	HOOK_CALL(INGERO_API_CUDA_MEMSET_ASYNC, fn_(p, value, count, s), CUDART_ERROR_NO_SYMBOL,
		  MEMSET_FILL(s, count), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int value, size_t count, cudaStream_t s)
{
	memset_async_fn fn_ = (memset_async_fn)RT_REAL(cudaMemsetAsync_ptsz);
	HOOK_CALL(INGERO_API_CUDA_MEMSET_ASYNC_PTSZ, fn_(p, value, count, s), CUDART_ERROR_NO_SYMBOL,
		  MEMSET_FILL(s, count), INGERO_KERNEL_NONE);
}
