/*
 * sim.c — the fake GPU: stream timelines, events, fake device memory, the
 * table of pinned host ranges, and the timing rules of copies.
 *
 * Every stream keeps one number, the CLOCK_MONOTONIC instant at which its
 * queued work completes.  Queuing work advances it (atomically, so threads
 * may share a stream); a host wait sleeps with clock_nanosleep until it, so a
 * thread in a sync is off-CPU exactly as in a blocking cudaStreamSynchronize.
 * A device-wide maximum answers cuCtxSynchronize.  After fork() a child has
 * a copy of the timelines, i.e. its own device; that is all the tests need.
 *
 * Copy rules (after CUDA's "API synchronization behavior" notes):
 *   pinned host memory, async       queued on the stream at the pinned rate;
 *                                   the call returns at once;
 *   pinned host memory, sync        waits for the stream, then for the copy
 *                                   (off-CPU);
 *   pageable host → device          the host stages the data itself: on-CPU
 *                                   for bytes / pageable rate (sync forms wait
 *                                   for the stream first);
 *   device → pageable host          waits for the stream, then stages on-CPU;
 *   device → device                 queued at the device rate, never waits.
 * "On-CPU" means CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), so
 * a staging copy of a thread that loses its CPU takes longer, as a real
 * memcpy would.
 *
 * Environment (read once, at the first call into the driver):
 *   FAKECUDA_NOOP=1            every call returns at once (overhead benchmarks)
 *   FAKECUDA_KERNEL_US=50      device time of one kernel or graph launch
 *   FAKECUDA_LAUNCH_NS=2000    on-CPU time a launch costs the host (may be 0)
 *   FAKECUDA_PINNED_GBPS=25    host↔device rate from pinned memory
 *   FAKECUDA_PAGEABLE_GBPS=6   host↔device rate from pageable memory
 *   FAKECUDA_D2D_GBPS=1000     device↔device copies and memsets
 *   FAKECUDA_SYNC_EXTRA_US=0   added to every stream/context/event sync
 *   FAKECUDA_PAGEABLE_MODE=cpu cpu: staging burns thread CPU time; wall: spins
 *                              for wall time; sleep: sleeps (off-CPU)
 *   FAKECUDA_GPU_PPM=0         how much faster than the host's the GPU's event
 *                              clock runs (negative: slower), ppm: scales
 *                              cuEventElapsedTime (real GPUs: -20 to +1 seen)
 */
#include "sim.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PAGEABLE_SLEEP = 0, PAGEABLE_WALL = 1, PAGEABLE_CPU = 2 };

static struct sim_config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static double env_double(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return dflt;
	double d = strtod(v, &end);
	return (*end || d < 0) ? dflt : d;
}

static void read_config(void)
{
	const char *noop = getenv("FAKECUDA_NOOP");
	const char *mode = getenv("FAKECUDA_PAGEABLE_MODE");
	cfg.noop = noop && *noop && strcmp(noop, "0") != 0;
	cfg.kernel_ns = (uint64_t)(env_double("FAKECUDA_KERNEL_US", 50) * 1000.0);
	cfg.launch_ns = (uint64_t)env_double("FAKECUDA_LAUNCH_NS", 2000);
	cfg.sync_extra_ns = (uint64_t)(env_double("FAKECUDA_SYNC_EXTRA_US", 0) * 1000.0);
	cfg.pinned_gbps = env_double("FAKECUDA_PINNED_GBPS", 25);
	cfg.pageable_gbps = env_double("FAKECUDA_PAGEABLE_GBPS", 6);
	cfg.d2d_gbps = env_double("FAKECUDA_D2D_GBPS", 1000);
	const char *ppm = getenv("FAKECUDA_GPU_PPM");
	cfg.gpu_rate = 1.0 + (ppm && *ppm ? strtod(ppm, NULL) : 0) * 1e-6;
	/* a zero rate would divide by zero: treat it as "instant" via a huge rate */
	if (cfg.pinned_gbps <= 0) cfg.pinned_gbps = 1e12;
	if (cfg.pageable_gbps <= 0) cfg.pageable_gbps = 1e12;
	if (cfg.d2d_gbps <= 0) cfg.d2d_gbps = 1e12;
	cfg.pageable_on_cpu = PAGEABLE_CPU;
	if (mode && strcmp(mode, "wall") == 0)
		cfg.pageable_on_cpu = PAGEABLE_WALL;
	else if (mode && strcmp(mode, "sleep") == 0)
		cfg.pageable_on_cpu = PAGEABLE_SLEEP;
}

