/*
 * real.h — reaching the real CUDA functions behind our wrappers, and the
 * real dlsym behind our dlsym.
 */
#ifndef INGERO_PRELOAD_REAL_H
#define INGERO_PRELOAD_REAL_H

#include <stdatomic.h>

#define INGERO_LIBCUDART "libcudart.so.13"
#define INGERO_LIBCUDA "libcuda.so.1"

/* glibc's dlsym, whatever interposes it (us). */
void *ingero_real_dlsym(void *handle, const char *name);

/* The real definition of name in lib (RTLD_NEXT, else the loaded lib by
 * soname), cached in *slot.  NULL if there is none. */
void *ingero_real_resolve(_Atomic(void *) *slot, const char *name, const char *lib);

#define INGERO_REAL(slot, name, lib)                                              \
	({                                                                        \
		void *p_ = atomic_load_explicit(&(slot), memory_order_acquire);   \
		if (__builtin_expect(!p_, 0))                                     \
			p_ = ingero_real_resolve(&(slot), (name), (lib));         \
		p_;                                                               \
	})

#endif
