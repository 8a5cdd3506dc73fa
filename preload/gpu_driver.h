/*
 * gpu_driver.h — the libcuda functions the GPU marks need, called directly
 * (never through our wrappers: the watcher's own CUDA calls are not the
 * program's and must not be recorded).  They are fetched once from the
 * real cuGetProcAddress_v2, which every CUDA 12/13 driver has.
 */
#ifndef INGERO_PRELOAD_GPU_DRIVER_H
#define INGERO_PRELOAD_GPU_DRIVER_H

#include <stdbool.h>

typedef int CUresult_t;

struct ingero_gpu_driver {
	CUresult_t (*event_create)(void **ev, unsigned flags);
	CUresult_t (*event_destroy)(void *ev);
	CUresult_t (*event_record)(void *ev, void *stream);
	CUresult_t (*event_query)(void *ev);
	CUresult_t (*event_sync)(void *ev);
	CUresult_t (*event_elapsed)(float *ms, void *start, void *end);
	CUresult_t (*stream_get_ctx)(void *stream, void **ctx);
	CUresult_t (*stream_is_capturing)(void *stream, int *status);
	CUresult_t (*stream_create)(void **stream, unsigned flags);
	CUresult_t (*ctx_push)(void *ctx);
	CUresult_t (*ctx_pop)(void **ctx);
	CUresult_t (*exchange_capture_mode)(int *mode);
};

/* CUDA's values (cuda.h). */
#define INGERO_CU_SUCCESS 0
#define INGERO_CU_NOT_READY 600
#define INGERO_CU_CAPTURE_NONE 0
#define INGERO_CU_CAPTURE_MODE_RELAXED 2
#define INGERO_CU_STREAM_NON_BLOCKING 1

/* The table, filled on first use; NULL when the driver lacks any of them. */
const struct ingero_gpu_driver *ingero_gpu_driver(void);

#endif
