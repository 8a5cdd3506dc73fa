/*
 * test_analyzer_mechanisms.c — frames to mechanisms (analyzer/load/
 * mechanisms.c): kernel frames of page faults, unmapping and the page
 * cache; CPython's collector by its exported entry points; torch.tensor
 * over lists; multiprocessing's Queue.get as unpickling; the families that
 * share one fix; debugging instruments (anomaly detection, the profiler);
 * and no loose substring match (a user's "collect").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/mechanisms.h"

#include <stdio.h>
#include <string.h>

static void kernel_frames(void **state)
{
	(void)state;
	assert_int_equal(ia_kernel_frame_mech("clear_page_erms"), IA_MECH_FAULT);
	assert_int_equal(ia_kernel_frame_mech("do_anonymous_page"), IA_MECH_FAULT);
	assert_int_equal(ia_kernel_frame_mech("asm_exc_page_fault"), IA_MECH_FAULT);
	assert_int_equal(ia_kernel_frame_mech("filemap_fault"), IA_MECH_PAGECACHE);
	assert_int_equal(ia_kernel_frame_mech("__x64_sys_munmap"), IA_MECH_ALLOC);
	assert_int_equal(ia_kernel_frame_mech("zap_pte_range"), IA_MECH_ALLOC);
	assert_int_equal(ia_kernel_frame_mech("__x64_sys_ioctl"), IA_MECH_NONE);
	assert_int_equal(ia_kernel_frame_mech("clear_page_rep"), IA_MECH_FAULT);
	assert_int_equal(ia_kernel_frame_mech(NULL), IA_MECH_NONE);
}

static void native_and_python_frames(void **state)
{
	(void)state;
	assert_int_equal(ia_native_frame_mech("PyGC_Collect", "/usr/bin/python3.12"), IA_MECH_GC);
	assert_int_equal(ia_native_frame_mech("_Py_RunGC", "/usr/bin/python3.12"), IA_MECH_GC);
	assert_int_equal(ia_native_frame_mech("collect", "/home/u/libmine.so"), IA_MECH_NONE);
	assert_int_equal(ia_native_frame_mech("torch::utils::(anonymous namespace)::recursive_store(char*, long) "
					      "[clone .isra.0]", "libtorch_python.so"), IA_MECH_PYCONVERT);
	assert_int_equal(ia_native_frame_mech("torch::utils::tensor_ctor(c10::DispatchKey)", "libtorch_python.so"),
			 IA_MECH_NONE);   /* the constructor of a tensor from a tensor or an array too */
	assert_int_equal(ia_native_frame_mech("__memset_avx2_unaligned_erms", "libc.so.6"), IA_MECH_FILL);
	assert_int_equal(ia_python_frame_mech("/usr/lib/python3.12/multiprocessing/queues.py", "Queue.get"),
			 IA_MECH_PICKLE);
	assert_int_equal(ia_python_frame_mech("/usr/lib/python3.12/multiprocessing/queues.py", "Queue.put"),
			 IA_MECH_NONE);
	assert_int_equal(ia_python_frame_mech("/home/u/queues.py", "get"), IA_MECH_NONE);   /* not multiprocessing's */
	/* the collector's frame for a thread CPython says is collecting (docs/schema.md) */
	assert_int_equal(ia_python_frame_mech("<gc>", "garbage collection"), IA_MECH_GC);
	assert_true(ia_is_gc_frame("<gc>", "garbage collection"));
	assert_false(ia_is_gc_frame("<gc>", "f"));   /* code compiled under that name */
	assert_false(ia_is_gc_frame(NULL, "garbage collection"));
	assert_int_equal(ia_python_frame_mech("<gc>", "f"), IA_MECH_NONE);
}