const struct sim_config *sim_cfg(void)
{
	pthread_once(&cfg_once, read_config);
	return &cfg;
}

uint64_t sim_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- streams ------------------------------------------------------------------------ */

static struct sim_stream legacy_stream = { SIM_STREAM_MAGIC, 0 };
static __thread struct sim_stream thread_stream;
static uint64_t device_busy_until;   /* max over all streams, for cuCtxSynchronize */

struct sim_stream *sim_stream_new(void)
{
	struct sim_stream *s = calloc(1, sizeof *s);
	if (s)
		s->magic = SIM_STREAM_MAGIC;
	return s;
}

void sim_stream_free(struct sim_stream *s)
{
	if (s) {
		s->magic = 0;   /* a later use of the stale handle is refused, not trusted */
		free(s);
	}
}

struct sim_stream *sim_stream_of(const void *handle, int per_thread)
{
	uintptr_t h = (uintptr_t)handle;
	if ((h == 0 && per_thread) || h == 0x2) {
		thread_stream.magic = SIM_STREAM_MAGIC;
		return &thread_stream;
	}
	if (h == 0 || h == 0x1)
		return &legacy_stream;
	struct sim_stream *s = (struct sim_stream *)handle;
	return s->magic == SIM_STREAM_MAGIC ? s : NULL;
}

static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
}

