/*
 * chain_hostbound.c — the host_bound_launches rule: the GPU kept up with
 * the host, whose launch rate set the pace (stretches: hostbound.h).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/aten_ops.h"
#include "measure/phases.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTBOUND_MEDIUM 0.30        /* share of the window; never HIGH: GPU idle inside is not measured */
#define HOSTBOUND_LOW 0.10
/* With GPU marks the cost is the GPU's estimated idle inside the stretches,
 * judged as the other rules judge idle (SHARE_MEDIUM, SHARE_LOW), and still
 * never HIGH: an estimate, not certain idle */
#define HOSTBOUND_MIN_LAUNCHES 1000  /* enough launches for a rate to mean something */
#define HOSTBOUND_ONCPU 0.50         /* launching threads' on-CPU share of the stretches, when measured */
#define SMALL_COPY_BYTES (256u << 10)   /* a copy this small costs its call, not its bytes */
#define OPTIM_SHARE 0.20             /* sampled launches from torch/optim lines: name the fused optimizer */
#define OPTIM_LEAD 0.50              /* ... and first, before graphs */
#define LINE_SHARE 0.25              /* of the sampled launches: the line the last fix names */
#define LINE_MIN_SAMPLES 3
#define GENERATE_SHARE 0.50          /* sampled launches under Transformers' generate: its static cache and compile */
#define SYNC_LINE_MIN_STRETCHES 10   /* stretches a sync line must close, at least, to be named */
/* A launch's or copy's own host cost in eager PyTorch is a few to tens of
 * µs (c26: a launch every 24 µs; c28: a launch or copy every 18 µs); calls
 * this far apart have other work of the host's between them — CPU
 * operations, allocation — that neither a CUDA graph nor fusion removes
 * (c53: a CPU embedding's backward, a launch every 486 µs) */
#define GRAPHS_MAX_INTERVAL_NS 200000ull
/* One line of the user's own code (not a library's: not a module's forward)
 * issuing this share of the sampled launches, this many a step, issues
 * small operations one item at a time: a model's own line issues a launch
 * or a few per layer, a loop over a batch's items one set per item */
#define ITEM_LOOP_SHARE 0.40
#define ITEM_LOOP_PER_STEP 64
#define ITEM_LOOP_SHARE_ALONE 0.60
#define ITEM_LOOP_MIN_SAMPLES 10   /* launches are stack-sampled: a share of fewer says little */
/* ... and where its kernels run at this many launch geometries each on
 * average (or more), the loop walks tensors of different sizes — a
 * model's parameters (c81: an EMA, mul_ and add_ per tensor) — and one
 * multi-tensor call does the list; a batch's items run each kernel at one
 * size (c67) */
#define ITEM_LOOP_SIZES 2

/* ---- host-bound launches: the GPU kept up with the host ---- */
/* The launches of the loop's step (phases.h) where the stretch's period is
 * a layer of it, half the step or less, repeated inside one step (c26: a
 * request's 4 layers of 13 launches); 0 where the period is the step. */
static uint32_t layer_of_step(const struct ia_analysis *a)
{
	const struct ia_hostbound *h = &a->hb;
	uint32_t step = a->ph.steps.launches;
	return h->period_launches && step >= 2 * h->period_launches ? step : 0;
}

/* The user's line that issues most launches straight from their code, one
 * small operation per item of a Python loop: the whole batch at once is the
 * fix, before graphs or fusion (c67: per-image flips and normalisation,
 * ~800 launches a step from one line); over tensors of different sizes, a
 * multi-tensor call (c81).  1 when said. */
static int item_loop_fix(struct ia_chain *c, const struct ia_analysis *a)
{
	const struct ia_hostbound *h = &a->hb;
	uint32_t step = a->ph.steps.launches;
	if (!h->nlines || h->launch_samples < ITEM_LOOP_MIN_SAMPLES || ia_is_library_file(h->lines[0].line))
		return 0;
	double share = (double)h->lines[0].count / (double)h->launch_samples;
	double per_step = share * step;
	/* without a step (a loop whose items branch repeats no sequence of
	 * calls: c67 flips some images), the line's share alone, a larger one */
	if (step ? share < ITEM_LOOP_SHARE || per_step < ITEM_LOOP_PER_STEP : share < ITEM_LOOP_SHARE_ALONE)
		return 0;
	char each[48] = "";
	if (step)
		snprintf(each, sizeof each, ", ~%.0f a step", per_step);
	/* (the fix's buffer holds the line's whole path: the words stay short) */
	if (h->top_funcs && h->top_works >= ITEM_LOOP_SIZES * h->top_funcs)
		ia_chain_fix(c, "%s issues %.0f%% of the sampled launches%s: small operations one at a time from a Python loop "
			     "over tensors of different sizes (%u kernel%s at %u sizes), a model's parameters or buffers "
			     "(an EMA, a hand-written update): one multi-tensor call for the list (torch._foreach_mul_, "
			     "_foreach_add_, _foreach_lerp_), or the update every few steps",
			     h->lines[0].line, 100.0 * share, each, h->top_funcs, h->top_funcs == 1 ? "" : "s", h->top_works);
	else
		ia_chain_fix(c, "%s issues %.0f%% of the sampled launches%s: small operations one at a time from a Python loop; "
			     "over a batch's items, work on the whole batch at once (torch.where with a mask, not a branch "
			     "per item; reductions over dims, keepdim=True); over same-shaped layers, stack them (bmm, vmap)",
			     h->lines[0].line, 100.0 * share, each);
	return 1;
}

