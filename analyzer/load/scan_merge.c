/*
 * scan_merge.c — what the scan's chunks read, made one result
 * (scan_internal.h): each chunk's stack ids into one sorted list and its
 * calls' indexes remapped to it, the chunks' slices closed up into one
 * array a table, their side arrays (wakers, aside tids, nexts, holders)
 * moved to the packed rows' indexes, and the tids' pids.
 */
#include "load/scan_internal.h"

#include <stdlib.h>
#include <string.h>

/* Stack ids of every chunk, sorted and unique (index 0: none). */
static int merge_stack_ids(const struct job *j, struct ia_scan_result *r)
{
	size_t nall = 1;
	for (size_t i = 0; i < j->nchunks; i++)
		nall += j->chunks[i].nsids;
	if (!(r->stack_ids = malloc(nall * sizeof *r->stack_ids)))
		return -1;
	r->stack_ids[0] = 0;
	r->nstacks = 1;
	for (size_t i = 0; i < j->nchunks; i++)
		for (size_t k = 1; k < j->chunks[i].nsids; k++)
			r->stack_ids[r->nstacks++] = j->chunks[i].sids[k];
	qsort(r->stack_ids + 1, r->nstacks - 1, sizeof *r->stack_ids, ia_cmp_u64);
	size_t u = 1;
	for (size_t i = 1; i < r->nstacks; i++)
		if (r->stack_ids[i] != r->stack_ids[u - 1])
			r->stack_ids[u++] = r->stack_ids[i];
	r->nstacks = u;
	return 0;
}

/* A chunk's calls' stack indexes (into its own ids) into the merged ones. */
static int remap_stacks(const struct chunk *c, struct ia_call *x, const struct ia_scan_result *r)
{
	uint32_t *remap = malloc(c->nsids * sizeof *remap);
	if (!remap)
		return -1;
	remap[0] = 0;
	for (size_t k = 1; k < c->nsids; k++) {
		uint64_t *p = bsearch(&c->sids[k], r->stack_ids, r->nstacks, sizeof *p, ia_cmp_u64);
		remap[k] = (uint32_t)(p - r->stack_ids);
	}
	for (size_t k = 0; k < c->n; k++)
		x[k].stack = remap[x[k].stack];
	free(remap);
	return 0;
}

/* Each table's chunks packed into one array (a chunk read fewer rows than
 * its rowids: they close up), handed to r; base[] gives them up.  The side
 * arrays are sized once (grown row by row, each doubling was a copy). */
static int pack_tables(struct job *j, void *base[2], struct ia_scan_result *r)
{
	size_t wcap = 0, acap = 0, ncap = 0, hcap = 0, nw = 0, na = 0, nn = 0, nh = 0;
	for (size_t i = 0; i < j->nchunks; i++)
		nw += j->chunks[i].nwk, na += j->chunks[i].naside, nn += j->chunks[i].nnx, nh += j->chunks[i].nho;
	if (ia_grow((void **)&r->wakers, &wcap, nw, sizeof *r->wakers) < 0 ||
	    ia_grow((void **)&r->aside, &acap, na, sizeof *r->aside) < 0 ||
	    ia_grow((void **)&r->nexts, &ncap, nn, sizeof *r->nexts) < 0 ||
	    ia_grow((void **)&r->holders, &hcap, nh, sizeof *r->holders) < 0)
		return -1;
	for (int calls = 1; calls >= 0; calls--) {
		size_t sz = calls ? sizeof(struct ia_call) : sizeof(struct ia_off);
		char *dst = base[calls];
		size_t n = 0;
		for (size_t i = 0; i < j->nchunks; i++) {
			struct chunk *c = &j->chunks[i];
			if (c->calls != calls)
				continue;
			if (c->own) {   /* window mode: the only chunk of its table */
				base[calls] = c->rows;
				c->rows = NULL;
				dst = base[calls];
				n = c->n;
			} else {
				if (dst + n * sz != (char *)c->rows)
					memmove(dst + n * sz, c->rows, c->n * sz);
				n += c->n;
			}
			/* its wakers and tids beside the rows, by index into the packed rows */
			for (size_t k = 0; !calls && k < c->nwk; k++)
				if (side_push(&r->wakers, &r->nwakers, &wcap, n - c->n + c->wk[k].off, c->wk[k].tid) < 0)
					return -1;
			for (size_t k = 0; !calls && k < c->naside; k++)
				if (side_push(&r->aside, &r->naside, &acap, n - c->n + c->aside[k].off, c->aside[k].tid) < 0)
					return -1;
			for (size_t k = 0; !calls && k < c->nnx; k++)
				if (side_push(&r->nexts, &r->nnexts, &ncap, n - c->n + c->nx[k].off, c->nx[k].tid) < 0)
					return -1;
			for (size_t k = 0; !calls && k < c->nho; k++)
				if (holder_push(&r->holders, &r->nholders, &hcap, n - c->n + c->ho[k].off, c->ho[k]) < 0)
					return -1;
			if (calls && c->nsids > 1 && remap_stacks(c, (struct ia_call *)dst + (n - c->n), r) < 0)
				return -1;
		}
		if (calls) {
			r->calls = (struct ia_call *)base[calls];
			r->ncalls = n;
		} else {
			r->offs = (struct ia_off *)base[calls];
			r->noffs = n;
		}
		base[calls] = NULL;
	}
	return 0;
}

/* tid -> pid, first chunk (lowest rowids) first; a pid a call block gave is
 * kept, the others (-1) are resolved by the loader when needed. */
static int tid_pids(const struct job *j, struct ia_scan_result *r)
{
	size_t tcap = 0;
	struct ia_map seen = { 0 };
	for (size_t i = 0; i < j->nchunks; i++) {
		const struct ia_map *m = &j->chunks[i].tidpid;
		for (size_t k = 0; k < m->cap; k++) {
			if (!m->vals[k])
				continue;
			int pid = m->vals[k] > 1 ? (int)(m->vals[k] - 1) : -1;
			uint32_t at = ia_map_get(&seen, m->keys[k]);
			if (at != UINT32_MAX) {
				if (r->pids[at] < 0)
					r->pids[at] = pid;
				continue;
			}
			size_t pcap = tcap;
			if (ia_grow((void **)&r->tids, &tcap, r->ntids + 1, sizeof *r->tids) < 0 ||
			    ia_grow((void **)&r->pids, &pcap, r->ntids + 1, sizeof *r->pids) < 0 ||
			    ia_map_put(&seen, m->keys[k], (uint32_t)r->ntids) < 0) {
				ia_map_free(&seen);
				return -1;
			}
			r->tids[r->ntids] = (uint32_t)m->keys[k];
			r->pids[r->ntids++] = pid;
		}
	}
	ia_map_free(&seen);
	return 0;
}

int ia_scan_merge(struct job *j, void *base[2], struct ia_scan_result *r)
{
	return merge_stack_ids(j, r) < 0 || pack_tables(j, base, r) < 0 || tid_pids(j, r) < 0 ? -1 : 0;
}
