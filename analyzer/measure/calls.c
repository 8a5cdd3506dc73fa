/*
 * calls.c — what a CUDA call does to the GPU's queue (see calls.h).
 */
#include "measure/calls.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <stdlib.h>
#include <string.h>

int ia_api_completes_work(unsigned api)
{
	switch (api) {
	case INGERO_API_CUDA_MEMCPY:
	case INGERO_API_CUDA_MEMCPY_PTDS:
	case INGERO_API_CUDA_MEMCPY_2D:
	case INGERO_API_CUDA_MEMCPY_2D_PTDS:
	case INGERO_API_CUDA_MEMCPY_PEER:
	case INGERO_API_CU_MEMCPY:
	case INGERO_API_CU_MEMCPY_HTOD_V2:
	case INGERO_API_CU_MEMCPY_DTOH_V2:
	case INGERO_API_CU_MEMCPY_DTOD_V2:
		return 1;
	default:
		return ingero_api_class(api) == INGERO_CLASS_SYNC || ingero_api_free_waits(api);
	}
}

int ia_call_completes_work(const struct ia_call *c)
{
	return ia_api_completes_work(c->api) && !(c->flags & INGERO_FLAG_NULL_FREE);
}

int ia_call_is_waiting_free(const struct ia_call *c)
{
	return ingero_api_free_waits(c->api) && !(c->flags & INGERO_FLAG_NULL_FREE);
}

int ia_api_queues_work(unsigned api)
{
	int c = ingero_api_class(api);
	return c == INGERO_CLASS_LAUNCH || c == INGERO_CLASS_COPY || c == INGERO_CLASS_MEMSET;
}

uint32_t *ia_proc_calls(const struct ia_trace *t, uint32_t proc, size_t *n)
{
	size_t total = 0;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].proc == proc)
			total += t->threads[i].call_n;
	uint32_t *out = malloc((total + 1) * sizeof *out), *tmp = NULL;
	if (!out)
		return NULL;
	size_t have = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct ia_thread *x = &t->threads[i];
		if (x->proc != proc || !x->call_n)
			continue;
		const uint32_t *src = t->call_by_th + x->call_first;
		if (!have) {
			memcpy(out, src, x->call_n * sizeof *out);
			have = x->call_n;
			continue;
		}
		if (!tmp && !(tmp = malloc((total + 1) * sizeof *tmp))) {
			free(out);
			return NULL;
		}
		size_t a = 0, b = 0, k = 0;
		while (a < have || b < x->call_n) {
			int take_a = b == x->call_n ||
				(a < have && (t->calls[out[a]].start < t->calls[src[b]].start ||
					      (t->calls[out[a]].start == t->calls[src[b]].start &&
					       t->calls[out[a]].th <= t->calls[src[b]].th)));
			tmp[k++] = take_a ? out[a++] : src[b++];
		}
		memcpy(out, tmp, k * sizeof *out);
		have = k;
	}
	free(tmp);
	*n = have;
	return out;
}
