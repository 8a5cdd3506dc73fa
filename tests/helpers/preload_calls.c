/*
 * preload_calls.c — a program that makes known CUDA calls on the fake
 * runtime, for the preload library's tests, and prints its own ground
 * truth ("truth pid=P ppid=Q api=NAME count=N" lines).
 *
 *   preload_calls thin N           N × (cudaMemcpyAsync H→D pinned + cudaStreamSynchronize)
 *   preload_calls all N            every wrapped runtime API N times (plus what they need)
 *   preload_calls driver N         driver APIs N times each, through pointers from
 *                                  cuGetProcAddress_v2 (dlsym on libcuda's handle),
 *                                  cudaGetDriverEntryPoint and ...ByVersion
 *   preload_calls fork N K         K children forked before the first CUDA call and K after,
 *                                  each (and the parent) making `thin N`; grandchildren of
 *                                  one "after" child too
 *   preload_calls fork-first N K   K children forked and calling CUDA before the parent does
 *   preload_calls storm N K        after its first call, K children forked at once, each making
 *                                  `thin N` into the parent's ring and exiting at once (a fork
 *                                  storm of short-lived workers), then the parent `thin N`;
 *                                  PRELOAD_CALLS_NAP_MS: that long asleep before the storm
 *   preload_calls outlive N        N calls; a child makes N, the parent exits, the child N more
 *                                  (they trace on rings of their own), then the parent
 *   preload_calls threads T N      T threads × N cudaLaunchKernel (use FAKECUDA_NOOP=1)
 *   preload_calls waves T N        PRELOAD_CALLS_WAVES (3) waves, 2.2 s apart, of T threads ×
 *                                  N × (cudaLaunchKernel, and every 8th a cudaStreamSynchronize)
 *   preload_calls loop N [W [D]]   W warm-up calls, then N × cudaStreamSynchronize on a new
 *                                  stream (use FAKECUDA_NOOP=1), D calls deep (for stacks of
 *                                  D+ frames); prints ns_per_call (wall), cpu_ns_per_call
 *                                  (this thread's CPU time) and in_call_ns (wall time inside
 *                                  the calls); PRELOAD_CALLS_LAUNCH=1: launches instead of
 *                                  syncs, =driver: through cuGetProcAddress's cuLaunchKernel;
 *                                  between calls it touches
 *                                  PRELOAD_CALLS_THRASH_KB of data and runs PRELOAD_CALLS_CODE_KB
 *                                  of code, if set
 *   preload_calls copy-latency N   N × cudaMemcpy H→D of 1 MiB pinned and 1 MiB pageable
 *   preload_calls launch-sync N    N × (cudaLaunchKernel + cudaStreamSynchronize)
 *   preload_calls capture N        N × cudaDeviceSynchronize, then between cudaProfilerStart
 *                                  and cudaProfilerStop N × (cudaLaunchKernel + cudaStreamSynchronize),
 *                                  N × cudaDeviceSynchronize again, then N × cudaMemsetAsync
 *                                  inside a second start/stop; with INGERO_CAPTURE=cudaProfilerApi
 *                                  the syncs outside are counted as "cudaDeviceSynchronize(paused)";
 *                                  PRELOAD_CALLS_NAP_MS: that long asleep (5 ms naps) before the
 *                                  first start, at the end of the first window, after it, and at
 *                                  the start of the second
 *   preload_calls stamps N         N × cudaDeviceSynchronize, printing "stamp BEFORE AFTER"
 *                                  (CLOCK_MONOTONIC ns around each call)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fakecuda/cuda_driver_fake.h"
#include "../fakecuda/cuda_runtime_fake.h"

#define MAXAPI 128
static struct {
	const char *name;
	long n;
} truth[MAXAPI];
static int ntruth;

static void count(const char *api, long n)
{
	for (int i = 0; i < ntruth; i++)
		if (strcmp(truth[i].name, api) == 0) {
			truth[i].n += n;
			return;
		}
	if (ntruth < MAXAPI) {
		truth[ntruth].name = api;
		truth[ntruth++].n = n;
	}
}

static void print_truth(void)
{
	for (int i = 0; i < ntruth; i++)
		printf("truth pid=%d ppid=%d api=%s count=%ld\n", getpid(), getppid(), truth[i].name,
		       truth[i].n);
	fflush(stdout);
}

#define CK(call, api)                                                                    \
	do {                                                                             \
		int rc_ = (call);                                                        \
		if (rc_) {                                                               \
			fprintf(stderr, "preload_calls: %s failed: %d\n", api, rc_);     \
			exit(1);                                                         \
		}                                                                        \
		count(api, 1);                                                           \
	} while (0)

static void kernel_a(void) {}
static void kernel_b(void) {}

/* What an nvcc-built image does at load: register its kernels by name. */
__attribute__((constructor)) static void register_kernels(void)
{
	void **h = __cudaRegisterFatBinary(NULL);
	__cudaRegisterFunction(h, (const char *)kernel_a, "kernel_a", "_Z8kernel_av", -1, NULL, NULL, NULL,
			       NULL, NULL);
	__cudaRegisterFunction(h, (const char *)kernel_b, "kernel_b", "_Z8kernel_bv", -1, NULL, NULL, NULL,
			       NULL, NULL);
	__cudaRegisterFatBinaryEnd(h);
}

