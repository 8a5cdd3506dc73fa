/*
 * chain_syncs.c — the sync_per_step rule: a Python line that makes the host
 * wait for the GPU every step.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"
#include "measure/backward_line.h"
#include "load/aten_ops.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_EVERY_STEP 0.50         /* syncs from one line per gap */

/* The forward line a backward sync line differentiates: the line whose
 * sync was boolean-mask indexing, when the backward's is a put through a
 * mask (index's backward); NULL when none. */
static const char *forward_line(const struct ia_gaps *g, const struct ia_gap_line *back)
{
	if (strcmp(back->op_outer, "_index_put_impl_") && strcmp(back->op_outer, "index_put_"))
		return NULL;
	for (size_t i = 0; i < g->nsync_lines; i++) {
		const struct ia_gap_line *l = &g->sync_lines[i];
		if (!l->backward && !strcmp(l->op_outer, "index_Tensor") && strcmp(l->line, "(no Python frame)"))
			return l->line;
	}
	return NULL;
}

/* Whether the main process ran a backward pass: PyTorch's autograd
 * engine thread for the GPU (pt_autograd_N) exists once it has. */
static int backward_ran(const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	uint32_t proc = a->pp.p[a->pp.main].proc;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].proc == proc && ia_is_autograd_thread(t->threads[i].comm))
			return 1;
	return 0;
}

