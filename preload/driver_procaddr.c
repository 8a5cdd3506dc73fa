/*
 * driver_procaddr.c — handing out wrapped driver entry points.
 *
 * cuBLAS, cuBLASLt and the runtime itself never bind driver symbols: they
 * ask cuGetProcAddress (or the runtime's cudaGetDriverEntryPoint) for a
 * pointer by base name, CUDA version and stream flavour.  Our
 * cuGetProcAddress(_v2) asks the real one, and when the answer is a
 * function we trace (driver_hooks.h), returns our wrapper instead and
 * remembers the real pointer for it.  The runtime reaches
 * cuGetProcAddress_v2 itself through dlsym on libcuda's handle, which our
 * dlsym answers (dlsym_hook.c) with the wrapper below.
 */
#include <string.h>

#include "driver_hooks.h"

#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1 << 1)

typedef CUresult (*procaddr_v2_fn)(const char *, void **, int, cuuint64_t, int *);
typedef CUresult (*procaddr_v1_fn)(const char *, void **, int, cuuint64_t);

INGERO_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
					   cuuint64_t flags, int *status);
INGERO_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

static _Atomic(void *) real_v2, real_v1;

int ingero_is_drv_wrapper(const void *p)
{
	if (p == (void *)cuGetProcAddress_v2 || p == (void *)cuGetProcAddress)
		return 1;
	for (unsigned i = 0; i < ingero_drv_count; i++)
		if (p == ingero_drv_table[i].wrap || (p && p == ingero_drv_table[i].wrap_pt))
			return 1;
	return 0;
}

/* Stores the real pointer behind a wrapper (the first one found wins: every
 * request for the same entry point returns the same function). */
static void *hand_out(void *wrap, _Atomic(void *) *slot, void *real)
{
	void *none = NULL;
	atomic_compare_exchange_strong(slot, &none, real);
	return wrap;
}

void *ingero_drv_wrap(const char *name, void *real, int version, int per_thread)
{
	if (!real || !name || ingero_is_drv_wrapper(real))
		return real;
	if (per_thread < 0) {   /* dlsym: an exact symbol name */
		if (strcmp(name, "cuGetProcAddress_v2") == 0)
			return hand_out((void *)cuGetProcAddress_v2, &real_v2, real);
		if (strcmp(name, "cuGetProcAddress") == 0)
			return hand_out((void *)cuGetProcAddress, &real_v1, real);
		for (unsigned i = 0; i < ingero_drv_count; i++) {
			const struct ingero_drv_entry *e = &ingero_drv_table[i];
			if (strcmp(name, e->sym) == 0)
				return hand_out(e->wrap, e->real, real);
			if (e->sym_pt && strcmp(name, e->sym_pt) == 0)
				return hand_out(e->wrap_pt, e->real_pt, real);
		}
		return real;
	}
	/* cuGetProcAddress: a base name, a version (0: the newest), a flavour */
	if (strcmp(name, "cuGetProcAddress") == 0) {
		if (version == 0 || version >= 12000)
			return hand_out((void *)cuGetProcAddress_v2, &real_v2, real);
		return hand_out((void *)cuGetProcAddress, &real_v1, real);
	}
	for (unsigned i = 0; i < ingero_drv_count; i++) {
		const struct ingero_drv_entry *e = &ingero_drv_table[i];
		if (strcmp(name, e->base) != 0)
			continue;
		if (version != 0 && version < e->min_version)
			return real;   /* an older ABI than our wrapper's */
		if (per_thread && e->sym_pt)
			return hand_out(e->wrap_pt, e->real_pt, real);
		return hand_out(e->wrap, e->real, real);
	}
	return real;
}

void *ingero_real_drv_proc(const char *name, int version)
{
	procaddr_v2_fn fn = (procaddr_v2_fn)INGERO_REAL(real_v2, "cuGetProcAddress_v2", INGERO_LIBCUDA);
	void *p = NULL;
	int status = 0;
	if (!fn || fn(name, &p, version, 0, &status) != 0)
		return NULL;
	return p;
}

INGERO_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
					   cuuint64_t flags, int *status)
{
	procaddr_v2_fn fn = (procaddr_v2_fn)INGERO_REAL(real_v2, "cuGetProcAddress_v2", INGERO_LIBCUDA);
	if (!fn)
		return CU_ERROR_NO_SYMBOL;
	CUresult r = fn(symbol, pfn, version, flags, status);
	if (r == 0 && pfn && *pfn && ingero_hot.on)
		*pfn = ingero_drv_wrap(symbol, *pfn, version,
				       (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
	return r;
}

INGERO_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	procaddr_v1_fn fn = (procaddr_v1_fn)INGERO_REAL(real_v1, "cuGetProcAddress", INGERO_LIBCUDA);
	if (!fn)
		return CU_ERROR_NO_SYMBOL;
	CUresult r = fn(symbol, pfn, version, flags);
	if (r == 0 && pfn && *pfn && ingero_hot.on)
		*pfn = ingero_drv_wrap(symbol, *pfn, version,
				       (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
	return r;
}