static const struct ia_gap_line *closing_sync_line(const struct ia_analysis *a);

/* The stretches cut by a line that syncs several times a step: while it
 * does, the host can never run ahead of the GPU, and no graph can hold the
 * step (a capture cannot sync): its syncs go first (c71: timing hooks'
 * torch.cuda.synchronize() around each of 24 layers). 1 when said. */
static int closing_syncs_fix(struct ia_chain *c, const struct ia_analysis *a)
{
	const struct ia_gap_line *sl = a->gaps.gpu.measured ? closing_sync_line(a) : NULL;
	double steps = ia_steady_steps(a);
	if (!sl || steps <= 1 || (double)sl->count < 1.5 * steps)
		return 0;
	ia_chain_fix(c, "First drop the syncs at %s (%.0f a step%s): each one empties the GPU's queue, so the host "
		     "never gets ahead of the GPU, and a CUDA graph cannot capture a sync", sl->line,
		     (double)sl->count / steps, ia_sync_line_explicit(sl) ? ": an explicit synchronize — to time "
		     "the code, record CUDA events (torch.cuda.Event(enable_timing=True)) instead" : "");
	return 1;
}

/* A line in a torch.compile'd function that reads the GPU every step: a
 * graph break — the step runs as two graphs with eager Python and a sync
 * between them, and cannot become one CUDA graph (reduce-overhead) while
 * it stays (c72: .item() in forward; its wait is short where the GPU is
 * done first, but the host's cost is the break's).  The line, or NULL. */
static const struct ia_gap_line *graph_break_line(const struct ia_analysis *a)
{
	double steps = ia_steady_steps(a);
	const struct ia_gap_line *best = NULL;
	for (size_t i = 0; i < a->gaps.nsync_lines; i++) {
		const struct ia_gap_line *l = &a->gaps.sync_lines[i];
		if (l->compiled && l->count >= IA_SYNC_MIN_COUNT && (double)l->count >= 0.5 * steps && (!best || l->count > best->count))
			best = l;
	}
	return best;
}

/* The sampled launches from torch/optim's lines. */
static uint64_t optimizer_launches(const struct ia_hostbound *h)
{
	uint64_t optim = 0;
	for (size_t i = 0; i < h->nlines; i++)
		if (strstr(h->lines[i].line, "/optim/"))
			optim += h->lines[i].count;
	return optim;
}

/* The optimizer's own launches.  Its per-parameter form (_single_tensor_*:
 * foreach=False) issues a dozen kernels per parameter tensor, where the
 * multi-tensor one (foreach, the default) and the fused one do them all in
 * a few (c15, c77: AdamW(foreach=False)); the multi-tensor form is still
 * several kernels per op, which fused=True makes one (c21, c66).  Already
 * fused (c13), there is no switch to name. */
static void optimizer_fix(struct ia_chain *c, const struct ia_hostbound *h)
{
	uint64_t optim = optimizer_launches(h);
	if (!h->launch_samples || (double)optim < OPTIM_SHARE * (double)h->launch_samples)
		return;
	if ((double)h->optim_single_samples >= OPTIM_SHARE * (double)h->launch_samples)
		ia_chain_fix(c, "The optimizer's per-parameter loop issues %.0f%% of the sampled launches (torch.optim's "
			     "_single_tensor_ form: foreach=False, a dozen kernels for each parameter tensor): "
			     "foreach=True (the default) or fused=True — torch.optim.AdamW(..., fused=True) — updates "
			     "all the parameters in a few kernels", ia_pct(h->optim_single_samples, h->launch_samples));
	else if (2 * h->optim_fused_samples < optim)
		ia_chain_fix(c, "The optimizer issues %.0f%% of the sampled launches (torch/optim lines): torch.optim.Adam/"
			     "AdamW(..., fused=True) updates all parameters in a few kernels", ia_pct(optim, h->launch_samples));
}

