/*
 * event_cost.c — what the GPU marks cost the program's thread on a real
 * driver (docs/benchmarks.md).  Needs libcuda.so.1 (dlopen: no CUDA headers
 * or libraries at build time).  Prints key=value lines.
 *
 * mark: tiny async memsets alone, then each followed by cuStreamIsCapturing
 * + cuEventRecord (what gpu_marks.c does per mark): the difference is what
 * one mark costs the calling thread.
 *
 * watcher: the same memsets (a mark every 64th, as a calling-thread budget
 * would), while a second thread does what the watcher does every PERIOD µs:
 * push the context, query the latest mark and time it against an anchor,
 * pop.  Against the same loop with that thread idle (asleep for good) and
 * with a thread that only wakes every PERIOD µs, in alternating rounds, this
 * says whether the watcher's driver calls slow the program's own calls
 * (shared driver locks) or only its wake-ups do.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct {
	int (*memset8)(uint64_t, unsigned char, size_t, void *);
	int (*erecord)(void *, void *);
	int (*equery)(void *);
	int (*elapsed)(float *, void *, void *);
	int (*capturing)(void *, int *);
	int (*ssync)(void *);
	int (*push)(void *);
	int (*pop)(void **);
} cu;

static void *ctx, *stream, *anchor_ev, *ev[256];
static uint64_t buf;
static _Atomic unsigned last_mark;   /* index of the latest mark recorded */

/* the watcher's side: 0 = asleep for good, 1 = wakes only, 2 = driver calls */
static _Atomic int mode, stop_watch;
static unsigned period_us;

static void *watch(void *arg)
{
	(void)arg;
	cu.push(ctx);   /* current for the whole thread; the pushes below are the watcher's */
	while (!atomic_load(&stop_watch)) {
		/* idle: a wake every 20 ms, nothing the loop would notice */
		long ns = atomic_load(&mode) ? (long)period_us * 1000 : 20000000;
		struct timespec ts = { 0, ns };
		nanosleep(&ts, NULL);
		if (atomic_load(&mode) != 2)
			continue;
		void *c;
		cu.push(ctx);
		void *e = ev[atomic_load(&last_mark) & 255];
		float ms;
		if (cu.equery(e) == 0)
			cu.elapsed(&ms, anchor_ev, e);
		cu.pop(&c);
	}
	return NULL;
}

/* ns per memset over n, a mark every `every` (0: none); syncs every 1,000
 * so that the GPU never falls behind and the queue never fills */
static double loop(int n, int every)
{
	cu.ssync(stream);
	uint64_t t0 = now();
	for (int i = 1; i <= n; i++) {
		cu.memset8(buf, 0, 256, stream);
		if (every && i % every == 0) {
			int st;
			unsigned k = atomic_load(&last_mark) + 1;
			cu.capturing(stream, &st);
			cu.erecord(ev[k & 255], stream);
			atomic_store(&last_mark, k);
		}
		if (i % 1000 == 0)
			cu.ssync(stream);
	}
	cu.ssync(stream);
	return (double)(now() - t0) / n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "event_cost: no libcuda.so.1\n");
		return 2;
	}
	int (*init)(unsigned) = dlsym(h, "cuInit");
	int (*retain)(void **, int) = dlsym(h, "cuDevicePrimaryCtxRetain");
	int (*setcur)(void *) = dlsym(h, "cuCtxSetCurrent");
	int (*screate)(void **, unsigned) = dlsym(h, "cuStreamCreate");
	int (*alloc)(uint64_t *, size_t) = dlsym(h, "cuMemAlloc_v2");
	int (*ecreate)(void **, unsigned) = dlsym(h, "cuEventCreate");
	cu.memset8 = dlsym(h, "cuMemsetD8Async");
	cu.erecord = dlsym(h, "cuEventRecord");
	cu.equery = dlsym(h, "cuEventQuery");
	cu.elapsed = dlsym(h, "cuEventElapsedTime");
	cu.capturing = dlsym(h, "cuStreamIsCapturing");
	cu.ssync = dlsym(h, "cuStreamSynchronize");
	cu.push = dlsym(h, "cuCtxPushCurrent_v2");
	cu.pop = dlsym(h, "cuCtxPopCurrent_v2");
	void *need[] = { init, retain, setcur, screate, alloc, ecreate, cu.memset8, cu.erecord, cu.equery,
			 cu.elapsed, cu.capturing, cu.ssync, cu.push, cu.pop };
	for (size_t i = 0; i < sizeof need / sizeof *need; i++)
		if (!need[i]) {
			fprintf(stderr, "event_cost: libcuda.so.1 lacks a driver function (#%zu)\n", i);
			return 2;
		}
	if (init(0) || retain(&ctx, 0) || setcur(ctx) || screate(&stream, 1) || alloc(&buf, 1 << 20) ||
	    ecreate(&anchor_ev, 0)) {
		fprintf(stderr, "event_cost: CUDA set-up failed\n");
		return 1;
	}
	for (int i = 0; i < 256; i++)
		ecreate(&ev[i], 0);
	cu.erecord(anchor_ev, stream);
	cu.erecord(ev[0], stream);

	/* mark: what one mark costs the calling thread */
	enum { N = 20000 };
	for (int round = 0; round < 3; round++) {
		double a = loop(N, 0), b = loop(N, 1);
		printf("round=%d memset_ns=%.0f memset_mark_ns=%.0f mark_ns=%.0f\n", round, a, b, b - a);
	}

	/* watcher: alternate the three conditions, per period */
	unsigned periods[] = { 1000, 100 };
	int rounds = argc > 1 ? atoi(argv[1]) : 15;
	for (unsigned p = 0; p < sizeof periods / sizeof *periods; p++) {
		period_us = periods[p];
		atomic_store(&stop_watch, 0);
		atomic_store(&mode, 0);
		pthread_t th;
		if (pthread_create(&th, NULL, watch, NULL) != 0)
			return 1;
		double v[3][64];
		for (int r = 0; r < rounds && r < 64; r++)
			for (int m = 0; m < 3; m++) {
				int k = (m + r) % 3;   /* the order turns every round */
				atomic_store(&mode, k);
				v[k][r] = loop(N, 64);
			}
		atomic_store(&stop_watch, 1);
		pthread_join(th, NULL);
		double idle = median(v[0], rounds), wakes = median(v[1], rounds), calls = median(v[2], rounds);
		printf("watcher_period_us=%u memset_ns_idle=%.0f memset_ns_wakes=%.0f memset_ns_driver_calls=%.0f "
		       "wakes_over_idle=%.4f driver_calls_over_idle=%.4f\n",
		       period_us, idle, wakes, calls, wakes / idle, calls / idle);
	}
	return 0;
}
