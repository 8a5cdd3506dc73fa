/*
 * driver.c — the exported entry points of the fake libcuda.so.1 and the
 * cuGetProcAddress table that hands them out.
 *
 * Each cu* function checks its arguments the way the real driver does
 * (enough to catch misuse in tests), then asks sim.c what the call costs.
 * Like the real driver, every entry point can be reached two ways: by
 * symbol (dlsym / linking) and through cuGetProcAddress_v2, which answers by
 * base name ("cuMemcpyHtoDAsync" → cuMemcpyHtoDAsync_v2) and picks the
 * _ptsz/_ptds variant when the flags ask for the per-thread default stream.
 * The fake runtime takes every driver function through that look-up, as the
 * real libcudart does, so a tool that wraps cuGetProcAddress sees them all.
 *
 * FAKECUDA_NOOP=1 turns launches, copies, syncs and stream/event work into
 * immediate returns; allocations still return usable pointers.
 */
#include "cuda_driver_fake.h"
#include "sim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static const struct sim_config *cfg(void) { return sim_cfg(); }

/* --- initialisation, devices, contexts ---------------------------------------------- */

static struct CUctx_st { int dummy; } primary_ctx;
static __thread CUcontext current_ctx;

EXPORT CUresult cuInit(unsigned int Flags)
{
	cfg();
	return Flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	if (!v) return CUDA_ERROR_INVALID_VALUE;
	*v = FAKECUDA_VERSION;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!count) return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!device) return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake CUDA Device (ingero tests)");
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!pctx) return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
	*pctx = &primary_ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx) return CUDA_ERROR_INVALID_VALUE;
	*pctx = current_ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx && ctx != &primary_ctx) return CUDA_ERROR_INVALID_CONTEXT;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	if (!device) return CUDA_ERROR_INVALID_VALUE;
	*device = 0;
	return CUDA_SUCCESS;
}

/* A one-deep stack is all the fake needs: push makes ctx current, pop
 * restores what was current before. */
static __thread CUcontext pushed_over;
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (ctx != &primary_ctx) return CUDA_ERROR_INVALID_CONTEXT;
	pushed_over = current_ctx;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (pctx) *pctx = current_ctx;
	current_ctx = pushed_over;
	pushed_over = NULL;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
	if (cfg()->noop) return CUDA_SUCCESS;
	sim_wait_until(sim_device_done_at());
	return CUDA_SUCCESS;
}

/* --- errors ------------------------------------------------------------------------------ */

static const char *error_name(CUresult e)
{
	switch (e) {
	case CUDA_SUCCESS: return "CUDA_SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
	case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
	case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
	case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
	case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
	case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
	case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
	case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
	case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
	default: return NULL;
	}
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr) return CUDA_ERROR_INVALID_VALUE;
	*pStr = error_name(error);
	return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	/* the fake's "description" is the name; tests only need it to exist */
	return cuGetErrorName(error, pStr);
}

/* --- modules and functions ------------------------------------------------------------------
 * A function handle is a small record named after its kernel, shared by all
 * modules (one fake device image).  Handles live for the process; the list is
 * scanned, never trusted, so cuFuncGetName on a foreign pointer is an error,
 * not a crash. */

#define FUNC_MAGIC 0x46554e43u   /* "FUNC" */
struct CUfunc_st { uint32_t magic; char name[120]; };
struct CUmod_st { uint32_t magic; };
#define MOD_MAGIC 0x4d4f4455u    /* "MODU" */

static struct CUfunc_st **funcs;
static size_t n_funcs, cap_funcs;
static pthread_mutex_t funcs_lock = PTHREAD_MUTEX_INITIALIZER;

