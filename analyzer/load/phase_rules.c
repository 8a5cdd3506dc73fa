/*
 * phase_rules.c — frame names to phase reasons (see phase_rules.h).
 *
 * Every rule is a substring of a file path, a Python function or a native
 * symbol, chosen from real traces (tests/corpus/): a name that also runs
 * at every step of a compiled or autotuned model (Inductor's runtime/,
 * Dynamo's guards, XLA executing a program, cuDNN running a chosen plan)
 * is left out, so that steady-state samples never read as a phase.
 */
#include "load/phase_rules.h"

#include "base/util.h"

#include <string.h>

enum ia_phase ia_why_phase(enum ia_phase_why w)
{
	switch (w) {
	case IA_WHY_IMPORT:
	case IA_WHY_LIBLOAD:
	case IA_WHY_CUDA_INIT:
	case IA_WHY_LIB_INIT:
	case IA_WHY_MEMPOOL:
	case IA_WHY_WORKER_START:
		return IA_PHASE_STARTUP;
	case IA_WHY_LOADER_START:
	case IA_WHY_LOADER_WORKERS:
	case IA_WHY_SAMPLER_PERM:
		return IA_PHASE_EPOCH;
	case IA_WHY_TORCH_COMPILE:
	case IA_WHY_TRITON:
	case IA_WHY_XLA:
	case IA_WHY_NVRTC:
	case IA_WHY_COMPILER_PROC:
		return IA_PHASE_COMPILE;
	case IA_WHY_CUDNN_BENCHMARK:
	case IA_WHY_CUDNN_PLANS:
	case IA_WHY_TORCH_AUTOTUNE:
		return IA_PHASE_AUTOTUNE;
	default:
		return IA_PHASE_STEADY;
	}
}

const char *ia_why_name(enum ia_phase_why w)
{
	switch (w) {
	case IA_WHY_IMPORT: return "importing Python modules";
	case IA_WHY_LIBLOAD: return "loading CUDA libraries' kernels";
	case IA_WHY_CUDA_INIT: return "creating the CUDA context";
	case IA_WHY_LIB_INIT: return "initialising cuBLAS/cuDNN (handles, algorithm choice for new shapes)";
	case IA_WHY_MEMPOOL: return "setting up the device memory pool";
	case IA_WHY_WORKER_START: return "starting child processes (multiprocessing)";
	case IA_WHY_LOADER_START: return "starting the DataLoader's iterator (DataLoader.__iter__, _reset: index queues refilled)";
	case IA_WHY_LOADER_WORKERS: return "starting the DataLoader's workers (fork)";
	case IA_WHY_SAMPLER_PERM: return "the sampler permuting the dataset's indices (randperm, .tolist())";
	case IA_WHY_TORCH_COMPILE: return "torch.compile (TorchDynamo, AOTAutograd, Inductor)";
	case IA_WHY_TRITON: return "Triton compiling kernels";
	case IA_WHY_XLA: return "JAX/XLA lowering and compiling";
	case IA_WHY_NVRTC: return "NVRTC compiling kernels at run time";
	case IA_WHY_COMPILER_PROC: return "compiler processes (ptxas, nvlink, cc1, compile workers)";
	case IA_WHY_CUDNN_BENCHMARK: return "cuDNN timing candidate plans (cudnn.benchmark)";
	case IA_WHY_CUDNN_PLANS: return "cuDNN building execution plans for new shapes";
	case IA_WHY_TORCH_AUTOTUNE: return "benchmarking kernel configurations (Inductor max-autotune, Triton autotuner)";
	default: return "steady state";
	}
}

const char *ia_phase_name(enum ia_phase p)
{
	switch (p) {
	case IA_PHASE_STARTUP: return "startup";
	case IA_PHASE_COMPILE: return "compilation";
	case IA_PHASE_AUTOTUNE: return "autotuning";
	case IA_PHASE_EPOCH: return "epoch_boundary";
	case IA_PHASE_PAUSED: return "not_recorded";
	default: return "steady";
	}
}

const char *ia_phase_title(enum ia_phase p)
{
	switch (p) {
	case IA_PHASE_STARTUP: return "start-up";
	case IA_PHASE_EPOCH: return "epoch boundaries";
	case IA_PHASE_PAUSED: return "not recorded (between capture windows)";
	case IA_PHASE_STEADY: return "steady state";
	default: return ia_phase_name(p);
	}
}

static int has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

