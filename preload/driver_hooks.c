/*
 * driver_hooks.c — wrappers of libcuda entry points (launches from cuBLAS
 * and cuBLASLt, driver copies, syncs, allocations) and the table that
 * cuGetProcAddress and dlsym use to hand them out (driver_procaddr.c).
 *
 * Each wrapper is also exported under the driver's own symbol name, so a
 * program that links libcuda and calls it directly is traced too.  The
 * real function is whatever the driver returned when our wrapper was
 * handed out (or, for direct calls, the next definition of the symbol).
 */
#include "driver_hooks.h"

#include "gpu_marks.h"
#include "pinned.h"

/* DRVX: a wrapper whose forwarding expression is CALL (using fn_ and the
 * parameters, ARGS their names); DRV: the common case, forwarding ARGS
 * unchanged; DRV_HOT: a launch's, with the per-launch path (INGERO_HOT_AT:
 * the entry at KEY, its out-of-line half at KEY_OUTER).
 * A nested call (a runtime call's own driver call: every launch of a
 * runtime kernel) is forwarded before this function has a frame, as a
 * tail call; the rest — the real function still to be found, a paused
 * call, a recorded one — is out of line, in sym_outer, which records with
 * REC (HOOK_RECORD; HOOK_RECORD_LAUNCH for a launch: its record is a lane unit). */
