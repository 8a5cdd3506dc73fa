/*
 * real.c — finding the real CUDA functions our wrappers forward to.
 *
 * First dlsym(RTLD_NEXT): the definition after ours in the global search
 * order, which is the libcudart / libcuda the program linked.  When the
 * library was loaded RTLD_LOCAL (dlopen by an extension module or by
 * ctypes), it is not in the global scope; then the already loaded library
 * is found by soname with RTLD_NOLOAD (never loading anything new).
 * Resolution happens once per function, on its first call, and races are
 * harmless: every thread stores the same pointer.
 *
 * We call glibc's dlsym through a pointer obtained with dlvsym, because our
 * own dlsym (dlsym_hook.c) interposes the exported one.
 */
#include "real.h"

#include <dlfcn.h>
#include <stddef.h>

static _Atomic(void *) real_dlsym_fn;

/* Also called by the dlsym trampoline (dlsym_hook.c) before first use. */
void *ingero_real_dlsym_ptr(void)
{
	void *p = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
	if (p)
		return p;
	p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	atomic_store_explicit(&real_dlsym_fn, p, memory_order_release);
	return p;
}

void *ingero_real_dlsym(void *handle, const char *name)
{
	void *(*fn)(void *, const char *) = (void *(*)(void *, const char *))ingero_real_dlsym_ptr();
	return fn ? fn(handle, name) : NULL;
}

void *ingero_real_resolve(_Atomic(void *) *slot, const char *name, const char *lib)
{
	void *p = ingero_real_dlsym(RTLD_NEXT, name);
	if (!p && lib) {
		void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			p = ingero_real_dlsym(h, name);
			dlclose(h);
		}
	}
	if (p) {
		void *none = NULL;
		if (!atomic_compare_exchange_strong(slot, &none, p))
			p = none;   /* someone stored first (maybe from a dlsym look-up): use theirs */
	}
	return p;
}
