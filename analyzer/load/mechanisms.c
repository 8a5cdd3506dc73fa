/*
 * mechanisms.c — frame names to mechanisms (see mechanisms.h).  Names are
 * matched as prefixes or whole symbols, never as loose substrings, so a
 * user's function called "collect" is not the garbage collector — except
 * ATen's copy kernels, which a sample shows as a template argument of the
 * loop that runs them (qualified by their namespace, so no user's name).
 */
#include "load/mechanisms.h"

#include "load/frames.h"

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

/* A matrix multiply's kernel on the CPU: a GEMM (or GEMV) of the BLAS or
 * oneDNN that PyTorch's CPU operations call — MKL and oneDNN inside
 * libtorch_cpu, or a system BLAS — not cuBLAS's host side (its own
 * library) nor anything of CUDA's. */
static int cpu_matmul(const char *sym, const char *module)
{
	static const char *const libs[] = { "libtorch_cpu", "libmkl", "libopenblas", "libblas", "libdnnl", "libmkldnn",
					    "libcblas", "libblis", NULL };
	if (!module || (!strcasestr(sym, "gemm") && !strcasestr(sym, "gemv")))
		return 0;
	const char *base = ia_module_base(module);
	for (const char *const *l = libs; *l; l++)
		if (!strncmp(base, *l, strlen(*l)))
			return !strstr(sym, "cuda") && !strstr(sym, "cublas");
	return 0;
}

/* Image decoding on the CPU: the codec libraries (Pillow's wheels bundle
 * them symbol-less, as pillow.libs/libjpeg-<hash>.so.62: the module names
 * them where the frame has no name), Pillow's decoders, torchvision's and
 * OpenCV's. */
static int image_decode(const char *sym, const char *module)
{
	static const char *const libs[] = { "libjpeg", "libturbojpeg", "libpng", "libwebp", "libopenjp2", "libtiff",
					    "libavif", "libheif", "libopencv_imgcodecs", "libnvjpeg_host", NULL };
	static const char *const syms[] = { "ImagingJpegDecode*", "ImagingPngDecode*", "ImagingZipDecode*",
					    "ImagingLibTiffDecode*", "ImagingJpeg2KDecode*", "jpeg_*", "decode_mcu*",
					    "png_read_*", "WebPDecode*", "tjDecompress*", "vision::image::decode_*",
					    "cv::imdecode*", "cv::imread*", NULL };
	if (sym && any_of(sym, syms))
		return 1;
	if (!module)
		return 0;
	const char *base = ia_module_base(module);
	for (const char *const *l = libs; *l; l++)
		if (!strncmp(base, *l, strlen(*l)))
			return 1;
	return 0;
}

enum ia_mech ia_native_frame_mech(const char *sym, const char *module)
{
	/* _Py_RunGC: 3.12's collection from the eval breaker, exported where
	 * the static collector functions under it are stripped (Debian's) */
	static const char *const gc[] = { "_Py_RunGC", "PyGC_Collect", "_PyGC_CollectNoFail", "gc_collect_main", "gc_collect_region", "gc_collect_impl", "gc_collect_with_callback",
					  "_PyGC_Collect", "_PyObject_GC_Link", "deduce_unreachable", "move_unreachable",
					  "subtract_refs", "visit_decref", "visit_reachable", "update_refs", "gc_collect_full",
					  "gc_collect_young", "gc_collect_increment", NULL };
	static const char *const alloc[] = { "malloc", "free", "calloc", "realloc", "__libc_malloc", "__libc_free",
					     "__libc_calloc", "_int_malloc", "_int_free", "sysmalloc", "malloc_consolidate",
					     "__munmap", "munmap", "__mmap", "mmap64", "mmap", "__madvise", "madvise",
					     "cfree", "_int_realloc", "tcache_*", "_int_free_*", NULL };
	static const char *const fill[] = { "__memset_*", "memset", NULL };
	/* torch.tensor(list): the type of every element inferred, then each stored */
	static const char *const pyconvert[] = { "torch::utils::(anonymous namespace)::internal_new_from_data*",
						 "torch::utils::(anonymous namespace)::recursive_store*",
						 "torch::utils::(anonymous namespace)::infer_scalar_type*",
						 "torch::utils::store_scalar*", NULL };
	static const char *const copy[] = { "__memmove_*", "__memcpy_*", "memcpy", "memmove", "__mempcpy_*", NULL };
	static const char *const spin[] = { "gomp_barrier_wait*", "gomp_team_barrier_wait*", "do_spin", "do_wait",
					    "gomp_simple_barrier_wait", "__kmp_*", "blas_thread_server", "exec_blas",
					    "sched_yield", "__sched_yield", NULL };
	static const char *const lock[] = { "__lll_lock_wait", "pthread_spin_lock", "__pthread_mutex_lock*",
					    "___pthread_mutex_lock", "pthread_mutex_lock", NULL };
	if (image_decode(sym, module))
		return IA_MECH_DECODE;
	/* innermost in the OpenMP runtime itself, named or not: its threads'
	 * work runs in the callbacks it calls (their own frames), so its own
	 * code is the waiting at a barrier */
	if (module && (strstr(module, "libgomp") || strstr(module, "libiomp")))
		return IA_MECH_SPIN;
	if (!sym)
		return IA_MECH_NONE;
	if (cpu_matmul(sym, module))
		return IA_MECH_CPU_MATMUL;
	if (any_of(sym, gc))
		return IA_MECH_GC;
	if (module && strstr(module, "_pickle"))
		return IA_MECH_PICKLE;
	if (any_of(sym, pyconvert))
		return IA_MECH_PYCONVERT;
	if (any_of(sym, fill))
		return IA_MECH_FILL;
	/* tensor.copy_, .pin_memory(), .contiguous(): "void c10::function_ref<…>::
	 * callback_fn<at::native::AVX2::VectorizedLoop2d<at::native::AVX2::
	 * direct_copy_kernel(…)…" (the DataLoader's pin-memory thread on the H200) */
	if (any_of(sym, copy) || (strstr(sym, "at::native::") && strstr(sym, "copy_kernel")))
		return IA_MECH_COPY;
	if (any_of(sym, alloc))
		return IA_MECH_ALLOC;
	if (any_of(sym, spin))
		return IA_MECH_SPIN;
	if (any_of(sym, lock))
		return IA_MECH_LOCK;
	return IA_MECH_NONE;
}

