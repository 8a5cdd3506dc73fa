/*
 * chains.c — the causal chains of an analysis: their kinds, severities and
 * order, most severe first (see chains.h); analysis.c runs every rule once
 * and sorts what they found.  The rules live one per
 * file (chain_gaps.c, chain_slow.c, chain_pageable.c, chain_syncs.c,
 * chain_frees.c, chain_hostbound.c, chain_contention.c, chain_phases.c,
 * chain_epochs.c), with the helpers they share in
 * chain_build.c and chain_stacks.c; docs/chains.md lists every threshold.
 *
 * Each rule measures a share of the analysis window (the main process's
 * CUDA activity, from its first queued work to the end of its last call),
 * names a cause only when the measured evidence for it passes a threshold,
 * and derives fixes from the same evidence: the CPU count from the session,
 * the worker count from the process tree, bandwidths measured in this
 * trace, Python lines from the stacks.
 */
#include "rules/chains.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ia_severity_name(enum ia_severity s)
{
	switch (s) {
	case IA_SEV_HIGH: return "HIGH";
	case IA_SEV_MEDIUM: return "MEDIUM";
	case IA_SEV_LOW: return "LOW";
	default: return "NONE";
	}
}

const char *ia_kind_name(enum ia_kind k)
{
	static const char *const names[IA_KIND_N] = {
		[IA_KIND_GAPS_HOST_BUSY] = "gaps_host_busy",
		[IA_KIND_GAPS_WAITING_WORKERS] = "gaps_waiting_workers",
		[IA_KIND_GAPS_HOST_BLOCKED] = "gaps_host_blocked",
		[IA_KIND_GAPS_HOST_PREEMPTED] = "gaps_host_preempted",
		[IA_KIND_SLOW_CALLS] = "slow_calls",
		[IA_KIND_PAGEABLE_COPIES] = "pageable_copies",
		[IA_KIND_SYNC_PER_STEP] = "sync_per_step",
		[IA_KIND_SYNC_FREES] = "sync_frees",
		[IA_KIND_HOST_BOUND_LAUNCHES] = "host_bound_launches",
		[IA_KIND_CPU_CONTENTION] = "cpu_contention",
		[IA_KIND_STARTUP] = "startup",
		[IA_KIND_COMPILATION] = "compilation",
		[IA_KIND_RECOMPILATION] = "recompilation",
		[IA_KIND_AUTOTUNING] = "autotuning",
		[IA_KIND_EPOCH_BOUNDARIES] = "epoch_boundaries",
		[IA_KIND_LAYOUT_CONVERSIONS] = "layout_conversions",
		[IA_KIND_RANK_STRAGGLER] = "rank_straggler",
		[IA_KIND_AFTER_GPU_WORK] = "after_gpu_work",
	};
	return (unsigned)k < IA_KIND_N && names[k] ? names[k] : "unknown";
}

int ia_kind_is_phase(enum ia_kind k)
{
	return k == IA_KIND_STARTUP || k == IA_KIND_COMPILATION || k == IA_KIND_RECOMPILATION || k == IA_KIND_AUTOTUNING ||
	       k == IA_KIND_EPOCH_BOUNDARIES || k == IA_KIND_AFTER_GPU_WORK;
}

/* A phase (one-time or per epoch) never outranks a steady-state cause that costs the run
 * at least as much: its severity is held to that cause's (a finding about the GPU's own
 * work is no cause).  (Phases are
 * judged on the whole window, steady causes on the steady state, so the
 * two severities alone do not compare.) */
int ia_kind_is_gpu_work(enum ia_kind k)
{
	return k == IA_KIND_LAYOUT_CONVERSIONS;
}

int ia_chains_order(const void *a, const void *b)
{
	const struct ia_chain *x = a, *y = b;
	if (x->sev != y->sev)
		return x->sev > y->sev ? -1 : 1;
	/* a phase paid once that its share would have made HIGH: the cap says a
	 * longer run shrinks it, so its share does not put it before the findings
	 * of its severity that a longer run does not shrink (c07 of the corpus:
	 * start-up, torch.compile's own imports, 40 % of a short run, before its
	 * 6 recompilations' 25 %) */
	if (x->amortised != y->amortised)
		return x->amortised ? 1 : -1;
	if (x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	if (ia_kind_is_phase(x->kind) != ia_kind_is_phase(y->kind))   /* on a tie, the steady state first */
		return ia_kind_is_phase(x->kind) ? 1 : -1;
	int k = strcmp(ia_kind_name(x->kind), ia_kind_name(y->kind));
	return k ? k : (int)x->api - (int)y->api;
}

size_t ia_chains_count(const struct ia_analysis *a, enum ia_severity s)
{
	size_t n = 0;
	for (size_t i = 0; i < a->nchains; i++)
		n += a->chains[i].sev == s;
	return n;
}