static void hostbound_fixes(struct ia_chain *c, const struct ia_analysis *a, uint64_t per_launch)
{
	const struct ia_hostbound *h = &a->hb;
	uint32_t step = layer_of_step(a);
	char d1[32], d2[32];
	closing_syncs_fix(c, a);
	/* most launches the optimizer's: its switch is the first fix, before
	 * graphs (a captured step still runs its thousands of kernels) */
	int optim_first = h->launch_samples &&
			  (double)h->optim_single_samples >= OPTIM_LEAD * (double)h->launch_samples;
	if (optim_first)
		optimizer_fix(c, h);
	const struct ia_gap_line *gb = graph_break_line(a);
	if (gb)
		ia_chain_fix(c, "Remove the read of a GPU value at %s (.item(), .cpu(), printing a tensor) from the "
			     "torch.compile'd function: it breaks the graph every step (eager Python and a sync between two "
			     "graphs), and one graph a step is what mode=\"reduce-overhead\" needs to capture the step in a "
			     "CUDA graph (TORCH_LOGS=graph_breaks lists the breaks)", gb->line);
	int item_loop = item_loop_fix(c, a);
	/* Transformers' generate decodes a token at a time: its own switches
	 * give the compiled, graph-captured step (c75's class: a thread with
	 * no line of the program's own under generate) */
	int generate = h->launch_samples && (double)h->generate_samples >= GENERATE_SHARE * (double)h->launch_samples;
	if (generate)
		ia_chain_fix(c, "%.0f%% of the sampled launches are inside Hugging Face's generate (transformers/generation): a "
			     "token's forward is many small launches. A static KV cache lets its forward be compiled and "
			     "captured in a CUDA graph — model.generate(..., cache_implementation=\"static\") with "
			     "model.forward = torch.compile(model.forward, mode=\"reduce-overhead\", fullgraph=True); and "
			     "batch several prompts a call", ia_pct(h->generate_samples, h->launch_samples));
	/* copies as many as the launches, each small: the host's time goes
	 * to issuing them one by one (c28: 200 pinned 16 KiB tensors a step) */
	if (h->copies && h->copies >= h->launches && h->copy_bytes / h->copies <= SMALL_COPY_BYTES)
		ia_chain_fix(c, "%s copies (%s each on average) for %s launches: pack the tensors into one pinned buffer "
		       "and copy it once (torch.cat on the host, or one preallocated buffer filled in place), then "
		       "split it on the GPU; each copy call costs the host the same few microseconds, whatever it moves",
		    ia_fmt_count((char[32]){ 0 }, 32, h->copies), ia_fmt_bytes(d2, sizeof d2, h->copy_bytes / h->copies),
		    ia_fmt_count((char[32]){ 0 }, 32, h->launches));
	uint64_t per_call = h->ns / (h->launches + h->copies);   /* (launches counted: never 0) */
	int graphs = per_call < GRAPHS_MAX_INTERVAL_NS;
	/* a graph holds static shapes: a line whose result is sized by the
	 * data (mask indexing, nonzero) syncs every step and breaks a capture
	 * — it is made static first (c54: x[mask] at line 19, its own finding) */
	const struct ia_gap_line *dyn = NULL;
	for (size_t i = 0; graphs && i < a->gaps.nsync_lines && !dyn; i++) {
		const struct ia_gap_line *l = &a->gaps.sync_lines[i];
		if (l->op_inner[0] && ia_aten_sync_kind(l->op_inner, l->op_outer) == IA_ATEN_SYNC_SIZE &&
		    l->count >= IA_SYNC_MIN_COUNT && strcmp(l->line, "(no Python frame)"))
			dyn = l;
	}
	if (!graphs)
		ia_chain_fix(c, "One launch or copy every %s is more than issuing one costs (a few to tens of µs in eager "
			     "PyTorch): the host does other work between them, which a CUDA graph or fusion would not "
			     "remove; make that work cheaper or move it off this thread (what it is: the host's samples "
			     "between the calls)", ia_fmt_dur(d1, sizeof d1, per_call));
	else if (dyn)
		ia_chain_fix(c, "First make the shapes at %s static (sized by the data now: it syncs every step, and a "
			     "capture cannot hold it), then CUDA Graphs: capture the repeated work (torch.cuda.graph, or "
			     "torch.compile(model, mode=\"reduce-overhead\")) so one graph launch replaces its launches",
			     dyn->line);
	else if (h->period_calls)
		ia_chain_fix(c, "CUDA Graphs: capture one step (torch.cuda.CUDAGraph with torch.cuda.graph(g), then g.replay(), or "
		       "torch.compile(model, mode=\"reduce-overhead\")) to replace its ~%u launches with one graph launch "
		       "(needs static shapes and tensors that stay in place)", step ? step : h->period_launches);
	else
		ia_chain_fix(c, "CUDA Graphs: capture the repeated work (torch.cuda.CUDAGraph with torch.cuda.graph(g), then "
		       "g.replay(), or torch.compile(model, mode=\"reduce-overhead\")) so one graph launch replaces its "
		       "launches (needs static shapes and tensors that stay in place)");
	/* (not to a model already compiled: its compilation is in the trace) */
	int compiled = gb || ia_phases_time_in(&a->ph, IA_PHASE_COMPILE, a->gaps.win_start, a->gaps.win_end) > 0;
	if (graphs && !compiled)
		ia_chain_fix(c, "torch.compile(model) fuses small elementwise kernels: fewer launches, each doing more");
	if (!optim_first)
		optimizer_fix(c, h);
	/* where the loop accumulates gradients the batch is the user's choice
	 * already: a larger micro-batch with fewer of them (c74) */
	if (a->knobs.accumulates[0])
		ia_chain_fix(c, "Larger micro-batches: the loop accumulates gradients over several micro-batches a step (%s); "
			     "a larger batch_size with fewer gradient_accumulation_steps keeps the effective batch and pays "
			     "the host's cost per launch (~%s here) fewer times, as GPU memory allows", a->knobs.accumulates,
			     ia_fmt_dur(d1, sizeof d1, per_launch));
	else
		ia_chain_fix(c, "Larger batches: the host cost per launch (~%s here) stays the same while each kernel does "
			     "more work", ia_fmt_dur(d1, sizeof d1, per_launch));
	/* the line only where it holds a share worth following: one sampled
	 * launch of 31 with a Python frame (c74: autograd's thread launches
	 * without any) is no "most" */
	if (h->nlines && !item_loop && h->lines[0].count >= LINE_MIN_SAMPLES &&
	    (double)h->lines[0].count >= LINE_SHARE * (double)h->launch_samples)
		ia_chain_fix(c, "%s sampled launches come from %s (%s of %s launches with a stack; launches are stack-sampled)",
		    2 * h->lines[0].count > h->launch_samples ? "Most" : "The most", h->lines[0].line,
		    ia_fmt_count((char[32]){ 0 }, 32, h->lines[0].count), ia_fmt_count((char[32]){ 0 }, 32, h->launch_samples));
}