#define DRV_OUTER_(ATTR_OUTER, REC, sym, API, PARAMS, CALL, FILL, KIND)                        \
	_Atomic(void *) ingero_drv_real_##sym;                                                 \
	static ATTR_OUTER CUresult sym##_outer PARAMS                                          \
	{                                                                                      \
		CUresult(*fn_) PARAMS =                                                        \
			(CUresult(*) PARAMS)INGERO_REAL(ingero_drv_real_##sym, #sym, INGERO_LIBCUDA); \
		HOOK_FORWARD(CALL, CU_ERROR_NO_SYMBOL);                                        \
		REC(API, CALL, FILL, KIND);                                                    \
	}
#define DRVX_(ATTR, ATTR_OUTER, REC, sym, API, PARAMS, ARGS, CALL, FILL, KIND)                 \
	DRV_OUTER_(__attribute__((noinline)) ATTR_OUTER, REC, sym, API, PARAMS, CALL, FILL, KIND) \
	INGERO_EXPORT ATTR CUresult sym PARAMS                                                 \
	{                                                                                      \
		CUresult(*fn_) PARAMS = (CUresult(*) PARAMS)atomic_load_explicit(              \
			&ingero_drv_real_##sym, memory_order_acquire);                          \
		if (__builtin_expect(fn_ != NULL, 1) && ingero_nested())                       \
			return (CALL);                                                         \
		return sym##_outer ARGS;                                                       \
	}
/* A function that is its asm alone: whatever a build adds to a function's
 * entry (profiling, instrumentation, a stack guard) would run before the
 * jump with the caller's arguments live, so it is refused here. */
#ifndef __has_attribute
#define __has_attribute(x) 0
#endif
#if __has_attribute(no_stack_protector)
#define INGERO_NO_GUARD_ __attribute__((no_stack_protector))
#else
#define INGERO_NO_GUARD_
#endif
#if __has_attribute(no_sanitize_coverage)
#define INGERO_NO_COVERAGE_ __attribute__((no_sanitize_coverage))
#else
#define INGERO_NO_COVERAGE_
#endif
#if __has_attribute(no_profile_instrument_function)
#define INGERO_NO_PROFILE_ __attribute__((no_profile_instrument_function))
#else
#define INGERO_NO_PROFILE_
#endif
#define INGERO_NAKED                                                                     \
	__attribute__((naked, no_instrument_function)) INGERO_NO_GUARD_ INGERO_NO_COVERAGE_ \
	INGERO_NO_PROFILE_

/* A launch entry of eleven arguments, five of them on the stack, whose
 * nested pass-through is the runtime's own driver call for every one of
 * PyTorch's kernels: GCC's C entry for it (DRVX_) loads the stack
 * arguments and stores them back before either tail call, 138 bytes over
 * three lines of code, where the check is a few instructions.  So its
 * entry is those instructions, on the stack as the caller left it: the
 * real function when it is known and the call is nested, else sym_outer
 * (which finds the real function, forwards or records). */
#define DRV_LAUNCH11(KEY, KEY_OUTER, sym, API, PARAMS, ARGS, FILL, KIND)                                   \
	/* (its outer half is called from the entry's asm alone: `used` keeps it, and its name) */   \
	DRV_OUTER_(__attribute__((used)) INGERO_HOT_AT(KEY_OUTER), HOOK_RECORD_LAUNCH, sym, API, PARAMS, \
		   fn_ ARGS, FILL, KIND)                                                                \
	_Pragma("GCC diagnostic push") /* (the parameters are the caller's, left where they are) */      \
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")                                       \
	INGERO_EXPORT INGERO_HOT_AT(KEY) INGERO_NAKED CUresult sym PARAMS                               \
	{                                                                                               \
		__asm__("mov ingero_drv_real_" #sym "@GOTPCREL(%rip), %rax\n\t"                        \
			"mov (%rax), %rax\n\t"                                                         \
			"test %rax, %rax\n\t"                                                          \
			"jz 1f\n\t"                                                                    \
			"mov ingero_tls@GOTTPOFF(%rip), %r11\n\t"                                      \
			"cmpl $0, %fs:(%r11)\n\t" /* ingero_tls.depth: nested */                      \
			"je 1f\n\t"                                                                    \
			"jmp *%rax\n"                                                                   \
			"1:\tjmp " #sym "_outer");                                                      \
	}                                                                                               \
	_Pragma("GCC diagnostic pop")
_Static_assert(offsetof(struct ingero_tls, depth) == 0 && sizeof(((struct ingero_tls *)0)->depth) == 4,
	       "DRV_LAUNCH11 reads the depth as the TLS block's first 32 bits");
#if !defined(__clang__) && __GNUC__ < 8
#error "DRV_LAUNCH11 needs __attribute__((naked)) on x86 (GCC 8 or later)"
#endif
#define DRVX(sym, API, PARAMS, ARGS, CALL, FILL, KIND) DRVX_(, , HOOK_RECORD, sym, API, PARAMS, ARGS, CALL, FILL, KIND)
#define DRV(sym, API, PARAMS, ARGS, FILL, KIND) DRVX_(, , HOOK_RECORD, sym, API, PARAMS, ARGS, fn_ ARGS, FILL, KIND)
#define DRV_HOT(KEY, KEY_OUTER, sym, API, PARAMS, ARGS, FILL, KIND)                                     \
	DRVX_(INGERO_HOT_AT(KEY), INGERO_HOT_AT(KEY_OUTER), HOOK_RECORD_LAUNCH, sym, API, PARAMS, ARGS, fn_ ARGS, FILL, KIND)

#define NOFILL (void)0
#define STREAM(s_) (ev_.stream = (uint64_t)(uintptr_t)(s_), ev_.flags |= INGERO_FLAG_ASYNC)
#define LAUNCH(f_, gx, gy, gz, bx, by, bz, s_)                                                  \
	(ev_.kernel = (uint64_t)(uintptr_t)(f_), STREAM(s_), ev_.grid[0] = (gx), ev_.grid[1] = (gy), \
	 ev_.grid[2] = (gz), ev_.block[0] = (bx), ev_.block[1] = (by), ev_.block[2] = (bz))
#define LAUNCH_EX(c_, f_)                                                                        \
	((c_) ? LAUNCH(f_, (c_)->gridDimX, (c_)->gridDimY, (c_)->gridDimZ, (c_)->blockDimX,      \
		       (c_)->blockDimY, (c_)->blockDimZ, (c_)->hStream)                          \
	      : (void)(ev_.kernel = (uint64_t)(uintptr_t)(f_)))
#define COPY(dir_, n_, host_) (ev_.dir = (dir_), ev_.bytes = (n_), ingero_fill_host(&ev_, (host_)))
#define COPY_DD(n_) (ev_.dir = INGERO_DIR_DTOD, ev_.bytes = (n_))
#define COPY_UVA(d_, s_, n_)                                                               \
	(ingero_fill_copy(&ev_, cudaMemcpyDefault, (void *)(uintptr_t)(d_), (void *)(uintptr_t)(s_)), \
	 ev_.bytes = (n_))

static int drv_pinned_alloc(int r, void **pp, size_t n)
{
	if (r == 0 && pp)
		ingero_pinned_add(*pp, n);
	return r;
}

static int drv_pinned_free(int r, void *p)
{
	if (r == 0)
		ingero_pinned_remove(p);
	return r;
}

static void fill_2d(struct ingero_cuda_call *ev, const CUDA_MEMCPY2D *c)
{
	if (!c)
		return;
	ev->bytes = (uint64_t)c->WidthInBytes * c->Height;
	int s = c->srcMemoryType, d = c->dstMemoryType;
	if (s == CU_MEMORYTYPE_HOST && d == CU_MEMORYTYPE_HOST) {
		ev->dir = INGERO_DIR_HTOH;
		ingero_fill_host(ev, c->srcHost);
	} else if (s == CU_MEMORYTYPE_HOST) {
		ev->dir = INGERO_DIR_HTOD;
		ingero_fill_host(ev, c->srcHost);
	} else if (d == CU_MEMORYTYPE_HOST) {
		ev->dir = INGERO_DIR_DTOH;
		ingero_fill_host(ev, c->dstHost);
	} else if (s == CU_MEMORYTYPE_UNIFIED || d == CU_MEMORYTYPE_UNIFIED) {
		ev->dir = INGERO_DIR_DEFAULT;
	} else {
		ev->dir = INGERO_DIR_DTOD;
	}
}

/* --- launches ------------------------------------------------------------------ */
#define LAUNCH_PARAMS                                                                         \
	(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,     \
	 unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params, void **extra)
#define LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shmem, s, params, extra)
/* (its entry, which every launch passes through, in the page the runtime's
 * __cudaLaunchKernel starts; its recording half right after that page) */
DRV_LAUNCH11(11, 14, cuLaunchKernel, INGERO_API_CU_LAUNCH_KERNEL, LAUNCH_PARAMS, LAUNCH_ARGS,
    LAUNCH(f, gx, gy, gz, bx, by, bz, s), INGERO_KERNEL_CUFUNC)
DRV_LAUNCH11(40, 41, cuLaunchKernel_ptsz, INGERO_API_CU_LAUNCH_KERNEL_PTSZ, LAUNCH_PARAMS, LAUNCH_ARGS,
    LAUNCH(f, gx, gy, gz, bx, by, bz, s), INGERO_KERNEL_CUFUNC)
DRV_HOT(20, 21, cuLaunchKernelEx, INGERO_API_CU_LAUNCH_KERNEL_EX,
    (const CUlaunchConfig *c, CUfunction f, void **params, void **extra), (c, f, params, extra),
    LAUNCH_EX(c, f), INGERO_KERNEL_CUFUNC)
DRV_HOT(42, 43, cuLaunchKernelEx_ptsz, INGERO_API_CU_LAUNCH_KERNEL_EX_PTSZ,
    (const CUlaunchConfig *c, CUfunction f, void **params, void **extra), (c, f, params, extra),
    LAUNCH_EX(c, f), INGERO_KERNEL_CUFUNC)
DRV_HOT(44, 45, cuGraphLaunch, INGERO_API_CU_GRAPH_LAUNCH, (CUgraphExec g, CUstream s), (g, s), STREAM(s),
    INGERO_KERNEL_NONE)
DRV_HOT(46, 47, cuGraphLaunch_ptsz, INGERO_API_CU_GRAPH_LAUNCH_PTSZ, (CUgraphExec g, CUstream s), (g, s),
    STREAM(s), INGERO_KERNEL_NONE)

/* --- waits ------------------------------------------------------------------------- */
DRV(cuStreamSynchronize, INGERO_API_CU_STREAM_SYNCHRONIZE, (CUstream s), (s),
    (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuStreamSynchronize_ptsz, INGERO_API_CU_STREAM_SYNCHRONIZE_PTSZ, (CUstream s), (s),
    (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuCtxSynchronize, INGERO_API_CU_CTX_SYNCHRONIZE, (void), (), NOFILL, INGERO_KERNEL_NONE)
DRV(cuEventSynchronize, INGERO_API_CU_EVENT_SYNCHRONIZE, (CUevent e), (e), NOFILL,
    INGERO_KERNEL_NONE)
DRV(cuStreamWaitEvent, INGERO_API_CU_STREAM_WAIT_EVENT, (CUstream s, CUevent e, unsigned int fl),
    (s, e, fl), STREAM(s), INGERO_KERNEL_NONE)
DRV(cuStreamWaitEvent_ptsz, INGERO_API_CU_STREAM_WAIT_EVENT_PTSZ,
    (CUstream s, CUevent e, unsigned int fl), (s, e, fl), STREAM(s), INGERO_KERNEL_NONE)

/* --- copies and memsets ------------------------------------------------------------ */
DRV(cuMemcpy, INGERO_API_CU_MEMCPY, (CUdeviceptr d, CUdeviceptr sr, size_t n), (d, sr, n),
    COPY_UVA(d, sr, n), INGERO_KERNEL_NONE)
DRV(cuMemcpy_ptds, INGERO_API_CU_MEMCPY_PTDS, (CUdeviceptr d, CUdeviceptr sr, size_t n), (d, sr, n),
    COPY_UVA(d, sr, n), INGERO_KERNEL_NONE)
DRV(cuMemcpyAsync, INGERO_API_CU_MEMCPY_ASYNC, (CUdeviceptr d, CUdeviceptr sr, size_t n, CUstream s),
    (d, sr, n, s), (COPY_UVA(d, sr, n), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpyAsync_ptsz, INGERO_API_CU_MEMCPY_ASYNC_PTSZ,
    (CUdeviceptr d, CUdeviceptr sr, size_t n, CUstream s), (d, sr, n, s), (COPY_UVA(d, sr, n), STREAM(s)),
    INGERO_KERNEL_NONE)
DRV(cuMemcpyHtoD_v2, INGERO_API_CU_MEMCPY_HTOD_V2, (CUdeviceptr d, const void *h, size_t n), (d, h, n),
    COPY(INGERO_DIR_HTOD, n, h), INGERO_KERNEL_NONE)
DRV(cuMemcpyHtoD_v2_ptds, INGERO_API_CU_MEMCPY_HTOD_V2_PTDS, (CUdeviceptr d, const void *h, size_t n),
    (d, h, n), COPY(INGERO_DIR_HTOD, n, h), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoH_v2, INGERO_API_CU_MEMCPY_DTOH_V2, (void *h, CUdeviceptr d, size_t n), (h, d, n),
    COPY(INGERO_DIR_DTOH, n, h), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoH_v2_ptds, INGERO_API_CU_MEMCPY_DTOH_V2_PTDS, (void *h, CUdeviceptr d, size_t n),
    (h, d, n), COPY(INGERO_DIR_DTOH, n, h), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoD_v2, INGERO_API_CU_MEMCPY_DTOD_V2, (CUdeviceptr d, CUdeviceptr sr, size_t n),
    (d, sr, n), COPY_DD(n), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoD_v2_ptds, INGERO_API_CU_MEMCPY_DTOD_V2_PTDS, (CUdeviceptr d, CUdeviceptr sr, size_t n),
    (d, sr, n), COPY_DD(n), INGERO_KERNEL_NONE)
DRV(cuMemcpyHtoDAsync_v2, INGERO_API_CU_MEMCPY_HTOD_ASYNC_V2,
    (CUdeviceptr d, const void *h, size_t n, CUstream s), (d, h, n, s),
    (COPY(INGERO_DIR_HTOD, n, h), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpyHtoDAsync_v2_ptsz, INGERO_API_CU_MEMCPY_HTOD_ASYNC_V2_PTSZ,
    (CUdeviceptr d, const void *h, size_t n, CUstream s), (d, h, n, s),
    (COPY(INGERO_DIR_HTOD, n, h), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoHAsync_v2, INGERO_API_CU_MEMCPY_DTOH_ASYNC_V2,
    (void *h, CUdeviceptr d, size_t n, CUstream s), (h, d, n, s),
    (COPY(INGERO_DIR_DTOH, n, h), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoHAsync_v2_ptsz, INGERO_API_CU_MEMCPY_DTOH_ASYNC_V2_PTSZ,
    (void *h, CUdeviceptr d, size_t n, CUstream s), (h, d, n, s),
    (COPY(INGERO_DIR_DTOH, n, h), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoDAsync_v2, INGERO_API_CU_MEMCPY_DTOD_ASYNC_V2,
    (CUdeviceptr d, CUdeviceptr sr, size_t n, CUstream s), (d, sr, n, s), (COPY_DD(n), STREAM(s)),
    INGERO_KERNEL_NONE)
DRV(cuMemcpyDtoDAsync_v2_ptsz, INGERO_API_CU_MEMCPY_DTOD_ASYNC_V2_PTSZ,
    (CUdeviceptr d, CUdeviceptr sr, size_t n, CUstream s), (d, sr, n, s), (COPY_DD(n), STREAM(s)),
    INGERO_KERNEL_NONE)
DRV(cuMemcpy2DAsync_v2, INGERO_API_CU_MEMCPY_2D_ASYNC_V2, (const CUDA_MEMCPY2D *c, CUstream s), (c, s),
    (fill_2d(&ev_, c), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemcpy2DAsync_v2_ptsz, INGERO_API_CU_MEMCPY_2D_ASYNC_V2_PTSZ, (const CUDA_MEMCPY2D *c, CUstream s),
    (c, s), (fill_2d(&ev_, c), STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemsetD8Async, INGERO_API_CU_MEMSET_D8_ASYNC,
    (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s),
    (ev_.bytes = n, STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemsetD8Async_ptsz, INGERO_API_CU_MEMSET_D8_ASYNC_PTSZ,
    (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s),
    (ev_.bytes = n, STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemsetD32Async, INGERO_API_CU_MEMSET_D32_ASYNC,
    (CUdeviceptr d, unsigned int v, size_t n, CUstream s), (d, v, n, s),
    (ev_.bytes = (uint64_t)n * 4, STREAM(s)), INGERO_KERNEL_NONE)
DRV(cuMemsetD32Async_ptsz, INGERO_API_CU_MEMSET_D32_ASYNC_PTSZ,
    (CUdeviceptr d, unsigned int v, size_t n, CUstream s), (d, v, n, s),
    (ev_.bytes = (uint64_t)n * 4, STREAM(s)), INGERO_KERNEL_NONE)

/* --- allocations ------------------------------------------------------------------- */
DRV(cuMemAlloc_v2, INGERO_API_CU_MEM_ALLOC_V2, (CUdeviceptr *p, size_t n), (p, n), (ev_.bytes = n),
    INGERO_KERNEL_NONE)
DRV(cuMemFree_v2, INGERO_API_CU_MEM_FREE_V2, (CUdeviceptr p), (p), NULL_FREE_FILL(p), INGERO_KERNEL_NONE)
DRV(cuMemAllocAsync, INGERO_API_CU_MEM_ALLOC_ASYNC, (CUdeviceptr *p, size_t n, CUstream s), (p, n, s),
    (ev_.bytes = n, ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuMemAllocAsync_ptsz, INGERO_API_CU_MEM_ALLOC_ASYNC_PTSZ, (CUdeviceptr *p, size_t n, CUstream s),
    (p, n, s), (ev_.bytes = n, ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuMemFreeAsync, INGERO_API_CU_MEM_FREE_ASYNC, (CUdeviceptr p, CUstream s), (p, s),
    (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuMemFreeAsync_ptsz, INGERO_API_CU_MEM_FREE_ASYNC_PTSZ, (CUdeviceptr p, CUstream s), (p, s),
    (ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuMemAllocFromPoolAsync, INGERO_API_CU_MEM_ALLOC_FROM_POOL_ASYNC,
    (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s),
    (ev_.bytes = n, ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRV(cuMemAllocFromPoolAsync_ptsz, INGERO_API_CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ,
    (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s),
    (ev_.bytes = n, ev_.stream = (uint64_t)(uintptr_t)s), INGERO_KERNEL_NONE)
DRVX(cuMemAllocHost_v2, INGERO_API_CU_MEM_ALLOC_HOST_V2, (void **pp, size_t n), (pp, n),
     drv_pinned_alloc(fn_(pp, n), pp, n), (ev_.bytes = n), INGERO_KERNEL_NONE)
DRVX(cuMemHostAlloc, INGERO_API_CU_MEM_HOST_ALLOC, (void **pp, size_t n, unsigned int fl), (pp, n, fl),
     drv_pinned_alloc(fn_(pp, n, fl), pp, n), (ev_.bytes = n), INGERO_KERNEL_NONE)
DRVX(cuMemHostRegister_v2, INGERO_API_CU_MEM_HOST_REGISTER_V2, (void *p, size_t n, unsigned int fl),
     (p, n, fl), drv_pinned_alloc(fn_(p, n, fl), &p, n), (ev_.bytes = n), INGERO_KERNEL_NONE)
DRVX(cuMemFreeHost, INGERO_API_CU_MEM_FREE_HOST, (void *p), (p), drv_pinned_free(fn_(p), p), NULL_FREE_FILL(p),
     INGERO_KERNEL_NONE)
DRVX(cuMemHostUnregister, INGERO_API_CU_MEM_HOST_UNREGISTER, (void *p), (p), drv_pinned_free(fn_(p), p),
     NOFILL, INGERO_KERNEL_NONE)

/* --- stream lifetime -------------------------------------------------------------------
 * Not a recorded call: a destroyed stream must leave the GPU marks' table
 * first, so the watcher never records into a handle that is gone. */
_Atomic(void *) ingero_drv_real_cuStreamDestroy_v2;
INGERO_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	CUresult (*fn)(CUstream) =
		(CUresult(*)(CUstream))INGERO_REAL(ingero_drv_real_cuStreamDestroy_v2, "cuStreamDestroy_v2",
						   INGERO_LIBCUDA);
	if (!fn)
		return CU_ERROR_NO_SYMBOL;
	ingero_gpu_forget((uint64_t)(uintptr_t)s);
	return fn(s);
}

/* --- the table ------------------------------------------------------------------------ */
#define ROW_X(b, s, p, v) { #b, #s, #p, v, (void *)s, (void *)p, &ingero_drv_real_##s, &ingero_drv_real_##p },
#define ROW_N(b, s, v) { #b, #s, NULL, v, (void *)s, NULL, &ingero_drv_real_##s, NULL },
const struct ingero_drv_entry ingero_drv_table[] = { INGERO_DRV_HOOKS(ROW_X, ROW_N) };
const unsigned ingero_drv_count = sizeof ingero_drv_table / sizeof ingero_drv_table[0];