/* "_MultiProcessingDataLoaderIter._reset" -> "_reset" (CPython 3.11+ names
 * functions by qualified name, 3.10 by name) */
static const char *method(const char *func)
{
	const char *dot = func ? strrchr(func, '.') : NULL;
	return dot ? dot + 1 : func ? func : "";
}

/* The DataLoader's iterator starting an epoch: DataLoader.__iter__ (and
 * _get_iterator), which builds a new iterator (its __init__: the workers,
 * the queues) or, with persistent workers, _reset()s the old one; _reset
 * refills the index queues (prefetch_factor x num_workers batches).  The
 * per-step path (__next__, _next_data) is not here. */
static int loader_start(const char *file, const char *func)
{
	if (!has(file, "torch/utils/data/dataloader.py"))
		return 0;
	const char *m = method(func);
	return !strcmp(m, "__iter__") || !strcmp(m, "_get_iterator") || !strcmp(m, "_reset") || !strcmp(m, "__init__");
}

static int popen_file(const char *file)
{
	return has(file, "multiprocessing/popen_fork.py") || has(file, "multiprocessing/popen_spawn") ||
	       has(file, "multiprocessing/popen_forkserver.py");
}

enum ia_phase_why ia_python_frame_why(const char *file, const char *func)
{
	if (!file)
		return IA_WHY_NONE;
	/* a module's top-level code runs under importlib: whatever it does,
	 * the time is the import's */
	if (!strncmp(file, "<frozen importlib", 17))
		return IA_WHY_IMPORT;
	if (has(file, "torch/_inductor/select_algorithm.py") || has(file, "torch/_inductor/autotune_process.py") ||
	    has(file, "triton/runtime/autotuner.py"))
		return IA_WHY_TORCH_AUTOTUNE;
	if (has(file, "triton/compiler/") || has(file, "triton/backends/"))
		return IA_WHY_TRITON;
	if (ia_is_compile_file(file))
		return IA_WHY_TORCH_COMPILE;
	/* JAX: lowering to MLIR and XLA's compile; pxla.py also executes, so
	 * only its lowering and compiling functions count */
	if (has(file, "jax/_src/compiler.py") || has(file, "jax/_src/interpreters/mlir.py") ||
	    (has(file, "jax/_src/interpreters/pxla.py") && (has(func, "lower") || has(func, "ompil") ||
							       has(func, "from_hlo"))))
		return IA_WHY_XLA;
	if (has(file, "cupy/cuda/compiler.py"))
		return IA_WHY_NVRTC;
	if (loader_start(file, func))
		return IA_WHY_LOADER_START;
	if (popen_file(file))
		return IA_WHY_WORKER_START;
	return IA_WHY_NONE;
}

unsigned ia_python_frame_hints(const char *file, const char *func)
{
	unsigned h = 0;
	if (!file)
		return 0;
	if (has(file, "torch/utils/data/sampler.py") || has(file, "torch/utils/data/distributed.py"))
		h |= IA_HINT_SAMPLER;
	/* a sampler class of the user's own: "ShuffleSampler.__iter__" (3.11+
	 * names the class; a generator's __iter__ that permutes at every
	 * step is not a sampler) */
	if (!strcmp(method(func), "__iter__") && has(func, "Sampler"))
		h |= IA_HINT_ITER;
	if (loader_start(file, func))
		h |= IA_HINT_LOADER_START;
	if (popen_file(file))
		h |= IA_HINT_FORK;
	if (has(file, "torch/autograd/") && (!strcmp(method(func), "_engine_run_backward") ||
					    !strcmp(method(func), "backward") || !strcmp(method(func), "grad")))
		h |= IA_HINT_BACKWARD;
	if (has(file, "transformers/trainer.py"))
		h |= IA_HINT_HF_TRAINER;
	/* (not accumulate() or _do_sync(): Accelerate enters them every step,
	 * accumulating or not — the Trainer always does; no_sync() only on a
	 * micro-batch whose gradients are not reduced yet) */
	if ((has(file, "accelerate/accelerator.py") || has(file, "torch/nn/parallel/distributed.py")) &&
	    !strcmp(method(func), "no_sync"))
		h |= IA_HINT_ACCUMULATE;
	return h;
}

