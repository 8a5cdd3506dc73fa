/*
 * gpu_sharing.c — other processes that queued GPU work all through the
 * steady state (gpu_sharing.h).
 */
#include "measure/gpu_sharing.h"

#include "measure/calls.h"

#include <stdlib.h>
#include <string.h>

/* The slices of the steady state (windows w, n pairs, cum[k] the steady
 * time before window k, total ns) in which thread th queued work: bits of
 * *mask. */
static void thread_slices(const struct ia_trace *t, const struct ia_thread *th, const uint64_t *w, size_t n,
			  const uint64_t *cum, uint64_t total, uint32_t *mask)
{
	size_t k = 0;
	for (uint32_t i = 0; i < th->call_n && k < n; i++) {
		const struct ia_call *c = &t->calls[t->call_by_th[th->call_first + i]];
		if (!ia_api_queues_work(c->api))
			continue;
		while (k < n && w[2 * k + 1] <= c->start)
			k++;
		if (k == n || c->start < w[2 * k])
			continue;
		unsigned s = (unsigned)((double)(cum[k] + (c->start - w[2 * k])) / (double)total * IA_SHARING_SLICES);
		*mask |= 1u << (s < IA_SHARING_SLICES ? s : IA_SHARING_SLICES - 1);
	}
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

static int popcount32(uint32_t v)
{
	int n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

int ia_gpu_sharing_compute(const struct ia_trace *t, int main_pid, const struct ia_phases *ph, uint64_t a, uint64_t b,
			   struct ia_gpu_sharing *out)
{
	memset(out, 0, sizeof *out);
	out->gpus = t->gpus;
	int main_proc = ia_proc_index(t, main_pid);
	if (main_proc < 0 || b <= a)
		return 0;
	size_t n = 0;
	uint64_t *w = ia_phases_steady_windows(ph, a, b, &n);
	if (!n)
		return 0;
	uint64_t *cum = malloc(n * sizeof *cum), total = 0;
	uint32_t *mask = calloc(t->nprocs, sizeof *mask);
	int *pids = malloc((t->nprocs + 1) * sizeof *pids);
	if (!cum || !mask || !pids) {
		free(w), free(cum), free(mask), free(pids);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		cum[k] = total;
		total += w[2 * k + 1] - w[2 * k];
	}
	for (size_t i = 0; total && i < t->nthreads; i++) {
		const struct ia_thread *th = &t->threads[i];
		if (th->proc != (uint32_t)main_proc && th->call_n && t->procs[th->proc].calls)
			thread_slices(t, th, w, n, cum, total, &mask[th->proc]);
	}
	for (size_t p = 0; p < t->nprocs; p++)
		if (popcount32(mask[p]) >= IA_SHARING_MIN_SLICES)
			pids[out->nprocs++] = t->procs[p].pid;
	qsort(pids, out->nprocs, sizeof *pids, cmp_int);
	memcpy(out->pids, pids, (out->nprocs < IA_SHARING_PIDS ? out->nprocs : IA_SHARING_PIDS) * sizeof *pids);
	free(w), free(cum), free(mask), free(pids);
	return 0;
}
