/*
 * mechanisms.h — what a sampled stack was doing, by mechanism rather than
 * by line: CPython's cyclic garbage collector, the allocator, filling new
 * memory (the first touch of a page faults it in and zeroes it), copying
 * memory, pickling, importing, OpenMP/BLAS threads spinning, lock waits.
 * The fix depends on the mechanism (gc.freeze(), reuse a buffer, shared
 * memory, fewer threads), not on the line that happened to run it.  Each
 * is recognised by the frames CPython, glibc, libgomp and OpenBLAS name
 * alike on every machine; the innermost frame that matches decides, the
 * kernel's first (a page fault inside a memset is the fault), then the
 * native ones, then Python's — except the collector's own frame for a
 * thread CPython says is collecting ("<gc>"), which names the collector
 * whatever runs under it.
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
	IA_MECH_FAULT,      /* the kernel faulting in (and zeroing) fresh anonymous pages */
	IA_MECH_PAGECACHE,  /* file data through the page cache (a file-backed fault, a read copy) */
	IA_MECH_PYCONVERT,  /* torch.tensor over Python lists: element by element */
	IA_MECH_CPU_MATMUL, /* matrix multiplies on the CPU: BLAS / oneDNN GEMM kernels (a model left there) */
	IA_MECH_DECODE,     /* decoding images on the CPU: libjpeg, libpng, PIL's decoders, OpenCV's imgcodecs */
	IA_MECH_N
};

enum ia_mech ia_native_frame_mech(const char *sym, const char *module);
enum ia_mech ia_python_frame_mech(const char *file, const char *func);
/* The Python frame the collector gives a sample of a thread that runs the
 * cyclic garbage collector ("<gc>", "garbage collection": docs/schema.md),
 * not a line of code; it names IA_MECH_GC over any other frame. */
int ia_is_gc_frame(const char *file, const char *func);
/* A kernel frame of an on-CPU sample (the samples carry the kernel's
 * stack): page faults of new memory, unmapping (the allocator's), the page
 * cache; IA_MECH_NONE for the rest (a system call's own work). */
enum ia_mech ia_kernel_frame_mech(const char *sym);
/* The mechanisms whose fix is the same are one family, named by its first:
 * fresh memory (the allocator, filling new memory, faulting it in: reuse
 * the buffer) is IA_MECH_FAULT's; Python objects as batch data (pickling
 * them between processes, converting lists to tensors: build tensors or
 * arrays instead) IA_MECH_PICKLE's; every other mechanism its own. */
enum ia_mech ia_mech_family(enum ia_mech m);
/* "fresh memory", "Python objects as batch data", else ia_mech_name(m) */
const char *ia_mech_family_name(enum ia_mech family);
/* "CPython's cyclic garbage collector", ... */
const char *ia_mech_name(enum ia_mech m);
/* The fix that fits the mechanism; NULL where the line's own fix is the one. */
const char *ia_mech_fix(enum ia_mech m);

/* Debugging instruments left on, named by any frame of a stack (not only
 * the innermost: their cost is the work they add around each operation,
 * whatever runs under them): autograd's anomaly detection (each forward
 * operation stores its Python traceback, PyAnomalyMetadata::store_stack)
 * and PyTorch's profiler (Kineto, CUPTI, its record functions). */
enum ia_instrument {
	IA_INSTR_NONE,
	IA_INSTR_ANOMALY,
	IA_INSTR_PROFILER,
	IA_INSTR_N
};
/* A frame's instrument: a Python frame (python != 0) by its file, a
 * native one by its symbol and module. */
enum ia_instrument ia_frame_instrument(int python, const char *sym, const char *module, const char *file);
/* "Autograd's anomaly detection", "PyTorch's profiler" (a sentence's start) */
const char *ia_instrument_name(enum ia_instrument i);
/* What it does to each operation, and turning it off: the fix. */
const char *ia_instrument_cost(enum ia_instrument i);
const char *ia_instrument_fix(enum ia_instrument i);

#endif