/* a fork while another thread holds the lock must not leave the child's copy locked */
static void funcs_lock_take(void) { pthread_mutex_lock(&funcs_lock); }
static void funcs_lock_drop(void) { pthread_mutex_unlock(&funcs_lock); }
__attribute__((constructor)) static void funcs_register_fork(void)
{
	pthread_atfork(funcs_lock_take, funcs_lock_drop, funcs_lock_drop);
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	if (!module) return CUDA_ERROR_INVALID_VALUE;
	struct CUmod_st *m = malloc(sizeof *m);
	if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = MOD_MAGIC;
	*module = m;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
	if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
	hmod->magic = 0;
	free(hmod);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult rc = CUDA_SUCCESS;
	if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
	if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&funcs_lock);
	for (size_t i = 0; i < n_funcs; i++)
		if (strcmp(funcs[i]->name, name) == 0) {
			*hfunc = funcs[i];
			goto out;
		}
	if (n_funcs == cap_funcs) {
		size_t cap = cap_funcs ? cap_funcs * 2 : 32;
		struct CUfunc_st **f = realloc(funcs, cap * sizeof *f);
		if (!f) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
		funcs = f;
		cap_funcs = cap;
	}
	struct CUfunc_st *f = calloc(1, sizeof *f);
	if (!f) { rc = CUDA_ERROR_OUT_OF_MEMORY; goto out; }
	f->magic = FUNC_MAGIC;
	snprintf(f->name, sizeof f->name, "%s", name);
	funcs[n_funcs++] = f;
	*hfunc = f;
out:
	pthread_mutex_unlock(&funcs_lock);
	return rc;
}

EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	if (!name) return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&funcs_lock);
	for (size_t i = 0; i < n_funcs; i++)
		if (funcs[i] == hfunc) {
			*name = hfunc->name;
			rc = CUDA_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&funcs_lock);
	return rc;
}

/* --- launches --------------------------------------------------------------------------------- */

/* A launch costs the host launch_ns on-CPU, then the kernel is queued. */
static CUresult launch(const void *f, CUstream h, int per_thread)
{
	const struct sim_config *c = cfg();
	if (c->noop) return CUDA_SUCCESS;
	if (!f) return CUDA_ERROR_INVALID_HANDLE;
	struct sim_stream *s = sim_stream_of(h, per_thread);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	sim_spin(c->launch_ns);
	sim_queue(s, c->kernel_ns);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			       unsigned bz, unsigned shmem, CUstream h, void **params, void **extra)
{
	return launch(f, h, 0);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				    unsigned bz, unsigned shmem, CUstream h, void **params, void **extra)
{
	return launch(f, h, 1);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	if (!config) return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->hStream, 0);
}

EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
	if (!config) return CUDA_ERROR_INVALID_VALUE;
	return launch(f, config->hStream, 1);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream h) { return launch(g, h, 0); }
EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream h) { return launch(g, h, 1); }

/* --- streams and events ------------------------------------------------------------------------ */

EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int Flags)
{
	if (!ph) return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s = sim_stream_new();
	if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
	*ph = (CUstream)s;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream h)
{
	uintptr_t v = (uintptr_t)h;
	if (v <= 2) return CUDA_ERROR_INVALID_HANDLE;   /* the default streams are not destroyed */
	struct sim_stream *s = sim_stream_of(h, 0);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	sim_stream_free(s);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx)
{
	if (!pctx) return CUDA_ERROR_INVALID_VALUE;
	if (!sim_stream_of(h, 0)) return CUDA_ERROR_INVALID_HANDLE;
	*pctx = &primary_ctx;   /* one device, one context */
	return CUDA_SUCCESS;
}

/* Graph capture is not simulated: FAKECUDA_CAPTURING=1 makes every stream
 * report an active capture, so tests can check that tools stay out of it. */
EXPORT CUresult cuStreamIsCapturing(CUstream h, int *status)
{
	if (!status) return CUDA_ERROR_INVALID_VALUE;
	if (!sim_stream_of(h, 0)) return CUDA_ERROR_INVALID_HANDLE;
	const char *c = getenv("FAKECUDA_CAPTURING");
	*status = c && *c == '1' ? 1 : 0;
	return CUDA_SUCCESS;
}

