/*
 * runtime.c — the fake libcudart.so.13: the runtime API as thin calls into
 * the driver, reached the way the real runtime reaches it.
 *
 * How the real CUDA 13 runtime is built, and what this file copies of it:
 *  - On first use it dlopen()s "libcuda.so.1", takes cuGetProcAddress_v2
 *    with dlsym() on that handle, and asks it for every driver entry point it
 *    uses — by base name, once with the legacy-stream flag and once with the
 *    per-thread flag.  No driver symbol is ever bound by the dynamic linker,
 *    so a tool sees driver calls only if it answers that look-up itself.
 *  - Every runtime call goes through those pointers, so driver calls made
 *    inside runtime calls (cudaMemcpyAsync → cuMemcpyHtoDAsync_v2,
 *    cudaStreamSynchronize → cuStreamSynchronize, cudaLaunchKernel →
 *    cuLaunchKernel, …) are visible to such a tool, nested.
 *  - nvcc 13 stubs call __cudaLaunchKernel(cudaKernel_t, …); it reaches the
 *    launch through a static function, never through cudaLaunchKernel's PLT
 *    slot, so wrapping cudaLaunchKernel alone sees none of those launches.
 *    A cudaKernel_t is a runtime handle (here: the kernel's registry entry),
 *    not the host stub address.
 *  - The _ptsz/_ptds exports use the per-thread default stream pointers.
 * Kernels are identified by their host stub address; __cudaRegisterFunction
 * names them, and an unregistered address is accepted and named
 * "kernel_<address>" (the real runtime would refuse it).
 */
#include "cuda_driver_fake.h"
#include "cuda_runtime_fake.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* --- driver entry points ------------------------------------------------------------- */

