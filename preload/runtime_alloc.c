/*
 * runtime_alloc.c — libcudart allocations and frees.  Pinned host
 * allocations and registrations also feed the pinned-range table, so later
 * copies can say pinned or pageable (pinned.c); that bookkeeping happens
 * even for nested calls, and only when the call succeeded.
 */
#include "runtime_hooks.h"

#include "pinned.h"

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);
typedef cudaError_t (*host_alloc_fn)(void **, size_t, unsigned int);
typedef cudaError_t (*host_register_fn)(void *, size_t, unsigned int);
typedef cudaError_t (*malloc_async_fn)(void **, size_t, cudaStream_t);
typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);

#define SIZE_FILL(n_) (ev_.bytes = (n_))

INGERO_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
	malloc_fn fn_ = (malloc_fn)RT_REAL(cudaMalloc);
	HOOK_CALL(INGERO_API_CUDA_MALLOC, fn_(p, size), CUDART_ERROR_NO_SYMBOL, SIZE_FILL(size),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaFree(void *p)
{
	free_fn fn_ = (free_fn)RT_REAL(cudaFree);
	HOOK_CALL(INGERO_API_CUDA_FREE, fn_(p), CUDART_ERROR_NO_SYMBOL, NULL_FREE_FILL(p), INGERO_KERNEL_NONE);
}

static cudaError_t pinned_alloc(cudaError_t r, void **p, size_t size)
{
	if (r == 0 && p)
		ingero_pinned_add(*p, size);
	return r;
}

static cudaError_t pinned_free(cudaError_t r, void *p)
{
	if (r == 0)
		ingero_pinned_remove(p);
	return r;
}

INGERO_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
	malloc_fn fn_ = (malloc_fn)RT_REAL(cudaMallocHost);
	HOOK_CALL(INGERO_API_CUDA_MALLOC_HOST, pinned_alloc(fn_(p, size), p, size),
		  CUDART_ERROR_NO_SYMBOL, SIZE_FILL(size), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
	host_alloc_fn fn_ = (host_alloc_fn)RT_REAL(cudaHostAlloc);
	HOOK_CALL(INGERO_API_CUDA_HOST_ALLOC, pinned_alloc(fn_(p, size, flags), p, size),
		  CUDART_ERROR_NO_SYMBOL, SIZE_FILL(size), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags)
{
	host_register_fn fn_ = (host_register_fn)RT_REAL(cudaHostRegister);
	HOOK_CALL(INGERO_API_CUDA_HOST_REGISTER, pinned_alloc(fn_(p, size, flags), &p, size),
		  CUDART_ERROR_NO_SYMBOL, SIZE_FILL(size), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaFreeHost(void *p)
{
	free_fn fn_ = (free_fn)RT_REAL(cudaFreeHost);
	HOOK_CALL(INGERO_API_CUDA_FREE_HOST, pinned_free(fn_(p), p), CUDART_ERROR_NO_SYMBOL, NULL_FREE_FILL(p),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaHostUnregister(void *p)
{
	free_fn fn_ = (free_fn)RT_REAL(cudaHostUnregister);
	HOOK_CALL(INGERO_API_CUDA_HOST_UNREGISTER, pinned_free(fn_(p), p), CUDART_ERROR_NO_SYMBOL,
		  (void)0, INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
	malloc_async_fn fn_ = (malloc_async_fn)RT_REAL(cudaMallocAsync);
	HOOK_CALL(INGERO_API_CUDA_MALLOC_ASYNC, fn_(p, size, s), CUDART_ERROR_NO_SYMBOL,
		  (SIZE_FILL(size), ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
	malloc_async_fn fn_ = (malloc_async_fn)RT_REAL(cudaMallocAsync_ptsz);
	HOOK_CALL(INGERO_API_CUDA_MALLOC_ASYNC_PTSZ, fn_(p, size, s), CUDART_ERROR_NO_SYMBOL,
		  (SIZE_FILL(size), ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	free_async_fn fn_ = (free_async_fn)RT_REAL(cudaFreeAsync);
	HOOK_CALL(INGERO_API_CUDA_FREE_ASYNC, fn_(p, s), CUDART_ERROR_NO_SYMBOL,
		  (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
	free_async_fn fn_ = (free_async_fn)RT_REAL(cudaFreeAsync_ptsz);
	HOOK_CALL(INGERO_API_CUDA_FREE_ASYNC_PTSZ, fn_(p, s), CUDART_ERROR_NO_SYMBOL,
		  (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE);
}
