/*
 * starve.h — what the parts of the starvation workload share: the options,
 * the per-process ground truth, and the CUDA call wrapper that counts.
 *
 * The workload is a C stand-in for a PyTorch DataLoader loop (see
 * starve.c); every CUDA call it makes goes through CUDA_CALL so that the
 * truth line each process writes at exit lists exactly the calls it made,
 * under the API names of include/ingero/api.h.
 */
#ifndef STARVE_H
#define STARVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ingero/api.h"
#include "../fakecuda/cuda_runtime_fake.h"

enum mode { MODE_WORKERS, MODE_DIRECT, MODE_INLINE };

struct options {
	enum mode mode;
	unsigned workers;        /* forked batch builders (workers mode) */
	unsigned batches;        /* batches the parent consumes */
	size_t rows;             /* rows per batch */
	size_t row_bytes;        /* bytes per row */
	size_t array_mb;         /* size of the shared random array */
	unsigned prefetch;       /* slots per worker (DataLoader prefetch_factor) */
	unsigned worker_calls;   /* (sync + small copy) pairs per batch in each worker */
	unsigned stub_launches;  /* per batch, through __cudaLaunchKernel (nvcc stubs) */
	unsigned rt_launches;    /* per batch, cudaLaunchKernel called directly */
	unsigned exc_launches;   /* per batch, cudaLaunchKernelExC */
	unsigned drv_launches;   /* per batch, cuLaunchKernel via cudaGetDriverEntryPoint */
	int pin;                 /* pinned staging buffer (pin_memory=True) */
	int ptsz;                /* per-thread default stream entry points */
	uint64_t seed;
	unsigned transform_us;   /* CPU time each batch's transform burns in its worker (tests/ranks: a slow rank) */
	const char *truth;       /* ground-truth file, appended to; NULL: none */
};

extern struct options opt;

/* --- ground truth (truth.c) --- */
extern unsigned long truth_calls[INGERO_API_MAX];
void truth_reset(void);
/* Appends this process's line to opt.truth with one write(). */
void truth_write(const char *role, unsigned batches);

/* Fails the process with one line on stderr when a CUDA call fails. */
cudaError_t cuda_check(cudaError_t e, const char *what);
#define CUDA_CALL(api, call) \
	cuda_check((truth_calls[INGERO_API_##api]++, (call)), #call)
/* the plain or the _ptsz/_ptds form of a runtime call, per opt.ptsz */
#define CUDA_CALL_PT(api, call, call_pt) \
	(opt.ptsz ? CUDA_CALL(api##_PTSZ, call_pt) : CUDA_CALL(api, call))

/* --- the data (gather.c) --- */
struct dataset { const char *data; size_t bytes, rows, row_bytes; };
void dataset_make(struct dataset *d, size_t bytes, size_t row_bytes, uint64_t seed);
void gather_rows(char *dst, const struct dataset *d, size_t rows, uint64_t seed);
char *fresh_buffer(size_t bytes);
void fresh_buffer_free(char *p, size_t bytes);

/* --- the model (kernels.c): launches of every kind the options ask for --- */
void model_init(cudaStream_t stream);
void model_forward(void *dev_in, cudaStream_t stream);

/* --- forked batch builders (workers.c) --- */
struct pool;
struct pool *pool_start(const struct dataset *d, size_t batch_bytes, void *dev);
/* Blocks until batch b is ready; returns it (shared memory). */
const char *pool_get(struct pool *p, unsigned b);
void pool_release(struct pool *p, unsigned b);
/* Waits for every worker; 0 when all exited 0. */
int pool_finish(struct pool *p);

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
