/*
 * steps.c — the period of a call sequence (see steps.h).
 *
 * The kernel of each launch is not loaded into the trace arrays (32 bytes a
 * call); it is read here through the cuda_calls table for one bounded
 * stretch: at most IA_STEPS_MAX_CALLS rows, in time order.
 */
#include "measure/steps.h"

#include "load/db.h"

#include <ingero/api.h>

#include <stdio.h>
#include <stdlib.h>

struct call_key { int api, tid; sqlite3_int64 kernel; uint64_t start; };

static int differs(const struct call_key *x, const struct call_key *y)
{
	return x->api != y->api || x->kernel != y->kernel;
}

/* Whether seq compared with itself P later may match over the share a
 * search needs: at PROBES positions spread over it, more than `most`
 * mismatches say no.  The positions are a Weyl sequence: the fraction of
 * j times the golden ratio (its 64 bits), scaled to the span — the high
 * half of the product, evenly spread (worst 5 % window: 4 probes over
 * spans up to 80,000).  An even stride that is a multiple of a loop's
 * period probes one phase of it; the low digits (the product modulo the
 * span, c510195) bunched the probes, 17 of them into a 930-call set-up
 * that the full comparison allows (a review's case: steps of 500 read as
 * 1,000).  A wrong P then costs PROBES comparisons, not
 * its whole mismatch budget (a twentieth or a third of the sequence: with
 * no step in 80,000 calls, the second look cost a second, c67).  The
 * threshold is far above the share a search allows (5 %, 33 %): even a
 * period whose mismatches all cluster in one place (an interruption) hits
 * it at about that share of the probes. */
#define PROBES 64
static int may_repeat(const struct call_key *seq, size_t n, size_t p, size_t most)
{
	size_t miss = 0;
	for (size_t j = 0; j < PROBES && miss <= most; j++) {
		size_t i = (size_t)(((unsigned __int128)(uint64_t)(j * 0x9e3779b97f4a7c15ull) * (n - p)) >> 64);
		miss += differs(&seq[i], &seq[i + p]);
	}
	return miss <= most;
}

/* Smallest period P >= 2 with which seq repeats for >= 95 % of the
 * comparisons over at least three repeats; 0 when none.  A wrong P fails
 * early (the probes, else its mismatch budget), so the cost stays far
 * below n x max_period. */
static uint32_t find_period(const struct call_key *seq, size_t n, uint32_t max_period)
{
	for (size_t p = 1; p <= max_period && 3 * p <= n; p++) {
		if (!may_repeat(seq, n, p, PROBES / 4))
			continue;
		size_t budget = (n - p) / 20, miss = 0, i;
		for (i = 0; i + p < n && miss <= budget; i++)
			miss += differs(&seq[i], &seq[i + p]);
		if (miss <= budget)
			return p == 1 ? 0 : (uint32_t)p;
	}
	return 0;
}

/* How often consecutive calls of seq come from different threads. */
static size_t thread_switches(const struct call_key *seq, size_t n)
{
	size_t k = 0;
	for (size_t i = 1; i < n; i++)
		k += seq[i].tid != seq[i - 1].tid;
	return k;
}

static int is_launch(const struct call_key *c)
{
	return ingero_api_class((unsigned)c->api) == INGERO_CLASS_LAUNCH;
}

/* Whether seq repeats with period p for two steps from i (95 % of the
 * comparisons), launching work. */
static int repeats_at(const struct call_key *seq, size_t i, uint32_t p)
{
	size_t miss = 0, budget = 2 * (size_t)p / 20, launches = 0;
	for (size_t j = i; j < i + 2 * (size_t)p && miss <= budget; j++) {
		miss += differs(&seq[j], &seq[j + p]);
		launches += is_launch(&seq[j]);
	}
	return miss <= budget && launches;
}

static uint64_t call_hash(const struct call_key *c)
{
	uint64_t h = (uint64_t)(unsigned)c->api * 0x9e3779b97f4a7c15ull ^ (uint64_t)c->kernel;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 32;
}

/* One step's calls as a multiset (their hashes summed: the same for every
 * rotation of the step), where the loop surely runs — the stretch's
 * middle, else its third or first quarter, that repeats.  0 when none. */
static int step_sum(const struct call_key *seq, size_t n, uint32_t p, uint64_t *sum)
{
	static const size_t quarter[] = { 2, 3, 1 };
	for (size_t k = 0; k < 3; k++) {
		size_t m = n * quarter[k] / 4;
		if (m + 3 * (size_t)p > n || !repeats_at(seq, m, p))
			continue;
		*sum = 0;
		for (size_t j = m; j < m + p; j++)
			*sum += call_hash(&seq[j]);
		return 1;
	}
	return 0;
}

/* The first position from which seq repeats with period p for two steps
 * (95 % of the comparisons) that launch work: calls before it are the
 * loop's set-up.  A set-up that repeats too — a model's parameters moved
 * one by one, allocate, copy, synchronize (c22) — launches nothing.  A
 * short period repeats by accident in a set-up's run of the same kernel
 * (c17: four alike launches read as two steps of a copy and a graph
 * launch, 45 ms before the loop's first): where the repetition found first
 * does not run on into steps holding the step's calls (the multiset of
 * the stretch's middle), the first such step begins the loop. */
