/*
 * chain_frees.c — the sync_frees rule: frees that wait for the GPU between
 * launches (cudaFree drains the device like a sync).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNCACHED_PER_STEP 3.0   /* frees a step, from all over it: the allocator does not cache */

/* ---- frees that wait for the GPU, between launches ---- */

/* What the main process's synchronous frees between its first and last
 * queued work did: how many, from where, the gaps they opened. */
struct free_evidence {
	uint64_t n, ns, gap_ns, mallocs_after;
	uint64_t idle_in_ns;            /* estimated GPU idle inside the frees (the median replay), 0 without it */
	uint64_t refill_ns;             /* with the estimate: the refills after them (gaps.h ia_refill_after) */
	int empty_cache;                /* a free's innermost Python function is empty_cache */
	char empty_cache_line[200];     /* the user's line that called it (the most frees) */
	uint64_t empty_cache_n;
	uint64_t retries;               /* frees inside the allocator's malloc: its cache returned to retry */
	uint64_t tuning, tuning_ns;     /* frees inside cuDNN's convolutions while it autotuned: not the steps' */
	struct ia_gap_line *lines; size_t nlines, cap;   /* by Python line, most first */
};

static int is_empty_cache(const struct ia_analysis *a, const struct ia_call *c)
{
	const char *func = ia_stack_python_func(a->names, a->t->stack_ids[c->stack]);
	return func && !strcmp(func, "empty_cache");
}

static int free_evidence(const struct ia_analysis *a, struct free_evidence *fe)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	const uint32_t *ix = g->main_calls;
	size_t n = g->nmain_calls;
	uint64_t last_queue = 0;
	int estimated = ia_idle_estimated(&a->idle) && g->gpu.nest[1];
	for (size_t k = 0; k < n; k++)
		if (ia_api_queues_work(t->calls[ix[k]].api))
			last_queue = t->calls[ix[k]].start;
	/* torch.cuda.empty_cache() called in the loop, or once (before it, at
	 * a phase's end): its calls told apart by the work between them — once
	 * or a few times, its frees are not the steps' (c70: one call between
	 * two warm-up steps and the loop) */
	size_t ec_calls = 0;
	for (size_t k = 0, in_call = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (c->start < g->win_start || c->start >= last_queue)
			continue;
		int ec = ia_call_is_waiting_free(c) && is_empty_cache(a, c);
		ec_calls += ec && !in_call;
		in_call = ec || (in_call && !ia_api_queues_work(c->api));
	}
	int ec_in_loop = ec_calls >= IA_SYNC_MIN_COUNT;
	/* cuDNN autotuned (cudnn.benchmark): a free inside a convolution is its
	 * trials' — a candidate's workspace did not fit and the allocator gave
	 * its cache back — in the episodes and at their edges (the backward's
	 * tuning runs on autograd's thread, whose samples the phases do not read) */
	const struct ia_phase_detail *tune = &a->ph.d[IA_PHASE_AUTOTUNE];
	int cudnn_tuned = a->idle.phase_ns[IA_PHASE_AUTOTUNE] &&
			  tune->why[IA_WHY_CUDNN_BENCHMARK] + tune->why[IA_WHY_CUDNN_PLANS] > 0;
	for (size_t k = 0; k < n; k++) {
		const struct ia_call *c = &t->calls[ix[k]];
		if (c->start < g->win_start || c->start >= last_queue)   /* set-up and teardown are not the loop */
			continue;
		if (ia_call_is_waiting_free(c)) {
			int ec = is_empty_cache(a, c);
			if (ec && !ec_in_loop)
				continue;
			uint64_t sid = t->stack_ids[c->stack];
			int conv = ia_stack_in_conv(a->names, sid);
			if (conv && cudnn_tuned) {
				fe->tuning++;
				fe->tuning_ns += c->dur;
				continue;
			}
			const char *py = ia_stack_source(a->names, sid);
			struct ia_gap_line *l = ia_line_slot(&fe->lines, &fe->nlines, &fe->cap, py ? py : "(no Python frame)");
			if (!l)
				return -1;
			l->count++;
			l->ns += c->dur;
			l->api = c->api;
			fe->n++;
			fe->ns += c->dur;
			/* the free drained the queue, then did its own work (unmapping)
			 * with nothing for the GPU to do: how much of it, the estimate
			 * says where the marks cannot (nothing is recorded inside) */
			if (estimated) {
				uint64_t busy = ia_spans_within(g->gpu.est[1], g->gpu.nest[1], c->start, c->start + c->dur);
				fe->idle_in_ns += c->dur > busy ? c->dur - busy : 0;
				fe->refill_ns += ia_refill_after(t, g, ix, n, k);
			}
			if (conv || ia_stack_in_alloc(a->names, sid))
				fe->retries++;   /* (a convolution's workspace that did not fit, without tuning) */
			if (ec) {
				fe->empty_cache = 1;
				if (py && l->count > fe->empty_cache_n) {
					fe->empty_cache_n = l->count;
					snprintf(fe->empty_cache_line, sizeof fe->empty_cache_line, "%s", py);
				}
			}
		} else if (fe->n && (c->api == INGERO_API_CUDA_MALLOC || c->api == INGERO_API_CU_MEM_ALLOC_V2)) {
			fe->mallocs_after++;
		}
	}
	for (size_t i = 0; i < g->n; i++)
		if (!(g->g[i].cut & IA_GAP_CUT_START) && ia_call_is_waiting_free(&t->calls[g->g[i].open_call]))
			fe->gap_ns += g->g[i].end - g->g[i].start;
	if (fe->nlines)   /* most frees first */
		qsort(fe->lines, fe->nlines, sizeof *fe->lines, ia_gap_line_by_count);
	return 0;
}