unsigned ia_native_frame_hints(const char *sym)
{
	unsigned h = 0;
	if (!sym)
		return 0;
	/* at::native::randperm_out_cpu, at::_ops::randperm::call, ... */
	if (has(sym, "randperm"))
		h |= IA_HINT_PERMUTE;
	if (has(sym, "tensor_to_list") || has(sym, "THPVariable_tolist"))
		h |= IA_HINT_TOLIST;
	if (has(sym, "torch::autograd::Engine::execute") || has(sym, "PythonEngine::execute"))
		h |= IA_HINT_BACKWARD;
	return h;
}

enum ia_phase_why ia_hints_why(unsigned h)
{
	/* a sampler permuting (RandomSampler, DistributedSampler: randperm(n)
	 * and its .tolist()), or a sampler of the user's own whose __iter__
	 * permutes; a sampler frame alone hands out the next index */
	if (((h & IA_HINT_SAMPLER) && (h & (IA_HINT_PERMUTE | IA_HINT_TOLIST))) ||
	    ((h & IA_HINT_ITER) && (h & IA_HINT_PERMUTE)))
		return IA_WHY_SAMPLER_PERM;
	if ((h & IA_HINT_LOADER_START) && (h & IA_HINT_FORK))
		return IA_WHY_LOADER_WORKERS;
	return IA_WHY_NONE;
}

enum ia_phase_why ia_native_frame_why(const char *sym)
{
	if (!sym)
		return IA_WHY_NONE;
	/* cudnn_frontend::time_sorted_plan<CudnnFindSamplingTechnique>: the
	 * timing loop of cudnn.benchmark; cudnnFind*: the legacy API's */
	if (has(sym, "time_sorted_plan") || has(sym, "CudnnFindSampling") || !strncmp(sym, "cudnnFind", 9))
		return IA_WHY_CUDNN_BENCHMARK;
	if (has(sym, "ExecutionPlanBuilder") || !strncmp(sym, "cudnnBackendFinalize", 20) ||
	    has(sym, "EngineHeuristics") || has(sym, "cudnnGetConvolution"))
		return IA_WHY_CUDNN_PLANS;
	/* LLVM and MLIR run only while compiling (XLA, Triton); "llvm::" also
	 * matches free functions through their argument types */
	if (has(sym, "mlir::") || has(sym, "llvm::") ||
	    (has(sym, "xla::") && (has(sym, "Compile") || has(sym, "HloPass"))))
		return IA_WHY_XLA;
	if (!strncmp(sym, "nvrtcCompileProgram", 19) || has(sym, "nvrtc"))
		return IA_WHY_NVRTC;
	if (!strncmp(sym, "cuLibraryLoad", 13) || !strncmp(sym, "cuModuleLoad", 12) || !strcmp(sym, "dlopen") ||
	    !strncmp(sym, "_dl_map_object", 14) || !strncmp(sym, "dl_open_worker", 14) ||
	    !strncmp(sym, "_dl_relocate_object", 19))
		return IA_WHY_LIBLOAD;
	if (!strcmp(sym, "cuInit") || !strncmp(sym, "cuDevicePrimaryCtxRetain", 24) || !strncmp(sym, "cuCtxCreate", 11))
		return IA_WHY_CUDA_INIT;
	if (!strncmp(sym, "cublasCreate", 12) || !strncmp(sym, "cublasLtCreate", 14) || !strncmp(sym, "cudnnCreate", 11) ||
	    !strncmp(sym, "cublasLtMatmulAlgoGetHeuristic", 30))
		return IA_WHY_LIB_INIT;
	/* XLA's allocator growing its pool (JAX preallocates most of the GPU's
	 * memory on the first transfer) */
	if (has(sym, "BFCAllocator::Extend") || has(sym, "RegionManager::AddAllocationRegion"))
		return IA_WHY_MEMPOOL;
	return IA_WHY_NONE;
}

int ia_is_compiler_comm(const char *comm)
{
	static const char *const exact[] = {
		"ptxas", "nvlink", "cicc", "nvcc", "fatbinary", "cudafe++", "nvdisasm", "cc1", "cc1plus", "as",
		"ld", "collect2", "gcc", "g++", "cc", "c++", "clang", "clang++", "lld", "ld.lld", "ld.gold",
		"ld.bfd",
	};
	if (!comm)
		return 0;
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (!strcmp(comm, exact[i]))
			return 1;
	/* Debian's gcc-12, x86_64-linux-gnu-gcc, gcc-real (ccache-style wrappers) */
	return !strncmp(comm, "gcc-", 4) || !strncmp(comm, "g++-", 4) || !strncmp(comm, "clang-", 6) ||
	       has(comm, "-linux-gnu-g") || !strncmp(comm, "cc1", 3);
}
