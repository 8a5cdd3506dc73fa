/*
 * chain_epochs.c — epoch boundaries as a finding of their own: at each
 * epoch's start the main thread restarts the DataLoader's iterator (new
 * workers forked, or the persistent ones reset; index queues refilled) and
 * the sampler permutes the dataset's indices into a Python list, while no
 * step's GPU work can be queued.  phases.h sets those stretches apart from
 * the steady state (so the steady state's rules judge the steps only);
 * here they are told: how many, their time, what the main thread did in
 * them, and the fixes that fit what it did.
 *
 * Judged like the other phases, by their time in the window W with the
 * gaps' thresholds (3 / 10 / 30 %), and not capped: the cost recurs every
 * epoch, so a longer run does not amortise it (longer epochs do).
 * chains.c keeps it from outranking a steady-state cause that costs the
 * run at least as much.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

#define PERM_SHARE 0.25   /* the permutation's share of the boundaries' samples: the sampler fix */

/* What the boundaries in [a, b) were, from their samples' reasons and hints. */
struct epoch_counts {
	size_t n;             /* boundaries (episodes) */
	size_t starts;        /* of them, the DataLoader's iterator (re)starting */
	size_t forks;         /* ... forking workers */
	size_t perms;         /* ... with the sampler permuting */
	size_t perms_alone;   /* permuting outside an iterator start (an epoch running out) */
};

static void count_epochs(const struct ia_phases *ph, uint64_t a, uint64_t b, struct epoch_counts *k)
{
	memset(k, 0, sizeof *k);
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase != IA_PHASE_EPOCH || e->end <= a || e->start >= b)
			continue;
		int start = (e->hints & IA_HINT_LOADER_START) != 0;
		int perm = (e->whys >> IA_WHY_SAMPLER_PERM) & 1;
		k->n++;
		k->starts += start;
		k->forks += (e->whys >> IA_WHY_LOADER_WORKERS) & 1;
		k->perms += perm;
		k->perms_alone += perm && !start;
	}
}

static void epoch_text(struct ia_chain *c, const struct ia_analysis *a, const struct epoch_counts *k, uint64_t ns)
{
	const struct ia_phase_detail *d = &a->ph.d[IA_PHASE_EPOCH];
	const struct ia_gaps *g = &a->gaps;
	int workers = a->pp.nworkers > 0;
	char d1[32], d2[32], d3[32], buf[600];
	snprintf(c->summary, sizeof c->summary,
		 "epoch boundaries: %zu stretch%s (%zu DataLoader iterator start%s) took %s of %s (%.0f%%), %s each on "
		 "average, paid once per epoch, not per step",
		 k->n, k->n == 1 ? "" : "es", k->starts, k->starts == 1 ? "" : "s", ia_fmt_dur(d1, sizeof d1, ns),
		 ia_fmt_dur(d2, sizeof d2, a->idle.window_ns), 100 * c->impact, ia_fmt_dur(d3, sizeof d3, ns / k->n));
	if (g->nphase_gaps[IA_PHASE_EPOCH])
		ia_chain_line(c, "[CUDA] %s %s in %zu gap%s at the boundaries (set apart from the steady state's)",
			      a->idle.measured ? "the GPU had no work" : "no CUDA work queued",
			      ia_fmt_dur(d1, sizeof d1, g->phase_gap_ns[IA_PHASE_EPOCH]), g->nphase_gaps[IA_PHASE_EPOCH],
			      g->nphase_gaps[IA_PHASE_EPOCH] == 1 ? "" : "s");
	ia_chain_line(c, "[HOST] %zu of %zu boundar%s restarted the DataLoader's iterator, %zu forked its workers; the "
		      "sampler permuted the dataset in %zu (%zu outside an iterator start%s)",
		      k->starts, k->n, k->n == 1 ? "y" : "ies", k->forks, k->perms, k->perms_alone,
		      k->perms_alone && workers ? ", as an epoch ran out" : "");
	ia_phase_reasons(buf, sizeof buf, d);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "At each epoch boundary the main thread did per-epoch work before it could queue the next step's GPU "
		 "work: %s.", buf[0] ? buf : "the DataLoader's iterator starting");
	if (k->perms)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" The sampler permutes the whole dataset and makes the permutation a Python list "
			"(torch.randperm(n).tolist()): its cost grows with the dataset, not the batch.");
	/* with workers, the iterator's start (_reset) draws the first indices,
	 * so a permutation outside it is the sampler running out; a
	 * single-process loader draws them at its first batch */
	if (k->perms_alone && workers)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %zu permutation%s ran outside an iterator start, while an epoch ran out: torch's RandomSampler "
			"computes one more full permutation after its last full pass "
			"(randperm(n).tolist()[:num_samples %% n]) and keeps num_samples %% n indices of it.",
			k->perms_alone, k->perms_alone == 1 ? "" : "s");
	if (k->forks >= 2)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" The workers were forked again at %zu boundaries: each epoch started new ones.", k->forks);
	ia_addf(c->root_cause, sizeof c->root_cause,
		" It is paid once per epoch: longer epochs amortise it, more epochs repeat it; it is not what limits "
		"the steps.");
}

