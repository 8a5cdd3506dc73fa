/*
 * nvtx_ranges.c — a program that annotates itself with NVTX, for
 * tests/e2e/nvtx_ranges.sh.  NVTX v3 is header-only, so this carries what a
 * copy of it does (NVIDIA's nvtxImpl.h, as the NVTX v3 documentation
 * describes it): function-pointer slots, callback tables that hand out the
 * slots' addresses, and on the first call the tool named by
 * NVTX_INJECTION64_PATH dlopened and its InitializeInjectionNvtx2 called.
 * Two such copies (two libraries with their own NVTX) are both given to the
 * tool.
 *
 * What it does, on the fake CUDA runtime (every figure is the test's truth):
 *   STEPS steps on the main thread, each a pushed "step" holding "data"
 *   (sleeps 20 ms) then "compute" (launches and synchronizes; 5 ms kernels);
 *   one mark "epoch end" after the steps;
 *   a started range "prefetch" ended by another thread 30 ms later;
 *   a wide-character push (L"données", 8 UTF-8 bytes) and a registered
 *   string ("registered"), through the second copy;
 *   a named domain's push and pop ("NCCL"): not recorded;
 *   20 nested pushes: the 16 outermost recorded, 4 lost;
 *   a pop with nothing pushed: -2;
 *   a range open across a fork ("forked": the parent's only) and the
 *   child's own ("child");
 *   last, 70 ranges started and never ended: 6 evicted, lost after the
 *   last range record (10 lost in all).
 * `nvtx_ranges bench N W`: a push and pop's cost (tests/bench/nvtx.sh).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "../fakecuda/cuda_runtime_fake.h"

/* --- one NVTX copy --------------------------------------------------------- */

typedef void (*fnp)(void);
struct attr {
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type, reserved0;
	uint64_t payload;
	int32_t message_type;
	const void *message;
};
struct callbacks {
	size_t size;
	int (*get_module_table)(int module, fnp ***table, unsigned int *size);
};

#define CORE_N 16
#define CORE2_N 16
struct copy {
	fnp core[CORE_N], core2[CORE2_N];           /* the slots */
	fnp *core_t[CORE_N + 1], *core2_t[CORE2_N + 1];
	struct callbacks cb;
	int init;                                  /* 0 fresh, 1 a tool took it, -1 none */
};
static struct copy copies[2];
static struct copy *cur;   /* the copy whose export table is being asked for */

static int get_module_table(int module, fnp ***table, unsigned int *size)
{
	if (module == 1) {
		*table = cur->core_t;
		*size = CORE_N;
		return 1;
	}
	if (module == 5) {
		*table = cur->core2_t;
		*size = CORE2_N;
		return 1;
	}
	return 0;
}

static const void *get_export_table(uint32_t id)
{
	return id == 1 ? &cur->cb : NULL;
}

static void copy_init(struct copy *c)
{
	if (c->init)
		return;
	for (int i = 0; i < CORE_N; i++)
		c->core_t[i] = i ? &c->core[i] : NULL;
	for (int i = 0; i < CORE2_N; i++)
		c->core2_t[i] = i ? &c->core2[i] : NULL;
	c->cb.size = sizeof c->cb;
	c->cb.get_module_table = get_module_table;
	c->init = -1;
	const char *path = getenv("NVTX_INJECTION64_PATH");
	void *h = path ? dlopen(path, RTLD_LAZY) : NULL;
	int (*fn)(const void *(*)(uint32_t)) = h ? (int (*)(const void *(*)(uint32_t)))dlsym(h, "InitializeInjectionNvtx2") : NULL;
	cur = c;
	if (fn && fn(get_export_table))
		c->init = 1;
}

#define CALL(c, table, id, type, ...) \
	(copy_init(c), (c)->init == 1 && (c)->table[id] ? ((type)(c)->table[id])(__VA_ARGS__) : 0)