static int free_api(unsigned api)
{
	return ingero_api_free_waits(api);
}

int ia_rule_sync_frees(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	struct free_evidence fe = { 0 };
	if (free_evidence(a, &fe) < 0) {
		free(fe.lines);
		return -1;
	}
	a->tuning_frees = fe.tuning;
	a->tuning_free_ns = fe.tuning_ns;
	if (!a->idle.steady_ns || !g->n) {
		free(fe.lines);
		return 0;
	}
	/* after each free the queue refills while the host issues the next
	 * step: with the estimate, that refill (the certain gap its start) is
	 * the free's, as a sync's is (docs/chains.md) */
	uint64_t after = fe.refill_ns > fe.gap_ns ? fe.refill_ns : fe.gap_ns;
	uint64_t cost = after + fe.idle_in_ns;
	double share = ia_idle_share(&a->idle, cost);
	enum ia_severity sev = ia_by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
	if (fe.n < IA_SYNC_MIN_COUNT || sev == IA_SEV_NONE) {
		free(fe.lines);
		return 0;
	}
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_SYNC_FREES);
	if (!c) {
		free(fe.lines);
		return -1;
	}
	const struct ia_gap_line *top = &fe.lines[0];
	int has_line = strcmp(top->line, "(no Python frame)") != 0;
	/* per step where the steps were found, else per gap */
	double steps = ia_steady_steps(a);
	double per_step = (double)fe.n / (steps > 1 ? steps : 1);
	char n1[32], n2[32], d1[32], d2[32];
	c->sev = sev;
	c->api = top->api;
	c->impact = ia_idle_impact(&a->idle, cost);
	c->cost_ns = cost;
	if (has_line)
		snprintf(c->source, sizeof c->source, "%s", top->line);
	snprintf(c->summary, sizeof c->summary,
		 "frees that wait for the GPU%s%s: %s %s (%.1f per %s); the GPU idles %s in them and until the queue they "
		 "drained refills", has_line ? " at " : "", has_line ? top->line : "", ia_fmt_count(n1, sizeof n1, fe.n),
		 ia_api_name(t, top->api), per_step, ia_steps_found(a) ? "step" : "gap",
		 ia_fmt_dur(d1, sizeof d1, cost));
	ia_chain_line(c, "[CUDA] %s frees between the first and the last launch waited %s for the GPU to drain; %s gaps "
		"start when one returns", ia_fmt_count(n1, sizeof n1, fe.n), ia_fmt_dur(d1, sizeof d1, fe.ns),
	     ia_fmt_dur(d2, sizeof d2, fe.gap_ns));
	for (size_t i = 0; i < fe.nlines && i < 3; i++)
		ia_chain_line(c, "[HOST] %s %s at %s", ia_fmt_count(n1, sizeof n1, fe.lines[i].count),
		     ia_api_name(t, fe.lines[i].api), fe.lines[i].line);
	if (fe.idle_in_ns)
		ia_chain_line(c, "[GPU] inside the frees, once the queue had drained, the GPU idled about %s more (estimated "
			      "from work timed alone: nothing can be marked inside a free)",
			      ia_fmt_dur(d2, sizeof d2, fe.idle_in_ns));
	if (fe.refill_ns > fe.gap_ns)
		ia_chain_line(c, "[GPU] after them the GPU starts from an empty queue and idles between launches while the host "
			      "issues the next step: about %s, up to each free's own time (estimated; the certain part is the %s "
			      "right after them)", ia_fmt_dur(d2, sizeof d2, fe.refill_ns), ia_fmt_dur(d1, sizeof d1, fe.gap_ns));
	if (fe.mallocs_after)
		ia_chain_line(c, "[CUDA] %s cudaMalloc after the first of them: the memory is allocated again",
		     ia_fmt_count(n2, sizeof n2, fe.mallocs_after));
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Freeing device memory with %s waits until the GPU has finished everything queued, so the queue "
		 "drains and the GPU idles until the host queues more: %s of gaps start at these frees. PyTorch's "
		 "caching allocator frees device memory only in torch.cuda.empty_cache() or when an allocation "
		 "fails and it returns its cache to retry (memory nearly full).",
		 ia_api_name(t, top->api), ia_fmt_dur(d1, sizeof d1, fe.gap_ns));
	const char *ec = fe.empty_cache_line[0] ? fe.empty_cache_line : NULL;
	if (fe.empty_cache)
		ia_addf(c->root_cause, sizeof c->root_cause, " Here they come from torch.cuda.empty_cache()%s%s.",
		     ec ? ", called at " : "", ec ? ec : "");
	/* most frees inside the allocator's own malloc: an allocation found no
	 * room, and the allocator gave its cache back to retry it */
	int retry = !fe.empty_cache && fe.retries * 2 >= fe.n;
	if (retry)
		ia_addf(c->root_cause, sizeof c->root_cause, " Here %s of them come from inside allocations "
			"(DeviceCachingAllocator::malloc): an allocation found no room under the process's memory limit "
			"(the GPU's, or a cap set by torch.cuda.set_per_process_memory_fraction), so the allocator gave "
			"its cached blocks back to the driver and retried — it holds blocks cached for other sizes that "
			"do not fit the new request: its memory is fragmented, at its limit.",
			ia_fmt_count(n1, sizeof n1, fe.retries));
	if (fe.mallocs_after)
		ia_addf(c->root_cause, sizeof c->root_cause, " %s cudaMalloc calls followed: what was freed is allocated "
		     "again, %s.", ia_fmt_count(n2, sizeof n2, fe.mallocs_after),
		     per_step >= 0.5 ? "step after step" : "each time");
	/* frees spread over the step's lines, each allocated again: the
	 * allocator is not caching at all (a retry after a failed allocation
	 * frees the whole cache at one point, now and then) */
	int uncached = !fe.empty_cache && !retry && per_step >= UNCACHED_PER_STEP && fe.mallocs_after * 5 >= fe.n * 4 &&
		       top->count * 10 < fe.n * 6;
	if (uncached)
		ia_addf(c->root_cause, sizeof c->root_cause, " They come from all over the step (the most from one line: "
			"%.0f%%), about as many allocations follow: every tensor's memory is allocated from and given back "
			"to the driver, as when the caching allocator is off.", ia_pct(top->count, fe.n));
	if (fe.empty_cache)
		ia_chain_fix(c, "Take torch.cuda.empty_cache() out of the loop%s%s: it hands cached blocks back to the driver, "
		       "and the next steps allocate them again, draining the GPU at each free",
		    ec ? " at " : "", ec ? ec : "");
	if (uncached)
		ia_chain_fix(c, "Let PyTorch's caching allocator cache: unset PYTORCH_NO_CUDA_MEMORY_CACHING (a debugging "
		       "setting), or drop a custom allocator that frees at once; then the blocks are reused, not freed");
	if (retry)
		ia_chain_fix(c, "Stop the fragmentation: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (segments "
		       "grow in place instead of a new block for each size), and where shapes vary step to step pad "
		       "them to a few sizes; or lower the peak (a smaller batch, torch.autocast, activation "
		       "checkpointing) or give the process more memory. torch.cuda.memory_stats()['num_alloc_retries'] "
		       "counts the retries");
	else if (!fe.empty_cache)
		ia_chain_fix(c, "If the GPU's memory is nearly full the allocator frees its cache and retries: "
		       "torch.cuda.memory_stats()['num_alloc_retries'] > 0 confirms it; lower the peak (a smaller "
		       "batch, torch.autocast, activation checkpointing) or set "
		       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation");
	ia_chain_fix(c, "Outside PyTorch's allocator: allocate once and reuse the buffers, or use cudaMallocAsync/"
	       "cudaFreeAsync (stream-ordered: no device-wide wait)");
	cJSON *ev = c->evidence;
	cJSON_AddStringToObject(ev, "line", top->line);
	ia_json_u64(ev, "frees", fe.n);
	ia_json_u64(ev, "free_ns", fe.ns);
	ia_json_u64(ev, "gap_after_ns", fe.gap_ns);
	ia_json_u64(ev, "idle_inside_estimated_ns", fe.idle_in_ns);
	if (fe.refill_ns > fe.gap_ns)
		ia_json_u64(ev, "refill_idle_ns", fe.refill_ns);
	ia_json_u64(ev, "mallocs_after", fe.mallocs_after);
	ia_json_round(ev, "steps", steps, 0);
	ia_json_round(ev, "frees_per_step", per_step, 3);
	cJSON_AddBoolToObject(ev, "empty_cache", fe.empty_cache);
	ia_json_u64(ev, "frees_in_allocation_retry", fe.retries);
	ia_json_round(ev, "share_of_window", share, 4);
	free(fe.lines);
	/* (c70: cudaFree p99 725 ms, "nothing to fix here", beside these frees'
	 * finding and its fix) */
	ia_chain_fold_slow(a, (size_t)(c - a->chains), "gpu_work", free_api, "these frees");
	return 0;
}
