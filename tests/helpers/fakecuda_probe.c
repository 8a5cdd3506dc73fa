/*
 * fakecuda_probe.c — checks that the fake CUDA libraries behave like the
 * real ones where the tracer depends on it: a sync really waits for the
 * queued device work (off-CPU), pinned async copies return at once while
 * pageable ones hold the host, events and device syncs wait, and driver
 * entry points come from cuGetProcAddress with the per-thread variants.
 *
 * Prints TAP lines ("ok - …" / "not ok - …") for tests/e2e/fakecuda.sh;
 * exits 1 if any check failed.  Timing checks bound from below where the
 * simulation guarantees it (a sleep never ends early) and from above only
 * with wide margins, so a loaded machine does not make them flaky.
 *   fakecuda_probe          the behaviour checks
 *   fakecuda_probe noop     the same calls under FAKECUDA_NOOP=1 return at once
 */
#include "../fakecuda/cuda_driver_fake.h"
#include "../fakecuda/cuda_runtime_fake.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failed;

static void check(int cond, const char *what, double a, double b)
{
	if (cond)
		printf("ok - %s\n", what);
	else {
		printf("not ok - %s (%.3f vs %.3f)\n", what, a, b);
		failed = 1;
	}
}

static double ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static double wall(void) { return ms(CLOCK_MONOTONIC); }
static double cpu(void) { return ms(CLOCK_THREAD_CPUTIME_ID); }

static void need(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		printf("not ok - %s returned %s\n", what, cudaGetErrorName(e));
		exit(1);
	}
}

static void kernel_stub(void) {}

#define KERNEL_MS 20.0     /* FAKECUDA_KERNEL_US=20000 */
#define GBPS_PINNED 0.5    /* 64 MiB: 134 ms */
#define GBPS_PAGEABLE 0.25 /* 64 MiB: 268 ms */
#define COPY_BYTES (64u << 20)

static void launches(int n, cudaStream_t s)
{
	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	for (int i = 0; i < n; i++)
		need(cudaLaunchKernel((const void *)kernel_stub, g, b, NULL, 0, s), "cudaLaunchKernel");
}

static void check_sync(cudaStream_t s)
{
	double t0 = wall();
	launches(5, s);
	double t1 = wall(), c0 = cpu();
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	double t2 = wall(), c1 = cpu();
	check(t1 - t0 < 5 * KERNEL_MS, "launches return before their kernels run", t1 - t0, 5 * KERNEL_MS);
	check(t2 - t0 >= 5 * KERNEL_MS, "cudaStreamSynchronize waits for 5 queued kernels", t2 - t0, 5 * KERNEL_MS);
	check(c1 - c0 < (t2 - t1) / 2 + 1, "a sync waits off-CPU", c1 - c0, t2 - t1);
	t0 = wall();
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	check(wall() - t0 < KERNEL_MS, "a sync of an idle stream returns at once", wall() - t0, KERNEL_MS);
}

