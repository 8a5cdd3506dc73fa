/*
 * capture.c — what the program asks to be recorded.  With
 * INGERO_CAPTURE=cudaProfilerApi the library starts paused and records
 * only between cudaProfilerStart and cudaProfilerStop (what
 * torch.cuda.profiler.start()/stop() and cupy.cuda.profiler call), as
 * Nsight Systems' --capture-range=cudaProfilerApi does.  Paused, a wrapper
 * forwards its call untimed (ingero_enter says no): no record, no stack,
 * no GPU mark; the hooks stay in place, so work resumes at full fidelity.
 * Without the setting these calls are passed through and change nothing.
 *
 * The overhead bench uses it to read one process against itself, traced
 * and paused chunk by chunk (tests/bench/turns_lib.sh, turns_toggle):
 * separate processes carry offsets of their own of a few percent.
 */
#include "config.h"
#include "runtime_hooks.h"

typedef cudaError_t (*void_fn)(void);

static void capture(bool on)
{
	if (ingero_cfg.capture_profiler && ingero_on)
		atomic_store_explicit(&ingero_recording, on, memory_order_relaxed);
}

INGERO_EXPORT cudaError_t cudaProfilerStart(void)
{
	void_fn fn = (void_fn)RT_REAL(cudaProfilerStart);
	cudaError_t r = fn ? fn() : CUDART_ERROR_NO_SYMBOL;
	capture(true);
	return r;
}

INGERO_EXPORT cudaError_t cudaProfilerStop(void)
{
	capture(false);
	void_fn fn = (void_fn)RT_REAL(cudaProfilerStop);
	return fn ? fn() : CUDART_ERROR_NO_SYMBOL;
}