/* X(field, base name asked of cuGetProcAddress, prototype it has) */
#define DRIVER_FNS(X) \
	X(init, "cuInit", cuInit) \
	X(driverGetVersion, "cuDriverGetVersion", cuDriverGetVersion) \
	X(deviceGetCount, "cuDeviceGetCount", cuDeviceGetCount) \
	X(deviceGet, "cuDeviceGet", cuDeviceGet) \
	X(primaryCtxRetain, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain) \
	X(ctxSetCurrent, "cuCtxSetCurrent", cuCtxSetCurrent) \
	X(ctxSynchronize, "cuCtxSynchronize", cuCtxSynchronize) \
	X(moduleLoadData, "cuModuleLoadData", cuModuleLoadData) \
	X(moduleGetFunction, "cuModuleGetFunction", cuModuleGetFunction) \
	X(launchKernel, "cuLaunchKernel", cuLaunchKernel) \
	X(launchKernelEx, "cuLaunchKernelEx", cuLaunchKernelEx) \
	X(graphLaunch, "cuGraphLaunch", cuGraphLaunch) \
	X(streamCreate, "cuStreamCreate", cuStreamCreate) \
	X(streamDestroy, "cuStreamDestroy", cuStreamDestroy_v2) \
	X(streamQuery, "cuStreamQuery", cuStreamQuery) \
	X(streamSynchronize, "cuStreamSynchronize", cuStreamSynchronize) \
	X(streamWaitEvent, "cuStreamWaitEvent", cuStreamWaitEvent) \
	X(eventCreate, "cuEventCreate", cuEventCreate) \
	X(eventDestroy, "cuEventDestroy", cuEventDestroy_v2) \
	X(eventRecord, "cuEventRecord", cuEventRecord) \
	X(eventQuery, "cuEventQuery", cuEventQuery) \
	X(eventSynchronize, "cuEventSynchronize", cuEventSynchronize) \
	X(eventElapsedTime, "cuEventElapsedTime", cuEventElapsedTime) \
	X(memcpy, "cuMemcpy", cuMemcpy) \
	X(memcpyAsync, "cuMemcpyAsync", cuMemcpyAsync) \
	X(memcpyHtoD, "cuMemcpyHtoD", cuMemcpyHtoD_v2) \
	X(memcpyDtoH, "cuMemcpyDtoH", cuMemcpyDtoH_v2) \
	X(memcpyDtoD, "cuMemcpyDtoD", cuMemcpyDtoD_v2) \
	X(memcpyHtoDAsync, "cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2) \
	X(memcpyDtoHAsync, "cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2) \
	X(memcpyDtoDAsync, "cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2) \
	X(memcpy2DUnaligned, "cuMemcpy2DUnaligned", cuMemcpy2DUnaligned_v2) \
	X(memcpy2DAsync, "cuMemcpy2DAsync", cuMemcpy2DAsync_v2) \
	X(memcpyPeer, "cuMemcpyPeer", cuMemcpyPeer) \
	X(memcpyPeerAsync, "cuMemcpyPeerAsync", cuMemcpyPeerAsync) \
	X(memsetD8Async, "cuMemsetD8Async", cuMemsetD8Async) \
	X(memAlloc, "cuMemAlloc", cuMemAlloc_v2) \
	X(memFree, "cuMemFree", cuMemFree_v2) \
	X(memAllocAsync, "cuMemAllocAsync", cuMemAllocAsync) \
	X(memFreeAsync, "cuMemFreeAsync", cuMemFreeAsync) \
	X(memAllocHost, "cuMemAllocHost", cuMemAllocHost_v2) \
	X(memHostAlloc, "cuMemHostAlloc", cuMemHostAlloc) \
	X(memHostRegister, "cuMemHostRegister", cuMemHostRegister_v2) \
	X(memFreeHost, "cuMemFreeHost", cuMemFreeHost) \
	X(memHostUnregister, "cuMemHostUnregister", cuMemHostUnregister)

struct driver {
#define FIELD_(field, name, proto) __typeof__(proto) *field;
	DRIVER_FNS(FIELD_)
#undef FIELD_
};

/* [0]: legacy default stream variants, [1]: per-thread default stream (_ptsz/_ptds) */
static struct driver drv[2];
static __typeof__(cuGetProcAddress_v2) *get_proc;
static CUmodule module;            /* the one fake device image all kernels live in */
static cudaError_t init_error;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static __thread cudaError_t last_error;

static void init_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h || !(get_proc = (__typeof__(get_proc))dlsym(h, "cuGetProcAddress_v2"))) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
	static const cuuint64_t flags[2] = { CU_GET_PROC_ADDRESS_LEGACY_STREAM,
					     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM };
	for (int v = 0; v < 2; v++) {
		CUdriverProcAddressQueryResult st;
#define RESOLVE_(field, name, proto) \
		if (get_proc(name, (void **)&drv[v].field, CUDART_VERSION, flags[v], &st) || !drv[v].field) { \
			fprintf(stderr, "fake libcudart: driver entry point %s not found\n", name); \
			init_error = cudaErrorInsufficientDriver; \
			return; \
		}
		DRIVER_FNS(RESOLVE_)
#undef RESOLVE_
	}
	CUdevice dev;
	CUcontext ctx;
	if (drv[0].init(0) || drv[0].deviceGet(&dev, 0) || drv[0].primaryCtxRetain(&ctx, dev) ||
	    drv[0].ctxSetCurrent(ctx) || drv[0].moduleLoadData(&module, "fake image"))
		init_error = cudaErrorInitializationError;
}

static cudaError_t fail(cudaError_t e)
{
	if (e)
		last_error = e;
	return e;
}

/* Driver results map 1:1 onto runtime codes for every value the fake driver returns. */
#define RET(call) return fail((cudaError_t)(call))
#define INIT() do { pthread_once(&init_once, init_driver); if (init_error) return fail(init_error); } while (0)
#define D(pt) (&drv[(pt) ? 1 : 0])
#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* --- kernels: host stub address → name → driver function ------------------------------ */

struct kernel {
	const void *host;          /* host stub address (what cudaLaunchKernel gets) */
	char name[120];            /* device name (what cudaFuncGetName returns) */
	CUfunction fn;             /* resolved at first launch, like lazy module loading */
};
#define MAX_KERNELS 1024
static struct kernel kernels[MAX_KERNELS];
static unsigned n_kernels;         /* entries below it are complete (release/acquire) */
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