static void cpu_matrix_multiplies(void **state)
{
	(void)state;
	const char *cpu = "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so";
	assert_int_equal(ia_native_frame_mech("mkl_blas_avx512_sgemm_kernel_0", cpu), IA_MECH_CPU_MATMUL);
	assert_int_equal(ia_native_frame_mech("at::native::cpublas::gemm(at::native::TransposeType, long)", cpu),
			 IA_MECH_CPU_MATMUL);
	assert_int_equal(ia_native_frame_mech("dnnl::impl::cpu::x64::brgemm_kernel_execute(...)", cpu), IA_MECH_CPU_MATMUL);
	assert_int_equal(ia_native_frame_mech("sgemm_kernel_HASWELL", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"),
			 IA_MECH_CPU_MATMUL);
	/* cuBLAS's host side, CUDA's own, or no library: not the CPU's matrix multiplies */
	assert_int_equal(ia_native_frame_mech("cublasSgemm_v2", "/usr/lib/libcublas.so.13"), IA_MECH_NONE);
	assert_int_equal(ia_native_frame_mech("at::cuda::blas::gemm<float>(...)", "libtorch_cuda.so"), IA_MECH_NONE);
	assert_int_equal(ia_native_frame_mech("at::native::cpublas::gemm(...)", NULL), IA_MECH_NONE);
	assert_int_equal(ia_native_frame_mech("at::native::add_kernel(...)", cpu), IA_MECH_NONE);
	assert_int_equal(ia_mech_family(IA_MECH_CPU_MATMUL), IA_MECH_CPU_MATMUL);
	assert_non_null(ia_mech_fix(IA_MECH_CPU_MATMUL));
}

/* Image decoding: Pillow's bundled codecs have no symbols (c64: 44 % of
 * the workers' samples, frames "?? (libjpeg-31e2ca52.so.62.4.0)"), its
 * decoder entry points do; the C library under them is not decoding. */
static void image_decoding(void **state)
{
	(void)state;
	const char *pil = "/opt/torch/.venv/lib/python3.12/site-packages/pillow.libs/libjpeg-31e2ca52.so.62.4.0";
	assert_int_equal(ia_native_frame_mech(NULL, pil), IA_MECH_DECODE);
	assert_int_equal(ia_native_frame_mech("ImagingJpegDecode", "/x/PIL/_imaging.cpython-312-x86_64-linux-gnu.so"),
			 IA_MECH_DECODE);
	assert_int_equal(ia_native_frame_mech("jpeg_idct_islow", NULL), IA_MECH_DECODE);
	assert_int_equal(ia_native_frame_mech("cv::imdecode(cv::_InputArray const&, int)", NULL), IA_MECH_DECODE);
	assert_int_equal(ia_native_frame_mech(NULL, "/lib/x86_64-linux-gnu/libc.so.6"), IA_MECH_NONE);
	assert_int_equal(ia_native_frame_mech(NULL, NULL), IA_MECH_NONE);
	/* (the OpenMP runtime's own code, named or not, is its waiting) */
	assert_int_equal(ia_native_frame_mech(NULL, "/usr/lib/x86_64-linux-gnu/libgomp.so.1"), IA_MECH_SPIN);
	assert_int_equal(ia_native_frame_mech("jpegish_user_function", "/home/u/libmine.so"), IA_MECH_NONE);
	assert_non_null(ia_mech_fix(IA_MECH_DECODE));
	assert_non_null(strstr(ia_mech_fix(IA_MECH_DECODE), "decode_jpeg"));
}

/* Instruments by the frames c65 and c66 sampled on the H100, and the
 * record_function every DataLoader step enters, profiler or not (c57). */
static void debugging_instruments(void **state)
{
	(void)state;
	const char *site = "/opt/torch/.venv/lib/python3.12/site-packages/";
	char f[200];
	assert_int_equal(ia_frame_instrument(0, "torch::autograd::PyAnomalyMetadata::store_stack()", "libtorch_python.so",
					     NULL), IA_INSTR_ANOMALY);
	snprintf(f, sizeof f, "%storch/fx/traceback.py", site);
	assert_int_equal(ia_frame_instrument(1, "format_stack", NULL, f), IA_INSTR_ANOMALY);
	assert_int_equal(ia_frame_instrument(0, "torch::profiler::impl::ThreadLocalSubqueue::begin_op(at::RecordFunction const&)",
					     "libtorch_cpu.so", NULL), IA_INSTR_PROFILER);
	assert_int_equal(ia_frame_instrument(0, "libkineto::CuptiActivityApi::popCorrelationID(libkineto::CuptiActivityApi::CorrelationFlowType)",
					     "libtorch_cpu.so", NULL), IA_INSTR_PROFILER);
	assert_int_equal(ia_frame_instrument(0, NULL, "/usr/local/cuda/lib64/libcupti.so.13", NULL), IA_INSTR_PROFILER);
	assert_int_equal(ia_frame_instrument(0, "cuptiActivityPopExternalCorrelationId", "libcupti.so.13", NULL),
			 IA_INSTR_PROFILER);
	snprintf(f, sizeof f, "%storch/profiler/profiler.py", site);
	assert_int_equal(ia_frame_instrument(1, "profile.step", NULL, f), IA_INSTR_PROFILER);
	/* not an instrument: importing the profiler, a record_function */
	assert_int_equal(ia_frame_instrument(1, "<module>", NULL, f), IA_INSTR_NONE);
	snprintf(f, sizeof f, "%storch/autograd/profiler.py", site);
	assert_int_equal(ia_frame_instrument(1, "record_function.__enter__", NULL, f), IA_INSTR_NONE);
	assert_int_equal(ia_frame_instrument(0, "torch::autograd::profiler::record_function_enter_new(std::string const&, std::optional<std::string> const&)",
					     "libtorch_cpu.so", NULL), IA_INSTR_NONE);
	snprintf(f, sizeof f, "%storch/optim/optimizer.py", site);   /* profile_hook_step: not the profiler */
	assert_int_equal(ia_frame_instrument(1, "Optimizer.profile_hook_step.<locals>.wrapper", NULL, f), IA_INSTR_NONE);
	assert_int_equal(ia_frame_instrument(0, NULL, NULL, NULL), IA_INSTR_NONE);
	assert_non_null(ia_instrument_fix(IA_INSTR_ANOMALY));
	assert_non_null(strstr(ia_instrument_fix(IA_INSTR_PROFILER), "schedule"));
}

static void families_share_a_fix(void **state)
{
	(void)state;
	assert_int_equal(ia_mech_family(IA_MECH_ALLOC), IA_MECH_FAULT);
	assert_int_equal(ia_mech_family(IA_MECH_FILL), IA_MECH_FAULT);
	assert_int_equal(ia_mech_family(IA_MECH_FAULT), IA_MECH_FAULT);
	assert_int_equal(ia_mech_family(IA_MECH_PYCONVERT), IA_MECH_PICKLE);
	assert_int_equal(ia_mech_family(IA_MECH_GC), IA_MECH_GC);
	assert_string_equal(ia_mech_fix(IA_MECH_ALLOC), ia_mech_fix(IA_MECH_FAULT));
	assert_string_equal(ia_mech_fix(IA_MECH_PYCONVERT), ia_mech_fix(IA_MECH_PICKLE));
	assert_non_null(strstr(ia_mech_fix(IA_MECH_GC), "gc.freeze()"));
	assert_string_equal(ia_mech_family_name(IA_MECH_FAULT), "fresh memory");
	assert_null(ia_mech_fix(IA_MECH_PAGECACHE));   /* the line's own fix */
	for (int m = 1; m < IA_MECH_N; m++)
		assert_true(ia_mech_name((enum ia_mech)m)[0] != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernel_frames),
		cmocka_unit_test(native_and_python_frames),
		cmocka_unit_test(image_decoding),
		cmocka_unit_test(cpu_matrix_multiplies),
		cmocka_unit_test(debugging_instruments),
		cmocka_unit_test(families_share_a_fix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