int ia_is_gc_frame(const char *file, const char *func)
{
	return file && func && !strcmp(file, "<gc>") && !strcmp(func, "garbage collection");
}

enum ia_mech ia_python_frame_mech(const char *file, const char *func)
{
	if (!file)
		return IA_MECH_NONE;
	/* the collector's frame for a sample of the thread running the
	 * collector (docs/schema.md, stack_frames): whatever CPython's symbols */
	if (ia_is_gc_frame(file, func))
		return IA_MECH_GC;
	if (strstr(file, "<frozen importlib._bootstrap"))
		return IA_MECH_IMPORT;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	/* multiprocessing's Queue.get: on a CPU there it is unpickling what it
	 * received (_ForkingPickler.loads; blocked time is not sampled) */
	if (func && (!strcmp(func, "get") || !strcmp(func, "Queue.get")) && !strcmp(base, "queues.py") &&
	    strstr(file, "multiprocessing/"))
		return IA_MECH_PICKLE;
	if (!strcmp(base, "pickle.py") || !strcmp(base, "reduction.py") ||
	    (func && (!strcmp(func, "_load") || !strcmp(func, "load")) && strstr(file, "torch/serialization.py")))
		return IA_MECH_PICKLE;
	return IA_MECH_NONE;
}

enum ia_mech ia_kernel_frame_mech(const char *sym)
{
	/* innermost first: a file-backed fault is the page cache's before it is
	 * a fault; munmap and madvise give memory back (the allocator's side) */
	static const char *const cache[] = { "filemap_fault", "filemap_map_pages", "filemap_read", "filemap_get_pages",
					     "page_cache_ra_*", "page_cache_sync_ra", "page_cache_async_ra", NULL };
	static const char *const unmap[] = { "__x64_sys_munmap", "__vm_munmap", "do_vmi_munmap", "do_vmi_align_munmap",
					     "unmap_region", "unmap_vmas", "zap_pte_range", "zap_pmd_range",
					     "unmap_page_range", "free_pgtables", "tlb_finish_mmu", "__x64_sys_madvise",
					     "__x64_sys_brk", "do_madvise", NULL };
	static const char *const fault[] = { "do_anonymous_page", "do_huge_pmd_anonymous_page", "clear_page_*",
					     "clear_huge_page", "folio_zero_user", "alloc_anon_folio", "vma_alloc_folio*",
					     "handle_mm_fault", "__handle_mm_fault", "do_user_addr_fault", "exc_page_fault",
					     "asm_exc_page_fault", NULL };
	if (!sym)
		return IA_MECH_NONE;
	if (any_of(sym, cache))
		return IA_MECH_PAGECACHE;
	if (any_of(sym, unmap))
		return IA_MECH_ALLOC;
	if (any_of(sym, fault))
		return IA_MECH_FAULT;
	return IA_MECH_NONE;
}

enum ia_mech ia_mech_family(enum ia_mech m)
{
	if (m == IA_MECH_ALLOC || m == IA_MECH_FILL || m == IA_MECH_FAULT)
		return IA_MECH_FAULT;
	if (m == IA_MECH_PICKLE || m == IA_MECH_PYCONVERT)
		return IA_MECH_PICKLE;
	return m;
}