static void hostbound_json(cJSON *ev, const struct ia_analysis *a, uint64_t win, double share, double rate)
{
	const struct ia_hostbound *h = &a->hb;
	const struct ia_call *cl = &a->t->calls[h->long_close];
	ia_json_u64(ev, "window_ns", win);
	ia_json_u64(ev, "stretches", h->n);
	ia_json_u64(ev, "stretch_ns", h->ns);
	ia_json_round(ev, "share_of_window", share, 4);
	ia_json_u64(ev, "launches", h->launches);
	ia_json_round(ev, "launches_per_s", rate, 0);
	ia_json_u64(ev, "mean_launch_interval_ns", h->launch_gaps ? h->launch_gap_ns / h->launch_gaps : 0);
	ia_json_u64(ev, "mean_launch_call_ns", h->in_launch_ns / h->launches);
	ia_json_u64(ev, "in_cuda_calls_ns", h->in_calls_ns);
	ia_json_u64(ev, "in_launch_ns", h->in_launch_ns);
	ia_json_u64(ev, "between_calls_ns", h->ns - h->in_calls_ns);
	if (h->has_offcpu) {
		ia_json_u64(ev, "main_oncpu_ns", h->ns - h->main_off_ns);
		ia_json_u64(ev, "main_blocked_ns", h->main_off_ns - h->main_runq_ns);
		ia_json_u64(ev, "main_runq_ns", h->main_runq_ns);
		ia_json_u64(ev, "other_threads_oncpu_ns", h->others_oncpu_ns);
	}
	ia_json_u64(ev, "main_thread_launches", h->main_launches);
	ia_json_u64(ev, "other_launching_threads", h->nothers);
	ia_json_u64(ev, "relay_threads", h->relay_threads);
	cJSON *cs = cJSON_AddObjectToObject(ev, "closing_sync");   /* of the longest stretch */
	cJSON_AddStringToObject(cs, "api", ia_api_name(a->t, cl->api));
	ia_json_u64(cs, "wait_ns", cl->dur);
	ia_json_u64(cs, "start_rel_ns", cl->start - a->t->t0);
	ia_json_u64(ev, "closing_max_wait_ns", h->close_max_ns);
	ia_json_u64(ev, "sync_floor_ns", IA_SYNC_FLOOR_NS);
	ia_json_u64(ev, "longest_stretch_ns", h->long_end - h->long_start);
	ia_json_u64(ev, "longest_stretch_launches", h->long_launches);
	if (h->period_calls) {
		ia_json_u64(ev, "period_calls", h->period_calls);
		ia_json_u64(ev, "period_launches", h->period_launches);
	}
	ia_json_u64(ev, "launch_samples", h->launch_samples);
	cJSON *ll = cJSON_AddArrayToObject(ev, "launch_lines");
	for (size_t i = 0; i < h->nlines && i < 5; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "line", h->lines[i].line);
		ia_json_u64(o, "samples", h->lines[i].count);
		cJSON_AddItemToArray(ll, o);
	}
}

/* With GPU marks a stretch may close in a sync that waited: the Python
 * line whose syncs close at least half of the stretches (one per step, the
 * gaps' sync lines), where the host spends time waiting that a host-bound
 * loop needs for issuing (c21: .item() every step); NULL when none does. */
static const struct ia_gap_line *closing_sync_line(const struct ia_analysis *a)
{
	const struct ia_gaps *g = &a->gaps;
	const struct ia_gap_line *best = NULL;
	for (size_t i = 0; i < g->nsync_lines; i++) {
		const struct ia_gap_line *l = &g->sync_lines[i];
		if (strcmp(l->line, "(no Python frame)") != 0 && 2 * l->count >= a->hb.n &&
		    (!best || l->count > best->count))
			best = l;
	}
	/* (steps: a few stretches closed by set-up syncs are no per-step pattern) */
	return best && a->hb.n >= SYNC_LINE_MIN_STRETCHES && a->hb.busy_close_n * 2 >= a->hb.n ? best : NULL;
}

/* Of windows w (nw (start, end) pairs, sorted, disjoint), the parts inside
 * the steady state's windows st: their time, and in it the GPU's estimated
 * busy time (the least-idle replay) and its certainly idle time. */
struct steady_part {
	uint64_t len, busy, gapped;
};

static struct steady_part steady_part(const struct ia_gpu_time *gt, const uint64_t *st, size_t nst, const uint64_t *w,
				      size_t nw)
{
	struct steady_part p = { 0, 0, 0 };
	if (!nw)
		return p;
	/* the first steady window that ends after w's start (binary search:
	 * this is asked once per stretch) */
	size_t j = 0, hi = nst;
	while (j < hi) {
		size_t mid = (j + hi) / 2;
		if (st[2 * mid + 1] <= w[0])
			j = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = 0; k < nw; k++) {
		uint64_t a0 = w[2 * k], b0 = w[2 * k + 1];
		while (j < nst && st[2 * j + 1] <= a0)
			j++;
		for (size_t i = j; i < nst && st[2 * i] < b0; i++) {
			uint64_t x = st[2 * i] > a0 ? st[2 * i] : a0, y = st[2 * i + 1] < b0 ? st[2 * i + 1] : b0;
			if (y <= x)
				continue;
			p.len += y - x;
			p.busy += ia_spans_within(gt->est[2], gt->nest[2], x, y);
			p.gapped += ia_spans_within(gt->idle, gt->nidle, x, y);
		}
	}
	return p;
}

