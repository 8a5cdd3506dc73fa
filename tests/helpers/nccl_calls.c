/*
 * nccl_calls.c — what the preload library adds to an NCCL call (`make
 * bench-nccl`, tests/bench/nccl.sh): N ncclAllReduce calls of 1,024 floats on
 * a one-rank communicator of the fake libnccl.so.2 (no other rank to wait
 * for) on one stream, after W warm-up calls.  Prints the calling thread's
 * CPU time per call (CLOCK_THREAD_CPUTIME_ID: preemption by the sender or
 * other processes is not the call's cost) and the wall time per call.
 *
 * `nccl_calls api`: the other entry points, for tests/e2e/nccl_collectives.sh —
 * four forked ranks on one communicator: two groups of a send to the next
 * rank and a receive from the previous one, a split by color (rank % 2) and
 * three all-reduces on each half, a broadcast from rank 2 on the whole, both
 * communicators destroyed; then, in the parent, ncclCommInitAll of 2 devices.
 * Prints "rank R pid P color C" per rank.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fakecuda/cuda_runtime_fake.h"
#include "../fakecuda/nccl_fake.h"

static uint64_t ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int api_rank(ncclUniqueId id, int r)
{
	ncclComm_t world, half;
	void *buf;
	if (cudaMalloc(&buf, 4096) || ncclCommInitRank(&world, 4, id, r))
		return 1;
	for (int g = 0; g < 2; g++) {
		ncclGroupStart();
		ncclSend(buf, 256, ncclFloat32, (r + 1) % 4, world, NULL);
		ncclRecv(buf, 256, ncclFloat32, (r + 3) % 4, world, NULL);
		ncclGroupEnd();
	}
	if (ncclCommSplit(world, r % 2, r, &half, NULL) || !half)
		return 1;
	for (int i = 0; i < 3; i++)
		ncclAllReduce(buf, buf, 512, ncclFloat32, ncclSum, half, NULL);
	ncclBroadcast(buf, buf, 128, ncclFloat32, 2, world, NULL);
	cudaDeviceSynchronize();
	ncclCommDestroy(half);
	ncclCommDestroy(world);
	printf("rank %d pid %d color %d\n", r, (int)getpid(), r % 2);
	fflush(stdout);
	return 0;
}

static int api(void)
{
	extern int shm_unlink(const char *);
	ncclUniqueId id;
	ncclComm_t two[2];
	pid_t pids[4];
	int rc = 0;
	if (cudaSetDevice(0) || ncclGetUniqueId(&id))
		return 1;
	for (int r = 0; r < 4; r++)
		if ((pids[r] = fork()) == 0)
			_exit(api_rank(id, r));
	for (int r = 0; r < 4; r++) {
		int st;
		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	if (ncclCommInitAll(two, 2, NULL) || ncclCommDestroy(two[0]) || ncclCommDestroy(two[1]))
		rc = 1;
	shm_unlink(id.internal);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "api"))
		return api();
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, w = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	void *buf;
	if (cudaStreamCreate(&s) || cudaMalloc(&buf, 4096) || ncclGetUniqueId(&id) || ncclCommInitRank(&comm, 1, id, 0)) {
		fprintf(stderr, "nccl_calls: set-up failed\n");
		return 1;
	}
	for (unsigned long i = 0; i < w; i++)
		ncclAllReduce(buf, buf, 1024, ncclFloat32, ncclSum, comm, s);
	uint64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID), t0 = ns(CLOCK_MONOTONIC);
	for (unsigned long i = 0; i < n; i++)
		ncclAllReduce(buf, buf, 1024, ncclFloat32, ncclSum, comm, s);
	uint64_t c1 = ns(CLOCK_THREAD_CPUTIME_ID), t1 = ns(CLOCK_MONOTONIC);
	cudaStreamSynchronize(s);
	ncclCommDestroy(comm);
	{
		extern int shm_unlink(const char *);
		shm_unlink(id.internal);
	}
	printf("calls=%lu cpu_ns_per_call=%.1f wall_ns_per_call=%.1f\n", n, (double)(c1 - c0) / (double)n,
	       (double)(t1 - t0) / (double)n);
	return 0;
}
