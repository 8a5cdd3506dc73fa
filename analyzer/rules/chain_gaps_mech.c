/*
 * chain_gaps_mech.c — the host time in the gaps named by its mechanism
 * (load/mechanisms.h), not only by its line: where the main thread's
 * samples in the gaps are mostly page faults of fresh memory, the
 * allocator, CPython's garbage collector or unpickling, the fix is the
 * mechanism's (reuse the buffer, gc.freeze(), shared memory), whatever
 * line happened to run it.  Page faults and fresh memory come with the
 * pages the main process allocated in the gaps (page_allocs), the kernel's
 * own count.
 */
#include "rules/chain_gaps.h"

#include "base/util.h"
#include "load/mechanisms.h"

#include <stdio.h>
#include <stdlib.h>

#define MECH_SHARE 0.25        /* of the main thread's samples in the gaps: the mechanism is named */
#define MECH_MIN_SAMPLES 20    /* fewer: no share is worth a sentence */
#define PAGE_BYTES 4096.0

/* Pages the main process allocated inside the gaps. */
static uint64_t gap_pages(const struct gap_view *v)
{
	const struct ia_analysis *a = v->a;
	const struct ia_gaps *g = v->g;
	if (a->pp.main < 0 || !a->ev.pages)
		return 0;
	uint32_t pi = a->pp.p[a->pp.main].proc;
	if (pi >= a->ev.npages)
		return 0;
	uint64_t n = 0;
	for (size_t i = 0; i < g->n; i++)
		n += ia_series_sum(&a->ev.pages[pi], g->g[i].start, g->g[i].end);
	return n;
}

int ia_gap_mech_cause(struct ia_chain *c, const struct gap_view *v, double *share)
{
	const struct ia_gaps *g = v->g;
	uint64_t all = 0, fam[IA_MECH_N] = { 0 }, model[IA_MECH_N] = { 0 };
	for (int m = 0; m < IA_MECH_N; m++) {
		all += g->mech_main[m];
		if (m != IA_MECH_NONE) {
			fam[ia_mech_family((enum ia_mech)m)] += g->mech_main[m];
			model[ia_mech_family((enum ia_mech)m)] += g->mech_main_model[m];
		}
	}
	if (all < MECH_MIN_SAMPLES)
		return 0;
	/* mechanisms with one fix are weighed together (a family) */
	int best = IA_MECH_NONE;
	for (int m = 1; m < IA_MECH_N; m++)
		if (fam[m] > fam[best] && ia_mech_fix((enum ia_mech)m))
			best = m;
	if (best == IA_MECH_NONE || (double)fam[best] < MECH_SHARE * (double)all)
		return 0;
	*share = (double)fam[best] / (double)all;
	ia_addf(c->root_cause, sizeof c->root_cause, " %.0f%% of those samples are %s", ia_pct(fam[best], all),
		ia_mech_family_name((enum ia_mech)best));
	/* a family of several mechanisms: each member's share */
	int family = 0;
	for (int m = 1; m < IA_MECH_N; m++)
		family |= m != best && (int)ia_mech_family((enum ia_mech)m) == best;
	if (family) {
		const char *sep = ": ";
		for (int m = 1; m < IA_MECH_N; m++)
			if ((int)ia_mech_family((enum ia_mech)m) == best && g->mech_main[m]) {
				ia_addf(c->root_cause, sizeof c->root_cause, "%s%s %.0f%%", sep, ia_mech_name((enum ia_mech)m),
					ia_pct(g->mech_main[m], all));
				sep = ", ";
			}
	}
	uint64_t pages = best == IA_MECH_FAULT ? gap_pages(v) : 0;
	if (pages && g->total_ns)
		ia_addf(c->root_cause, sizeof c->root_cause,
			"; the process allocated %.0fk pages in the gaps (%.1f GB/s of new memory while the GPU waited)",
			(double)pages / 1e3, (double)pages * PAGE_BYTES / (double)g->total_ns);
	/* fresh memory under PyTorch's own model code (autograd, an optimizer,
	 * torch.nn): the model's CPU tensors, made and freed each step — no
	 * buffer of the user's to reuse */
	int of_model = best == IA_MECH_FAULT && 2 * model[best] >= fam[best];
	if (of_model)
		ia_addf(c->root_cause, sizeof c->root_cause,
			"; %.0f%% of it under PyTorch's own code (autograd, the optimizer, torch.nn): CPU tensors the step "
			"makes — its computation on the CPU, copies to the host — allocated and freed again every step",
			ia_pct(model[best], fam[best]));
	ia_addf(c->root_cause, sizeof c->root_cause, ".");
	if (of_model)
		ia_chain_fix(c, "Keep the model's work on the GPU (a parameter left on the CPU, such as a large embedding "
				"table, gets its gradient and update there every step; nn.Embedding(sparse=True) touches only "
				"the rows used); copy to the host into buffers allocated once (pinned: torch.empty(..., "
				"pin_memory=True), then buf.copy_(x, non_blocking=True)) rather than a new tensor each step "
				"(x.to('cpu')); or let each step reuse freed memory: LD_PRELOAD a caching allocator (jemalloc, "
				"tcmalloc) or raise glibc's MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_");
	else if (best == IA_MECH_PICKLE && !v->workers)
		/* no worker process: the lists are the loop's own batch
		 * preparation (c63: a tokenizer's output made tensors) */
		ia_chain_fix(c, "Make batches tensors or numpy arrays where they are built, not Python lists: torch.tensor "
				"converts a list element by element, torch.from_numpy wraps an array without a copy; and "
				"prepare them off the loop — once before training (a pre-processed dataset: tokenized, "
				"converted) or in a Dataset or collate_fn that a DataLoader runs with num_workers > 0, so "
				"it overlaps the GPU");
	else
		ia_chain_fix(c, "%s", ia_mech_fix((enum ia_mech)best));
	return 1;
}

int ia_gap_mech_workers(struct ia_chain *c, const struct gap_view *v)
{
	/* only a mechanism the worker's own code chooses, image decoding: the
	 * fresh memory and the pickling of the shared-memory batches the
	 * DataLoader sends are PyTorch's to make (c04: tensors, already) */
	const struct ia_gaps *g = v->g;
	uint64_t all = 0, dec = g->mech_workers[IA_MECH_DECODE];
	for (int m = 0; m < IA_MECH_N; m++)
		all += g->mech_workers[m];
	if (all < MECH_MIN_SAMPLES || !dec || (double)dec < MECH_SHARE * (double)all)
		return IA_MECH_NONE;
	ia_addf(c->root_cause, sizeof c->root_cause, " %.0f%% of the workers' samples are %s.", ia_pct(dec, all),
		ia_mech_name(IA_MECH_DECODE));
	return IA_MECH_DECODE;
}