/* The GPU's estimated idle in a part, less what is certainly idle. */
static uint64_t part_idle(struct steady_part p)
{
	return p.len > p.busy + p.gapped ? p.len - p.busy - p.gapped : 0;
}

/* Whether another thread of the main process queued work in [x, y) (the
 * main process's calls in time order: PyTorch's backward pass, which the
 * main thread blocks for while pt_autograd_N launches). */
static int others_queue_in(const struct ia_analysis *a, uint64_t x, uint64_t y)
{
	const struct ia_trace *t = a->t;
	const uint32_t *ix = a->gaps.main_calls;
	size_t lo = 0, hi = a->gaps.nmain_calls;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->calls[ix[mid]].start < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k < a->gaps.nmain_calls && t->calls[ix[k]].start < y; k++)
		if (t->calls[ix[k]].th != a->pp.main_thread && ia_api_queues_work(t->calls[ix[k]].api))
			return 1;
	return 0;
}

/* With DataLoader workers: the GPU's idle, inside the stretches' steady
 * parts, while the main thread was blocked (off a CPU, not waiting for one)
 * and no other thread of its process queued work — it waited for a batch,
 * not issuing (c32: blocked 47 % of its one long stretch; the gaps'
 * findings name the workers), less the certainly idle part already named
 * as gaps. */
static uint64_t idle_while_main_waits(const struct ia_analysis *a, const struct ia_gpu_time *gt, const uint64_t *st,
				      size_t nst)
{
	const struct ia_trace *t = a->t;
	const struct ia_hostbound *h = &a->hb;
	if (!a->pp.nworkers || a->pp.main_thread == UINT32_MAX || !h->n)
		return 0;
	uint32_t th = a->pp.main_thread;
	const struct ia_thread *thr = &t->threads[th];
	const uint32_t *ix = t->off_by_th + thr->off_first;
	uint64_t idle = 0;
	size_t k0 = 0;   /* the first stretch not over before the interval (both in time order) */
	for (size_t i = ia_thread_off_lower(t, th, h->w[0]); i < thr->off_n; i++) {
		const struct ia_off *o = &t->offs[ix[i]];
		if (o->start >= h->w[2 * h->n - 1])
			break;
		uint64_t blocked[2] = { o->start, o->end - o->runq };
		if (blocked[1] <= blocked[0])
			continue;
		while (k0 < h->n && h->w[2 * k0 + 1] <= blocked[0])
			k0++;
		/* its parts inside the stretches, then inside their steady parts */
		for (size_t k = k0; k < h->n && h->w[2 * k] < blocked[1]; k++) {
			uint64_t x = blocked[0] > h->w[2 * k] ? blocked[0] : h->w[2 * k];
			uint64_t y = blocked[1] < h->w[2 * k + 1] ? blocked[1] : h->w[2 * k + 1];
			if (y <= x)
				continue;
			if (others_queue_in(a, x, y))
				continue;   /* the backward pass's wait: its thread issues */
			uint64_t part[2] = { x, y };
			idle += part_idle(steady_part(gt, st, nst, part, 1));
		}
	}
	return idle;
}

/* A finding of a per-step sync or of frees: the refills after them are its
 * (chain_syncs.c, chain_frees.c), not the issue rate's. */
static int refill_claimed(const struct ia_analysis *a)
{
	for (size_t k = 0; k < a->nchains; k++)
		if (a->chains[k].kind == IA_KIND_SYNC_PER_STEP || a->chains[k].kind == IA_KIND_SYNC_FREES)
			return 1;
	return 0;
}

/* What the host-bound stretches cost the steady state: their time, or
 * with GPU marks the GPU's idle in them less the parts other findings name
 * (each kept, for the timeline). */
struct hb_cost {
	int measured;
	uint64_t cost, idle_in, gapped, calls_idle, refill, waits;
};