static void check_copies(cudaStream_t s)
{
	void *dev, *pinned, *pageable = malloc(COPY_BYTES);
	double xfer_pinned = COPY_BYTES / GBPS_PINNED / 1e6, xfer_pageable = COPY_BYTES / GBPS_PAGEABLE / 1e6;
	need(cudaMalloc(&dev, COPY_BYTES), "cudaMalloc");
	need(cudaHostAlloc(&pinned, COPY_BYTES, 0), "cudaHostAlloc");

	double t0 = wall();
	need(cudaMemcpyAsync(dev, pinned, COPY_BYTES, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync pinned");
	double t1 = wall();
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	double t2 = wall();
	check(t1 - t0 < xfer_pinned / 2, "a pinned async copy returns at once", t1 - t0, xfer_pinned / 2);
	check(t2 - t0 >= xfer_pinned, "the sync after it waits for the transfer", t2 - t0, xfer_pinned);

	t0 = wall();
	double c0 = cpu();
	need(cudaMemcpyAsync(dev, pageable, COPY_BYTES, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync pageable");
	t1 = wall();
	double c1 = cpu();
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	check(t1 - t0 >= xfer_pageable, "a pageable async copy holds the host for bytes/rate", t1 - t0, xfer_pageable);
	check(c1 - c0 >= xfer_pageable * 0.9, "... on-CPU (staging)", c1 - c0, xfer_pageable);
	check(t1 - t0 > 1.5 * xfer_pinned, "pageable copies take longer than pinned ones", t1 - t0, xfer_pinned);

	/* a registered range counts as pinned */
	need(cudaHostRegister(pageable, COPY_BYTES, 0), "cudaHostRegister");
	t0 = wall();
	need(cudaMemcpyAsync(dev, (char *)pageable + 4096, 1 << 20, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
	check(wall() - t0 < xfer_pinned / 2, "a registered range copies as pinned", wall() - t0, xfer_pinned / 2);
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	need(cudaHostUnregister(pageable), "cudaHostUnregister");
	check(cudaHostUnregister(pageable) == cudaErrorHostMemoryNotRegistered,
	      "unregistering twice is cudaErrorHostMemoryNotRegistered", 0, 0);
	cudaGetLastError();

	/* a synchronous D2H copy waits for the stream's kernels first */
	launches(3, NULL);
	t0 = wall();
	need(cudaMemcpy(pinned, dev, 4096, cudaMemcpyDeviceToHost), "cudaMemcpy");
	check(wall() - t0 >= 2 * KERNEL_MS, "cudaMemcpy waits for the kernels before it", wall() - t0, 3 * KERNEL_MS);

	need(cudaFreeHost(pinned), "cudaFreeHost");
	need(cudaFree(dev), "cudaFree");
	free(pageable);
}

static void check_events_and_device(cudaStream_t s)
{
	cudaStream_t s2;
	cudaEvent_t e;
	need(cudaStreamCreate(&s2), "cudaStreamCreate");
	need(cudaEventCreate(&e), "cudaEventCreate");
	double t0 = wall();
	launches(3, s);
	need(cudaEventRecord(e, s), "cudaEventRecord");
	launches(3, s);
	need(cudaEventSynchronize(e), "cudaEventSynchronize");
	double t1 = wall();
	check(t1 - t0 >= 3 * KERNEL_MS, "cudaEventSynchronize waits for the work before the record", t1 - t0,
	      3 * KERNEL_MS);
	check(t1 - t0 < 6 * KERNEL_MS + 20, "... and not for the work after it", t1 - t0, 6 * KERNEL_MS);
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");

	t0 = wall();
	launches(2, s);
	launches(4, s2);
	need(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	check(wall() - t0 >= 4 * KERNEL_MS, "cudaDeviceSynchronize waits for every stream", wall() - t0, 4 * KERNEL_MS);

	/* a stream waiting on an event inherits the other stream's work */
	t0 = wall();
	launches(4, s);
	need(cudaEventRecord(e, s), "cudaEventRecord");
	need(cudaStreamWaitEvent(s2, e, 0), "cudaStreamWaitEvent");
	need(cudaStreamSynchronize(s2), "cudaStreamSynchronize");
	check(wall() - t0 >= 4 * KERNEL_MS, "cudaStreamWaitEvent orders s2 after s", wall() - t0, 4 * KERNEL_MS);

	/* the per-thread default stream is not the legacy one */
	launches(5, NULL);
	t0 = wall();
	need(cudaStreamSynchronize_ptsz(NULL), "cudaStreamSynchronize_ptsz");
	check(wall() - t0 < KERNEL_MS, "the per-thread default stream is separate from the legacy one", wall() - t0,
	      KERNEL_MS);
	need(cudaStreamSynchronize(NULL), "cudaStreamSynchronize");
	need(cudaEventDestroy(e), "cudaEventDestroy");
	need(cudaStreamDestroy(s2), "cudaStreamDestroy");
}

static void check_entry_points(void)
{
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *p = NULL;
	enum cudaDriverEntryPointQueryResult st;
	check(drv != NULL, "libcudart loaded libcuda.so.1", 0, 0);
	if (!drv)
		return;
	need(cudaGetDriverEntryPoint("cuLaunchKernel", &p, cudaEnableDefault, &st), "cudaGetDriverEntryPoint");
	check(p == dlsym(drv, "cuLaunchKernel") && st == cudaDriverEntryPointSuccess,
	      "cudaGetDriverEntryPoint(cuLaunchKernel) is the driver's", 0, 0);
	need(cudaGetDriverEntryPoint("cuLaunchKernel", &p, cudaEnablePerThreadDefaultStream, &st),
	     "cudaGetDriverEntryPoint");
	check(p == dlsym(drv, "cuLaunchKernel_ptsz"), "the per-thread flag gives cuLaunchKernel_ptsz", 0, 0);
	need(cudaGetDriverEntryPointByVersion("cuMemcpyHtoDAsync", &p, 12000, cudaEnableDefault, &st),
	     "cudaGetDriverEntryPointByVersion");
	check(p == dlsym(drv, "cuMemcpyHtoDAsync_v2"), "base name cuMemcpyHtoDAsync gives cuMemcpyHtoDAsync_v2", 0, 0);
	cudaError_t e = cudaGetDriverEntryPoint("cuNoSuchFunction", &p, cudaEnableDefault, &st);
	check(e == cudaErrorSymbolNotFound && p == NULL && st == cudaDriverEntryPointSymbolNotFound,
	      "an unknown driver symbol is not found", e, st);
	check(cudaGetLastError() == cudaErrorSymbolNotFound && cudaGetLastError() == cudaSuccess,
	      "cudaGetLastError reports it once", 0, 0);

	__typeof__(cuGetProcAddress_v2) *gpa = (__typeof__(gpa))dlsym(drv, "cuGetProcAddress_v2");
	CUdriverProcAddressQueryResult cst;
	CUresult rc = gpa ? gpa("cuNope", &p, 13000, 0, &cst) : -1;
	check(rc == CUDA_ERROR_NOT_FOUND && cst == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	      "cuGetProcAddress_v2 answers CUDA_ERROR_NOT_FOUND for unknown names", rc, 0);
	rc = gpa ? gpa("cuStreamSynchronize", &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &cst) : -1;
	check(rc == 0 && p == dlsym(drv, "cuStreamSynchronize_ptsz"), "cuGetProcAddress_v2 per-thread variant", rc, 0);

	const char *name = NULL;
	need(cudaLaunchKernel((const void *)kernel_stub, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL),
	     "cudaLaunchKernel");
	check(cudaFuncGetName(&name, (const void *)kernel_stub) == cudaSuccess && name && strncmp(name, "kernel_", 7) == 0,
	      "cudaFuncGetName names a launched kernel", 0, 0);
	need(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

static void check_fork(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		double t0 = wall();
		launches(3, NULL);
		int ok = cudaStreamSynchronize(NULL) == cudaSuccess && wall() - t0 >= 3 * KERNEL_MS;
		_exit(ok ? 0 : 1);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a forked child launches and syncs", st, 0);
}

static void check_noop(void)
{
	cudaStream_t s;
	void *dev, *pageable = malloc(COPY_BYTES);
	need(cudaStreamCreate(&s), "cudaStreamCreate");
	need(cudaMalloc(&dev, COPY_BYTES), "cudaMalloc");
	double t0 = wall();
	launches(100, s);
	need(cudaMemcpyAsync(dev, pageable, COPY_BYTES, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
	need(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	need(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	check(wall() - t0 < 50, "FAKECUDA_NOOP=1: 100 launches, a 64 MiB pageable copy and syncs take no time",
	      wall() - t0, 50);
	free(pageable);
}

int main(int argc, char **argv)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%d", (int)(KERNEL_MS * 1000));
	setenv("FAKECUDA_KERNEL_US", buf, 1);
	snprintf(buf, sizeof buf, "%g", GBPS_PINNED);
	setenv("FAKECUDA_PINNED_GBPS", buf, 1);
	snprintf(buf, sizeof buf, "%g", GBPS_PAGEABLE);
	setenv("FAKECUDA_PAGEABLE_GBPS", buf, 1);
	setenv("FAKECUDA_PAGEABLE_MODE", "cpu", 1);
	unsetenv("FAKECUDA_SYNC_EXTRA_US");
	if (argc > 1 && strcmp(argv[1], "noop") == 0) {
		setenv("FAKECUDA_NOOP", "1", 1);
		check_noop();
		return failed;
	}
	unsetenv("FAKECUDA_NOOP");

	cudaStream_t s;
	need(cudaStreamCreate(&s), "cudaStreamCreate");
	check_sync(s);
	check_copies(s);
	check_events_and_device(s);
	check_entry_points();
	check_fork();
	return failed;
}