static size_t loop_start(const struct call_key *seq, size_t n, uint32_t p)
{
	size_t first = 0;
	while (first + 3 * (size_t)p <= n && !repeats_at(seq, first, p))
		first++;
	uint64_t ref, sum = 0;
	if (first + 3 * (size_t)p > n)
		return 0;
	if (!step_sum(seq, n, p, &ref))
		return first;
	for (size_t j = first; j < first + p; j++)
		sum += call_hash(&seq[j]);
	size_t i = first;
	while (i + 3 * (size_t)p <= n && (sum != ref || !repeats_at(seq, i, p))) {
		sum += call_hash(&seq[i + p]) - call_hash(&seq[i]);
		i++;
	}
	if (i + 3 * (size_t)p > n || i == first)
		return first;
	/* the loop ran on from the first repetition through two steps past
	 * the step found (a call of it different now and then: within the
	 * same 5 %)? */
	size_t miss = 0, end = i + 2 * (size_t)p;
	for (size_t j = first; j < end; j++)
		miss += differs(&seq[j], &seq[j + p]);
	return 20 * miss <= end - first ? first : i;
}

/* The time a step takes: from the loop's start (position s0) over the
 * whole steps after it, P calls each — the calls after the last whole
 * step's start are part of a step, and counting them as whole ones read
 * c79's 149 ms steps (five in the stretch) as 194 ms.  0 when there is no
 * whole step. */
static uint64_t step_ns(const struct call_key *seq, size_t n, size_t s0, uint32_t p)
{
	size_t k = s0 < n ? (n - 1 - s0) / p : 0;
	return k && seq[s0 + k * p].start > seq[s0].start ? (seq[s0 + k * p].start - seq[s0].start) / k : 0;
}

/* A training loop interrupted every N steps — a validation pass, a
 * checkpoint, logging — repeats with its step between the interruptions
 * only: the comparison one step later fails over each interruption (c59:
 * 7 % of the positions, a pass every 40 steps), and the strict period is
 * the whole cycle of N steps and the interruption.  The smallest Q is the
 * step when the sequence one Q later matches over at least 2/3 of the
 * positions, its mismatches come in clusters (at least 4 steps of matches
 * per cluster: interruptions, not noise), and its matched stretches switch
 * threads at least once a step: a training step hands its backward pass to
 * autograd's device thread and takes the optimizer back on the main one.
 * The thread switch keeps one layer of a deep model from reading as a step:
 * its forward layers repeat on one thread (an inference loop keeps its
 * strict period), its backward ones on another.  0 when none. */
static uint32_t interrupted_period(const struct call_key *seq, size_t n, uint32_t max_q)
{
	for (size_t q = 2; q <= max_q && 8 * q <= n; q++) {
		if (!may_repeat(seq, n, q, PROBES * 5 / 8))
			continue;
		size_t budget = (n - q) / 3, miss = 0, matched = 0, clusters = 0, switches = 0, last_miss = 0, i;
		for (i = 0; i + q < n && miss <= budget; i++) {
			if (differs(&seq[i], &seq[i + q])) {
				clusters += !miss || i - last_miss > q;
				last_miss = i;
				miss++;
				continue;
			}
			matched++;
			switches += i && seq[i].tid != seq[i - 1].tid && (miss == 0 || last_miss != i - 1);
		}
		if (!miss)   /* one API over and over: the strict search saw it, no step */
			return 0;
		if (miss <= budget && 4 * q * clusters <= matched && switches * q >= matched)
			return (uint32_t)q;
	}
	return 0;
}

/* Whether a strict period P that holds a few shorter repeats Q is itself
 * the step: a GAN's five critic updates and its generator's (c82: P = 414
 * calls, Q = 71), not a loop of Q interrupted.  Over one P, the calls that
 * differ from theirs Q later: a piece of other work as long as a step
 * differs twice (the step before it, and itself), as long as two steps
 * or more; a loss logged every few steps (a copy and a sync more) shifts
 * one step's worth.  Only for a P of at most 8 Q: an evaluation every 40
 * steps (c59) interrupts the loop whatever its length. */
static int whole_cycle(const struct call_key *seq, size_t n, uint32_t p, uint32_t q)
{
	if (!p || !q || p > 8 * q || (size_t)p + q > n)
		return 0;
	size_t m = n / 2 + p + q <= n ? n / 2 : 0, miss = 0, switches = 0;
	for (size_t i = m; i < m + p; i++)
		if (differs(&seq[i], &seq[i + q])) {
			miss++;
			/* in the other work itself: unlike a repeat before it too */
			switches += i > m && i >= q && differs(&seq[i], &seq[i - q]) && seq[i].tid != seq[i - 1].tid;
		}
	/* and the other work is a training update of its own (its backward
	 * on autograd's thread), not an evaluation or a checkpoint, which run
	 * on the main thread alone (a review: an evaluation every 5 steps as
	 * long as one read as part of a 6-step "step") */
	return 2 * miss >= 3 * (size_t)q && switches;
}

