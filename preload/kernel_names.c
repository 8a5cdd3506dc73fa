/*
 * kernel_names.c — learning kernel names the way the runtime does, without
 * asking CUDA anything: every CUDA library registers its kernels at load
 * time with __cudaRegisterFunction(host stub → device name), and nvcc 13
 * launch stubs get their kernel handle from __cudaGetKernel(host stub).  We
 * record both, so a launch by handle (__cudaLaunchKernel) or by stub
 * (cudaLaunchKernel) can be named.  The names point into the registering
 * library's read-only data, which lives as long as its kernels can run.
 *
 * These run from library constructors, possibly before ours: they only
 * touch static tables and the real functions.
 */
#include "hooks.h"
#include "intern.h"

#define NAMES_CAP (1u << 17)
static _Atomic uint64_t stub_keys[NAMES_CAP], stub_vals[NAMES_CAP];
static _Atomic uint64_t handle_keys[NAMES_CAP], handle_vals[NAMES_CAP];
static struct ingero_kv stub_names = { NAMES_CAP, stub_keys, stub_vals };   /* stub → name */
static struct ingero_kv handle_stubs = { NAMES_CAP, handle_keys, handle_vals }; /* handle → stub */

static _Atomic(void *) real_register, real_get_kernel, real_cuda_get_kernel;

typedef void (*register_fn)(void **, const char *, char *, const char *, int, void *, void *, void *,
			    void *, int *);
typedef cudaError_t (*get_kernel_fn)(void **, const void *);

INGERO_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
					  const char *deviceName, int thread_limit, void *tid, void *bid,
					  void *bDim, void *gDim, int *wSize)
{
	register_fn fn = (register_fn)INGERO_REAL(real_register, "__cudaRegisterFunction", INGERO_LIBCUDART);
	const char *name = deviceName ? deviceName : deviceFun;
	if (hostFun && name)
		ingero_kv_put(&stub_names, (uint64_t)(uintptr_t)hostFun, (uint64_t)(uintptr_t)name);
	if (fn)
		fn(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize);
}

static cudaError_t note_kernel(cudaError_t r, void **kernel, const void *func)
{
	if (r == 0 && kernel && *kernel && func)
		ingero_kv_put(&handle_stubs, (uint64_t)(uintptr_t)*kernel, (uint64_t)(uintptr_t)func);
	return r;
}

INGERO_EXPORT cudaError_t __cudaGetKernel(void **kernel, const void *func)
{
	get_kernel_fn fn = (get_kernel_fn)INGERO_REAL(real_get_kernel, "__cudaGetKernel", INGERO_LIBCUDART);
	if (!fn)
		return CUDART_ERROR_NO_SYMBOL;
	return note_kernel(fn(kernel, func), kernel, func);
}

INGERO_EXPORT cudaError_t cudaGetKernel(void **kernel, const void *func)
{
	get_kernel_fn fn = (get_kernel_fn)INGERO_REAL(real_cuda_get_kernel, "cudaGetKernel", INGERO_LIBCUDART);
	if (!fn)
		return CUDART_ERROR_NO_SYMBOL;
	return note_kernel(fn(kernel, func), kernel, func);
}

const char *ingero_kernel_registered_name(uint64_t addr, int is_handle)
{
	uint64_t stub = is_handle ? ingero_kv_get(&handle_stubs, addr) : addr;
	if (!stub)
		return NULL;
	return (const char *)(uintptr_t)ingero_kv_get(&stub_names, stub);
}
