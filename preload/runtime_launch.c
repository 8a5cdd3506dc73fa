/*
 * runtime_launch.c — libcudart kernel and graph launches.
 *
 * nvcc 13's launch stubs call __cudaLaunchKernel (with a kernel handle),
 * which reaches cudaLaunchKernel inside libcudart without going through
 * its PLT entry: both are wrapped, and the nesting depth keeps a launch
 * that passes through both (or down into the driver) one event.
 */
#include "runtime_hooks.h"

typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
typedef cudaError_t (*launch_exc_fn)(const cudaLaunchConfig_t *, const void *, void **);
typedef cudaError_t (*graph_fn)(cudaGraphExec_t, cudaStream_t);

#define LAUNCH_FILL(func_, g_, b_, s_)                                                       \
	(ev_.kernel = (uint64_t)(uintptr_t)(func_), ev_.stream = (uint64_t)(uintptr_t)(s_),  \
	 ev_.flags |= INGERO_FLAG_ASYNC, ev_.grid[0] = (g_).x, ev_.grid[1] = (g_).y,         \
	 ev_.grid[2] = (g_).z, ev_.block[0] = (b_).x, ev_.block[1] = (b_).y,                 \
	 ev_.block[2] = (b_).z)

/* (PyTorch's own kernels, two launches in three of its loop's: it starts
 * the launch path's page, record.h INGERO_HOT_AT) */
INGERO_EXPORT INGERO_HOT_AT(10) __attribute__((aligned(4096))) cudaError_t __cudaLaunchKernel(const void *kernel, dim3 grid, dim3 block, void **args,
					     size_t shmem, cudaStream_t s)
{
	launch_fn fn_ = (launch_fn)RT_REAL(__cudaLaunchKernel);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL_STUB, fn_(kernel, grid, block, args, shmem, s),
		  CUDART_ERROR_NO_SYMBOL, LAUNCH_FILL(kernel, grid, block, s), INGERO_KERNEL_CUKERNEL);
}

INGERO_EXPORT INGERO_HOT_AT(48) cudaError_t __cudaLaunchKernel_ptsz(const void *kernel, dim3 grid, dim3 block,
						  void **args, size_t shmem, cudaStream_t s)
{
	launch_fn fn_ = (launch_fn)RT_REAL(__cudaLaunchKernel_ptsz);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL_STUB_PTSZ, fn_(kernel, grid, block, args, shmem, s),
		  CUDART_ERROR_NO_SYMBOL, LAUNCH_FILL(kernel, grid, block, s), INGERO_KERNEL_CUKERNEL);
}

INGERO_EXPORT INGERO_HOT_AT(30) cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
					   size_t shmem, cudaStream_t s)
{
	launch_fn fn_ = (launch_fn)RT_REAL(cudaLaunchKernel);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL, fn_(func, grid, block, args, shmem, s),
		  CUDART_ERROR_NO_SYMBOL, LAUNCH_FILL(func, grid, block, s), INGERO_KERNEL_HOST_STUB);
}

INGERO_EXPORT INGERO_HOT_AT(49) cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
						size_t shmem, cudaStream_t s)
{
	launch_fn fn_ = (launch_fn)RT_REAL(cudaLaunchKernel_ptsz);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL_PTSZ, fn_(func, grid, block, args, shmem, s),
		  CUDART_ERROR_NO_SYMBOL, LAUNCH_FILL(func, grid, block, s), INGERO_KERNEL_HOST_STUB);
}

static const cudaLaunchConfig_t no_config;

INGERO_EXPORT INGERO_HOT_AT(31) cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *func,
					      void **args)
{
	launch_exc_fn fn_ = (launch_exc_fn)RT_REAL(cudaLaunchKernelExC);
	const cudaLaunchConfig_t *c = cfg ? cfg : &no_config;
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL_EXC, fn_(cfg, func, args), CUDART_ERROR_NO_SYMBOL,
		  LAUNCH_FILL(func, c->gridDim, c->blockDim, c->stream), INGERO_KERNEL_HOST_STUB);
}

INGERO_EXPORT INGERO_HOT_AT(4a) cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *cfg, const void *func,
						   void **args)
{
	launch_exc_fn fn_ = (launch_exc_fn)RT_REAL(cudaLaunchKernelExC_ptsz);
	const cudaLaunchConfig_t *c = cfg ? cfg : &no_config;
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_LAUNCH_KERNEL_EXC_PTSZ, fn_(cfg, func, args), CUDART_ERROR_NO_SYMBOL,
		  LAUNCH_FILL(func, c->gridDim, c->blockDim, c->stream), INGERO_KERNEL_HOST_STUB);
}

INGERO_EXPORT INGERO_HOT_AT(4b) cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s)
{
	graph_fn fn_ = (graph_fn)RT_REAL(cudaGraphLaunch);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_GRAPH_LAUNCH, fn_(g, s), CUDART_ERROR_NO_SYMBOL,
		  (ev_.stream = (uint64_t)(uintptr_t)s, ev_.flags |= INGERO_FLAG_ASYNC),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT INGERO_HOT_AT(4c) cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t s)
{
	graph_fn fn_ = (graph_fn)RT_REAL(cudaGraphLaunch_ptsz);
	HOOK_CALL_LAUNCH(INGERO_API_CUDA_GRAPH_LAUNCH_PTSZ, fn_(g, s), CUDART_ERROR_NO_SYMBOL,
		  (ev_.stream = (uint64_t)(uintptr_t)s, ev_.flags |= INGERO_FLAG_ASYNC),
		  INGERO_KERNEL_NONE);
}