/* a fork while another thread holds the lock must not leave the child's copy locked */
static void kernels_lock_take(void) { pthread_mutex_lock(&kernels_lock); }
static void kernels_lock_drop(void) { pthread_mutex_unlock(&kernels_lock); }
__attribute__((constructor)) static void kernels_register_fork(void)
{
	pthread_atfork(kernels_lock_take, kernels_lock_drop, kernels_lock_drop);
}

static struct kernel *kernel_find(const void *host)
{
	unsigned n = __atomic_load_n(&n_kernels, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (kernels[i].host == host)
			return &kernels[i];
	return NULL;
}

/* name NULL: look up, adding an anonymous entry when unknown. */
static struct kernel *kernel_add(const void *host, const char *name)
{
	struct kernel *k;
	pthread_mutex_lock(&kernels_lock);
	k = kernel_find(host);
	if (k && name)
		snprintf(k->name, sizeof k->name, "%s", name);
	if (!k && n_kernels < MAX_KERNELS) {
		k = &kernels[n_kernels];
		k->host = host;
		if (name)
			snprintf(k->name, sizeof k->name, "%s", name);
		else
			snprintf(k->name, sizeof k->name, "kernel_%p", host);
		__atomic_store_n(&n_kernels, n_kernels + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&kernels_lock);
	return k;
}

static cudaError_t kernel_function(struct kernel *k, CUfunction *f)
{
	CUfunction fn = __atomic_load_n(&k->fn, __ATOMIC_ACQUIRE);
	if (!fn) {
		CUresult rc = drv[0].moduleGetFunction(&fn, module, k->name);
		if (rc)
			return (cudaError_t)rc;
		__atomic_store_n(&k->fn, fn, __ATOMIC_RELEASE);
	}
	*f = fn;
	return cudaSuccess;
}

/* The one launch path every runtime launch takes. */
static cudaError_t launch(struct kernel *k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s, int pt)
{
	CUfunction f;
	cudaError_t e;
	if (!k)
		return fail(cudaErrorInvalidDeviceFunction);
	if ((e = kernel_function(k, &f)))
		return fail(e);
	RET(D(pt)->launchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, (CUstream)s, args, NULL));
}

static cudaError_t launch_by_address(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
				     cudaStream_t s, int pt)
{
	INIT();
	if (!func)
		return fail(cudaErrorInvalidDeviceFunction);
	struct kernel *k = kernel_find(func);
	return launch(k ? k : kernel_add(func, NULL), g, b, args, shmem, s, pt);
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
	return launch_by_address(func, g, b, args, shmem, s, 0);
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
					 cudaStream_t s)
{
	return launch_by_address(func, g, b, args, shmem, s, 1);
}

/* nvcc's entry: the handle is already the registry entry, no look-up by address. */
EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem,
				      cudaStream_t s)
{
	INIT();
	return launch((struct kernel *)kernel, g, b, args, shmem, s, 0);
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem,
					   cudaStream_t s)
{
	INIT();
	return launch((struct kernel *)kernel, g, b, args, shmem, s, 1);
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *c, const void *func, void **args, int pt)
{
	INIT();
	if (!c)
		return fail(cudaErrorInvalidValue);
	struct kernel *k = func ? kernel_find(func) : NULL;
	if (!k && func)
		k = kernel_add(func, NULL);
	CUfunction f;
	cudaError_t e;
	if (!k)
		return fail(cudaErrorInvalidDeviceFunction);
	if ((e = kernel_function(k, &f)))
		return fail(e);
	CUlaunchConfig cc = {
		c->gridDim.x, c->gridDim.y, c->gridDim.z, c->blockDim.x, c->blockDim.y, c->blockDim.z,
		(unsigned)c->dynamicSmemBytes, (CUstream)c->stream, (CUlaunchAttribute *)c->attrs, c->numAttrs,
	};
	RET(D(pt)->launchKernelEx(&cc, f, args, NULL));
}
EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *func, void **args)
{
	return launch_ex(c, func, args, 0);
}
EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *func, void **args)
{
	return launch_ex(c, func, args, 1);
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s)
{
	INIT();
	RET(drv[0].graphLaunch((CUgraphExec)g, (CUstream)s));
}
EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t g, cudaStream_t s)
{
	INIT();
	RET(drv[1].graphLaunch((CUgraphExec)g, (CUstream)s));
}

EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
	if (!name || !func)
		return fail(cudaErrorInvalidValue);
	struct kernel *k = kernel_find(func);
	if (!k)
		return fail(cudaErrorInvalidDeviceFunction);
	*name = k->name;
	return cudaSuccess;
}

/* --- what nvcc-generated code calls ----------------------------------------------------------- */

struct call_config { dim3 grid, block; size_t shmem; cudaStream_t stream; };
static __thread struct call_config config_stack[8];
static __thread unsigned config_depth;

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
	if (config_depth == sizeof config_stack / sizeof config_stack[0])
		return 1;
	config_stack[config_depth++] = (struct call_config){ grid, block, shmem, stream };
	return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
	if (!config_depth)
		return fail(cudaErrorInvalidValue);
	struct call_config c = config_stack[--config_depth];
	*grid = c.grid;
	*block = c.block;
	*shmem = c.shmem;
	*(cudaStream_t *)stream = c.stream;
	return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	if (!kernel || !func)
		return fail(cudaErrorInvalidValue);
	struct kernel *k = kernel_find(func);
	if (!k && !(k = kernel_add(func, NULL)))
		return fail(cudaErrorMemoryAllocation);
	*kernel = (cudaKernel_t)k;
	return cudaSuccess;
}

static void *fatbin_handle;
EXPORT void **__cudaRegisterFatBinary(void *fatCubin) { return &fatbin_handle; }
EXPORT void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
EXPORT void __cudaUnregisterFatBinary(void **h) { (void)h; }

EXPORT void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
				   int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
	if (hostFun)
		kernel_add(hostFun, deviceName ? deviceName : deviceFun);
}

/* --- copies and memsets -------------------------------------------------------------------------- */

static cudaError_t copy_sync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int pt)
{
	INIT();
	struct driver *d = D(pt);
	switch (kind) {
	case cudaMemcpyHostToDevice: RET(d->memcpyHtoD(DP(dst), src, n));
	case cudaMemcpyDeviceToHost: RET(d->memcpyDtoH(dst, DP(src), n));
	case cudaMemcpyDeviceToDevice: RET(d->memcpyDtoD(DP(dst), DP(src), n));
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault: RET(d->memcpy(DP(dst), DP(src), n));
	}
	return fail(cudaErrorInvalidValue);
}

static cudaError_t copy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s,
			      int pt)
{
	INIT();
	struct driver *d = D(pt);
	CUstream h = (CUstream)s;
	switch (kind) {
	case cudaMemcpyHostToDevice: RET(d->memcpyHtoDAsync(DP(dst), src, n, h));
	case cudaMemcpyDeviceToHost: RET(d->memcpyDtoHAsync(dst, DP(src), n, h));
	case cudaMemcpyDeviceToDevice: RET(d->memcpyDtoDAsync(DP(dst), DP(src), n, h));
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault: RET(d->memcpyAsync(DP(dst), DP(src), n, h));
	}
	return fail(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	return copy_sync(dst, src, n, kind, 0);
}
EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	return copy_sync(dst, src, n, kind, 1);
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
	return copy_async(dst, src, n, kind, s, 0);
}
EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
					cudaStream_t s)
{
	return copy_async(dst, src, n, kind, s, 1);
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
			   enum cudaMemcpyKind kind, cudaStream_t s, int pt, int async)
{
	INIT();
	CUDA_MEMCPY2D p;
	memset(&p, 0, sizeof p);
	int src_host = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
	int dst_host = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
	if ((unsigned)kind > cudaMemcpyDefault)
		return fail(cudaErrorInvalidValue);
	p.srcMemoryType = kind == cudaMemcpyDefault ? CU_MEMORYTYPE_UNIFIED
			: src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	p.dstMemoryType = kind == cudaMemcpyDefault ? CU_MEMORYTYPE_UNIFIED
			: dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	p.srcHost = src;
	p.srcDevice = DP(src);
	p.srcPitch = spitch;
	p.dstHost = dst;
	p.dstDevice = DP(dst);
	p.dstPitch = dpitch;
	p.WidthInBytes = width;
	p.Height = height;
	if (async)
		RET(D(pt)->memcpy2DAsync(&p, (CUstream)s));
	RET(D(pt)->memcpy2DUnaligned(&p));
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				size_t height, enum cudaMemcpyKind kind)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 0, 0);
}
EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				     size_t height, enum cudaMemcpyKind kind)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 1, 0);
}
EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
				     size_t height, enum cudaMemcpyKind kind, cudaStream_t s)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind, s, 0, 1);
}
EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
					  size_t height, enum cudaMemcpyKind kind, cudaStream_t s)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind, s, 1, 1);
}

EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t n)
{
	INIT();
	if (dstDevice || srcDevice)
		return fail(cudaErrorInvalidDevice);
	RET(drv[0].memcpyPeer(DP(dst), NULL, DP(src), NULL, n));
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t n,
				       cudaStream_t s)
{
	INIT();
	if (dstDevice || srcDevice)
		return fail(cudaErrorInvalidDevice);
	RET(drv[0].memcpyPeerAsync(DP(dst), NULL, DP(src), NULL, n, (CUstream)s));
}

EXPORT cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
	INIT();
	RET(drv[0].memsetD8Async(DP(p), (unsigned char)value, n, (CUstream)s));
}
EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int value, size_t n, cudaStream_t s)
{
	INIT();
	RET(drv[1].memsetD8Async(DP(p), (unsigned char)value, n, (CUstream)s));
}

/* --- streams, events, synchronisation ------------------------------------------------------------- */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *ps)
{
	INIT();
	RET(drv[0].streamCreate((CUstream *)ps, 0));
}
EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned int flags)
{
	INIT();
	RET(drv[0].streamCreate((CUstream *)ps, flags));
}
EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
	INIT();
	RET(drv[0].streamDestroy((CUstream)s));
}
EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
	INIT();
	RET(drv[0].streamQuery((CUstream)s));
}
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	INIT();
	RET(drv[0].streamSynchronize((CUstream)s));
}
EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
	INIT();
	RET(drv[1].streamSynchronize((CUstream)s));
}
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	INIT();
	RET(drv[0].streamWaitEvent((CUstream)s, (CUevent)e, flags));
}
EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
	INIT();
	RET(drv[1].streamWaitEvent((CUstream)s, (CUevent)e, flags));
}
EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	INIT();
	RET(drv[0].ctxSynchronize());
}
EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
	INIT();
	RET(drv[0].eventCreate((CUevent *)e, 0));
}
EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
	INIT();
	RET(drv[0].eventCreate((CUevent *)e, flags));
}
EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
	INIT();
	RET(drv[0].eventDestroy((CUevent)e));
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	INIT();
	RET(drv[0].eventRecord((CUevent)e, (CUstream)s));
}
EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
	INIT();
	RET(drv[1].eventRecord((CUevent)e, (CUstream)s));
}
EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
	INIT();
	RET(drv[0].eventQuery((CUevent)e));
}
EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	INIT();
	RET(drv[0].eventSynchronize((CUevent)e));
}
EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	INIT();
	RET(drv[0].eventElapsedTime(ms, (CUevent)a, (CUevent)b));
}

/* --- memory ------------------------------------------------------------------------------------------ */

EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
	INIT();
	if (!p)
		return fail(cudaErrorInvalidValue);
	if (!n) {
		*p = NULL;
		return cudaSuccess;
	}
	CUdeviceptr d;
	CUresult rc = drv[0].memAlloc(&d, n);
	if (!rc)
		*p = (void *)(uintptr_t)d;
	RET(rc);
}

EXPORT cudaError_t cudaFree(void *p)
{
	INIT();
	if (!p)
		return cudaSuccess;
	RET(drv[0].memFree(DP(p)));
}

static cudaError_t malloc_async(void **p, size_t n, cudaStream_t s, int pt)
{
	INIT();
	if (!p)
		return fail(cudaErrorInvalidValue);
	CUdeviceptr d;
	CUresult rc = D(pt)->memAllocAsync(&d, n, (CUstream)s);
	if (!rc)
		*p = (void *)(uintptr_t)d;
	RET(rc);
}
EXPORT cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) { return malloc_async(p, n, s, 0); }
EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s) { return malloc_async(p, n, s, 1); }

EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	INIT();
	RET(drv[0].memFreeAsync(DP(p), (CUstream)s));
}
EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
	INIT();
	RET(drv[1].memFreeAsync(DP(p), (CUstream)s));
}

EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
	INIT();
	RET(drv[0].memAllocHost(p, n));
}
EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
	INIT();
	RET(drv[0].memHostAlloc(p, n, flags));
}
EXPORT cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
	INIT();
	RET(drv[0].memHostRegister(p, n, flags));
}
EXPORT cudaError_t cudaHostUnregister(void *p)
{
	INIT();
	RET(drv[0].memHostUnregister(p));
}
EXPORT cudaError_t cudaFreeHost(void *p)
{
	INIT();
	if (!p)
		return cudaSuccess;
	RET(drv[0].memFreeHost(p));
}

/* --- driver entry points -------------------------------------------------------------------------------
 * Answered by the same cuGetProcAddress_v2 the runtime resolved for itself.
 * A symbol the driver does not know: *funcPtr NULL, status SymbolNotFound,
 * and cudaErrorSymbolNotFound. */

static cudaError_t entry_point(const char *symbol, void **fp, unsigned version, unsigned long long flags,
			       enum cudaDriverEntryPointQueryResult *status, int pt)
{
	INIT();
	if (!symbol || !fp)
		return fail(cudaErrorInvalidValue);
	if (pt && flags == cudaEnableDefault)
		flags = cudaEnablePerThreadDefaultStream;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult rc = get_proc(symbol, fp, (int)version, flags, &st);
	if (status)
		*status = (enum cudaDriverEntryPointQueryResult)st;
	if (rc == CUDA_ERROR_NOT_FOUND || st != CU_GET_PROC_ADDRESS_SUCCESS) {
		*fp = NULL;
		return fail(cudaErrorSymbolNotFound);
	}
	RET(rc);
}

EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fp, unsigned long long flags,
					   enum cudaDriverEntryPointQueryResult *status)
{
	return entry_point(symbol, fp, CUDART_VERSION, flags, status, 0);
}
EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fp, unsigned long long flags,
						enum cudaDriverEntryPointQueryResult *status)
{
	return entry_point(symbol, fp, CUDART_VERSION, flags, status, 1);
}
EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fp, unsigned int version,
						    unsigned long long flags,
						    enum cudaDriverEntryPointQueryResult *status)
{
	return entry_point(symbol, fp, version, flags, status, 0);
}
EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fp, unsigned int version,
							 unsigned long long flags,
							 enum cudaDriverEntryPointQueryResult *status)
{
	return entry_point(symbol, fp, version, flags, status, 1);
}

/* --- devices, versions, errors ------------------------------------------------------------------------- */

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	INIT();
	RET(drv[0].deviceGetCount(count));
}
EXPORT cudaError_t cudaSetDevice(int device)
{
	INIT();
	return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}
EXPORT cudaError_t cudaGetDevice(int *device)
{
	INIT();
	if (!device)
		return fail(cudaErrorInvalidValue);
	*device = 0;
	return cudaSuccess;
}
EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
	INIT();
	RET(drv[0].driverGetVersion(v));
}
EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
	if (!v)
		return fail(cudaErrorInvalidValue);
	*v = CUDART_VERSION;
	return cudaSuccess;
}

EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;
	last_error = cudaSuccess;
	return e;
}
EXPORT cudaError_t cudaPeekAtLastError(void) { return last_error; }
/* No profiler is attached: the real runtime returns success too. */
EXPORT cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
EXPORT cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

static const struct { cudaError_t code; const char *name, *text; } errors[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error" },
	{ cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function" },
	{ cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
	{ cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found" },
	{ cudaErrorNotReady, "cudaErrorNotReady", "device not ready" },
	{ cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
	  "part or all of the requested memory range is already mapped" },
	{ cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
	  "pointer does not correspond to a registered memory region" },
	{ cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported" },
};

EXPORT const char *cudaGetErrorString(cudaError_t e)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e)
			return errors[i].text;
	return "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t e)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e)
			return errors[i].name;
	return "cudaErrorUnknown";
}
