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
#include "clock.h"
#include "config.h"
#include "gpu_marks.h"
#include "runtime_hooks.h"

typedef cudaError_t (*void_fn)(void);

_Atomic uint64_t ingero_paused_ns;

/* When the current pause began (ns and ticks); the state changes under a
 * lock-free exchange, so two threads starting and stopping at once count
 * each pause once. */
static _Atomic uint64_t paused_at_ns, paused_at_ticks;

void ingero_capture_init(void)
{
	if (!atomic_load_explicit(&ingero_gate.recording, memory_order_relaxed)) {
		atomic_store(&paused_at_ns, ingero_now());
		atomic_store(&paused_at_ticks, ingero_ticks());
	}
}

static void capture(bool on)
{
	if (!ingero_cfg.capture_profiler || !ingero_gate.on)
		return;
	if (atomic_exchange_explicit(&ingero_gate.recording, on, memory_order_relaxed) == on)
		return;   /* already so */
	if (!on) {
		atomic_store_explicit(&paused_at_ns, ingero_now(), memory_order_relaxed);
		atomic_store_explicit(&paused_at_ticks, ingero_ticks(), memory_order_relaxed);
		return;
	}
	/* paused time earns no stack time and no GPU marks: a capture window
	 * costs what the same stretch of steady tracing would */
	uint64_t ns = ingero_now() - atomic_load_explicit(&paused_at_ns, memory_order_relaxed);
	uint64_t ticks = ingero_ticks() - atomic_load_explicit(&paused_at_ticks, memory_order_relaxed);
	atomic_fetch_add_explicit(&ingero_paused_ns, ns, memory_order_relaxed);
	ingero_gpu_pause(ticks);
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