static void epoch_fixes(struct ia_chain *c, const struct ia_analysis *a, const struct epoch_counts *k, uint64_t ns)
{
	const struct ia_phase_detail *d = &a->ph.d[IA_PHASE_EPOCH];
	char d1[32];
	if (k->perms && d->samples && (double)d->why[IA_WHY_SAMPLER_PERM] >= PERM_SHARE * (double)d->samples)
		ia_chain_fix(c, "Shuffle without a Python list of every index: give the DataLoader a batch_sampler that "
				"slices one tensor permutation (perm = torch.randperm(n); yield perm[i:i + batch_size], "
				"for a dataset with __getitems__ or indexed by tensors), or shuffle the data once up front "
				"and read it in order%s",
			     k->perms_alone && a->pp.nworkers ? "; that also drops the extra permutation RandomSampler computes as an "
					      "epoch runs out" : "");
	if (k->forks >= 2 && a->pp.nworkers)
		ia_chain_fix(c, "DataLoader(..., persistent_workers=True): the workers were forked at %zu of the %zu "
				"boundaries; persistent ones are started once and only reset at each epoch",
			     k->forks, k->n);
	ia_chain_fix(c, "Measure throughput between epoch boundaries: %s per boundary is a per-epoch cost, and its "
			"share falls as epochs get longer", ia_fmt_dur(d1, sizeof d1, ns / k->n));
}

int ia_rule_epochs(struct ia_analysis *a, size_t *cap)
{
	const struct ia_phases *ph = &a->ph;
	uint64_t ns = a->idle.phase_ns[IA_PHASE_EPOCH];
	struct epoch_counts k;
	if (!a->idle.window_ns || !ph->epochs || !ns)
		return 0;
	count_epochs(ph, a->gaps.win_start, a->gaps.win_end, &k);
	if (!k.n)
		return 0;
	struct ia_chain *c;
	if (ia_phase_chain(a, cap, IA_KIND_EPOCH_BOUNDARIES, IA_PHASE_EPOCH, ns, 0, &c) < 0)
		return -1;
	if (!c)
		return 0;
	epoch_text(c, a, &k, ns);
	epoch_fixes(c, a, &k, ns);
	ia_phase_evidence(c, a, IA_PHASE_EPOCH, ns, k.n, 0);
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "mean_ns", ns / k.n);
	ia_json_u64(ev, "iterator_starts", k.starts);
	ia_json_u64(ev, "worker_starts", k.forks);
	ia_json_u64(ev, "permutations", k.perms);
	ia_json_u64(ev, "permutations_outside_starts", k.perms_alone);
	ia_json_u64(ev, "gaps", a->gaps.nphase_gaps[IA_PHASE_EPOCH]);
	ia_json_u64(ev, "gap_ns", a->gaps.phase_gap_ns[IA_PHASE_EPOCH]);
	return 0;
}
