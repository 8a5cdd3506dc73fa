/*
 * event_cost.c — what a GPU mark costs the calling thread on a real driver
 * (docs/benchmarks.md): tiny async memsets alone, then each followed by
 * cuStreamIsCapturing + cuEventRecord (what gpu_marks.c does per mark).
 * Needs libcuda.so.1 (dlopen: no CUDA headers or libraries at build time).
 * Prints key=value lines: ns per memset, per memset + mark, their difference.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef int (*fn0)(unsigned);
static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
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
	int (*memset8)(uint64_t, unsigned char, size_t, void *) = dlsym(h, "cuMemsetD8Async");
	int (*ecreate)(void **, unsigned) = dlsym(h, "cuEventCreate");
	int (*erecord)(void *, void *) = dlsym(h, "cuEventRecord");
	int (*capturing)(void *, int *) = dlsym(h, "cuStreamIsCapturing");
	int (*ssync)(void *) = dlsym(h, "cuStreamSynchronize");
	void *ctx, *s, *ev[256];
	uint64_t p;
	if (init(0) || retain(&ctx, 0) || setcur(ctx) || screate(&s, 1) || alloc(&p, 1 << 20)) {
		fprintf(stderr, "event_cost: CUDA set-up failed\n");
		return 1;
	}
	for (int i = 0; i < 256; i++)
		ecreate(&ev[i], 0);
	enum { N = 20000 };
	for (int round = 0; round < 3; round++) {
		ssync(s);
		uint64_t t0 = now();
		for (int i = 0; i < N; i++)
			memset8(p, 0, 256, s);
		uint64_t t1 = now();
		ssync(s);
		uint64_t t2 = now();
		for (int i = 0; i < N; i++) {
			int st;
			memset8(p, 0, 256, s);
			capturing(s, &st);
			erecord(ev[i & 255], s);
		}
		uint64_t t3 = now();
		ssync(s);
		double a = (double)(t1 - t0) / N, b = (double)(t3 - t2) / N;
		printf("round=%d memset_ns=%.0f memset_mark_ns=%.0f mark_ns=%.0f\n", round, a, b, b - a);
	}
	return 0;
}
