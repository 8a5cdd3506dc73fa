/*
 * runtime_sync.c — libcudart host waits (stream, device, event) and the
 * device-side wait cudaStreamWaitEvent.
 */
#include "runtime_hooks.h"

typedef cudaError_t (*stream_fn)(cudaStream_t);
typedef cudaError_t (*void_fn)(void);
typedef cudaError_t (*event_fn)(cudaEvent_t);
typedef cudaError_t (*wait_fn)(cudaStream_t, cudaEvent_t, unsigned int);

#define STREAM_FILL(s_) (ev_.stream = (uint64_t)(uintptr_t)(s_))

INGERO_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	stream_fn fn_ = (stream_fn)RT_REAL(cudaStreamSynchronize);
	HOOK_CALL(INGERO_API_CUDA_STREAM_SYNCHRONIZE, fn_(s), CUDART_ERROR_NO_SYMBOL, STREAM_FILL(s),
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
	stream_fn fn_ = (stream_fn)RT_REAL(cudaStreamSynchronize_ptsz);
	HOOK_CALL(INGERO_API_CUDA_STREAM_SYNCHRONIZE_PTSZ, fn_(s), CUDART_ERROR_NO_SYMBOL,
		  STREAM_FILL(s), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	void_fn fn_ = (void_fn)RT_REAL(cudaDeviceSynchronize);
	HOOK_CALL(INGERO_API_CUDA_DEVICE_SYNCHRONIZE, fn_(), CUDART_ERROR_NO_SYMBOL, (void)0,
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	event_fn fn_ = (event_fn)RT_REAL(cudaEventSynchronize);
	HOOK_CALL(INGERO_API_CUDA_EVENT_SYNCHRONIZE, fn_(e), CUDART_ERROR_NO_SYMBOL, (void)0,
		  INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	wait_fn fn_ = (wait_fn)RT_REAL(cudaStreamWaitEvent);
	HOOK_CALL(INGERO_API_CUDA_STREAM_WAIT_EVENT, fn_(s, e, flags), CUDART_ERROR_NO_SYMBOL,
		  (STREAM_FILL(s), ev_.flags |= INGERO_FLAG_ASYNC), INGERO_KERNEL_NONE);
}

INGERO_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	wait_fn fn_ = (wait_fn)RT_REAL(cudaStreamWaitEvent_ptsz);
	HOOK_CALL(INGERO_API_CUDA_STREAM_WAIT_EVENT_PTSZ, fn_(s, e, flags), CUDART_ERROR_NO_SYMBOL,
		  (STREAM_FILL(s), ev_.flags |= INGERO_FLAG_ASYNC), INGERO_KERNEL_NONE);
}
