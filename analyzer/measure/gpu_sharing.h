/*
 * gpu_sharing.h — other processes that queued GPU work all through the
 * main process's steady state.  On one GPU (session.gpus 1) the GPU
 * time-slices between their contexts, so the main process's kernels also
 * wait for theirs and what it measures is its own share of the GPU: a
 * sweep of runs started at once, ranks of one job on one GPU, another
 * job.  Told by when they queued work, not by what they queued: a process
 * that launched, copied or set memory in at least half of the steady
 * state's slices shares it; one that touched the GPU once does not.
 */
#ifndef IA_GPU_SHARING_H
#define IA_GPU_SHARING_H

#include "load/trace.h"
#include "measure/phases.h"

#define IA_SHARING_SLICES 20     /* the steady state cut into this many equal parts */
#define IA_SHARING_MIN_SLICES 10 /* of them with the process's queued work: it shares the GPU */
#define IA_SHARING_PIDS 8        /* pids kept (the first, by pid) */

struct ia_gpu_sharing {
	uint32_t nprocs;                 /* other processes that shared; 0 none */
	int pids[IA_SHARING_PIDS];       /* the first min(nprocs, IA_SHARING_PIDS), by pid */
	int gpus;                        /* GPUs the machine showed (trace.gpus), 0 unknown */
};

/* Over the steady state inside [a, b) (ph's steady windows) of the
 * process main_pid; t may be wider than the trace ph came from (a rank's
 * own analysis loads its subtree alone: the other ranks are in the job's).
 * 0, or -1 out of memory (out then says none). */
int ia_gpu_sharing_compute(const struct ia_trace *t, int main_pid, const struct ia_phases *ph, uint64_t a, uint64_t b,
			   struct ia_gpu_sharing *out);

#endif
