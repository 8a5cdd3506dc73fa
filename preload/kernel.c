/*
 * kernel.c — the first launch of a function by a process puts one KERNEL
 * record into the ring.  Runtime launches are named from what the CUDA
 * libraries registered (kernel_names.c); driver handles (CUfunction,
 * CUkernel) by the real driver (cuFuncGetName / cuKernelGetName), which
 * only looks the name up; what is left, by the sender from the program's
 * symbols.
 * The look-ups go straight to the real functions, so they are not recorded.
 */
#include "kernel.h"

#include <string.h>

#include "gpu_marks.h"
#include "intern.h"
#include "real.h"

typedef int (*get_name_fn)(const char **name, void *handle);

static _Atomic(void *) real_cuFuncGetName, real_cuKernelGetName, real_cudaFuncGetName;

const char *ingero_kernel_registered_name(uint64_t addr, int is_handle);

static const char *name_of(uint64_t addr, enum ingero_kernel_kind kind)
{
	const char *name = NULL;
	if (kind != INGERO_KERNEL_CUFUNC) {
		name = ingero_kernel_registered_name(addr, kind == INGERO_KERNEL_CUKERNEL);
		if (name)
			return name;
	}
	get_name_fn fn = NULL;
	if (kind == INGERO_KERNEL_CUFUNC)
		fn = (get_name_fn)INGERO_REAL(real_cuFuncGetName, "cuFuncGetName", INGERO_LIBCUDA);
	else if (kind == INGERO_KERNEL_CUKERNEL)
		fn = (get_name_fn)INGERO_REAL(real_cuKernelGetName, "cuKernelGetName", INGERO_LIBCUDA);
	if (fn && fn(&name, (void *)(uintptr_t)addr) == 0 && name)
		return name;
	if (kind == INGERO_KERNEL_CUFUNC) {
		/* cuBLAS launches library kernels (CUkernel) through cuLaunchKernel */
		fn = (get_name_fn)INGERO_REAL(real_cuKernelGetName, "cuKernelGetName", INGERO_LIBCUDA);
		name = NULL;
		if (fn && fn(&name, (void *)(uintptr_t)addr) == 0 && name)
			return name;
	} else {
		/* cudaFuncGetName takes host stubs and (CUDA 13) kernel handles */
		fn = (get_name_fn)INGERO_REAL(real_cudaFuncGetName, "cudaFuncGetName", INGERO_LIBCUDART);
		name = NULL;
		if (fn && fn(&name, (void *)(uintptr_t)addr) == 0 && name)
			return name;
	}
	return NULL;
}

/* Out of line: its record with room for a name is a kilobyte of stack,
 * which the every-launch check (kernel.h) must not reserve (each call
 * would touch a fresh stack line for it). */
void ingero_kernel_name(uint64_t addr, enum ingero_kernel_kind kind, uint32_t pid)
{
	union {
		struct rrec_kernel k;
		char bytes[sizeof(struct rrec_kernel) + INGERO_KERNEL_NAME_MAX];
	} u;
	const char *name = name_of(addr, kind);
	size_t len = name ? strnlen(name, INGERO_KERNEL_NAME_MAX) : 0;
	u.k.h.type = INGERO_RREC_KERNEL;
	u.k.h.flags = (uint8_t)kind;
	u.k.h.pad = 0;
	u.k.h.pid = pid;
	u.k.addr = addr;
	u.k.name_len = (uint16_t)len;
	if (len)
		memcpy(u.k.name, name, len);
	if (ingero_put(u.bytes, (uint32_t)(sizeof u.k + len), false) &&
	    ingero_set_add(&ingero_kernels_put, addr) == 1)
		ingero_gpu_fresh_add(addr);   /* new: time its first launches */
}
