/*
 * gap_workers.c — the DataLoader workers off-CPU in the gaps (gaps.h).
 *
 * A worker is either on a CPU (building a batch), blocked while loading
 * (its Dataset reads a file, fetches over the network, sleeps on a rate
 * limit) or blocked waiting for its next index (it keeps up).  The first is
 * workers_oncpu_ns; the other two are both "blocked" to the scheduler, and
 * only the stacks of their blocks (gap_blocks.c) tell them apart (not D
 * state alone: a worker forked each epoch faults in its libraries in D
 * state before it loads anything — c32).  A loader that waits on storage
 * or on a remote store starves the GPU with its workers' CPUs idle: more
 * CPUs or cheaper Python code would not help it.  A worker loads on its
 * main thread (the Dataset's code runs there); its other threads — the
 * queue's feeder, the resource sharer, OpenMP's pool — wait for it or for
 * nothing, and would triple the blocked time (c37: 89 s of blocked time in
 * 7.8 s of gaps by 4 workers, 31 s of it in accept4).
 */
#include "measure/gaps.h"
#include "base/json_out.h"
#include "base/util.h"

/* One thread's blocked time in the gaps, interval by interval. */
static void thread_blocked(const struct ia_trace *t, uint32_t th, struct ia_gaps *g)
{
	const struct ia_thread *x = &t->threads[th];
	const uint32_t *oi = t->off_by_th + x->off_first;
	size_t k = 0;   /* (its intervals are in start order) */
	for (size_t i = 0; i < x->off_n; i++) {
		const struct ia_off *o = &t->offs[oi[i]];
		uint64_t blk = ia_gaps_blocked_over_next(g, o, &k);
		g->workers_blocked_ns += blk;
		if (o->th & IA_OFF_IOWAIT)
			g->workers_iowait_ns += blk;
		g->workers_sys_ns[ia_off_sys(o)] += blk;
	}
}

void ia_gap_workers_off(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g)
{
	for (size_t th = 0; g->n && th < t->nthreads; th++)
		if (ia_worker_main_thread(t, pp, (uint32_t)th))
			thread_blocked(t, (uint32_t)th, g);
}

int ia_worker_main_thread(const struct ia_trace *t, const struct ia_per_process *pp, uint32_t th)
{
	const struct ia_thread *x = &t->threads[th];
	const struct ia_proc_stats *ps = (int)x->tid == t->procs[x->proc].pid ? ia_pp_of_proc(pp, x->proc) : NULL;
	return ps && ps->role == IA_ROLE_WORKER;
}

/* The loading blocks' share of all the sampled blocks' weight, times the
 * blocked time measured: a ratio estimate.  The weights alone estimate the
 * loading time too, but a rarely drawn block (chance 1/100) weighs a
 * hundred times its length, and the estimate swung by ±40 % between runs
 * of a worker that only ever slept; the same draws inflate both sums of
 * the ratio, and cancel. */
uint64_t ia_gap_workers_loading_ns(const struct ia_gaps *g)
{
	const struct ia_gap_blocks *b = &g->worker_blocks;
	if (!(b->weight > 0))
		return 0;
	return (uint64_t)((double)g->workers_blocked_ns * (b->loading_weight / b->weight));
}

void ia_gap_workers_json(cJSON *parent, const struct ia_gaps *g)
{
	ia_json_u64(parent, "workers_blocked_ns", g->workers_blocked_ns);
	ia_json_u64(parent, "workers_iowait_ns", g->workers_iowait_ns);
	ia_json_u64(parent, "workers_loading_blocked_ns", ia_gap_workers_loading_ns(g));
	ia_gaps_blocked_in_json(parent, "workers_blocked_in", g->workers_sys_ns, g->workers_blocked_ns);
	ia_gap_blocks_json(parent, "workers", g, &g->worker_blocks, 5);
	if (g->blocks_known)
		ia_json_u64(parent, "workers_loading_blocks_sampled", g->worker_blocks.loading_sampled);
}
