/*
 * store_batch.c — the rows queued between the collector's producers and
 * the writer thread (store_internal.h): growable arrays, and a batch's
 * rows counted, cleared (the strings they own freed) and freed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "store_internal.h"

void *vec_push(struct vec *v, size_t elem, size_t count)
{
	if (v->n + count > v->cap) {
		size_t cap = v->cap ? v->cap : 256;
		void *p;

		while (cap < v->n + count)
			cap *= 2;
		p = realloc(v->p, cap * elem);
		if (!p) {
			fprintf(stderr, "ingero-collector: out of memory queuing rows\n");
			abort();
		}
		v->p = p;
		v->cap = cap;
	}
	v->n += count;
	return (char *)v->p + (v->n - count) * elem;
}

size_t batch_rows(const struct batch *b)
{
	return b->calls.n + b->offcpu.n + b->procs.n + b->threads.n + b->busy.n + b->pages.n +
	       b->comps.n + b->samples.n + b->stacks.n + b->kernels.n + b->session.n + b->gpu.n +
	       b->capture.n + b->env.n + b->coll.n + b->range.n;
}

void batch_clear(struct batch *b)
{
	struct q_proc *p = b->procs.p;
	struct q_thread *t = b->threads.p;
	struct q_bucket *c = b->comps.p;
	struct frame_row *f = b->frames.p;
	struct q_kernel *k = b->kernels.p;
	struct q_kv *kv = b->session.p;
	struct q_env *env = b->env.p;
	struct q_range *rg = b->range.p;

	for (size_t i = 0; i < b->procs.n; i++) {
		free((char *)p[i].r.comm);
		free((char *)p[i].r.exe);
		free((char *)p[i].r.cmdline);
	}
	for (size_t i = 0; i < b->threads.n; i++)
		free(t[i].comm);
	for (size_t i = 0; i < b->comps.n; i++)
		free(c[i].comm);
	for (size_t i = 0; i < b->frames.n; i++) {
		free((char *)f[i].symbol);
		free((char *)f[i].module);
		free((char *)f[i].file);
	}
	for (size_t i = 0; i < b->kernels.n; i++)
		free(k[i].name);
	for (size_t i = 0; i < b->session.n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	b->calls.n = b->offcpu.n = b->procs.n = b->threads.n = b->busy.n = b->pages.n = 0;
	b->comps.n = b->samples.n = b->stacks.n = b->frames.n = b->kernels.n = b->session.n = 0;
	for (size_t i = 0; i < b->env.n; i++)
		free(env[i].kv);
	for (size_t i = 0; i < b->range.n; i++)
		free(rg[i].name);
	b->gpu.n = b->capture.n = b->env.n = b->coll.n = b->range.n = 0;
}

void batch_free(struct batch *b)
{
	batch_clear(b);
	free(b->calls.p); free(b->offcpu.p); free(b->procs.p); free(b->threads.p);
	free(b->busy.p); free(b->pages.p); free(b->comps.p); free(b->samples.p);
	free(b->stacks.p); free(b->frames.p); free(b->kernels.p); free(b->session.p);
	free(b->gpu.p); free(b->capture.p); free(b->env.p); free(b->coll.p); free(b->range.p);
}
