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

/* When the current pause began (CLOCK_MONOTONIC ns, low bit set so that it
 * is never 0); 0 while recording.  One word, taken by one exchange, so a
 * Start and a Stop racing in two threads count each pause once and never
 * more than it lasted. */
static _Atomic uint64_t pause_since;

void ingero_capture_init(void)
{
	if (!atomic_load_explicit(&ingero_hot.recording, memory_order_relaxed))
		atomic_store(&pause_since, ingero_now() | 1);
}

static void capture(bool on)
{
	if (!ingero_cfg.capture_profiler || !ingero_hot.on)
		return;
	if (!on) {
		uint64_t none = 0, now = ingero_now();
		if (atomic_compare_exchange_strong(&pause_since, &none, now | 1)) {
			atomic_store_explicit(&ingero_hot.recording, false, memory_order_relaxed);
			ingero_emit_capture(false, now);   /* the trace keeps the windows */
		}
		return;
	}
	uint64_t since = atomic_exchange(&pause_since, 0);
	atomic_store_explicit(&ingero_hot.recording, true, memory_order_relaxed);
	uint64_t now = ingero_now();
	if (!since)
		return;   /* was recording already */
	ingero_emit_capture(true, now);
	if (now <= since)
		return;
	/* paused time earns no stack time and no GPU marks: a capture window
	 * costs what the same stretch of steady tracing would */
	atomic_fetch_add_explicit(&ingero_paused_ns, now - since, memory_order_relaxed);
	ingero_gpu_pause(now - since);
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
