/*
 * nccl_calls.c — what the preload library adds to an NCCL call (`make
 * bench-nccl`, tests/bench/nccl.sh): N ncclAllReduce calls of 1,024 floats on
 * a one-rank communicator of the fake libnccl.so.2 (no other rank to wait
 * for) on one stream, after W warm-up calls.  Prints the calling thread's
 * CPU time per call (CLOCK_THREAD_CPUTIME_ID: preemption by the sender or
 * other processes is not the call's cost) and the wall time per call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../fakecuda/cuda_runtime_fake.h"
#include "../fakecuda/nccl_fake.h"

static uint64_t ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
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