const char *ia_mech_family_name(enum ia_mech family)
{
	return family == IA_MECH_FAULT ? "fresh memory" : family == IA_MECH_PICKLE ? "Python objects as batch data"
		: ia_mech_name(family);
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
	case IA_MECH_FAULT: return "page faults (the kernel mapping in and zeroing fresh memory on first touch)";
	case IA_MECH_PAGECACHE: return "reading files through the page cache";
	case IA_MECH_PYCONVERT: return "torch.tensor converting Python lists element by element";
	case IA_MECH_CPU_MATMUL: return "matrix multiplies on the CPU (BLAS/oneDNN GEMM kernels)";
	case IA_MECH_DECODE: return "decoding images on the CPU (JPEG/PNG codecs)";
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
	case IA_MECH_FAULT:
		return "Reuse buffers instead of allocating a fresh large one each step (allocate once before the loop, "
		       "fill it in place; for host batches, a preallocated pinned buffer): a new allocation is "
		       "faulted in and zeroed page by page, and freed large blocks go back to the kernel";
	case IA_MECH_COPY:
		return "Copy less: hand tensors over without copying (views, torch.from_numpy, shared memory), "
		       "or make the copies larger and fewer";
	case IA_MECH_PICKLE:
	case IA_MECH_PYCONVERT:
		return "Make batches tensors or numpy arrays where they are built (the Dataset, the collate_fn or "
		       "the producer), not Python lists or objects: those cross processes pickled and unpickled element by "
		       "element, and torch.tensor converts a list element by element; tensors cross in shared memory "
		       "(torch.multiprocessing), and torch.from_numpy wraps an array without a copy";
	case IA_MECH_CPU_MATMUL:
		return "Run these matrix multiplies on the GPU: the tensors they multiply are on the CPU — a model or "
		       "layer built without .cuda() / .to(device), or its input moved too late — so PyTorch's CPU "
		       "kernels do the work; move the model with model.to(device) and its inputs with it";
	case IA_MECH_DECODE:
		return "Decode images for less, or elsewhere: on the GPU (torchvision.io.decode_jpeg(data, "
		       "device='cuda'), NVIDIA DALI), from files stored at the size the model takes (a JPEG's decode "
		       "time grows with its pixels), at reduced size in the decoder (PIL's Image.draft('RGB', size) "
		       "before the resize), or with a faster build (Pillow-SIMD, libjpeg-turbo)";
	case IA_MECH_SPIN:
		return "Fewer CPU threads per process (torch.set_num_threads, OMP_NUM_THREADS) so their spin-waits do "
		       "not take the CPUs the loop needs; OMP_WAIT_POLICY=passive";
	default:
		return NULL;
	}
}

enum ia_instrument ia_frame_instrument(int python, const char *sym, const char *module, const char *file)
{
	/* not record_function (torch/autograd/profiler.py, its native
	 * record_function_enter*): the DataLoader's __next__ and the optimizers
	 * enter one every step, profiler or not; nor importing the profiler */
	if (python) {
		if (!file)
			return IA_INSTR_NONE;
		/* the traceback anomaly mode stores per operation is torch.fx's
		 * format_stack; set_detect_anomaly's own module */
		if (strstr(file, "torch/autograd/anomaly_mode.py") || strstr(file, "torch/fx/traceback.py"))
			return IA_INSTR_ANOMALY;
		if (strstr(file, "torch/profiler/") && !(sym && !strcmp(sym, "<module>")))
			return IA_INSTR_PROFILER;
		return IA_INSTR_NONE;
	}
	if (sym && (strstr(sym, "torch::autograd::PyAnomalyMetadata") || strstr(sym, "torch::autograd::AnomalyMetadata")))
		return IA_INSTR_ANOMALY;
	if (sym && (strstr(sym, "torch::profiler::") ||
		    (strstr(sym, "torch::autograd::profiler::") && !strstr(sym, "record_function")) ||
		    strstr(sym, "libkineto::") || !strncmp(sym, "cupti", 5)))
		return IA_INSTR_PROFILER;
	if (module && (strstr(module, "libkineto") || strstr(module, "libcupti")))
		return IA_INSTR_PROFILER;
	return IA_INSTR_NONE;
}

const char *ia_instrument_name(enum ia_instrument i)
{
	return i == IA_INSTR_ANOMALY ? "Autograd's anomaly detection" : i == IA_INSTR_PROFILER ? "PyTorch's profiler" : "";
}

const char *ia_instrument_cost(enum ia_instrument i)
{
	switch (i) {
	case IA_INSTR_ANOMALY:
		return "each forward operation stores the Python traceback that created it "
		       "(PyAnomalyMetadata::store_stack) and the backward checks each gradient it computes for NaN, "
		       "a sync per check";
	case IA_INSTR_PROFILER:
		return "each operation is recorded (its shapes and Python stack where record_shapes and with_stack ask) "
		       "and CUPTI records each kernel and CUDA call";
	default:
		return "";
	}
}

const char *ia_instrument_fix(enum ia_instrument i)
{
	switch (i) {
	case IA_INSTR_ANOMALY:
		return "Turn autograd's anomaly detection off outside debugging: remove "
		       "torch.autograd.set_detect_anomaly(True) (or the torch.autograd.detect_anomaly() context), or "
		       "enable it only for the step being debugged";
	case IA_INSTR_PROFILER:
		return "Profile a few steps, not the whole run: torch.profiler.profile(..., "
		       "schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)) with prof.step() each step, or "
		       "remove the profiler outside debugging (record_shapes and with_stack multiply its cost)";
	default:
		return NULL;
	}
}
