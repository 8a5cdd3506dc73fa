/*
 * test_analyzer_phases.c — the names that mark one-time phases
 * (phase_rules.h), one rule at a time with the frames seen in the real
 * corpus (tests/corpus/), and what must not be taken for a phase; the
 * ranking of a stack's frames; epoch boundaries, named by two frames
 * together (hints); compiler process names; competitors grouped by name
 * over windows (competitors.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/competitors.h"
#include "../../analyzer/rules/chains.h"
#include "../../analyzer/load/phase_rules.h"

#include <stdlib.h>
#include <string.h>

#define SP "/opt/torch/.venv/lib/python3.12/site-packages/"

static void python_frames(void **state)
{
	(void)state;
	/* an import's top-level code runs under importlib, whatever it does */
	assert_int_equal(ia_python_frame_why("<frozen importlib._bootstrap>", "_call_with_frames_removed"), IA_WHY_IMPORT);
	assert_int_equal(ia_python_frame_why("<frozen importlib._bootstrap_external>", "exec_module"), IA_WHY_IMPORT);
	assert_int_equal(ia_python_frame_why(SP "torch/_dynamo/convert_frame.py", "_compile"), IA_WHY_TORCH_COMPILE);
	assert_int_equal(ia_python_frame_why(SP "triton/compiler/compiler.py", "compile"), IA_WHY_TRITON);
	assert_int_equal(ia_python_frame_why(SP "torch/_inductor/select_algorithm.py", "autotune"), IA_WHY_TORCH_AUTOTUNE);
	assert_int_equal(ia_python_frame_why(SP "jax/_src/compiler.py", "backend_compile_and_load"), IA_WHY_XLA);
	assert_int_equal(ia_python_frame_why(SP "jax/_src/interpreters/pxla.py", "_cached_compilation"), IA_WHY_XLA);
	assert_int_equal(ia_python_frame_why(SP "jax/_src/interpreters/pxla.py", "lower_sharding_computation"), IA_WHY_XLA);
	assert_int_equal(ia_python_frame_why("/usr/lib/python3.12/multiprocessing/popen_fork.py", "_launch"),
			 IA_WHY_WORKER_START);
	/* what also runs at every step is not a phase */
	assert_int_equal(ia_python_frame_why(SP "jax/_src/interpreters/pxla.py", "ExecuteReplicated.__call__"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(SP "torch/_inductor/runtime/triton_heuristics.py", "run"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(SP "torch/_dynamo/eval_frame.py", "_fn"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(SP "torch/nn/modules/linear.py", "forward"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why("train.py", "<module>"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(NULL, NULL), IA_WHY_NONE);
}

static void native_frames(void **state)
{
	(void)state;
	assert_int_equal(ia_native_frame_why("std::vector<cudnn_frontend::ExecutionPlan_v8> cudnn_frontend::time_sorted_plan<"
					     "(cudnn_frontend::CudnnFindSamplingTechnique)0>(cudnnContext*)"),
			 IA_WHY_CUDNN_BENCHMARK);
	assert_int_equal(ia_native_frame_why("cudnnFindConvolutionForwardAlgorithmEx"), IA_WHY_CUDNN_BENCHMARK);
	assert_int_equal(ia_native_frame_why("cudnn_frontend::ExecutionPlanBuilder_v8::build()"), IA_WHY_CUDNN_PLANS);
	assert_int_equal(ia_native_frame_why("cudnnBackendFinalize"), IA_WHY_CUDNN_PLANS);
	assert_int_equal(ia_native_frame_why("cuLibraryLoadData"), IA_WHY_LIBLOAD);
	assert_int_equal(ia_native_frame_why("cuModuleLoadData"), IA_WHY_LIBLOAD);
	assert_int_equal(ia_native_frame_why("cuInit"), IA_WHY_CUDA_INIT);
	assert_int_equal(ia_native_frame_why("cuDevicePrimaryCtxRetain"), IA_WHY_CUDA_INIT);
	assert_int_equal(ia_native_frame_why("cublasLtMatmulAlgoGetHeuristic"), IA_WHY_LIB_INIT);
	assert_int_equal(ia_native_frame_why("tsl::BFCAllocator::Extend(unsigned long, unsigned long)"), IA_WHY_MEMPOOL);
	assert_int_equal(ia_native_frame_why("propagateLiveness(mlir::Region&, (anonymous namespace)::LiveMap&)"), IA_WHY_XLA);
	assert_int_equal(ia_native_frame_why("llvm::InstCombinerImpl::run()"), IA_WHY_XLA);
	assert_int_equal(ia_native_frame_why("nvrtcCompileProgram"), IA_WHY_NVRTC);
	/* running a chosen plan, launching, syncing: the steady state */
	assert_int_equal(ia_native_frame_why("cudnn::backend::execute(cudnnContext*, cudnn::backend::ExecutionPlan const&)"),
			 IA_WHY_NONE);
	assert_int_equal(ia_native_frame_why("xla::PjRtStreamExecutorLoadedExecutable::Execute"), IA_WHY_NONE);
	assert_int_equal(ia_native_frame_why("cuLaunchKernelEx"), IA_WHY_NONE);
	assert_int_equal(ia_native_frame_why("cublasLtMatmul"), IA_WHY_NONE);
	assert_int_equal(ia_native_frame_why(NULL), IA_WHY_NONE);
}

static void phases_and_rank(void **state)
{
	(void)state;
	assert_int_equal(ia_why_phase(IA_WHY_IMPORT), IA_PHASE_STARTUP);
	assert_int_equal(ia_why_phase(IA_WHY_MEMPOOL), IA_PHASE_STARTUP);
	assert_int_equal(ia_why_phase(IA_WHY_XLA), IA_PHASE_COMPILE);
	assert_int_equal(ia_why_phase(IA_WHY_COMPILER_PROC), IA_PHASE_COMPILE);
	assert_int_equal(ia_why_phase(IA_WHY_CUDNN_BENCHMARK), IA_PHASE_AUTOTUNE);
	assert_int_equal(ia_why_phase(IA_WHY_NONE), IA_PHASE_STEADY);
	/* a stack's reason is its frames' highest: an import inside a compile
	 * imports, autotuning inside a compile autotunes, a library loaded by
	 * a compile is compiling */
	assert_true(IA_WHY_IMPORT > IA_WHY_TORCH_COMPILE);
	assert_true(IA_WHY_TORCH_AUTOTUNE > IA_WHY_TORCH_COMPILE);
	assert_true(IA_WHY_TORCH_COMPILE > IA_WHY_LIBLOAD);
	assert_true(IA_WHY_CUDNN_BENCHMARK > IA_WHY_CUDNN_PLANS);
	for (int w = 0; w < IA_WHY_N; w++)
		assert_non_null(ia_why_name((enum ia_phase_why)w));
	assert_string_equal(ia_phase_name(IA_PHASE_COMPILE), "compilation");
}

/* The chains' order: a phase paid once whose share the cap held to MEDIUM
 * goes after the MEDIUM findings a longer run does not shrink, whatever its
 * share; an uncapped one keeps its place by cost. */
static void amortised_phase_order(void **state)
{
	(void)state;
	struct ia_chain c[5];
	memset(c, 0, sizeof c);
	c[0] = (struct ia_chain){ .kind = IA_KIND_STARTUP, .sev = IA_SEV_MEDIUM, .impact = 0.40, .amortised = 1 };
	c[1] = (struct ia_chain){ .kind = IA_KIND_GAPS_HOST_BUSY, .sev = IA_SEV_MEDIUM, .impact = 0.12 };
	c[2] = (struct ia_chain){ .kind = IA_KIND_RECOMPILATION, .sev = IA_SEV_MEDIUM, .impact = 0.25 };
	c[3] = (struct ia_chain){ .kind = IA_KIND_COMPILATION, .sev = IA_SEV_MEDIUM, .impact = 0.20 };
	c[4] = (struct ia_chain){ .kind = IA_KIND_HOST_BOUND_LAUNCHES, .sev = IA_SEV_HIGH, .impact = 0.05 };
	qsort(c, 5, sizeof *c, ia_chains_order);
	assert_int_equal(c[0].kind, IA_KIND_HOST_BOUND_LAUNCHES);        /* severity first */
	assert_int_equal(c[1].kind, IA_KIND_RECOMPILATION);    /* then by cost ... */
	assert_int_equal(c[2].kind, IA_KIND_COMPILATION);      /* (uncapped: its place by cost) */
	assert_int_equal(c[3].kind, IA_KIND_GAPS_HOST_BUSY);
	assert_int_equal(c[4].kind, IA_KIND_STARTUP);          /* ... the capped one last of its severity */
}

/* The reason of a stack given as its Python frames (file, function) and
 * native symbols, innermost first: the highest of its frames' reasons and
 * of what their hints say together (as stacks.c computes it). */
static enum ia_phase_why stack_why(const char *const *py, size_t npy, const char *const *nat, size_t nnat)
{
	int why = IA_WHY_NONE;
	unsigned hints = 0;
	for (size_t i = 0; i + 1 < npy; i += 2) {
		int w = ia_python_frame_why(py[i], py[i + 1]);
		why = w > why ? w : why;
		hints |= ia_python_frame_hints(py[i], py[i + 1]);
	}
	for (size_t i = 0; i < nnat; i++) {
		int w = ia_native_frame_why(nat[i]);
		why = w > why ? w : why;
		hints |= ia_native_frame_hints(nat[i]);
	}
	int h = ia_hints_why(hints);
	return (enum ia_phase_why)(h > why ? h : why);
}

#define DL SP "torch/utils/data/dataloader.py"
#define SM SP "torch/utils/data/sampler.py"
#define N(a) (sizeof a / sizeof a[0])

/* c04's stacks (tests/corpus): the DataLoader's iterator starting an
 * epoch, the sampler permuting, the workers forked; and the per-step path
 * through the same files, which is not an epoch boundary. */
static void epoch_frames(void **state)
{
	(void)state;
	/* the iterator's start, by qualified name (3.11+) or by name (3.10) */
	assert_int_equal(ia_python_frame_why(DL, "DataLoader.__iter__"), IA_WHY_LOADER_START);
	assert_int_equal(ia_python_frame_why(DL, "DataLoader._get_iterator"), IA_WHY_LOADER_START);
	assert_int_equal(ia_python_frame_why(DL, "_MultiProcessingDataLoaderIter._reset"), IA_WHY_LOADER_START);
	assert_int_equal(ia_python_frame_why(DL, "_MultiProcessingDataLoaderIter.__init__"), IA_WHY_LOADER_START);
	assert_int_equal(ia_python_frame_why(DL, "_reset"), IA_WHY_LOADER_START);
	/* the per-step path is not */
	assert_int_equal(ia_python_frame_why(DL, "_BaseDataLoaderIter.__next__"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(DL, "_MultiProcessingDataLoaderIter._next_data"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(DL, "_MultiProcessingDataLoaderIter._try_put_index"), IA_WHY_NONE);
	assert_int_equal(ia_python_frame_why(SM, "RandomSampler.__iter__"), IA_WHY_NONE);   /* alone: the next index */
	assert_int_equal(ia_python_frame_why("train.py", "_reset"), IA_WHY_NONE);
	assert_int_equal(ia_why_phase(IA_WHY_LOADER_START), IA_PHASE_EPOCH);
	assert_int_equal(ia_why_phase(IA_WHY_LOADER_WORKERS), IA_PHASE_EPOCH);
	assert_int_equal(ia_why_phase(IA_WHY_SAMPLER_PERM), IA_PHASE_EPOCH);

	/* the first epoch's permutation, under the iterator's __init__ -> _reset */
	const char *const start[] = { SM, "RandomSampler.__iter__", SM, "BatchSampler.__iter__", DL,
				      "_BaseDataLoaderIter._next_index", DL, "_MultiProcessingDataLoaderIter._try_put_index", DL,
				      "_MultiProcessingDataLoaderIter._reset", DL, "_MultiProcessingDataLoaderIter.__init__", DL,
				      "DataLoader._get_iterator", DL, "DataLoader.__iter__", "train.py", "<module>" };
	const char *const perm[] = { "at::native::randperm_out_cpu(long, std::optional<at::Generator>, at::Tensor&)",
				     "_PyEval_EvalFrameDefault" };
	const char *const tolist[] = { "PyObject_Malloc", "PyLong_FromLongLong",
				       "torch::utils::tensor_to_list(at::Tensor const&)",
				       "torch::autograd::THPVariable_tolist(_object*, _object*)" };
	const char *const interp[] = { "_PyEval_EvalFrameDefault" };
	assert_int_equal(stack_why(start, N(start), perm, N(perm)), IA_WHY_SAMPLER_PERM);
	assert_int_equal(stack_why(start, N(start), tolist, N(tolist)), IA_WHY_SAMPLER_PERM);
	/* the same frames handing out indices with nothing permuting: the iterator's start still */
	assert_int_equal(stack_why(start, N(start), interp, N(interp)), IA_WHY_LOADER_START);
	/* the permutation RandomSampler makes as an epoch runs out, under __next__ */
	const char *const ending[] = { SM, "RandomSampler.__iter__", SM, "BatchSampler.__iter__", DL,
				       "_MultiProcessingDataLoaderIter._try_put_index", DL, "_MultiProcessingDataLoaderIter._next_data",
				       DL, "_BaseDataLoaderIter.__next__", "train.py", "<module>" };
	assert_int_equal(stack_why(ending, N(ending), perm, N(perm)), IA_WHY_SAMPLER_PERM);
	/* ... and every step's index in the same frames: steady */
	assert_int_equal(stack_why(ending, N(ending), interp, N(interp)), IA_WHY_NONE);
	/* a sampler of the user's own whose __iter__ permutes; DistributedSampler */
	const char *const own[] = { "train.py", "ShuffleSampler.__iter__", "train.py", "<module>" };
	assert_int_equal(stack_why(own, N(own), perm, N(perm)), IA_WHY_SAMPLER_PERM);
	const char *const dist[] = { SP "torch/utils/data/distributed.py", "DistributedSampler.__iter__" };
	assert_int_equal(stack_why(dist, N(dist), tolist, N(tolist)), IA_WHY_SAMPLER_PERM);
	/* a permutation in the step itself, or a list made in the user's __iter__, is not */
	const char *const step[] = { "train.py", "augment", "train.py", "<module>" };
	assert_int_equal(stack_why(step, N(step), perm, N(perm)), IA_WHY_NONE);
	assert_int_equal(stack_why(own, N(own), tolist, N(tolist)), IA_WHY_NONE);
	/* a generator that draws a random batch at every step is no sampler */
	const char *const gen[] = { "train.py", "RandomBatches.__iter__", "train.py", "<module>" };
	assert_int_equal(stack_why(gen, N(gen), perm, N(perm)), IA_WHY_NONE);
	/* the workers forked by the iterator's start; a fork elsewhere is start-up */
	const char *const fork[] = { "/usr/lib/python3.12/multiprocessing/popen_fork.py", "Popen._launch",
				     "/usr/lib/python3.12/multiprocessing/process.py", "BaseProcess.start", DL,
				     "_MultiProcessingDataLoaderIter.__init__", DL, "DataLoader.__iter__" };
	const char *const forkc[] = { "_Fork", "__fork" };
	assert_int_equal(stack_why(fork, N(fork), forkc, N(forkc)), IA_WHY_LOADER_WORKERS);
	assert_int_equal(stack_why(fork, 4, forkc, N(forkc)), IA_WHY_WORKER_START);
	/* an import under the iterator's start is an import */
	const char *const imp[] = { "<frozen importlib._bootstrap>", "_find_and_load", DL, "DataLoader.__iter__" };
	assert_int_equal(stack_why(imp, N(imp), NULL, 0), IA_WHY_IMPORT);
	assert_true(IA_WHY_SAMPLER_PERM > IA_WHY_LOADER_WORKERS && IA_WHY_LOADER_WORKERS > IA_WHY_LOADER_START &&
		    IA_WHY_LOADER_START > IA_WHY_WORKER_START);
	assert_string_equal(ia_phase_name(IA_PHASE_EPOCH), "epoch_boundary");
	assert_string_equal(ia_phase_title(IA_PHASE_EPOCH), "epoch boundaries");
	assert_string_equal(ia_phase_title(IA_PHASE_STARTUP), "start-up");
}

static void compiler_names(void **state)
{
	(void)state;
	const char *yes[] = { "ptxas", "nvlink", "cicc", "cc1", "cc1plus", "gcc-real", "gcc-12", "x86_64-linux-gnu-gcc-12",
			      "ld", "as", "collect2", "clang-16" };
	const char *no[] = { "python3", "pt_data_worker", "sh", "ldconfig.real", "file", "ccache-wrapper", "cat", NULL };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		assert_true(ia_is_compiler_comm(yes[i]));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_false(ia_is_compiler_comm(no[i]));
}

/* competitors: 3 `sh` processes and one kworker, 100 ms buckets */
static void competitors_by_name(void **state)
{
	(void)state;
	static struct ia_bucket b[4][2] = {
		{ { 0, 50 }, { 100, 50 } }, { { 0, 30 }, { 100, 30 } }, { { 0, 20 }, { 100, 20 } }, { { 100, 500 }, { 200, 10 } },
	};
	struct ia_competitor comp[4] = {
		{ .pid = 10, .comm = "sh" }, { .pid = 11, .comm = "sh" }, { .pid = 12, .comm = "" }, { .pid = 13, .comm = "kworker/3:1" },
	};
	for (int i = 0; i < 4; i++) {
		comp[i].cpu.b = b[i];
		comp[i].cpu.n = 2;
		comp[i].cpu.width = 100;
	}
	struct ia_evidence e = { .comp = comp, .ncomp = 4 };
	uint64_t w[] = { 0, 100 };   /* the first bucket only */
	struct ia_comp_group g[4];
	uint64_t total;
	size_t n = ia_competitors_in(&e, w, 1, g, 4, &total);
	assert_int_equal(n, 2);   /* the kworker ran only later: not in the window */
	assert_string_equal(g[0].comm, "sh");
	assert_int_equal(g[0].npids, 2);
	assert_int_equal(g[0].cpu_ns, 80);
	assert_string_equal(g[1].comm, "(no name)");
	assert_int_equal(total, 100);
	char text[200];
	ia_competitors_text(text, sizeof text, g, n);
	assert_string_equal(text, "sh (2 processes) 80ns, (no name) 20ns");
	uint64_t w2[] = { 0, 200 };
	n = ia_competitors_in(&e, w2, 1, g, 1, &total);   /* at most one group asked for */
	assert_int_equal(n, 1);
	assert_string_equal(g[0].comm, "kworker/3:1");
	assert_int_equal(total, 700);
}

/* Gradient accumulation, by no_sync(): Accelerate's (3.11+ names the class,
 * 3.10 the function alone) or DistributedDataParallel's.  Not accumulate()
 * or _do_sync(), which Accelerate enters every step, accumulating or not;
 * not a function of the user's own of the same name. */
static void accumulation_frames(void **st)
{
	(void)st;
	const char *acc = SP "accelerate/accelerator.py", *ddp = SP "torch/nn/parallel/distributed.py";
	assert_true(ia_python_frame_hints(acc, "Accelerator.no_sync") & IA_HINT_ACCUMULATE);
	assert_true(ia_python_frame_hints(acc, "no_sync") & IA_HINT_ACCUMULATE);
	assert_true(ia_python_frame_hints(ddp, "DistributedDataParallel.no_sync") & IA_HINT_ACCUMULATE);
	assert_false(ia_python_frame_hints(acc, "Accelerator.accumulate") & IA_HINT_ACCUMULATE);
	assert_false(ia_python_frame_hints(acc, "Accelerator._do_sync") & IA_HINT_ACCUMULATE);
	assert_false(ia_python_frame_hints("/home/u/train.py", "no_sync") & IA_HINT_ACCUMULATE);
	assert_false(ia_python_frame_hints(ddp, "DistributedDataParallel.forward") & IA_HINT_ACCUMULATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accumulation_frames),
		cmocka_unit_test(python_frames),
		cmocka_unit_test(native_frames),
		cmocka_unit_test(phases_and_rank),
		cmocka_unit_test(amortised_phase_order),
		cmocka_unit_test(epoch_frames),
		cmocka_unit_test(compiler_names),
		cmocka_unit_test(competitors_by_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
