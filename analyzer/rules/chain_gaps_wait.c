/*
 * chain_gaps_wait.c — the main thread blocked in the gaps, followed to the
 * end of its wait (see chain_gaps.h; the hops are measured in wakers.c).
 *
 * "Find the producer" is the tool's job: where one thread ended most of
 * the main thread's waits, the finding names it and says what it did
 * meanwhile — ran (its line is the Source: make it faster, start it
 * earlier, run more of them), waited for a CPU (who held them: CPUs of its
 * own, or the quota), waited on storage, or blocked in turn — with the fix
 * for that end, not for the first wait.
 */
#include "rules/chain_gaps.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/mechanisms.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The last thread ran: its line is the Source when it is the user's own
 * (a library's thread, such as the DataLoader's pin-memory thread, is
 * changed from the user's line the loop waits at); its mechanism's fix
 * first when half its samples are one (a copy, fresh memory); the
 * pin-memory thread's own fixes, since more workers or producers do not
 * divide its work: there is one per DataLoader. */
static void on_cpu_cause(struct ia_chain *c, const struct gap_view *v, const struct ia_wait_hop *last, const char *who)
{
	const struct ia_analysis *a = v->a;
	if (last->line[0] && !ia_is_library_file(last->line))   /* (its tests are parts of the path: ":57" is no matter) */
		snprintf(c->source, sizeof c->source, "%s", last->line);
	else
		c->source[0] = 0;   /* where the loop blocked, then (chain_gaps.c) */
	enum ia_mech m = (enum ia_mech)ia_wait_hop_mech(last);
	if (ia_wait_hop_is_pin_thread(a->t, last)) {
		ia_addf(c->root_cause, sizeof c->root_cause, " A DataLoader has one such thread (pin_memory=True), "
			"whatever num_workers is: it copies every batch into page-locked memory before the loop "
			"gets it%s, so more workers do not help.",
			m == IA_MECH_COPY ? ", and copying is where its time goes" : "");
		ia_chain_fix(c, "Send fewer bytes per batch: keep the host data in uint8 or bfloat16 and convert and "
				"normalise on the GPU, after the copy (the pin-memory thread copies every byte once "
				"more, on one CPU)");
		ia_chain_fix(c, "If the dataset fits in GPU memory, move it there once and index the batches on the "
				"GPU: no host copy per step");
		ia_chain_fix(c, "Or build each batch in page-locked memory where it is made, e.g. a preallocated "
				"pinned buffer filled in place in the main process, then .to('cuda', non_blocking=True)");
		return;
	}
	const char *mfix = ia_mech_fix(m);
	if (mfix)
		ia_chain_fix(c, "%s", mfix);
	/* the native function and the user's line both: the line says where, the
	 * function what is expensive there (a hash, a copy, a decode) */
	char where[400] = "";
	if (last->label[0] && last->line[0])
		snprintf(where, sizeof where, " (its time goes to %s at %s)", last->label, last->line);
	else if (last->label[0] || last->line[0])
		snprintf(where, sizeof where, " (its time goes to %s)", last->line[0] ? last->line : last->label);
	ia_chain_fix(c, "Make the work of %s cheaper or start it earlier%s: the loop waits for its "
			"result each step", who, where);
	ia_chain_fix(c, "Run more of it in parallel (several producer threads or processes, or DataLoader "
			"workers), so the next step's input is ready when the GPU finishes");
}

/* The first hop that is a thread of the process's gloo collectives, or NULL. */
static const struct ia_wait_hop *collective_hop(const struct ia_analysis *a)
{
	const struct ia_wakers *w = &a->wakers;
	for (size_t i = 0; i < w->nhops; i++)
		if (ia_wait_hop_is_gloo(a->t, &a->coll.gloo, &w->hop[i]))
			return &w->hop[i];
	return NULL;
}

/* The loop's wait runs through the collectives: the step waits for its
 * gradients' all-reduce (gloo runs it on the host: a copy to host memory,
 * the reduction over TCP or shared memory, a copy back), whatever the
 * thread at the end of the walk was doing — its socket writes are the
 * transfer, not a producer to parallelise. */
static void collective_cause(struct ia_chain *c)
{
	ia_addf(c->root_cause, sizeof c->root_cause, " The wait runs through gloo's collectives: the step waits for its "
		"gradients' all-reduce, which gloo runs on the host (each bucket copied to host memory, reduced over "
		"TCP or shared memory, copied back), not for input — and, where one rank arrives late, for that rank (the job's rank findings "
		"say whether one does).");
	ia_chain_fix(c, "Communicate less per step: accumulate gradients over several micro-batches under DDP's "
			"no_sync() (one all-reduce per optimizer step), a larger batch per step, or compressed "
			"gradients (model.register_comm_hook(None, bf16_compress_hook))");
	ia_chain_fix(c, "Where each rank has a GPU of its own, the NCCL backend (init_process_group(\"nccl\")) "
			"reduces on the GPUs: gloo moves CUDA tensors through host memory");
	ia_chain_fix(c, "Overlap it with the backward pass: smaller DDP buckets (bucket_cap_mb) start the first "
			"all-reduce earlier");
}

int ia_gap_wait_for_cause(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_analysis *a = v->a;
	const struct ia_wakers *w = &a->wakers;
	if (!w->nhops)
		return 0;
	const struct ia_wait_hop *last = &w->hop[w->nhops - 1];
	char path[1200], name[160], who[170];
	ia_wakers_text(a->t, w, path, sizeof path);
	ia_wait_hop_name(a->t, last, name, sizeof name);
	/* "the thread tid 9 "x"", or its role's own article: "the autograd engine thread …" */
	snprintf(who, sizeof who, "%s%s", ia_wait_hop_has_role(a->t, last) ? "" : "the ", name);
	ia_addf(c->root_cause, sizeof c->root_cause, ": %s.", path);
	if (collective_hop(a)) {
		c->source[0] = 0;   /* (where the loop blocked: chain_gaps.c's) */
		collective_cause(c);
		return 1;
	}
	switch (w->end) {
	case IA_WAITEND_RUNQ:
		if (ia_cpu_quota_held_back(a, w->ntakers != 0, last->runq_ns)) {
			ia_cpu_quota_cause(c, a);
			ia_cpu_quota_fix(c);
		} else {
			ia_addf(c->root_cause, sizeof c->root_cause, " The wait ends in CPU contention: %s the loop "
				"depends on was runnable but not running.", who);
		}
		ia_chain_fix(c, "Give %s CPUs of its own: fewer competing processes, or taskset/cgroups to keep "
				"them off the training job's CPUs — while it waits for a CPU, the training loop waits for it",
			     who);
		break;
	case IA_WAITEND_ONCPU:
		on_cpu_cause(c, v, last, who);
		break;
	case IA_WAITEND_IO:
		ia_chain_fix(c, "Take storage off %s's path: keep the data in RAM or on local NVMe, read ahead, "
				"or overlap the reads with GPU work", who);
		break;
	case IA_WAITEND_SLEEP:
		who[0] = (char)toupper((unsigned char)who[0]);   /* it begins the sentence */
		ia_chain_fix(c, "%s sleeps between the items it hands over (time.sleep, a timer): if the sleep "
				"paces it or polls for work, remove it or wait on the work itself", who);
		break;
	default:
		ia_chain_fix(c, "Find what %s itself waits for (it blocked most of the time the loop waited for "
				"it): the loop's wait ends there", who);
	}
	return 1;
}

const char *ia_gap_wait_for_brief(const struct gap_view *v, char *buf, size_t n)
{
	const struct ia_wakers *w = &v->a->wakers;
	char who[160];
	buf[0] = 0;
	if (!w->nhops)
		return buf;
	if (collective_hop(v->a)) {
		snprintf(buf, n, "waiting for the gradients' all-reduce over gloo");
		return buf;
	}
	ia_wait_hop_name(v->a->t, &w->hop[0], who, sizeof who);
	static const char *end[] = { "", ", which ran", ", which waited for a CPU", ", which waited on storage",
				     ", which slept", ", which blocked in turn" };
	snprintf(buf, n, "waiting for %s%s%s", ia_wait_hop_has_role(v->a->t, &w->hop[0]) ? "" : "its ", who,
		 w->nhops > 1 ? " (through others)" : end[w->end]);
	return buf;
}