static struct hb_cost hostbound_cost(const struct ia_analysis *a, uint64_t win)
{
	const struct ia_hostbound *h = &a->hb;
	struct hb_cost k = { 0 };
	/* of the steady state: a stretch that began in start-up counts its steady part */
	k.cost = h->steady_ns < win ? h->steady_ns : win;
	/* With GPU marks, what the stretches cost is the GPU's idle in them
	 * (estimated from work timed alone), less the idle the gaps' findings
	 * already name (certainly idle, the host waiting on something else):
	 * a stretch in which the GPU stayed busy is not bound by the host
	 * (c23: one 1 s stretch with the GPU busy 80 % of it, its idle the
	 * workers' gaps) */
	const struct ia_gpu_time *gt = &a->gaps.gpu;
	k.measured = ia_idle_estimated(&a->idle) && gt->nest[1];
	size_t nst = 0;
	uint64_t *st = k.measured ? ia_phases_steady_windows(&a->ph, a->gaps.win_start, a->gaps.win_end, &nst) : NULL;
	if (!st) {
		k.measured = 0;   /* (out of memory, or no steady state: the stretches' time as without marks) */
		return k;
	}
	/* the steady parts of the stretches only: a stretch may run through
	 * a phase (c32: the epochs' worker restarts, whose idle is theirs) */
	struct steady_part sp = steady_part(gt, st, nst, h->w, h->n);
	k.gapped = sp.gapped;
	uint64_t idle_in = part_idle(sp);
	/* less the idle while the host was inside calls that queue nothing
	 * (an allocation, a free): theirs, not the issue rate's */
	k.calls_idle = part_idle(steady_part(gt, st, nst, h->calls_w, h->ncalls_w));
	idle_in = idle_in > k.calls_idle ? idle_in - k.calls_idle : 0;
	k.waits = idle_while_main_waits(a, gt, st, nst);
	idle_in = idle_in > k.waits ? idle_in - k.waits : 0;
	/* less each stretch's refill after a sync that drained the queue:
	 * that sync's cost (chain_syncs.c, chain_frees.c) — where a finding
	 * of a per-step sync or of frees claims it; a sync now and then
	 * (c30: every 10th step) has none, and its refill stays here */
	int claimed = refill_claimed(a);
	for (size_t j = 0; claimed && j < h->n; j++) {
		if (!h->drain_wait[j])
			continue;
		uint64_t idle_j = part_idle(steady_part(gt, st, nst, &h->w[2 * j], 1));
		k.refill += idle_j < h->drain_wait[j] ? idle_j : h->drain_wait[j];
	}
	k.idle_in = idle_in > k.refill ? idle_in - k.refill : 0;
	if (k.idle_in < k.cost)
		k.cost = k.idle_in;
	free(st);
	return k;
}

static void hostbound_summary(struct ia_chain *c, const struct ia_analysis *a, const struct hb_cost *k,
			      double share, double rate)
{
	const struct ia_hostbound *h = &a->hb;
	const struct ia_call *cl = &a->t->calls[h->long_close];
	char n1[32], n2[32], d1[32], d2[32], d3[32];
	ia_fmt_count(n1, sizeof n1, h->launches);
	ia_fmt_count(n2, sizeof n2, (uint64_t)(rate + 0.5));
	if (k->measured)
		snprintf(c->summary, sizeof c->summary,
			 "host-bound: %s launches at %s/s in %s stretch%s (%s); the GPU idled about %s inside them (%.0f%% of "
			 "the steady state, estimated from work timed alone) while the host issued the work",
			 n1, n2, ia_fmt_count(d3, sizeof d3, h->n), h->n == 1 ? "" : "es", ia_fmt_dur(d1, sizeof d1, h->ns),
			 ia_fmt_dur(d2, sizeof d2, k->idle_in), 100 * share);
	else if (h->n == 1)
		snprintf(c->summary, sizeof c->summary,
			 "host-bound: %s launches at %s/s over %s (%.0f%% of the steady state); the %s after them waited %s "
			 "(GPU already idle) - the GPU keeps up with the host",
			 n1, n2, ia_fmt_dur(d1, sizeof d1, h->ns), 100 * share, ia_api_name(a->t, cl->api),
			 ia_fmt_dur(d2, sizeof d2, cl->dur));
	else
		snprintf(c->summary, sizeof c->summary,
			 "host-bound: %s launches at %s/s in %s stretches (%s, %.0f%% of the steady state); the syncs after "
			 "them waited at most %s (GPU already idle) - the GPU keeps up with the host",
			 n1, n2, ia_fmt_count(d3, sizeof d3, h->n), ia_fmt_dur(d1, sizeof d1, h->ns), 100 * share,
			 ia_fmt_dur(d2, sizeof d2, h->close_max_ns));
}

/* [GPU] what the idle inside the stretches was less, each part said only
 * where there is one */
static void hostbound_gpu_line(struct ia_chain *c, const struct ia_hostbound *h, const struct hb_cost *k)
{
	char gl[512], t1[32], t2[32];
	snprintf(gl, sizeof gl, "[GPU] inside the stretches (%s): idle about %s while the host issued work (estimated "
		 "from work timed alone)", ia_fmt_dur(t1, sizeof t1, h->ns), ia_fmt_dur(t2, sizeof t2, k->idle_in));
	if (k->gapped)
		ia_addf(gl, sizeof gl, "; besides, %s in gaps other findings name", ia_fmt_dur(t1, sizeof t1, k->gapped));
	if (k->calls_idle)
		ia_addf(gl, sizeof gl, "; %s while the host was inside calls that queue nothing (allocations, frees)",
			ia_fmt_dur(t1, sizeof t1, k->calls_idle));
	if (k->refill)
		ia_addf(gl, sizeof gl, "; %s refilling a queue a sync had drained (the sync's)", ia_fmt_dur(t1, sizeof t1, k->refill));
	if (k->waits)
		ia_addf(gl, sizeof gl, "; %s while the main thread was blocked, its DataLoader workers running (waiting "
			"for a batch, not issuing)", ia_fmt_dur(t1, sizeof t1, k->waits));
	if (h->busy_close_n)
		ia_addf(gl, sizeof gl, "; %s of the %s stretches end in a sync that waited for the GPU's last work",
			ia_fmt_count(t1, sizeof t1, h->busy_close_n), ia_fmt_count(t2, sizeof t2, h->n));
	ia_chain_line(c, "%s", gl);
}