uint64_t sim_queue(struct sim_stream *s, uint64_t dur_ns)
{
	uint64_t now = sim_now();
	uint64_t old = __atomic_load_n(&s->busy_until, __ATOMIC_ACQUIRE), end;
	do
		end = (old > now ? old : now) + dur_ns;
	while (!__atomic_compare_exchange_n(&s->busy_until, &old, end, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	atomic_max(&device_busy_until, end);
	return end;
}

void sim_queue_after(struct sim_stream *s, uint64_t t)
{
	atomic_max(&s->busy_until, t);
	atomic_max(&device_busy_until, t);
}

uint64_t sim_stream_done_at(const struct sim_stream *s)
{
	return __atomic_load_n(&s->busy_until, __ATOMIC_ACQUIRE);
}

uint64_t sim_device_done_at(void)
{
	return __atomic_load_n(&device_busy_until, __ATOMIC_ACQUIRE);
}

/* --- host waiting ---------------------------------------------------------------------- */

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	while (sim_now() < t && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void sim_wait_until(uint64_t t)
{
	sleep_until(t);
	if (cfg.sync_extra_ns)
		sleep_until(sim_now() + cfg.sync_extra_ns);
}

void sim_spin(uint64_t ns)
{
	if (!ns)
		return;
	uint64_t end = sim_now() + ns;
	while (sim_now() < end)
		;
}

/* Staging a pageable copy: the host thread's own work. */
static void stage(uint64_t ns)
{
	switch (cfg.pageable_on_cpu) {
	case PAGEABLE_SLEEP:
		sleep_until(sim_now() + ns);
		break;
	case PAGEABLE_WALL:
		sim_spin(ns);
		break;
	default: {
		/* thread CPU time is a system call; the monotonic clock is not (vDSO),
		 * so spin on the latter and check the former every 20 µs */
		uint64_t end = thread_cpu_ns() + ns;
		for (uint64_t cpu = thread_cpu_ns(); cpu < end; cpu = thread_cpu_ns()) {
			uint64_t left = end - cpu;
			sim_spin(left < 20000 ? left : 20000);
		}
	}
	}
}

/* --- memory ------------------------------------------------------------------------------ */

static uint64_t device_top = SIM_DEVICE_BASE;

uint64_t sim_device_alloc(size_t bytes)
{
	uint64_t sz = (bytes + 511) & ~511ull;
	if (!sz)
		sz = 512;
	return __atomic_fetch_add(&device_top, sz, __ATOMIC_RELAXED);
}

int sim_is_device(uint64_t addr)
{
	return addr >= SIM_DEVICE_BASE && addr < __atomic_load_n(&device_top, __ATOMIC_RELAXED);
}

/* The pinned table: few entries (a program pins a handful of buffers), so a
 * mutex-guarded array scanned linearly.  The atfork handlers keep a child
 * from inheriting the mutex locked by a thread that does not exist there. */
struct range { uintptr_t start; size_t len; int owned; };
static struct range *pinned;
static size_t n_pinned, cap_pinned;
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;

static void fork_prepare(void) { pthread_mutex_lock(&pinned_lock); }
static void fork_after(void) { pthread_mutex_unlock(&pinned_lock); }

__attribute__((constructor)) static void sim_register_fork(void)
{
	pthread_atfork(fork_prepare, fork_after, fork_after);
}

int sim_pinned_add(const void *p, size_t len, int owned)
{
	int rc = 0;
	pthread_mutex_lock(&pinned_lock);
	for (size_t i = 0; i < n_pinned; i++)
		if (pinned[i].start == (uintptr_t)p) {
			rc = -1;
			goto out;
		}
	if (n_pinned == cap_pinned) {
		size_t cap = cap_pinned ? cap_pinned * 2 : 16;
		struct range *r = realloc(pinned, cap * sizeof *r);
		if (!r) {
			rc = -1;
			goto out;
		}
		pinned = r;
		cap_pinned = cap;
	}
	pinned[n_pinned++] = (struct range){ (uintptr_t)p, len, owned };
out:
	pthread_mutex_unlock(&pinned_lock);
	return rc;
}

int sim_pinned_remove(const void *p, int owned)
{
	int rc = -1;
	pthread_mutex_lock(&pinned_lock);
	for (size_t i = 0; i < n_pinned; i++)
		if (pinned[i].start == (uintptr_t)p && pinned[i].owned == owned) {
			pinned[i] = pinned[--n_pinned];
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&pinned_lock);
	return rc;
}

int sim_is_pinned(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	int yes = 0;
	pthread_mutex_lock(&pinned_lock);
	for (size_t i = 0; i < n_pinned && !yes; i++)
		yes = a >= pinned[i].start && a - pinned[i].start + len <= pinned[i].len;
	pthread_mutex_unlock(&pinned_lock);
	return yes;
}

/* --- copies ------------------------------------------------------------------------------- */

static uint64_t ns_for(size_t bytes, double gbps)
{
	return (uint64_t)((double)bytes / gbps);   /* GB/s = bytes per ns */
}

void sim_copy(enum sim_dir dir, const void *host, size_t bytes, struct sim_stream *s, int async)
{
	if (dir == SIM_H2H)
		return;   /* the driver copies host memory for real; no device involved */
	if (dir == SIM_D2D) {
		sim_queue(s, ns_for(bytes, cfg.d2d_gbps));
		return;
	}
	if (sim_is_pinned(host, bytes)) {
		uint64_t end = sim_queue(s, ns_for(bytes, cfg.pinned_gbps));
		if (!async)
			sleep_until(end);
		return;
	}
	/* pageable: the host stages it, after the stream's work when it must wait */
	if (!async || dir == SIM_D2H)
		sleep_until(sim_stream_done_at(s));
	stage(ns_for(bytes, cfg.pageable_gbps));
	sim_queue_after(s, sim_now());
}