static __thread int capture_mode;
EXPORT CUresult cuThreadExchangeStreamCaptureMode(int *mode)
{
	if (!mode) return CUDA_ERROR_INVALID_VALUE;
	int old = capture_mode;
	capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

static CUresult stream_query(CUstream h, int pt)
{
	struct sim_stream *s = sim_stream_of(h, pt);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	if (cfg()->noop) return CUDA_SUCCESS;
	return sim_stream_done_at(s) <= sim_now() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
EXPORT CUresult cuStreamQuery(CUstream h) { return stream_query(h, 0); }
EXPORT CUresult cuStreamQuery_ptsz(CUstream h) { return stream_query(h, 1); }

static CUresult stream_sync(CUstream h, int pt)
{
	if (cfg()->noop) return CUDA_SUCCESS;
	struct sim_stream *s = sim_stream_of(h, pt);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	sim_wait_until(sim_stream_done_at(s));
	return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamSynchronize(CUstream h) { return stream_sync(h, 0); }
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h) { return stream_sync(h, 1); }

static struct sim_event *event_of(CUevent e)
{
	struct sim_event *ev = (struct sim_event *)e;
	return ev && ev->magic == SIM_EVENT_MAGIC ? ev : NULL;
}

static CUresult stream_wait_event(CUstream h, CUevent e, int pt)
{
	if (cfg()->noop) return CUDA_SUCCESS;
	struct sim_stream *s = sim_stream_of(h, pt);
	struct sim_event *ev = event_of(e);
	if (!s || !ev) return CUDA_ERROR_INVALID_HANDLE;
	sim_queue_after(s, ev->done_at);
	return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int Flags) { return stream_wait_event(h, e, 0); }
EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent e, unsigned int Flags) { return stream_wait_event(h, e, 1); }

EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int Flags)
{
	if (!pe) return CUDA_ERROR_INVALID_VALUE;
	struct sim_event *ev = calloc(1, sizeof *ev);
	if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
	ev->magic = SIM_EVENT_MAGIC;
	*pe = (CUevent)ev;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	struct sim_event *ev = event_of(e);
	if (!ev) return CUDA_ERROR_INVALID_HANDLE;
	ev->magic = 0;
	free(ev);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream h, int pt)
{
	struct sim_event *ev = event_of(e);
	struct sim_stream *s = sim_stream_of(h, pt);
	if (!ev || !s) return CUDA_ERROR_INVALID_HANDLE;
	if (cfg()->noop) return CUDA_SUCCESS;
	uint64_t now = sim_now(), t = sim_stream_done_at(s);
	ev->done_at = t > now ? t : now;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuEventRecord(CUevent e, CUstream h) { return event_record(e, h, 0); }
EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream h) { return event_record(e, h, 1); }

EXPORT CUresult cuEventQuery(CUevent e)
{
	struct sim_event *ev = event_of(e);
	if (!ev) return CUDA_ERROR_INVALID_HANDLE;
	return ev->done_at <= sim_now() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	struct sim_event *ev = event_of(e);
	if (!ev) return CUDA_ERROR_INVALID_HANDLE;
	if (cfg()->noop) return CUDA_SUCCESS;
	sim_wait_until(ev->done_at);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	struct sim_event *ea = event_of(a), *eb = event_of(b);
	if (!ms) return CUDA_ERROR_INVALID_VALUE;
	if (!ea || !eb) return CUDA_ERROR_INVALID_HANDLE;
	/* as the real driver: refused until both have completed */
	if (ea->done_at > sim_now() || eb->done_at > sim_now()) return CUDA_ERROR_NOT_READY;
	*ms = (float)((double)((int64_t)(eb->done_at - ea->done_at)) * cfg()->gpu_rate / 1e6);
	return CUDA_SUCCESS;
}

/* --- for the fake libnccl.so.2 (nccl.c) only: a collective's place on its stream ----------- */

/* When the work queued on stream h so far completes (0 for a bad handle). */
EXPORT uint64_t fakecuda_stream_done_at(CUstream h)
{
	struct sim_stream *s = sim_stream_of(h, 0);
	return s ? sim_stream_done_at(s) : 0;
}

/* Stream h's work completes no earlier than t (a collective that ends then). */
EXPORT void fakecuda_stream_after(CUstream h, uint64_t t)
{
	struct sim_stream *s = sim_stream_of(h, 0);
	if (s)
		sim_queue_after(s, t);
}

