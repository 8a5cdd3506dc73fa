/*
 * per_process.h — the traced process tree with roles and host evidence.
 *
 * Roles, from evidence: the main process is the one that drives the GPU
 * (most sync, copy and launch calls; with no CUDA calls at all, the root
 * of the tree).  Among its descendants:
 *   compiler  a compiler or linker (ptxas, nvlink, cc1, ... by name),
 *             torch.compile's compile-worker pool and what it runs, or a
 *             child whose samples are mostly compile-time code
 *   worker    a DataLoader worker: a thread named pt_data_worker (PyTorch
 *             names its workers so) or samples in torch/utils/data/; when
 *             the main process is no Python program (a C workload), any
 *             child, as a DataLoader-style worker
 *   child     any other descendant: no DataLoader advice is given for it
 * Everything else traced is "other".  The main thread is the main
 * process's thread with the most CUDA calls (see per_process.c).
 *
 * Per process: CUDA calls, CPU time (thread lifetimes minus off-CPU: an
 * estimate from scheduler evidence), context switches (= off-CPU intervals)
 * voluntary/involuntary, off-CPU total and worst stall, run-queue delay p50
 * and p99 (woken -> running, and preempted -> running), page allocations,
 * and for workers the share of the main thread's blocked time during which
 * that worker was on a CPU.
 */
#ifndef IA_PER_PROCESS_H
#define IA_PER_PROCESS_H

#include "load/trace.h"

#include <cjson/cJSON.h>

enum ia_role { IA_ROLE_MAIN, IA_ROLE_WORKER, IA_ROLE_OTHER, IA_ROLE_COMPILER, IA_ROLE_CHILD };
const char *ia_role_name(enum ia_role r);

struct ia_proc_stats {
	uint32_t proc;               /* index into trace.procs */
	enum ia_role role;
	int compile_pool;            /* torch.compile's compile-worker pool or below it (role compiler) */
	const char *why_role;        /* the evidence for the role, for people ("thread pt_data_worker") */
	int depth;                   /* in the tree, for indentation */
	uint32_t nthreads;
	uint64_t context_switches, voluntary, involuntary;
	uint64_t off_cpu_ns, runq_ns, worst_stall_ns;
	uint64_t runq_p50_ns, runq_p99_ns;
	uint64_t page_allocs, pages, page_faults;
	uint64_t cpu_ns;
	uint64_t oncpu_while_main_blocked_ns;  /* workers: CPU time while main waited */
	double main_wait_share;      /* that, as a share of all workers' (0..1) */
};

struct ia_per_process {
	struct ia_proc_stats *p;     /* tree order: parents before children, by pid */
	size_t n;
	int main;                    /* index into p, -1 when no process */
	uint32_t main_thread;        /* thread index, UINT32_MAX when none */
	uint64_t main_blocked_ns;    /* main thread blocked (not runnable) off-CPU time */
	size_t nworkers;
	/* the most workers alive at one time (by their start and exit): what
	 * shares the CPUs — DataLoader workers without persistent_workers are
	 * forked again each epoch, 60 processes in all for 4 at a time */
	size_t workers_at_once;
	size_t ncompilers, nchildren;
};

int ia_per_process_compute(const struct ia_trace *t, struct ia_per_process *pp, char *err, size_t errlen);
void ia_per_process_free(struct ia_per_process *pp);
const struct ia_proc_stats *ia_pp_of_proc(const struct ia_per_process *pp, uint32_t proc);


/* [{pid, ppid, comm, role, calls{}, context_switches, off_cpu_ns, ...}] */
cJSON *ia_per_process_json(const struct ia_trace *t, const struct ia_per_process *pp);

#endif