static int push_a(struct copy *c, const char *s) { return CALL(c, core, 9, int (*)(const char *), s); }
static int push_w(struct copy *c, const wchar_t *s) { return CALL(c, core, 10, int (*)(const wchar_t *), s); }
static int push_ex(struct copy *c, const struct attr *a) { return CALL(c, core, 8, int (*)(const struct attr *), a); }
static int pop(struct copy *c) { return CALL(c, core, 11, int (*)(void)); }
static void mark_a(struct copy *c, const char *s) { CALL(c, core, 2, void (*)(const char *), s); }
static uint64_t start_a(struct copy *c, const char *s) { return CALL(c, core, 5, uint64_t (*)(const char *), s); }
static void end(struct copy *c, uint64_t id) { CALL(c, core, 7, void (*)(uint64_t), id); }
static const void *domain_create(struct copy *c, const char *s) { return (const void *)(uintptr_t)CALL(c, core2, 12, uintptr_t (*)(const char *), s); }
static const void *register_a(struct copy *c, const void *d, const char *s) { return (const void *)(uintptr_t)CALL(c, core2, 10, uintptr_t (*)(const void *, const char *), d, s); }
static int domain_push(struct copy *c, const void *d, const struct attr *a) { return CALL(c, core2, 4, int (*)(const void *, const struct attr *), d, a); }
static int domain_pop(struct copy *c, const void *d) { return CALL(c, core2, 5, int (*)(const void *), d); }

/* --- the program ----------------------------------------------------------- */

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static uint64_t prefetch_id;

static void *ender(void *arg)
{
	(void)arg;
	sleep_ms(30);
	end(&copies[0], prefetch_id);
	return NULL;
}

/* `nvtx_ranges bench N W` (tests/bench/nvtx.sh): the calling thread's CPU
 * time per push and pop pair, named as torch names its ranges, over N pairs
 * after W. */
static int bench(long n, long w)
{
	struct copy *a = &copies[0];
	struct timespec t0, t1;
	for (long i = 0; i < w; i++) {
		push_a(a, "forward");
		pop(a);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (long i = 0; i < n; i++) {
		push_a(a, "forward");
		pop(a);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("tool=%d cpu_ns_per_pair=%.1f\n", a->init, ns / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "bench"))
		return bench(atol(argv[2]), atol(argv[3]));
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	void *buf;
	if (cudaMalloc(&buf, 4096))
		return 1;
	struct copy *a = &copies[0], *b = &copies[1];

	prefetch_id = start_a(a, "prefetch");
	pthread_t t;
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);

	for (int s = 0; s < steps; s++) {
		push_a(a, "step");
		push_a(a, "data");
		sleep_ms(20);
		pop(a);
		push_a(a, "compute");
		cudaLaunchKernel((const void *)main, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL);
		cudaDeviceSynchronize();
		pop(a);
		pop(a);
	}
	mark_a(a, "epoch end");

	push_w(b, L"données");
	pop(b);
	const void *reg = register_a(b, NULL, "registered");
	struct attr at = { 3, sizeof at, 0, 0, 0, 0, 0, 0, 3, reg };
	push_ex(b, &at);
	pop(b);
	const void *nccl = domain_create(b, "NCCL");
	struct attr an = { 3, sizeof an, 0, 0, 0, 0, 0, 0, 1, "ncclAllReduce" };
	domain_push(b, nccl, &an);
	domain_pop(b, nccl);

	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "nest%02d", i);
		push_a(a, name);
	}
	for (int i = 0; i < 20; i++)
		pop(a);
	int empty = pop(a);

	/* a fork child: the range open at the fork is the parent's (its pop in
	 * the child records nothing), the parent's losses are not the child's */
	push_a(a, "forked");
	pid_t child = fork();
	if (child == 0) {
		pop(a);
		push_a(a, "child");
		pop(a);
		sleep_ms(500);   /* alive while its records are admitted (CUDA-only mode reads its parent in /proc) */
		exit(0);
	}
	pop(a);
	waitpid(child, NULL, 0);
	/* last: 70 ranges started and never ended — the table's 64 slots, then
	 * the 6 oldest evicted, lost after the last range record */
	for (int i = 0; i < 70; i++)
		start_a(a, "never ended");
	printf("copies=%d,%d nccl_domain=%s empty_pop=%d child=%d\n", a->init, b->init, nccl ? "named" : "null", empty,
	       (int)child);
	return 0;
}