/* --- copies and memsets ------------------------------------------------------------------------- */

/* One copy: dst/src are host pointers or device addresses as dir says. */
static CUresult copy(enum sim_dir dir, uint64_t dst, uint64_t src, size_t n, CUstream h, int pt, int async)
{
	if (cfg()->noop) return CUDA_SUCCESS;
	struct sim_stream *s = sim_stream_of(h, pt);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	const void *host = NULL;
	switch (dir) {
	case SIM_H2D:
		if (!sim_is_device(dst) || !src) return CUDA_ERROR_INVALID_VALUE;
		host = (const void *)(uintptr_t)src;
		break;
	case SIM_D2H:
		if (!sim_is_device(src) || !dst) return CUDA_ERROR_INVALID_VALUE;
		host = (const void *)(uintptr_t)dst;
		break;
	case SIM_D2D:
		if (!sim_is_device(src) || !sim_is_device(dst)) return CUDA_ERROR_INVALID_VALUE;
		break;
	case SIM_H2H:
		if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
		return CUDA_SUCCESS;
	}
	sim_copy(dir, host, n, s, async);
	return CUDA_SUCCESS;
}

/* Unified addressing: the direction follows from the addresses. */
static enum sim_dir dir_of(uint64_t dst, uint64_t src)
{
	int dd = sim_is_device(dst), sd = sim_is_device(src);
	return dd ? (sd ? SIM_D2D : SIM_H2D) : (sd ? SIM_D2H : SIM_H2H);
}

EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(dir_of(d, s), d, s, n, NULL, 0, 0); }
EXPORT CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(dir_of(d, s), d, s, n, NULL, 1, 0); }
EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy(dir_of(d, s), d, s, n, h, 0, 1); }
EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy(dir_of(d, s), d, s, n, h, 1, 1); }

#define HP(p) ((uint64_t)(uintptr_t)(p))
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return copy(SIM_H2D, d, HP(s), n, NULL, 0, 0); }
EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return copy(SIM_H2D, d, HP(s), n, NULL, 1, 0); }
EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return copy(SIM_D2H, HP(d), s, n, NULL, 0, 0); }
EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) { return copy(SIM_D2H, HP(d), s, n, NULL, 1, 0); }
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(SIM_D2D, d, s, n, NULL, 0, 0); }
EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n) { return copy(SIM_D2D, d, s, n, NULL, 1, 0); }
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h) { return copy(SIM_H2D, d, HP(s), n, h, 0, 1); }
EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream h) { return copy(SIM_H2D, d, HP(s), n, h, 1, 1); }
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h) { return copy(SIM_D2H, HP(d), s, n, h, 0, 1); }
EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h) { return copy(SIM_D2H, HP(d), s, n, h, 1, 1); }
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy(SIM_D2D, d, s, n, h, 0, 1); }
EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h) { return copy(SIM_D2D, d, s, n, h, 1, 1); }

/* A 2D copy moves Height rows of WidthInBytes; its host side spans the pitched rows. */
static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream h, int pt, int async)
{
	if (!p) return CUDA_ERROR_INVALID_VALUE;
	size_t n = p->WidthInBytes * p->Height;
	uint64_t src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? HP(p->srcHost) : p->srcDevice;
	uint64_t dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? HP(p->dstHost) : p->dstDevice;
	src += p->srcY * p->srcPitch + p->srcXInBytes;
	dst += p->dstY * p->dstPitch + p->dstXInBytes;
	enum sim_dir dir = dir_of(dst, src);
	if (dir == SIM_H2H) {   /* no real 2D host copy needed by any test: just time it */
		if (cfg()->noop) return CUDA_SUCCESS;
		return sim_stream_of(h, pt) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
	}
	return copy(dir, dst, src, n, h, pt, async);
}
EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 0, 0); }
EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p) { return copy2d(p, NULL, 1, 0); }
EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream h) { return copy2d(p, h, 0, 1); }
EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream h) { return copy2d(p, h, 1, 1); }

EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
{
	return copy(SIM_D2D, d, s, n, NULL, 0, 0);
}

EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream h)
{
	return copy(SIM_D2D, d, s, n, h, 0, 1);
}

static CUresult memset_async(CUdeviceptr d, size_t bytes, CUstream h, int pt)
{
	if (cfg()->noop) return CUDA_SUCCESS;
	struct sim_stream *s = sim_stream_of(h, pt);
	if (!s) return CUDA_ERROR_INVALID_HANDLE;
	if (!sim_is_device(d)) return CUDA_ERROR_INVALID_VALUE;
	sim_copy(SIM_D2D, NULL, bytes, s, 1);
	return CUDA_SUCCESS;
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream h) { return memset_async(d, n, h, 0); }
EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream h) { return memset_async(d, n, h, 1); }
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream h) { return memset_async(d, n * 4, h, 0); }
EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream h) { return memset_async(d, n * 4, h, 1); }

/* --- memory ---------------------------------------------------------------------------------------- */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	if (!dptr || !bytesize) return CUDA_ERROR_INVALID_VALUE;
	*dptr = sim_device_alloc(bytesize);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	if (dptr && !sim_is_device(dptr)) return CUDA_ERROR_INVALID_VALUE;
	/* as the real one: the device drains first (cudaFree synchronizes) */
	if (!cfg()->noop)
		sim_wait_until(sim_device_done_at());
	return CUDA_SUCCESS;   /* fake addresses are never reused; nothing to release */
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t n, CUstream h, int pt)
{
	if (!sim_stream_of(h, pt)) return CUDA_ERROR_INVALID_HANDLE;
	return cuMemAlloc_v2(dptr, n);
}
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream h) { return alloc_async(p, n, h, 0); }
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream h) { return alloc_async(p, n, h, 1); }
EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream h) { return alloc_async(p, n, h, 0); }
EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream h) { return alloc_async(p, n, h, 1); }

static CUresult free_async(CUdeviceptr d, CUstream h, int pt)
{
	if (!sim_stream_of(h, pt)) return CUDA_ERROR_INVALID_HANDLE;
	return cuMemFree_v2(d);
}
EXPORT CUresult cuMemFreeAsync(CUdeviceptr d, CUstream h) { return free_async(d, h, 0); }
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream h) { return free_async(d, h, 1); }

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	void *p;
	if (!pp || !bytesize) return CUDA_ERROR_INVALID_VALUE;
	if (posix_memalign(&p, 4096, bytesize)) return CUDA_ERROR_OUT_OF_MEMORY;
	if (sim_pinned_add(p, bytesize, 1)) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) { return cuMemHostAlloc(pp, bytesize, 0); }