/* The period of the launches alone, where it is shorter than the calls'
 * (or they have none): a loop that reads its loss every N steps (a copy
 * and a sync more in one step of N), or whose allocator calls now and
 * then, shifts the call sequence by a few calls each time; the comparison
 * with itself one step later then fails for a whole step after each (c02:
 * 7 % of the positions), or succeeds only N steps later, a "step" N times
 * too long.  Its kernels keep their order.  Calls per step are then the
 * stretch's mean.  seq is reordered (its launches first). */
static void launch_period(struct call_key *seq, size_t n, uint32_t max_period, struct ia_steps *out)
{
	size_t nl = 0, syncs = 0;
	for (size_t i = 0; i < n; i++) {   /* in place: the launches, in order */
		syncs += ingero_api_class((unsigned)seq[i].api) == INGERO_CLASS_SYNC;
		if (is_launch(&seq[i]) && seq[i].kernel)
			seq[nl++] = seq[i];
	}
	uint32_t p = find_period(seq, nl, max_period);
	if (!p || nl <= p || seq[nl - 1].start <= seq[0].start || (out->calls && out->launches <= p))
		return;
	/* where the calls have a period of their own, a shorter one of the
	 * launches is a step only if it switches threads (a backward pass on
	 * autograd's thread) or has a sync of its own: on one thread, without,
	 * it is a layer, and the calls' copy and sync every few of them end the
	 * request it is part of (c26: 4 layers of 13 launches, then .item()) */
	if (out->calls && thread_switches(seq, nl) * p < nl && syncs * p < nl)
		return;
	size_t s0 = loop_start(seq, nl, p);
	out->by_calls = 0;
	out->launches = p;
	out->calls = (uint32_t)((n * p + nl / 2) / nl);
	out->ns = step_ns(seq, nl, s0, p);
	out->first_ns = seq[s0].start;
}

int ia_steps_find(const struct ia_trace *t, int pid, uint64_t a, uint64_t b, uint32_t max_period, size_t max_calls,
		  struct ia_steps *out, char *err, size_t errlen)
{
	out->calls = out->launches = 0;
	out->ns = out->first_ns = 0;
	out->by_calls = 0;
	if (b <= a)
		return 0;
	if (max_period > IA_STEPS_LONG_PERIOD)
		max_period = IA_STEPS_LONG_PERIOD;
	if (max_calls > IA_STEPS_LONG_CALLS)
		max_calls = IA_STEPS_LONG_CALLS;
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT api, kernel, start_ns, tid FROM cuda_calls WHERE pid = ?1 AND start_ns >= ?2 "
					 "AND start_ns < ?3 ORDER BY start_ns, tid LIMIT ?4", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, pid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)a);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)b);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)max_calls);
	struct call_key *all = malloc(max_calls * sizeof *all), *seq = all;
	if (!all) {
		sqlite3_finalize(st);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t n = 0, nall;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < max_calls) {
		seq[n].api = sqlite3_column_int(st, 0);
		seq[n].kernel = sqlite3_column_type(st, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 1);
		seq[n].start = (uint64_t)sqlite3_column_int64(st, 2);
		seq[n].tid = sqlite3_column_int(st, 3);
		n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		ia_db_step_error(t->db, rc, err, errlen);
		sqlite3_finalize(st);
		free(all);
		return -1;
	}
	sqlite3_finalize(st);
	nall = n;
	out->calls = find_period(seq, n, max_period);
	uint32_t q = interrupted_period(seq, n, out->calls ? out->calls / 4 : max_period);
	if (q && !whole_cycle(seq, n, out->calls, q))
		out->calls = q;
	/* a stretch that begins with other work: the steps after it (c79: an
	 * evaluation's 3,760 calls, then steps of 3,862) */
	for (size_t k = 1; !out->calls && k <= 2; k++) {
		size_t skip = n * k / 4;
		uint32_t p = find_period(all + skip, n - skip, max_period);
		if (p) {
			seq = all + skip;
			n -= skip;
			out->calls = p;
		}
	}
	size_t s0 = 0;
	if (out->calls) {
		/* one step's launches, counted from where the loop begins (what
		 * comes before it is set-up, other work) */
		s0 = loop_start(all, nall, out->calls);
		out->first_ns = all[s0].start;
		for (size_t i = s0; i < s0 + out->calls && i < nall; i++)
			out->launches += is_launch(&all[i]);
	}
	if (out->calls && !out->launches)
		out->calls = 0;   /* a repeat without launches says nothing about steps of GPU work */
	if (out->calls)
		out->ns = step_ns(all, nall, s0, out->calls);
	if (!out->calls)
		out->launches = out->first_ns = 0;
	/* the calls themselves as the step's signature only on one thread: a
	 * backward pass's calls on autograd's thread interleave with the main
	 * thread's differently from one step to the next */
	out->by_calls = out->calls && !thread_switches(seq, n);
	launch_period(seq, n, max_period, out);
	free(all);
	return 0;
}
