/*
 * gpu_driver.c — the libcuda functions of the GPU marks (gpu_driver.h),
 * asked of the real cuGetProcAddress_v2 by base name at CUDA 12.0's ABI.
 */
#include "gpu_driver.h"

#include <pthread.h>
#include <stddef.h>

#include "driver_hooks.h"

static struct ingero_gpu_driver drv;
static const struct ingero_gpu_driver *drv_ok;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *get(const char *name, int *missing)
{
	void *p = ingero_real_drv_proc(name, 12000);
	if (!p)
		*missing = 1;
	return p;
}

static void load(void)
{
	int missing = 0;
	drv.event_create = get("cuEventCreate", &missing);
	drv.event_destroy = get("cuEventDestroy", &missing);
	drv.event_record = get("cuEventRecord", &missing);
	drv.event_query = get("cuEventQuery", &missing);
	drv.event_sync = get("cuEventSynchronize", &missing);
	drv.event_elapsed = get("cuEventElapsedTime", &missing);
	drv.stream_get_ctx = get("cuStreamGetCtx", &missing);
	drv.stream_is_capturing = get("cuStreamIsCapturing", &missing);
	drv.stream_create = get("cuStreamCreate", &missing);
	drv.ctx_push = get("cuCtxPushCurrent", &missing);
	drv.ctx_pop = get("cuCtxPopCurrent", &missing);
	drv.exchange_capture_mode = get("cuThreadExchangeStreamCaptureMode", &missing);
	if (!missing)
		drv_ok = &drv;
}

const struct ingero_gpu_driver *ingero_gpu_driver(void)
{
	pthread_once(&once, load);
	return drv_ok;
}
