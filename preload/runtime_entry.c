/*
 * runtime_entry.c — cudaGetDriverEntryPoint(ByVersion)(_ptsz): the
 * runtime's way of handing a program a driver function.  The runtime
 * usually answers through the driver's cuGetProcAddress, which already
 * returns our wrappers; wrapping again here covers a runtime that does
 * not, and is idempotent (a wrapper is never wrapped twice).
 */
#include "runtime_hooks.h"

#define cudaEnablePerThreadDefaultStream 0x2

typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long, int *);
typedef cudaError_t (*entry_ver_fn)(const char *, void **, unsigned int, unsigned long long, int *);

static cudaError_t wrap_result(cudaError_t r, const char *symbol, void **fn, int version, int pt)
{
	if (r == 0 && fn && *fn && ingero_hot.on)
		*fn = ingero_drv_wrap(symbol, *fn, version, pt);
	return r;
}

INGERO_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn,
						  unsigned long long flags, int *status)
{
	entry_fn real = (entry_fn)RT_REAL(cudaGetDriverEntryPoint);
	if (!real)
		return CUDART_ERROR_NO_SYMBOL;
	return wrap_result(real(symbol, fn, flags, status), symbol, fn, 0,
			   (flags & cudaEnablePerThreadDefaultStream) != 0);
}

INGERO_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn,
						       unsigned long long flags, int *status)
{
	entry_fn real = (entry_fn)RT_REAL(cudaGetDriverEntryPoint_ptsz);
	if (!real)
		return CUDART_ERROR_NO_SYMBOL;
	/* the _ptsz entry is what code built for per-thread default streams calls */
	return wrap_result(real(symbol, fn, flags, status), symbol, fn, 0,
			   flags == 0 || (flags & cudaEnablePerThreadDefaultStream) != 0);
}

INGERO_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn,
							   unsigned int version,
							   unsigned long long flags, int *status)
{
	entry_ver_fn real = (entry_ver_fn)RT_REAL(cudaGetDriverEntryPointByVersion);
	if (!real)
		return CUDART_ERROR_NO_SYMBOL;
	return wrap_result(real(symbol, fn, version, flags, status), symbol, fn, (int)version,
			   (flags & cudaEnablePerThreadDefaultStream) != 0);
}

INGERO_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn,
								unsigned int version,
								unsigned long long flags, int *status)
{
	entry_ver_fn real = (entry_ver_fn)RT_REAL(cudaGetDriverEntryPointByVersion_ptsz);
	if (!real)
		return CUDART_ERROR_NO_SYMBOL;
	return wrap_result(real(symbol, fn, version, flags, status), symbol, fn, (int)version,
			   flags == 0 || (flags & cudaEnablePerThreadDefaultStream) != 0);
}
