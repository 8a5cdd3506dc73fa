/*
 * mechanisms.h — what a sampled stack was doing, by mechanism rather than
 * by line: CPython's cyclic garbage collector, the allocator, filling new
 * memory (the first touch of a page faults it in and zeroes it), copying
 * memory, pickling, importing, OpenMP/BLAS threads spinning, lock waits.
 * The fix depends on the mechanism (gc.freeze(), reuse a buffer, shared
 * memory, fewer threads), not on the line that happened to run it.  Each
 * is recognised by the frames CPython, glibc, libgomp and OpenBLAS name
 * alike on every machine; the innermost native frame that matches decides,
 * else a Python frame.
 */
#ifndef IA_MECHANISMS_H
#define IA_MECHANISMS_H

enum ia_mech {
	IA_MECH_NONE,
	IA_MECH_GC,         /* CPython's cyclic garbage collector */
	IA_MECH_ALLOC,      /* malloc/free, mmap/munmap: the allocator */
	IA_MECH_FILL,       /* memset of new memory: page faults and zeroing on first touch */
	IA_MECH_COPY,       /* memcpy/memmove */
	IA_MECH_PICKLE,     /* pickling / unpickling (multiprocessing queues, torch.load) */
	IA_MECH_IMPORT,     /* importing modules */
	IA_MECH_SPIN,       /* OpenMP / BLAS threads spinning or waiting at a barrier */
	IA_MECH_LOCK,       /* lock waits and spinning */
	IA_MECH_N
};

enum ia_mech ia_native_frame_mech(const char *sym, const char *module);
enum ia_mech ia_python_frame_mech(const char *file, const char *func);
/* "CPython's cyclic garbage collector", ... */
const char *ia_mech_name(enum ia_mech m);
/* The fix that fits the mechanism; NULL where the line's own fix is the one. */
const char *ia_mech_fix(enum ia_mech m);

#endif
