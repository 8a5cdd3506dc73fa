/*
 * mechanisms.c — frame names to mechanisms (see mechanisms.h).  Names are
 * matched as prefixes or whole symbols, never as loose substrings, so a
 * user's function called "collect" is not the garbage collector.
 */
#include "load/mechanisms.h"

#include <string.h>

/* s is one of v: a whole name, or a prefix where the entry ends in '*' */
static int any_of(const char *s, const char *const *v)
{
	for (; *v; v++) {
		const char *star = strchr(*v, '*');
		if (star ? !strncmp(s, *v, (size_t)(star - *v)) : !strcmp(s, *v))
			return 1;
	}
	return 0;
}

enum ia_mech ia_native_frame_mech(const char *sym, const char *module)
{
	static const char *const gc[] = { "gc_collect_main", "gc_collect_region", "gc_collect_impl", "gc_collect_with_callback",
					  "_PyGC_Collect", "_PyObject_GC_Link", "deduce_unreachable", "move_unreachable",
					  "subtract_refs", "visit_decref", "visit_reachable", "update_refs", "gc_collect_full",
					  "gc_collect_young", "gc_collect_increment", NULL };
	static const char *const alloc[] = { "malloc", "free", "calloc", "realloc", "__libc_malloc", "__libc_free",
					     "__libc_calloc", "_int_malloc", "_int_free", "sysmalloc", "malloc_consolidate",
					     "__munmap", "munmap", "__mmap", "mmap64", "mmap", "__madvise", "madvise",
					     "cfree", "_int_realloc", "tcache_*", "_int_free_*", NULL };
	static const char *const fill[] = { "__memset_*", "memset", NULL };
	static const char *const copy[] = { "__memmove_*", "__memcpy_*", "memcpy", "memmove", "__mempcpy_*", NULL };
	static const char *const spin[] = { "gomp_barrier_wait*", "gomp_team_barrier_wait*", "do_spin", "do_wait",
					    "gomp_simple_barrier_wait", "__kmp_*", "blas_thread_server", "exec_blas",
					    "sched_yield", "__sched_yield", NULL };
	static const char *const lock[] = { "__lll_lock_wait", "pthread_spin_lock", "__pthread_mutex_lock*",
					    "___pthread_mutex_lock", "pthread_mutex_lock", NULL };
	if (!sym)
		return IA_MECH_NONE;
	if (any_of(sym, gc))
		return IA_MECH_GC;
	if (module && strstr(module, "_pickle"))
		return IA_MECH_PICKLE;
	if (any_of(sym, fill))
		return IA_MECH_FILL;
	if (any_of(sym, copy))
		return IA_MECH_COPY;
	if (any_of(sym, alloc))
		return IA_MECH_ALLOC;
	if (any_of(sym, spin) || (module && (strstr(module, "libgomp") || strstr(module, "libiomp"))))
		return IA_MECH_SPIN;
	if (any_of(sym, lock))
		return IA_MECH_LOCK;
	return IA_MECH_NONE;
}

enum ia_mech ia_python_frame_mech(const char *file, const char *func)
{
	if (!file)
		return IA_MECH_NONE;
	if (strstr(file, "<frozen importlib._bootstrap"))
		return IA_MECH_IMPORT;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (!strcmp(base, "pickle.py") || !strcmp(base, "reduction.py") ||
	    (func && (!strcmp(func, "_load") || !strcmp(func, "load")) && strstr(file, "torch/serialization.py")))
		return IA_MECH_PICKLE;
	return IA_MECH_NONE;
}

const char *ia_mech_name(enum ia_mech m)
{
	switch (m) {
	case IA_MECH_GC: return "CPython's cyclic garbage collector";
	case IA_MECH_ALLOC: return "the memory allocator (malloc/free, mmap/munmap)";
	case IA_MECH_FILL: return "filling fresh memory (memset: each new page faulted in and zeroed on first touch)";
	case IA_MECH_COPY: return "copying memory (memcpy)";
	case IA_MECH_PICKLE: return "pickling and unpickling";
	case IA_MECH_IMPORT: return "importing modules";
	case IA_MECH_SPIN: return "OpenMP/BLAS threads spinning at a barrier";
	case IA_MECH_LOCK: return "waiting on a lock";
	default: return "";
	}
}

const char *ia_mech_fix(enum ia_mech m)
{
	switch (m) {
	case IA_MECH_GC:
		return "Stop the cyclic garbage collector from walking the long-lived objects each step: gc.freeze() "
		       "after setup (moves them out of its generations), fewer objects with reference cycles, or "
		       "gc.disable() with a gc.collect() every N steps";
	case IA_MECH_ALLOC:
	case IA_MECH_FILL:
		return "Reuse buffers instead of allocating a fresh large one each step (allocate once before the loop, "
		       "fill it in place; for host batches, a preallocated pinned buffer): a new allocation is "
		       "faulted in and zeroed page by page, and freed large blocks go back to the kernel";
	case IA_MECH_COPY:
		return "Copy less: hand tensors over without copying (views, torch.from_numpy, shared memory), "
		       "or make the copies larger and fewer";
	case IA_MECH_PICKLE:
		return "Avoid pickling batches between processes: tensors in shared memory (torch.multiprocessing "
		       "shares their storage), or a DataLoader whose workers return tensors";
	case IA_MECH_SPIN:
		return "Fewer CPU threads per process (torch.set_num_threads, OMP_NUM_THREADS) so their spin-waits do "
		       "not take the CPUs the loop needs; OMP_WAIT_POLICY=passive";
	default:
		return NULL;
	}
}
