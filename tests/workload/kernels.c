/*
 * kernels.c — the "model": fake kernels launched every way real programs
 * launch them.
 *
 *  - nvcc stubs: for `linear<<<grid, block, 0, stream>>>(x, w, y, n)` nvcc 13
 *    emits __cudaPushCallConfiguration + a call of the host stub `linear`,
 *    whose body pops the configuration and calls __cudaLaunchKernel with the
 *    handle from __cudaGetKernel (crt/host_runtime.h).  PyTorch's own kernels
 *    arrive this way: libtorch_cuda imports __cudaLaunchKernel.
 *  - cudaLaunchKernel and cudaLaunchKernelExC called directly.
 *  - the driver's cuLaunchKernel through a pointer from
 *    cudaGetDriverEntryPoint, as cuBLAS does, on a function from
 *    cuModuleGetFunction.
 * The kernels are registered at load time like nvcc's module constructor
 * does, so cudaFuncGetName knows their (mangled) names.
 */
#include "starve.h"
#include "../fakecuda/cuda_driver_fake.h"

#include <string.h>

/* host stubs of the __global__ functions */
void linear(const float *x, const float *w, float *y, int n);
void relu(float *y, int n);

static struct { int magic, version; const void *data; void *filename; } fatbin = { 0x466243b1, 1, 0, 0 };

__attribute__((constructor)) static void register_kernels(void)
{
	void **h = __cudaRegisterFatBinary(&fatbin);
	__cudaRegisterFunction(h, (const char *)linear, (char *)"_Z6linearPKfS0_Pfi", "_Z6linearPKfS0_Pfi", -1,
			       0, 0, 0, 0, 0);
	__cudaRegisterFunction(h, (const char *)relu, (char *)"_Z4reluPfi", "_Z4reluPfi", -1, 0, 0, 0, 0, 0);
	__cudaRegisterFatBinaryEnd(h);
}

/* What nvcc generates for a kernel's host stub (non-legacy launch, CUDA 13). */
__attribute__((noinline)) void linear(const float *x, const float *w, float *y, int n)
{
	void *args[4] = { &x, &w, &y, &n };
	static cudaKernel_t handle;
	dim3 g, b;
	size_t shmem;
	cudaStream_t s;
	if (!handle)
		cuda_check(__cudaGetKernel(&handle, (const void *)linear), "__cudaGetKernel");
	if (__cudaPopCallConfiguration(&g, &b, &shmem, &s) != cudaSuccess)
		return;
	CUDA_CALL_PT(CUDA_LAUNCH_KERNEL_STUB, __cudaLaunchKernel(handle, g, b, args, shmem, s),
		     __cudaLaunchKernel_ptsz(handle, g, b, args, shmem, s));
}

void relu(float *y, int n)
{
	(void)y;
	(void)n;   /* only launched through cudaLaunchKernel(ExC) here, never called */
}

static __typeof__(cuLaunchKernel) *drv_launch;
static CUfunction gemm;

void model_init(cudaStream_t stream)
{
	enum cudaDriverEntryPointQueryResult st;
	unsigned long long flags = opt.ptsz ? cudaEnablePerThreadDefaultStream : cudaEnableDefault;
	__typeof__(cuModuleLoadData) *load;
	__typeof__(cuModuleGetFunction) *getfn;
	CUmodule mod;
	(void)stream;
	if (!opt.drv_launches)
		return;
	cuda_check(cudaGetDriverEntryPoint("cuLaunchKernel", (void **)&drv_launch, flags, &st),
		   "cudaGetDriverEntryPoint(cuLaunchKernel)");
	cuda_check(cudaGetDriverEntryPoint("cuModuleLoadData", (void **)&load, flags, &st),
		   "cudaGetDriverEntryPoint(cuModuleLoadData)");
	cuda_check(cudaGetDriverEntryPoint("cuModuleGetFunction", (void **)&getfn, flags, &st),
		   "cudaGetDriverEntryPoint(cuModuleGetFunction)");
	if (load(&mod, "cublas kernels") || getfn(&gemm, mod, "sm90_xmma_gemm_f32f32_tf32"))
		die("cannot load the fake cuBLAS kernel");
}

void model_forward(void *dev_in, cudaStream_t stream)
{
	float *x = dev_in, *y = dev_in;
	int n = 1024;
	dim3 grid = { 256, 1, 1 }, block = { 128, 1, 1 };
	void *args[2] = { &y, &n };

	for (unsigned i = 0; i < opt.stub_launches; i++) {
		/* linear<<<grid, block, 0, stream>>>(x, x, y, n); */
		__cudaPushCallConfiguration(grid, block, 0, stream);
		linear(x, x, y, n);
	}
	for (unsigned i = 0; i < opt.rt_launches; i++)
		CUDA_CALL_PT(CUDA_LAUNCH_KERNEL, cudaLaunchKernel((const void *)relu, grid, block, args, 0, stream),
			     cudaLaunchKernel_ptsz((const void *)relu, grid, block, args, 0, stream));
	for (unsigned i = 0; i < opt.exc_launches; i++) {
		cudaLaunchConfig_t c;
		memset(&c, 0, sizeof c);
		c.gridDim = grid;
		c.blockDim = block;
		c.stream = stream;
		CUDA_CALL_PT(CUDA_LAUNCH_KERNEL_EXC, cudaLaunchKernelExC(&c, (const void *)relu, args),
			     cudaLaunchKernelExC_ptsz(&c, (const void *)relu, args));
	}
	for (unsigned i = 0; i < opt.drv_launches; i++) {
		/* the pointer already is the _ptsz variant when opt.ptsz asked for it */
		if (opt.ptsz)
			truth_calls[INGERO_API_CU_LAUNCH_KERNEL_PTSZ]++;
		else
			truth_calls[INGERO_API_CU_LAUNCH_KERNEL]++;
		if (drv_launch(gemm, 64, 1, 1, 256, 1, 1, 0, (CUstream)stream, args, NULL))
			die("cuLaunchKernel failed");
	}
}