/* ---- a sync every step ---- */
int ia_rule_sync_per_step(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	if (!a->idle.steady_ns || !g->n)
		return 0;
	for (size_t i = 0; i < g->nsync_lines; i++) {
		const struct ia_gap_line *l = &g->sync_lines[i];
		double per_step = (double)l->count / (double)g->n;
		if (l->count < IA_SYNC_MIN_COUNT || per_step < SYNC_EVERY_STEP)
			continue;
		/* with the GPU estimate, the refill after each sync (gaps.h) */
		int refill = ia_idle_estimated(&a->idle) && l->est_overlap_ns > l->overlap_ns;
		uint64_t cost = refill ? l->est_overlap_ns : l->overlap_ns;
		double share = ia_idle_share(&a->idle, cost);
		enum ia_severity sev = ia_by_share(share, SHARE_HIGH, SHARE_MEDIUM, SHARE_LOW);
		if (sev == IA_SEV_NONE)
			continue;
		int has_line = strcmp(l->line, "(no Python frame)") != 0;
		struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_SYNC_PER_STEP);
		if (!c)
			return -1;
		c->sev = sev;
		c->api = l->api;
		c->impact = ia_idle_impact(&a->idle, cost);
		c->cost_ns = cost;
		if (has_line)
			snprintf(c->source, sizeof c->source, "%s", l->line);
		/* per step where the steps were found (a line can sync many
		 * times a step, each sync ending a gap), else per gap */
		double steps = ia_steady_steps(a);
		double in_step = (double)l->count / (steps > 1 ? steps : 1);
		char n1[32], d1[32], d2[32], d3[32];
		/* without steps, no "N times a step": a gap is not a step (a sync
		 * that finds the GPU done opens none) */
		int found = ia_steps_found(a);
		char what[48] = "a sync every step";
		if (!found)
			snprintf(what, sizeof what, "frequent syncs");
		else if (in_step >= 1.5)
			snprintf(what, sizeof what, "syncs %.0f times a step", in_step);
		snprintf(c->summary, sizeof c->summary,
			 "%s%s%s: %s %s (%.1f per %s), then the GPU idles %s until new work is queued",
			 what, has_line ? " at " : "", has_line ? l->line : "", ia_fmt_count(n1, sizeof n1, l->count),
			 ia_api_name(t, l->api), in_step, found ? "step" : "gap", ia_fmt_dur(d1, sizeof d1, l->gap_ns));
		/* after the syncs the host may not be preparing anything: asleep
		 * until the next request, blocked on input (c25: 6.02 s of a
		 * 20 ms sleep a request, which the gaps finding tells) */
		int waits = 2 * l->gap_blocked_ns >= l->gap_ns;
		if (waits)
			ia_chain_line(c, "[HOST] the host waits in these syncs %s, then is blocked %s of the %s after them while "
				      "nothing is queued (what it waits on: the gaps finding)", ia_fmt_dur(d1, sizeof d1, l->ns),
				      ia_fmt_dur(d2, sizeof d2, l->gap_blocked_ns), ia_fmt_dur(d3, sizeof d3, l->gap_ns));
		else
			ia_chain_line(c, "[HOST] the host waits in these syncs %s, then prepares the next step for %s while nothing "
				      "is queued", ia_fmt_dur(d1, sizeof d1, l->ns), ia_fmt_dur(d2, sizeof d2, l->gap_ns));
		ia_chain_line(c, "[CUDA] %s %s calls from %s over %s steps%s", ia_fmt_count(n1, sizeof n1, l->count),
		     ia_api_name(t, l->api), l->line, ia_fmt_count(d3, sizeof d3, (uint64_t)llround(steps)),
		     found ? "" : " (gaps)");
		/* the PyTorch operation that synchronised (from the calls' native frames) */
		enum ia_aten_sync why = l->op_inner[0] ? ia_aten_sync_kind(l->op_inner, l->op_outer) : IA_ATEN_SYNC_NONE;
		char op[200] = "";
		if (why != IA_ATEN_SYNC_NONE) {
			ia_aten_describe(l->op_inner, l->op_outer, op, sizeof op);
			ia_chain_line(c, "[CUDA] the sync is PyTorch's, inside %s", op);
		}
		if (l->compiled)
			ia_chain_line(c, "[CUDA] the line runs in a torch.compile'd function (torch/_dynamo/eval_frame.py calls it): "
				      "reading the GPU there is a graph break — the compiled graph ends before the line, the line "
				      "runs eagerly and waits, and a second graph starts after it");
		if (refill)
			ia_chain_line(c, "[GPU] after each sync the GPU starts from an empty queue: while the host issues the next "
			     "step it idles between launches, about %s in all up to each sync's wait (estimated from work timed "
			     "alone; the certain part is the %s right after the syncs)",
			     ia_fmt_dur(d1, sizeof d1, l->est_overlap_ns), ia_fmt_dur(d2, sizeof d2, l->gap_ns));
		if (why == IA_ATEN_SYNC_SIZE)
			snprintf(c->root_cause, sizeof c->root_cause,
				 "%s makes the host wait for the GPU every step without reading a value itself: %s has a "
				 "result sized by the data, so PyTorch copies how many elements it will have to the host "
				 "and waits for it before it can allocate the result%s%s. The next step's work is queued "
				 "only after the GPU has drained, so the GPU idles while the host prepares it: up to %s of "
				 "GPU work could have overlapped with that host time.",
				 has_line ? l->line : "A call without a Python frame (the backward pass's thread, or a "
				 "library's)", op, l->inner[0] ? "; the line is inside " : "", l->inner,
				 ia_fmt_dur(d1, sizeof d1, cost));
		else
			snprintf(c->root_cause, sizeof c->root_cause,
				 "%s makes the host wait for the GPU every step (%s)%s%s. The next step's work is queued "
				 "only after the GPU has drained, so the GPU idles while the host %s: up to %s of "
				 "GPU work could have overlapped with that host time.",
				 has_line ? l->line : "A call without a Python frame",
				 op[0] ? op : ".item(), .cpu(), printing or comparing a CUDA tensor, or an explicit synchronize",
				 l->inner[0] ? "; here inside " : "", l->inner,
				 waits ? "waits for what comes next (blocked, as the gaps finding says)" : "prepares it",
				 ia_fmt_dur(d1, sizeof d1, cost));
		int scaler = strstr(l->inner, "grad_scaler.py") != NULL;
		if (scaler)
			ia_chain_fix(c, "torch.amp.GradScaler reads its inf check on the host when the optimizer cannot take it: "
			       "an optimizer with fused=True (torch.optim.Adam/AdamW/SGD) does the check on the GPU, "
			       "without the per-step sync");
		/* a backward's sync is the forward's doing: the line whose indexing it differentiates, when
		 * that line syncs too (x[mask]'s backward is a put through the same mask) */
		const char *fwd = l->backward ? forward_line(g, l) : NULL;
		if (fwd)
			ia_chain_line(c, "[CUDA] it differentiates the boolean-mask indexing at %s, which syncs in the "
				      "forward pass too", fwd);
		if (why == IA_ATEN_SYNC_SIZE && fwd)
			ia_chain_fix(c, "Keep shapes static at %s (the forward's x[mask]; its backward syncs at %s): "
				     "compute on all elements and weight by the mask (a loss: reduction=\"none\", then "
				     "(loss * mask).sum() / mask.sum()), or torch.where(mask, x, 0)", fwd, l->line);
		else if (why == IA_ATEN_SYNC_SIZE)
			ia_chain_fix(c, "Keep shapes static%s%s: instead of selecting elements by a mask, compute on all of "
				     "them and weight by the mask (a loss: reduction=\"none\", then (loss * mask).sum() / "
				     "mask.sum()), or torch.where(mask, x, 0); where the count is known, nonzero_static(size=) "
				     "or repeat_interleave(output_size=)", has_line ? " at " : "", has_line ? l->line : "");
		else if (ia_sync_line_explicit(l))
			ia_chain_fix(c, "Take the explicit synchronize%s%s out of the loop: if it is there to time the code, "
				     "time it with CUDA events (torch.cuda.Event(enable_timing=True): .record() before and "
				     "after, elapsed_time() read once at the end) or torch.profiler, which do not make the "
				     "host wait", has_line ? " at " : "", has_line ? l->line : "");
		else if (has_line && strstr(l->line, "transformers/generation/"))
			/* no line of the program's own under it (a thread on
			 * generate): the syncs are generate's, every token */
			ia_chain_fix(c, "The syncs are Hugging Face generate's own, each token (%s: its stopping check, a "
				     "streamer's read): give each call more work (several prompts a call) or make a token "
				     "cheaper to issue (cache_implementation=\"static\" with a compiled forward)", l->line);
		else if (has_line && ia_is_library_file(l->line))
			ia_chain_fix(c, "The sync is the library's, at %s, with no line of the program's own under it: look "
				     "for the library's setting that reads the GPU less often, or call it with more work "
				     "each time", l->line);
		else if (!backward_ran(a))
			/* no backward pass: inference, whose read is often the
			 * answer a request waits for (c25) — no loss to accumulate */
			ia_chain_fix(c, "Read the result%s%s without draining the GPU first: if it is needed only later, keep "
				     "results on the GPU and read them every N steps; if it answers a request, queue the next "
				     "request's work before reading this one (.to('cpu', non_blocking=True) into pinned memory, "
				     "then an event's synchronize), so the GPU computes while the host waits",
				     has_line ? " at " : "", has_line ? l->line : "");
		else
			ia_chain_fix(c, "Drop the per-step sync%s%s: keep values on the GPU (accumulate the loss in a tensor) "
				     "and read them every N steps, or copy them with .to('cpu', non_blocking=True) into pinned "
				     "memory and read them a step later", has_line ? " at " : "", has_line ? l->line : "");
		if (l->compiled)
			ia_chain_fix(c, "Under torch.compile that also removes the graph break: the function compiles to one graph "
				     "(TORCH_LOGS=graph_breaks, or torch._dynamo.explain(fn)(*args), lists the breaks and why)");
		cJSON *ev = c->evidence;
		cJSON_AddStringToObject(ev, "line", l->line);
		ia_json_str(ev, "inside", l->inner[0] ? l->inner : NULL);
		ia_json_str(ev, "aten_op", l->op_inner[0] ? l->op_inner : NULL);
		ia_json_str(ev, "aten_called", l->op_outer[0] ? l->op_outer : NULL);
		cJSON_AddBoolToObject(ev, "graph_break", l->compiled);
		ia_json_u64(ev, "syncs", l->count);
		ia_json_u64(ev, "steps", (uint64_t)llround(steps));
		ia_json_round(ev, "syncs_per_step", in_step, 3);
		ia_json_u64(ev, "sync_ns", l->ns);
		ia_json_u64(ev, "gap_after_ns", l->gap_ns);
		ia_json_u64(ev, "overlap_possible_ns", l->overlap_ns);
		if (refill)
			ia_json_u64(ev, "refill_idle_ns", l->est_overlap_ns);
		ia_json_round(ev, "share_of_window", share, 4);
	}
	return 0;
}