static void hostbound_timeline(struct ia_chain *c, const struct ia_analysis *a, const struct hb_cost *k,
			       double oncpu, double issuing, double rate, uint64_t interval)
{
	const struct ia_hostbound *h = &a->hb;
	const struct ia_trace *t = a->t;
	const struct ia_call *cl = &t->calls[h->long_close];
	uint64_t in_launch = h->in_launch_ns / h->launches;
	uint64_t between = h->ns - h->in_calls_ns;
	char n1[32], n2[32], d1[32], d2[32], d3[32], d4[32];
	ia_fmt_count(n1, sizeof n1, h->launches);
	ia_fmt_count(n2, sizeof n2, (uint64_t)(rate + 0.5));
	const struct ia_proc *mp = &t->procs[a->pp.p[a->pp.main].proc];
	if (h->has_offcpu && h->relay_threads)   /* (gaps.h: a relay's threads, each stretch read on its driver) */
		ia_chain_line(c, "[HOST] %zu threads of the main process (pid %d) drove the GPU one after another; each stretch "
		     "read on the one driving it: on-CPU %s (%.0f%%), blocked %s, waiting for a CPU %s; they issued %.0f%% of "
		     "the launches", h->relay_threads, mp->pid, ia_fmt_dur(d1, sizeof d1, h->ns - h->main_off_ns), 100 * oncpu,
		     ia_fmt_dur(d2, sizeof d2, h->main_off_ns - h->main_runq_ns), ia_fmt_dur(d3, sizeof d3, h->main_runq_ns),
		     ia_pct(h->main_launches, h->launches));
	else if (h->has_offcpu)
		ia_chain_line(c, "[HOST] main thread (pid %d) in these stretches: on-CPU %s (%.0f%%), blocked %s, waiting for a CPU %s; "
		     "it issued %.0f%% of the launches",
		     mp->pid, ia_fmt_dur(d1, sizeof d1, h->ns - h->main_off_ns), 100 * oncpu,
		     ia_fmt_dur(d2, sizeof d2, h->main_off_ns - h->main_runq_ns), ia_fmt_dur(d3, sizeof d3, h->main_runq_ns),
		     ia_pct(h->main_launches, h->launches));
	if (h->has_offcpu && h->nothers)
		ia_chain_line(c, "[HOST] %u other thread%s of the process issued the rest (%s: %.0f%% of the launches), on-CPU %s in "
		     "the stretches: with the %s, %.0f%% of the stretches' time on a CPU",
		     h->nothers, h->nothers > 1 ? "s" : "", t->threads[h->top_other].comm,
		     ia_pct(h->top_other_launches, h->launches), ia_fmt_dur(d1, sizeof d1, h->others_oncpu_ns),
		     h->relay_threads ? "driving thread" : "main thread", 100 * issuing);
	if (!h->has_offcpu)
		ia_chain_line(c, "[HOST] main thread (pid %d): no off-CPU evidence in this trace, on-CPU share unknown", mp->pid);
	ia_chain_line(c, "[HOST] inside CUDA calls %s (%.0f%%; launches %s), between calls %s (%.0f%%: Python and framework code)",
	     ia_fmt_dur(d1, sizeof d1, h->in_calls_ns), ia_pct(h->in_calls_ns, h->ns), ia_fmt_dur(d2, sizeof d2, h->in_launch_ns),
	     ia_fmt_dur(d3, sizeof d3, between), ia_pct(between, h->ns));
	ia_chain_line(c, "[CUDA] %s launches at %s/s: one every %s on average, %s of it inside the launch call", n1, n2,
	     ia_fmt_dur(d1, sizeof d1, interval), ia_fmt_dur(d2, sizeof d2, in_launch));
	if (h->period_calls && layer_of_step(a))
		ia_chain_line(c, "[CUDA] the call sequence repeats every %u calls (%u launches): ~%s repeats in the longest stretch, "
		     "a repeated layer of the loop's step of %u launches", h->period_calls, h->period_launches,
		     ia_fmt_count(d1, sizeof d1, h->long_calls / h->period_calls), layer_of_step(a));
	else if (h->period_calls)
		ia_chain_line(c, "[CUDA] the call sequence repeats every %u calls (%u launches): ~%s repeats in the longest stretch, "
		     "likely one training step each", h->period_calls, h->period_launches,
		     ia_fmt_count(d1, sizeof d1, h->long_calls / h->period_calls));
	/* a call that returns within IA_SYNC_FLOOR_NS only paid its own cost: the GPU was done */
	ia_chain_line(c, "[CUDA] the longest stretch (%s, %s launches) ends in %s at %s, which waited %s (%s)",
	     ia_fmt_dur(d1, sizeof d1, h->long_end - h->long_start),
	     ia_fmt_count(d4, sizeof d4, h->long_launches), ia_api_name(t, cl->api),
	     ia_fmt_dur(d2, sizeof d2, cl->start - t->t0), ia_fmt_dur(d3, sizeof d3, cl->dur),
	     cl->dur <= IA_SYNC_FLOOR_NS ? "the GPU had already finished" : "the GPU still had work queued");
	const struct ia_gap_line *gb = graph_break_line(a);
	if (gb)
		ia_chain_line(c, "[CUDA] %s syncs from %s, inside a torch.compile'd function: a graph break every step",
			      ia_fmt_count(d1, sizeof d1, gb->count), gb->line);
	const struct ia_gap_line *sl = k->measured ? closing_sync_line(a) : NULL;
	if (sl)
		ia_chain_line(c, "[HOST] %s syncs from %s close the stretches: the host waits there %s in all, time it could "
		     "spend issuing the next step's work while the GPU runs this one's%s",
		     ia_fmt_count(d1, sizeof d1, sl->count), sl->line, ia_fmt_dur(d2, sizeof d2, sl->ns),
		     refill_claimed(a) ? " (the sync's own finding)" : "");
	if (k->measured)
		hostbound_gpu_line(c, h, k);
}