EXPORT CUresult cuMemFreeHost(void *p)
{
	if (sim_pinned_remove(p, 1)) return CUDA_ERROR_INVALID_VALUE;
	free(p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	if (!p || !bytesize) return CUDA_ERROR_INVALID_VALUE;
	return sim_pinned_add(p, bytesize, 0) ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
	return sim_pinned_remove(p, 0) ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_SUCCESS;
}

/* --- cuGetProcAddress -------------------------------------------------------------------------------
 * base: the name callers ask for (the real runtime asks by base name and
 * version); name: the exported symbol it resolves to; pt: the per-thread
 * default-stream variant, when the entry point has one. */

struct entry { const char *base, *name, *name_pt; void *fn, *fn_pt; };
#define E(base, fn)      { base, #fn, NULL, (void *)fn, NULL }
#define EP(base, fn, pt) { base, #fn, #pt, (void *)fn, (void *)pt }

static const struct entry entries[] = {
	E("cuInit", cuInit),
	E("cuDriverGetVersion", cuDriverGetVersion),
	E("cuDeviceGetCount", cuDeviceGetCount),
	E("cuDeviceGet", cuDeviceGet),
	E("cuDeviceGetName", cuDeviceGetName),
	E("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain),
	E("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2),
	E("cuCtxGetCurrent", cuCtxGetCurrent),
	E("cuCtxSetCurrent", cuCtxSetCurrent),
	E("cuCtxGetDevice", cuCtxGetDevice),
	E("cuCtxSynchronize", cuCtxSynchronize),
	E("cuCtxPushCurrent", cuCtxPushCurrent_v2),
	E("cuCtxPopCurrent", cuCtxPopCurrent_v2),
	E("cuStreamGetCtx", cuStreamGetCtx),
	E("cuStreamIsCapturing", cuStreamIsCapturing),
	E("cuThreadExchangeStreamCaptureMode", cuThreadExchangeStreamCaptureMode),
	E("cuGetErrorString", cuGetErrorString),
	E("cuGetErrorName", cuGetErrorName),
	E("cuGetProcAddress", cuGetProcAddress_v2),
	E("cuModuleLoadData", cuModuleLoadData),
	E("cuModuleUnload", cuModuleUnload),
	E("cuModuleGetFunction", cuModuleGetFunction),
	E("cuFuncGetName", cuFuncGetName),
	EP("cuLaunchKernel", cuLaunchKernel, cuLaunchKernel_ptsz),
	EP("cuLaunchKernelEx", cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
	EP("cuGraphLaunch", cuGraphLaunch, cuGraphLaunch_ptsz),
	E("cuStreamCreate", cuStreamCreate),
	E("cuStreamDestroy", cuStreamDestroy_v2),
	EP("cuStreamQuery", cuStreamQuery, cuStreamQuery_ptsz),
	EP("cuStreamSynchronize", cuStreamSynchronize, cuStreamSynchronize_ptsz),
	EP("cuStreamWaitEvent", cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
	E("cuEventCreate", cuEventCreate),
	E("cuEventDestroy", cuEventDestroy_v2),
	EP("cuEventRecord", cuEventRecord, cuEventRecord_ptsz),
	E("cuEventQuery", cuEventQuery),
	E("cuEventSynchronize", cuEventSynchronize),
	E("cuEventElapsedTime", cuEventElapsedTime),
	EP("cuMemcpy", cuMemcpy, cuMemcpy_ptds),
	EP("cuMemcpyAsync", cuMemcpyAsync, cuMemcpyAsync_ptsz),
	EP("cuMemcpyHtoD", cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
	EP("cuMemcpyDtoH", cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
	EP("cuMemcpyDtoD", cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
	EP("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
	EP("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
	EP("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
	EP("cuMemcpy2DUnaligned", cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds),
	EP("cuMemcpy2DAsync", cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz),
	E("cuMemcpyPeer", cuMemcpyPeer),
	E("cuMemcpyPeerAsync", cuMemcpyPeerAsync),
	EP("cuMemsetD8Async", cuMemsetD8Async, cuMemsetD8Async_ptsz),
	EP("cuMemsetD32Async", cuMemsetD32Async, cuMemsetD32Async_ptsz),
	E("cuMemAlloc", cuMemAlloc_v2),
	E("cuMemFree", cuMemFree_v2),
	EP("cuMemAllocAsync", cuMemAllocAsync, cuMemAllocAsync_ptsz),
	EP("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz),
	EP("cuMemFreeAsync", cuMemFreeAsync, cuMemFreeAsync_ptsz),
	E("cuMemAllocHost", cuMemAllocHost_v2),
	E("cuMemHostAlloc", cuMemHostAlloc),
	E("cuMemHostRegister", cuMemHostRegister_v2),
	E("cuMemFreeHost", cuMemFreeHost),
	E("cuMemHostUnregister", cuMemHostUnregister),
};

/* Accepts the base name, and (leniently) the exported names too. */
static void *lookup(const char *symbol, int per_thread)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		const struct entry *e = &entries[i];
		if (e->name_pt && strcmp(symbol, e->name_pt) == 0)
			return e->fn_pt;
		if (strcmp(symbol, e->base) == 0 || strcmp(symbol, e->name) == 0)
			return per_thread && e->fn_pt ? e->fn_pt : e->fn;
	}
	return NULL;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *symbolStatus)
{
	if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
	*pfn = lookup(symbol, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
	if (symbolStatus)
		*symbolStatus = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* The CUDA 11.3 form, without the status argument. */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
