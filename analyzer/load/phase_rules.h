/*
 * phase_rules.h — what one stack frame says about the phase of a run.
 *
 * A training job spends its first seconds (and some later ones) on work
 * that is paid once, not at every step: importing modules, bringing up
 * CUDA and its libraries, compiling kernels, autotuning them.  That work
 * leaves recognisable frames in the on-CPU samples: a Python frame in
 * `<frozen importlib._bootstrap>` is an import, `cuLibraryLoadData` loads
 * a library's kernels, `torch/_dynamo/convert_frame.py` compiles,
 * `cudnn_frontend::time_sorted_plan` times cuDNN candidates.  Each such
 * frame names a *reason*, each reason belongs to one *phase*; a stack's
 * reason is the one of highest rank among its frames (an import inside a
 * compile is importing; autotuning inside a compile is autotuning).
 *
 * Some reasons take two frames together (*hints*): a sampler's code with a
 * permutation under it is the sampler shuffling the dataset for an epoch,
 * while the same sampler frame alone is it handing out the next index (at
 * every step).  A stack's hints are its frames' hints OR-ed; ia_hints_why
 * names what they say together.
 *
 * These are pure functions of names, so the rules are tested one by one
 * (tests/unit/test_analyzer_phases.c) and listed in docs/chains.md.
 */
#ifndef IA_PHASE_RULES_H
#define IA_PHASE_RULES_H

enum ia_phase {
	IA_PHASE_STEADY = 0,   /* the repeating work the run is for */
	IA_PHASE_STARTUP,      /* imports, CUDA context, library loading, memory pools, worker start */
	IA_PHASE_COMPILE,      /* torch.compile, Triton, XLA, NVRTC, compiler processes */
	IA_PHASE_AUTOTUNE,     /* cuDNN benchmark, Inductor max-autotune, Triton's autotuner */
	IA_PHASE_EPOCH,        /* an epoch boundary: the DataLoader's iterator (re)started, the sampler's permutation */
	IA_PHASE_PAUSED,       /* between capture windows (capture.h): nothing recorded, no finding, left out */
	IA_PHASE_N
};

/* Why a frame belongs to a phase.  Order is rank: a stack's reason is its
 * frames' highest. */
enum ia_phase_why {
	IA_WHY_NONE = 0,
	IA_WHY_WORKER_START,   /* forking child processes (multiprocessing popen: DataLoader workers, pools) */
	IA_WHY_LOADER_START,   /* the DataLoader's iterator (re)started: DataLoader.__iter__, _reset, its __init__ */
	IA_WHY_LOADER_WORKERS, /* ... forking its workers (popen under the iterator's start) */
	IA_WHY_SAMPLER_PERM,   /* a sampler permuting the dataset's indices (randperm, .tolist()) */
	IA_WHY_MEMPOOL,        /* a device memory pool created or grown (XLA's BFC allocator) */
	IA_WHY_LIB_INIT,       /* cuBLAS/cuDNN handles, cuBLASLt picking an algorithm for a new shape */
	IA_WHY_CUDA_INIT,      /* cuInit, the primary context */
	IA_WHY_LIBLOAD,        /* loading kernels: cuLibraryLoad*, cuModuleLoad*, dlopen */
	IA_WHY_COMPILER_PROC,  /* a compiler process (ptxas, nvlink, cc1, a compile pool) */
	IA_WHY_NVRTC,          /* NVRTC compiling a kernel at run time (CuPy, ...) */
	IA_WHY_XLA,            /* JAX lowering / XLA, MLIR, LLVM compiling */
	IA_WHY_TRITON,         /* Triton's compiler */
	IA_WHY_TORCH_COMPILE,  /* TorchDynamo, AOTAutograd, Inductor (ia_is_compile_file) */
	IA_WHY_CUDNN_PLANS,    /* cuDNN building execution plans for a new shape */
	IA_WHY_TORCH_AUTOTUNE, /* Inductor's select_algorithm / Triton's autotuner benchmarking */
	IA_WHY_CUDNN_BENCHMARK,/* cuDNN timing candidate plans (torch.backends.cudnn.benchmark) */
	IA_WHY_IMPORT,         /* importing a Python module (its top-level code runs under importlib) */
	IA_WHY_N
};

enum ia_phase ia_why_phase(enum ia_phase_why w);
/* "importing Python modules", "cuDNN benchmarking candidate plans", ... */
const char *ia_why_name(enum ia_phase_why w);
/* "startup", "compilation", "autotuning", "epoch_boundary", "steady": JSON keys */
const char *ia_phase_name(enum ia_phase p);
/* "start-up", "compilation", "autotuning", "epoch boundaries", "steady state": for people */
const char *ia_phase_title(enum ia_phase p);

/* What a frame says only together with another frame of its stack. */
enum ia_frame_hint {
	IA_HINT_SAMPLER = 1u << 0,      /* torch's samplers: torch/utils/data/sampler.py, distributed.py */
	IA_HINT_ITER = 1u << 1,         /* a sampler's __iter__ of the user's own ("ShuffleSampler.__iter__") */
	IA_HINT_PERMUTE = 1u << 2,      /* a permutation: randperm */
	IA_HINT_TOLIST = 1u << 3,       /* a tensor made into a Python list (Tensor.tolist) */
	IA_HINT_LOADER_START = 1u << 4, /* the DataLoader's iterator starting (IA_WHY_LOADER_START's frames) */
	IA_HINT_FORK = 1u << 5,         /* multiprocessing starting a process (IA_WHY_WORKER_START's frames) */
	IA_HINT_BACKWARD = 1u << 6,     /* running the backward pass: torch.autograd's backward()/grad() into
	                                 * the engine (_engine_run_backward, Engine::execute) */
	IA_HINT_HF_TRAINER = 1u << 7,   /* Hugging Face Transformers' Trainer: transformers/trainer.py (its
	                                 * training loop; trl's trainers run inside it) */
	IA_HINT_ACCUMULATE = 1u << 8,   /* gradient accumulation: a micro-batch whose gradients are not
	                                 * reduced yet (Accelerate's or DistributedDataParallel's no_sync()) */
};
unsigned ia_python_frame_hints(const char *file, const char *func);
unsigned ia_native_frame_hints(const char *sym);
/* The reason a stack's hints give together, or IA_WHY_NONE:
 *   sampler + (permute | tolist), a Sampler's __iter__ + permute -> IA_WHY_SAMPLER_PERM
 *   loader start + fork                                            -> IA_WHY_LOADER_WORKERS */
enum ia_phase_why ia_hints_why(unsigned hints);

/* The reason a Python frame (file, function) gives, or IA_WHY_NONE. */
enum ia_phase_why ia_python_frame_why(const char *file, const char *func);
/* The reason a native symbol gives, or IA_WHY_NONE. */
enum ia_phase_why ia_native_frame_why(const char *sym);
/* 1 for a process name of a compiler or linker that toolchains run as a
 * child: ptxas, nvlink, cicc, nvcc, fatbinary, cc1, gcc, clang, ld, as, ... */
int ia_is_compiler_comm(const char *comm);

#endif