static void thin(long n)
{
	void *h, *d;
	cudaStream_t s;
	CK(cudaHostAlloc(&h, 1 << 16, 0), "cudaHostAlloc");
	CK(cudaMalloc(&d, 1 << 16), "cudaMalloc");
	cudaStreamCreate(&s);
	for (long i = 0; i < n; i++) {
		CK(cudaMemcpyAsync(d, h, 4096, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
		CK(cudaStreamSynchronize(s), "cudaStreamSynchronize");
	}
	CK(cudaFree(d), "cudaFree");
	CK(cudaFreeHost(h), "cudaFreeHost");
}

static void all(long n)
{
	void *h, *h2, *d, *d2, *reg;
	cudaStream_t s;
	cudaEvent_t e;
	static char regbuf[1 << 16];
	reg = regbuf;
	CK(cudaMallocHost(&h, 1 << 20), "cudaMallocHost");
	CK(cudaHostAlloc(&h2, 1 << 20, 0), "cudaHostAlloc");
	CK(cudaHostRegister(reg, sizeof regbuf, 0), "cudaHostRegister");
	CK(cudaMalloc(&d, 1 << 20), "cudaMalloc");
	CK(cudaMalloc(&d2, 1 << 20), "cudaMalloc");
	cudaStreamCreate(&s);
	cudaEventCreate(&e);
	char *pageable = malloc(1 << 20);
	cudaLaunchConfig_t cfg = { { 2, 1, 1 }, { 32, 1, 1 }, 0, s, NULL, 0 };
	dim3 g = { 4, 2, 1 }, b = { 128, 1, 1 };
	cudaKernel_t k;
	__cudaGetKernel(&k, (const void *)kernel_b);
	for (long i = 0; i < n; i++) {
		CK(cudaMemcpy(d, h, 4096, cudaMemcpyHostToDevice), "cudaMemcpy");
		CK(cudaMemcpy_ptds(pageable, d, 4096, cudaMemcpyDeviceToHost), "cudaMemcpy_ptds");
		CK(cudaMemcpyAsync(d, pageable, 8192, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
		CK(cudaMemcpyAsync_ptsz(h2, d, 8192, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync_ptsz");
		CK(cudaMemcpy2D(d, 64, reg, 64, 64, 4, cudaMemcpyHostToDevice), "cudaMemcpy2D");
		CK(cudaMemcpy2D_ptds(d2, 64, d, 64, 64, 4, cudaMemcpyDeviceToDevice), "cudaMemcpy2D_ptds");
		CK(cudaMemcpy2DAsync(d, 64, h, 64, 64, 4, cudaMemcpyHostToDevice, s), "cudaMemcpy2DAsync");
		CK(cudaMemcpy2DAsync_ptsz(d, 64, h, 64, 64, 4, cudaMemcpyHostToDevice, s),
		   "cudaMemcpy2DAsync_ptsz");
		CK(cudaMemcpyPeer(d2, 0, d, 0, 1024), "cudaMemcpyPeer");
		CK(cudaMemcpyPeerAsync(d2, 0, d, 0, 1024, s), "cudaMemcpyPeerAsync");
		CK(cudaMemsetAsync(d, 0, 1024, s), "cudaMemsetAsync");
		CK(cudaMemsetAsync_ptsz(d, 0, 1024, s), "cudaMemsetAsync_ptsz");
		CK(cudaLaunchKernel((const void *)kernel_a, g, b, NULL, 0, s), "cudaLaunchKernel");
		CK(cudaLaunchKernel_ptsz((const void *)kernel_a, g, b, NULL, 0, s), "cudaLaunchKernel_ptsz");
		CK(__cudaLaunchKernel(k, g, b, NULL, 0, s), "__cudaLaunchKernel");
		CK(__cudaLaunchKernel_ptsz(k, g, b, NULL, 0, s), "__cudaLaunchKernel_ptsz");
		CK(cudaLaunchKernelExC(&cfg, (const void *)kernel_a, NULL), "cudaLaunchKernelExC");
		CK(cudaLaunchKernelExC_ptsz(&cfg, (const void *)kernel_b, NULL), "cudaLaunchKernelExC_ptsz");
		CK(cudaGraphLaunch((cudaGraphExec_t)0x1234, s), "cudaGraphLaunch");
		CK(cudaGraphLaunch_ptsz((cudaGraphExec_t)0x1234, s), "cudaGraphLaunch_ptsz");
		CK(cudaEventRecord(e, s), "cudaEventRecord(untraced)");
		CK(cudaStreamWaitEvent(s, e, 0), "cudaStreamWaitEvent");
		CK(cudaStreamWaitEvent_ptsz(s, e, 0), "cudaStreamWaitEvent_ptsz");
		CK(cudaEventSynchronize(e), "cudaEventSynchronize");
		CK(cudaStreamSynchronize(s), "cudaStreamSynchronize");
		CK(cudaStreamSynchronize_ptsz(0), "cudaStreamSynchronize_ptsz");
		CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
		void *a;
		CK(cudaMallocAsync(&a, 256, s), "cudaMallocAsync");
		CK(cudaFreeAsync(a, s), "cudaFreeAsync");
		CK(cudaMallocAsync_ptsz(&a, 256, s), "cudaMallocAsync_ptsz");
		CK(cudaFreeAsync_ptsz(a, s), "cudaFreeAsync_ptsz");
	}
	CK(cudaHostUnregister(reg), "cudaHostUnregister");
	CK(cudaFreeHost(h), "cudaFreeHost");
	CK(cudaFreeHost(h2), "cudaFreeHost");
	CK(cudaFree(d), "cudaFree");
	CK(cudaFree(d2), "cudaFree");
	free(pageable);
}

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void *entry(gpa_fn gpa, int how, const char *name, int per_thread)
{
	void *p = NULL;
	int st = 0;
	if (how == 0) {
		CUdriverProcAddressQueryResult q;
		if (gpa(name, &p, 13000,
			per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_LEGACY_STREAM,
			&q))
			p = NULL;
	} else if (how == 1) {
		if (cudaGetDriverEntryPoint(name, &p, per_thread ? cudaEnablePerThreadDefaultStream
								  : cudaEnableLegacyStream, (void *)&st))
			p = NULL;
	} else {
		if (cudaGetDriverEntryPointByVersion(name, &p, 13000, per_thread ? cudaEnablePerThreadDefaultStream
										 : cudaEnableLegacyStream,
						     (void *)&st))
			p = NULL;
	}
	if (!p) {
		fprintf(stderr, "preload_calls: no entry point %s\n", name);
		exit(1);
	}
	return p;
}

static void driver(long n)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "preload_calls: dlopen libcuda.so.1: %s\n", dlerror());
		exit(1);
	}
	gpa_fn gpa = (gpa_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (!gpa) {
		fprintf(stderr, "preload_calls: no cuGetProcAddress_v2\n");
		exit(1);
	}
	void *d;
	cudaMalloc(&d, 1);   /* initialises the runtime, context */
	count("cudaMalloc", 1);
	for (int how = 0; how < 3; how++) {
		CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				   CUstream, void **, void **) = entry(gpa, how, "cuLaunchKernel", 0);
		CUresult (*launch_pt)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				      unsigned, CUstream, void **, void **) = entry(gpa, how, "cuLaunchKernel", 1);
		CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **) =
			entry(gpa, how, "cuLaunchKernelEx", 0);
		CUresult (*sync)(CUstream) = entry(gpa, how, "cuStreamSynchronize", 0);
		CUresult (*ctx_sync)(void) = entry(gpa, how, "cuCtxSynchronize", 0);
		CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream) =
			entry(gpa, how, "cuMemcpyHtoDAsync", 0);
		CUresult (*dtoh)(void *, CUdeviceptr, size_t) = entry(gpa, how, "cuMemcpyDtoH", 0);
		CUresult (*alloc)(CUdeviceptr *, size_t) = entry(gpa, how, "cuMemAlloc", 0);
		CUresult (*mfree)(CUdeviceptr) = entry(gpa, how, "cuMemFree", 0);
		CUresult (*hostalloc)(void **, size_t, unsigned) = entry(gpa, how, "cuMemHostAlloc", 0);
		CUresult (*freehost)(void *) = entry(gpa, how, "cuMemFreeHost", 0);
		CUresult (*modget)(CUmodule *, const void *) = entry(gpa, how, "cuModuleLoadData", 0);
		CUresult (*getfn)(CUfunction *, CUmodule, const char *) = entry(gpa, how, "cuModuleGetFunction", 0);
		CUmodule mod;
		CUfunction fn;
		if (modget(&mod, "fake") || getfn(&fn, mod, "driver_kernel")) {
			fprintf(stderr, "preload_calls: module/function\n");
			exit(1);
		}
		CUdeviceptr dp;
		void *hp;
		CUlaunchConfig cfg = { 8, 1, 1, 64, 1, 1, 0, NULL, NULL, 0 };
		CK(alloc(&dp, 1 << 20), "cuMemAlloc_v2");
		CK(hostalloc(&hp, 1 << 20, 0), "cuMemHostAlloc");
		for (long i = 0; i < n; i++) {
			CK(launch(fn, 1, 2, 3, 32, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
			CK(launch_pt(fn, 1, 2, 3, 32, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel_ptsz");
			CK(launch_ex(&cfg, fn, NULL, NULL), "cuLaunchKernelEx");
			CK(htod(dp, hp, 4096, NULL), "cuMemcpyHtoDAsync_v2");
			CK(sync(NULL), "cuStreamSynchronize");
			CK(dtoh(hp, dp, 4096), "cuMemcpyDtoH_v2");
			CK(ctx_sync(), "cuCtxSynchronize");
		}
		CK(freehost(hp), "cuMemFreeHost");
		CK(mfree(dp), "cuMemFree_v2");
	}
}

static void *thread_main(void *arg)
{
	long n = (long)arg;
	dim3 g = { 1, 1, 1 }, b = { 1, 1, 1 };
	for (long i = 0; i < n; i++)
		cudaLaunchKernel((const void *)kernel_a, g, b, NULL, 0, 0);
	return NULL;
}

static void *wave_main(void *arg)
{
	long n = (long)arg;
	dim3 g = { 1, 1, 1 }, b = { 1, 1, 1 };
	for (long i = 0; i < n; i++) {
		cudaLaunchKernel((const void *)kernel_a, g, b, NULL, 0, 0);
		if (i % 8 == 0)
			cudaStreamSynchronize(0);
	}
	return NULL;
}

/* 1 MiB of code, one jump per cache line, each to the next line, then a
 * return: entered CODE_KB from its end, it runs through that much code
 * (and CODE_KB / 4 pages), as a big program runs through its own between
 * two CUDA calls (PyTorch, ~46 us of Python and C++ between launches on
 * the H200), so the library's code, and its pages' TLB entries, are cold
 * at each call, not only its data. */
#define SLED_KB 1024
__asm__(".text\n.balign 4096\n.type code_sled, @function\ncode_sled:\n"
	".rept " "16384" "\n\tjmp 1f\n\t.balign 64, 0xcc\n1:\n.endr\n\tret\n"
	".size code_sled, .-code_sled\n");
extern char code_sled[];

/* Called once, as the timed loop starts: make bench-lines' callgrind zeroes
 * its counts here (--zero-before), so the warm-up's launches are left out. */
__attribute__((noinline)) void preload_calls_timed_loop(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The benchmark loop, called d frames deep so stacks have d+ frames. */
__attribute__((noinline)) static void loop_deep(long d, long n, long warm)
{
	if (d > 0) {
		loop_deep(d - 1, n, warm);
		__asm__ volatile("" ::: "memory");   /* not a tail call: keep the frame */
		return;
	}
	cudaStream_t s;
	cudaStreamCreate(&s);
	/* PRELOAD_CALLS_LAUNCH=1: kernel launches on the stream instead of
	 * syncs (what a training loop mostly makes: the GPU-mark and kernel-name
	 * paths run too); =driver: through cuLaunchKernel as cuGetProcAddress
	 * hands it out, PyTorch's path (libcudart calls the driver's pointer) */
	const char *lm = getenv("PRELOAD_CALLS_LAUNCH");
	int launch = lm != NULL;
	CUresult (*drv_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			       CUstream, void **, void **) = NULL;
	if (lm && strcmp(lm, "driver") == 0) {
		void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		gpa_fn gpa = lib ? (gpa_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
		if (!gpa) {
			fprintf(stderr, "preload_calls: no cuGetProcAddress_v2\n");
			exit(1);
		}
		drv_launch = entry(gpa, 0, "cuLaunchKernel", 0);
	}
	dim3 g1 = { 1, 1, 1 };
	/* launches warm up 1 ms apart: the library's GPU-mark watcher (a
	 * thread of its own, slow to be scheduled under valgrind) readies the
	 * stream meanwhile, so the loop runs the marks' steady path */
	struct timespec ms1 = { 0, 1000000 };
	for (long i = 0; i <= warm; i++) {
		if (drv_launch)
			drv_launch((CUfunction)(uintptr_t)kernel_a, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		else if (launch)
			cudaLaunchKernel((const void *)kernel_a, g1, g1, NULL, 0, s);
		if (launch)
			nanosleep(&ms1, NULL);
		cudaStreamSynchronize(s);
	}
	/* PRELOAD_CALLS_THRASH_KB: the program touches that much memory
	 * between calls, as a big one does, so the library's code and data are
	 * cold at each call (what the microbench's hot loop cannot show) */
	const char *tk = getenv("PRELOAD_CALLS_THRASH_KB");
	size_t thrash = tk ? (size_t)atol(tk) * 1024 : 0;
	volatile char *buf = thrash ? calloc(1, thrash) : NULL;
	/* PRELOAD_CALLS_CODE_KB (≤ 1024): that much code run between calls */
	const char *ck = getenv("PRELOAD_CALLS_CODE_KB");
	long code_kb = ck ? atol(ck) : 0;
	if (code_kb > SLED_KB)
		code_kb = SLED_KB;
	void (*sled)(void) = code_kb > 0 ? (void (*)(void))(code_sled + (SLED_KB - code_kb) * 1024) : NULL;
	struct timespec c0, c1, w0, w1;
	long long in_call = 0;   /* wall time inside the calls: the program's work between them left out */
	preload_calls_timed_loop();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	for (long i = 0; i < n; i++) {
		for (size_t o = 0; buf && o < thrash; o += 64)
			buf[o]++;
		if (sled)
			sled();
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (drv_launch)
			drv_launch((CUfunction)(uintptr_t)kernel_a, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		else if (launch)
			cudaLaunchKernel((const void *)kernel_a, g1, g1, NULL, 0, s);
		else
			cudaStreamSynchronize(s);
		clock_gettime(CLOCK_MONOTONIC, &b);
		in_call += (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
	}
	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	count("cudaStreamSynchronize", (launch ? 0 : n) + warm + 1);
	if (launch)
		count(drv_launch ? "cuLaunchKernel" : "cudaLaunchKernel", n + warm + 1);
	printf("ns_per_call=%.1f cpu_ns_per_call=%.1f in_call_ns=%.1f\n",
	       ((w1.tv_sec - w0.tv_sec) * 1e9 + (w1.tv_nsec - w0.tv_nsec)) / (double)n,
	       ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / (double)n, in_call / (double)n);
}

static void reap(void)
{
	int st;
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "preload_calls: a child failed\n");
			exit(1);
		}
}


int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: preload_calls thin|all|driver|fork|fork-launch|threads|loop|copy-latency N [K]\n");
		return 2;
	}
	const char *mode = argv[1];
	long n = atol(argv[2]);
	long k = argc > 3 ? atol(argv[3]) : 0;
	if (strcmp(mode, "thin") == 0) {
		thin(n);
	} else if (strcmp(mode, "all") == 0) {
		all(n);
	} else if (strcmp(mode, "driver") == 0) {
		driver(n);
	} else if (strcmp(mode, "fork") == 0) {
		for (long i = 0; i < k; i++)
			if (fork() == 0) {
				usleep(100000);   /* let the parent make its first call first */
				thin(n);
				print_truth();
				_exit(0);
			}
		thin(n);
		for (long i = 0; i < k; i++)
			if (fork() == 0) {
				ntruth = 0;
				if (i == 0 && fork() == 0) {   /* a grandchild */
					ntruth = 0;
					thin(n);
					print_truth();
					exit(0);
				}
				thin(n);
				reap();
				print_truth();
				exit(0);   /* through exit(): the library's destructor runs */
			}
		reap();
	} else if (strcmp(mode, "fork-launch") == 0) {
		/* launches before and after a fork, in the forking thread: the
		 * child's are its own, not the parent's (its lane was the parent's) */
		dim3 g = { 1, 1, 1 };
		cudaStream_t s;
		cudaStreamCreate(&s);
		for (long i = 0; i < n; i++)
			CK(cudaLaunchKernel((const void *)kernel_a, g, g, NULL, 0, s), "cudaLaunchKernel");
		for (long i = 0; i < k; i++)
			if (fork() == 0) {
				ntruth = 0;
				for (long j = 0; j < n; j++)
					CK(cudaLaunchKernel((const void *)kernel_a, g, g, NULL, 0, s), "cudaLaunchKernel");
				CK(cudaStreamSynchronize(s), "cudaStreamSynchronize");
				print_truth();
				exit(0);
			}
		for (long i = 0; i < n; i++)
			CK(cudaLaunchKernel((const void *)kernel_a, g, g, NULL, 0, s), "cudaLaunchKernel");
		reap();
	} else if (strcmp(mode, "outlive") == 0) {
		/* a child calling CUDA before and after its parent, the ring's owner, exited */
		thin(n);
		pid_t parent = getpid();
		int fds[2];
		char b = 0;
		if (pipe(fds))
			return 1;
		if (fork() == 0) {
			ntruth = 0;
			thin(n);
			if (write(fds[1], "c", 1) != 1)
				_exit(1);
			for (int i = 0; i < 5000 && getppid() == parent; i++)
				usleep(1000);
			thin(n);
			print_truth();
			_exit(0);
		}
		if (read(fds[0], &b, 1) != 1)
			return 1;
		print_truth();
		return 0;   /* exit() without reaping: the library's final flush sees the child running */
	} else if (strcmp(mode, "storm") == 0) {
		const char *nap = getenv("PRELOAD_CALLS_NAP_MS");
		thin(1);
		if (nap)   /* (its sender connects meanwhile; the collector may enrol it) */
			usleep((useconds_t)atol(nap) * 1000);
		for (long i = 0; i < k; i++)
			if (fork() == 0) {
				ntruth = 0;
				thin(n);
				print_truth();
				exit(0);
			}
		reap();
		thin(n);
	} else if (strcmp(mode, "fork-first") == 0) {
		for (long i = 0; i < k; i++)
			if (fork() == 0) {
				thin(n);
				print_truth();
				exit(0);
			}
		reap();
		thin(n);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t th[1024];
		if (n < 1 || n > 1024) {
			fprintf(stderr, "preload_calls: 1..1024 threads\n");
			return 2;
		}
		for (long i = 0; i < n; i++)
			pthread_create(&th[i], NULL, thread_main, (void *)k);
		for (long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		count("cudaLaunchKernel", n * k);
	} else if (strcmp(mode, "waves") == 0) {
		/* threads that come and go: the sender frees a gone thread's lane
		 * within a second (and a drain, and a send), for the next wave's */
		pthread_t th[1024];
		const char *wv = getenv("PRELOAD_CALLS_WAVES");
		long waves = wv ? atol(wv) : 3;
		if (n < 1 || n > 1024) {
			fprintf(stderr, "preload_calls: 1..1024 threads\n");
			return 2;
		}
		for (long w = 0; w < waves; w++) {
			if (w) {
				struct timespec ts = { 2, 200000000 };
				nanosleep(&ts, NULL);
			}
			for (long i = 0; i < n; i++)
				pthread_create(&th[i], NULL, wave_main, (void *)k);
			for (long i = 0; i < n; i++)
				pthread_join(th[i], NULL);
		}
		count("cudaLaunchKernel", waves * n * k);
		count("cudaStreamSynchronize", waves * n * ((k + 7) / 8));
	} else if (strcmp(mode, "loop") == 0) {
		loop_deep(argc > 4 ? atol(argv[4]) : 0, n, k);
	} else if (strcmp(mode, "copy-latency") == 0) {
		void *h, *d;
		char *pg = malloc(1 << 20);
		memset(pg, 1, 1 << 20);
		CK(cudaHostAlloc(&h, 1 << 20, 0), "cudaHostAlloc");
		CK(cudaMalloc(&d, 1 << 20), "cudaMalloc");
		for (long i = 0; i < n; i++)
			CK(cudaMemcpy(d, h, 1 << 20, cudaMemcpyHostToDevice), "cudaMemcpy");
		for (long i = 0; i < n; i++)
			CK(cudaMemcpy(d, pg, 1 << 20, cudaMemcpyHostToDevice), "cudaMemcpy");
	} else if (strcmp(mode, "stamps") == 0) {
		for (long i = 0; i < n; i++) {
			struct timespec a, b;
			clock_gettime(CLOCK_MONOTONIC, &a);
			CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
			clock_gettime(CLOCK_MONOTONIC, &b);
			printf("stamp %llu %llu\n", (unsigned long long)a.tv_sec * 1000000000ull + a.tv_nsec,
			       (unsigned long long)b.tv_sec * 1000000000ull + b.tv_nsec);
			usleep(2000);
		}
	} else if (strcmp(mode, "capture") == 0) {
		const char *cap = getenv("INGERO_CAPTURE");
		const char *paused = "cudaDeviceSynchronize(paused)";
		const char *outside = cap && strcasecmp(cap, "cudaProfilerApi") == 0 ? paused : "cudaDeviceSynchronize";
		cudaStream_t s;
		void *d;
		dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
		cudaStreamCreate(&s);
		CK(cudaMalloc(&d, 4096), outside == paused ? "cudaMalloc(paused)" : "cudaMalloc");
		for (long i = 0; i < n; i++)
			CK(cudaDeviceSynchronize(), outside);
		/* PRELOAD_CALLS_NAP_MS: that long in 5 ms naps at the end of the
		 * first window, after it and at the start of the second
		 * (off-CPU evidence for the eBPF side) */
		const char *nap = getenv("PRELOAD_CALLS_NAP_MS");
		long naps = nap ? atol(nap) / 5 : 0;
		struct timespec five = { 0, 5000000 };
		for (long i = 0; i < naps; i++)   /* (and before the first start) */
			nanosleep(&five, NULL);
		CK(cudaProfilerStart(), "cudaProfilerStart(not traced)");
		for (long i = 0; i < n; i++) {
			CK(cudaLaunchKernel((const void *)kernel_a, g, b, NULL, 0, s), "cudaLaunchKernel");
			CK(cudaStreamSynchronize(s), "cudaStreamSynchronize");
		}
		for (long i = 0; i < naps; i++)
			nanosleep(&five, NULL);
		CK(cudaProfilerStop(), "cudaProfilerStop(not traced)");
		for (long i = 0; i < naps; i++)
			nanosleep(&five, NULL);
		for (long i = 0; i < n; i++)
			CK(cudaDeviceSynchronize(), outside);
		CK(cudaProfilerStart(), "cudaProfilerStart(not traced)");
		for (long i = 0; i < naps; i++)
			nanosleep(&five, NULL);
		for (long i = 0; i < n; i++)
			CK(cudaMemsetAsync(d, 0, 4096, s), "cudaMemsetAsync");
		CK(cudaProfilerStop(), "cudaProfilerStop(not traced)");
	} else if (strcmp(mode, "launch-sync") == 0) {
		cudaStream_t s;
		dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
		cudaStreamCreate(&s);
		for (long i = 0; i < n; i++) {
			CK(cudaLaunchKernel((const void *)kernel_a, g, b, NULL, 0, s), "cudaLaunchKernel");
			CK(cudaStreamSynchronize(s), "cudaStreamSynchronize");
		}
	} else {
		fprintf(stderr, "preload_calls: unknown mode %s\n", mode);
		return 2;
	}
	print_truth();
	return 0;
}
