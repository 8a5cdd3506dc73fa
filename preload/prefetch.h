/*
 * prefetch.h — fetching a line the hot path will write, ahead of time.
 *
 * __builtin_prefetch(p, 1, ...) becomes a plain prefetcht0 for the
 * x86-64 baseline the library is built for (it needs -mprfchw to say
 * "for writing"): the line then comes in shared, and where another thread
 * read it since (the sender its lane's tail and units, the GPU watcher a
 * stream's slot) the store still has to take it over when it comes — a
 * miss that the program's next locked instruction (PyTorch's reference
 * counts) waits for.  PREFETCHW asks for it owned.  Every x86-64 CPU
 * decodes it: Intel's before Broadwell as a no-op.
 */
#ifndef INGERO_PRELOAD_PREFETCH_H
#define INGERO_PRELOAD_PREFETCH_H

static inline __attribute__((always_inline)) void ingero_prefetch_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#endif