static void hostbound_root_cause(struct ia_chain *c, const struct ia_hostbound *h, const struct hb_cost *k,
				 uint64_t interval)
{
	uint64_t in_launch = h->in_launch_ns / h->launches;
	char d1[32], d2[32], d3[32];
	if (k->measured)
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The host's issue rate bounds throughput: the process issues a launch every %s (%s inside the "
			 "launch call, the rest in Python and framework code between calls), and the GPU, timed by its "
			 "marks, ran out of queued work for about %s of these stretches while the host was still issuing "
			 "them%s. Faster kernels would not make this part faster; fewer launches, each doing more work, "
			 "would.",
			 ia_fmt_dur(d1, sizeof d1, interval), ia_fmt_dur(d2, sizeof d2, in_launch),
			 ia_fmt_dur(d3, sizeof d3, k->idle_in),
			 h->busy_close_n ? " (a sync closing a stretch can still wait for its last kernels: the GPU "
					   "idled earlier in the stretch, between launches)" : "");
	else
		snprintf(c->root_cause, sizeof c->root_cause,
			 "The host's issue rate bounds throughput: the process issues a launch every %s (%s inside the "
			 "launch call, the rest in Python and framework code between calls), and the sync that closes each "
			 "stretch found the GPU already done with everything queued (waited at most %s). The GPU kept up with "
			 "the host, so faster kernels would not make this part faster; fewer launches, each doing more work, "
			 "would. How busy the GPU was inside the stretches is not measured (no GPU timestamps).",
			 ia_fmt_dur(d1, sizeof d1, interval), ia_fmt_dur(d2, sizeof d2, in_launch),
			 ia_fmt_dur(d3, sizeof d3, h->close_max_ns));
}

int ia_rule_hostbound(struct ia_analysis *a, size_t *cap)
{
	const struct ia_hostbound *h = &a->hb;
	uint64_t win = a->idle.steady_ns;
	if (!win || !h->n || !h->ns || h->launches < HOSTBOUND_MIN_LAUNCHES)
		return 0;
	struct hb_cost k = hostbound_cost(a, win);
	double share = (double)k.cost / (double)win;
	/* The threads that issue the launches must keep a CPU busy: mostly
	 * off-CPU, they wait on something and are not issue-bound.  Their CPU
	 * time adds up: PyTorch's main thread blocks while pt_autograd_N runs
	 * the backward pass and launches its kernels. */
	double oncpu = (double)(h->ns - h->main_off_ns) / (double)h->ns;
	double issuing = (double)(h->ns - h->main_off_ns + h->others_oncpu_ns) / (double)h->ns;
	if (h->has_offcpu && issuing < HOSTBOUND_ONCPU)
		return 0;
	double medium = k.measured ? SHARE_MEDIUM : HOSTBOUND_MEDIUM, low = k.measured ? SHARE_LOW : HOSTBOUND_LOW;
	enum ia_severity sev = share >= medium ? IA_SEV_MEDIUM : share >= low ? IA_SEV_LOW : IA_SEV_NONE;
	if (sev == IA_SEV_NONE)
		return 0;
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_HOST_BOUND_LAUNCHES);
	if (!c)
		return -1;
	c->sev = sev;
	c->impact = ia_idle_impact(&a->idle, k.cost);
	c->cost_ns = k.cost;
	c->api = a->t->calls[h->long_close].api;
	/* the Source is the user's own line (a launch inside torch.nn is the
	 * user's forward call); a library's line only in the fixes' words */
	if (h->nuser_lines)
		snprintf(c->source, sizeof c->source, "%s", h->user_lines[0].line);
	else if (h->nlines && !ia_is_library_file(h->lines[0].line))
		snprintf(c->source, sizeof c->source, "%s", h->lines[0].line);
	double rate = (double)h->launches * 1e9 / (double)h->ns;
	uint64_t interval = h->launch_gaps ? h->launch_gap_ns / h->launch_gaps : h->ns / h->launches;
	hostbound_summary(c, a, &k, share, rate);
	hostbound_timeline(c, a, &k, oncpu, issuing, rate, interval);
	hostbound_root_cause(c, h, &k, interval);
	/* steps that wait for their input first (the step table's class) run
	 * at the loader's pace: issuing faster gains nothing until the input
	 * keeps up (c37, c38: input wait 61-67 % of the steps, this finding
	 * MEDIUM with CUDA Graphs first) — said, and held to LOW */
	const struct ia_step_breakdown *sb = &a->step_parts;
	if (sb->n && sb->cls_part == IA_STEP_INPUT && !sb->cls_moderate) {
		char was[sizeof c->root_cause];
		memcpy(was, c->root_cause, sizeof was);
		snprintf(c->root_cause, sizeof c->root_cause, "Next after the input: the steps wait for their input first "
			 "(input wait %.0f%% of the steps' time), so what follows bounds them only once the input keeps up. ",
			 sb->share_pct[IA_STEP_INPUT]);
		ia_addf(c->root_cause, sizeof c->root_cause, "%s", was);
		c->sev = IA_SEV_LOW;
	}
	hostbound_fixes(c, a, interval);
	hostbound_json(c->evidence, a, win, share, rate);
	return 0;
}
