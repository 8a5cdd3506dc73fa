/*
 * chain_gaps_busy.c — the gaps_host_busy kind's cause and fixes
 * (docs/chains.md): the main thread on a CPU while nothing is queued —
 * where the CPU time went (the sampled stacks, their mechanism, the user's
 * line under them), a checkpoint in the loop, batch assembly — and what to
 * change there.
 */
#include "rules/chain_gaps.h"

#include "base/util.h"

#include <stdio.h>
#include <string.h>

#define MECH_LEADS_SHARE 0.5   /* of the samples: below, a mechanism under Python code is its by-product */
#define CPU_OPTIMIZER_SHARE 0.5   /* of the main thread's gap samples in torch.optim's native update */

/* A native symbol of the CUDA runtime or driver or of a CUDA library
 * (cuBLAS, cuDNN, ...): host code that queues GPU work, which no advice to
 * "do it on the GPU" can move. */
static int gpu_launch_symbol(const char *sym)
{
	static const char *const pre[] = { "cublas", "cudnn", "cuda", "__cuda", "cuLaunch", "cuMem", "cuStream",
					   "cuEvent", "cuGraph", "cufft", "curand", "cusparse", "cusolver", "nccl",
					   "cutlass", "libcuda", "libcublas" };
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (!strncmp(sym, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

/* The share of the main thread's gap samples in torch's serialization
 * (torch.save, torch.load: a checkpoint written or read between steps). */
static double checkpoint_share(const struct ia_gaps *g, const char **user_line)
{
	uint64_t n = 0, all = ia_gap_samples(g, IA_GAP_MAIN), top = 0;
	*user_line = NULL;
	for (size_t k = 0; k < g->nstacks; k++) {
		const struct ia_gap_stack *st = &g->stacks[k];
		if (!st->main || !strstr(st->python, "torch/serialization.py"))
			continue;
		n += st->main;
		if (st->main > top && st->user_python[0]) {
			top = st->main;
			*user_line = st->user_python;
		}
	}
	return all ? (double)n / (double)all : 0;
}

/* The share of the main thread's gap samples in torch.optim's update
 * computing on the host — native code, not Python, not the host's side of
 * a launch: the optimizer's parameters and state are CPU tensors (c76: Adam
 * over master weights kept on the host, 33.6 M parameters a step) — and the
 * user's line that stepped it the most. */
static double cpu_optimizer_share(const struct ia_gaps *g, const char **user_line)
{
	uint64_t n = 0, all = ia_gap_samples(g, IA_GAP_MAIN), top = 0;
	*user_line = NULL;
	for (size_t k = 0; k < g->nstacks; k++) {
		const struct ia_gap_stack *st = &g->stacks[k];
		if (!st->main || st->python_code || !strstr(st->python, "torch/optim/") || gpu_launch_symbol(st->label))
			continue;
		n += st->main;
		if (st->main > top && st->user_python[0]) {
			top = st->main;
			*user_line = st->user_python;
		}
	}
	return all ? (double)n / (double)all : 0;
}

/* the main process's other threads on CPUs in the gaps, per second of
 * gap: this many CPUs at once is a thread pool doing the work */
#define POOL_CPUS 3.0

void ia_gap_cause_host_busy(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_gaps *g = v->g;
	char d1[32], d2[32], n1[32], where[520];   /* label, python, user line: 3 x 160 + words */
	int mech_fix = -1;
	double mech_share = 0;
	int coll = ia_stacks_show_collation(g, IA_GAP_MAIN);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "The main thread itself kept a CPU busy while no GPU work was queued: on-CPU %s of the %s "
		 "of gaps between CUDA calls.",
		 ia_fmt_dur(d1, sizeof d1, g->main_oncpu_ns), ia_fmt_dur(d2, sizeof d2, g->total_ns));
	/* a phase between steps (validation, logging, a checkpoint every N
	 * steps): the steps themselves are not what starves the GPU */
	const struct ia_gap_bursts *b = &v->bursts;
	if (v->bursty && b->every_ns)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" It comes in bursts, one every %s, %.0f%% of that time in %s long gaps (the longest %s): a "
			"periodic phase of the job's own between its steps (validation, logging, a checkpoint), whose "
			"code the samples below name; the steps themselves keep the GPU fed.",
			ia_fmt_dur(d1, sizeof d1, b->every_ns), 100 * b->share, ia_fmt_count(n1, sizeof n1, b->n),
			ia_fmt_dur(d2, sizeof d2, b->longest));
	else if (v->bursty)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" It comes in bursts: %.0f%% of that time in %s long gaps (the longest %s), not spread over "
			"the steps.", 100 * b->share, ia_fmt_count(n1, sizeof n1, b->n), ia_fmt_dur(d2, sizeof d2, b->longest));
	if (v->stk_main[0]) {
		ia_addf(c->root_cause, sizeof c->root_cause, " Where that CPU time went (sampled): %s.", v->stk_main);
		mech_fix = c->nfixes;
		if (!ia_gap_mech_cause(c, v, &mech_share) || c->nfixes == mech_fix)
			mech_fix = -1;
	} else
		ia_addf(c->root_cause, sizeof c->root_cause, " (No on-CPU samples in the gaps: where it went is unknown.)");
	if (coll)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" That is per-sample batch assembly (indexing rows one by one, then torch.stack over a "
			"Python list: the DataLoader's default collation)%s.",
			v->workers ? "" : " in the main process, as with num_workers=0");
	else if (!v->workers && v->stk_main[0])
		ia_addf(c->root_cause, sizeof c->root_cause, " No worker process was running.");
	/* the main thread is not alone on the CPU work: PyTorch's intra-op
	 * pool (OpenMP, MKL) runs it on every core — moving it to another
	 * thread gains nothing (c53, c55: 13 and 15 CPUs at once) */
	double pool = g->total_ns ? (double)g->siblings_oncpu_ns / (double)g->total_ns : 0;
	int parallel = pool >= POOL_CPUS;
	if (parallel)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" Its process's other threads ran %s on CPUs in those gaps, about %.0f CPUs at once: PyTorch's CPU "
			"thread pool (OpenMP/MKL) runs the operations in parallel already.",
			ia_fmt_dur(d1, sizeof d1, g->siblings_oncpu_ns), pool);
	int in_loader = !coll && !v->workers && g->samples_main &&
			(double)g->samples_main_loader >= IN_LOADER_SHARE * (double)g->samples_main;
	if (in_loader)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of those samples are under a DataLoader's fetch (torch.utils.data): the Dataset's "
			"items are made in the main process (num_workers=0), one at a time, while the GPU waits.",
			ia_pct(g->samples_main_loader, g->samples_main));
	double interp = coll ? 0 : ia_stacks_interpreter_share(g, IA_GAP_MAIN);
	const struct ia_gap_stack *hot = ia_stacks_python_top(g, IA_GAP_MAIN);
	if (interp >= INTERPRETER_SHARE && hot)
		ia_addf(c->root_cause, sizeof c->root_cause, " %.0f%% of those samples run Python code, the most in %s.",
			100 * interp, ia_python_where(hot, where, sizeof where));
	else if (interp >= INTERPRETER_SHARE)
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of those samples are the Python interpreter itself: per-item Python code "
			"(native stacks cannot say which Python code).", 100 * interp);
	/* the Source: where the CPU time went, in the user's code — the Python
	 * line that runs most, else the user's line under the most sampled
	 * native stack (numpy, a torch op on the CPU) */
	size_t top;
	const struct ia_gap_stack *hot_native = NULL;
	uint64_t nmain = ia_gap_samples(g, IA_GAP_MAIN);
	int sampled_source = hot && hot->user_python[0] && interp >= INTERPRETER_SHARE;
	if (sampled_source)
		snprintf(c->source, sizeof c->source, "%s", hot->user_python);
	else if (nmain && ia_role_top(g, IA_GAP_MAIN, &top, 1) == 1 && g->stacks[top].user_python[0] &&
		 (double)g->stacks[top].main >= HOT_STACK_SHARE * (double)nmain)
		hot_native = &g->stacks[top];
	if (hot_native)
		snprintf(c->source, sizeof c->source, "%s", hot_native->user_python);
	/* no one stack holds a quarter, but one line of the user's does (a
	 * torch op on the CPU: many native stacks under loss.backward()) —
	 * where the CPU time went, over the line whose call ended the gaps */
	double user_share = 0;
	const char *user_line = sampled_source || hot_native || !nmain ? NULL : ia_role_user_line(g, IA_GAP_MAIN, &user_share);
	if (user_line && user_share < HOT_STACK_SHARE)
		user_line = NULL;
	if (user_line)
		snprintf(c->source, sizeof c->source, "%s", user_line);
	const struct ia_gap_line *sl = g->nsync_lines ? &g->sync_lines[0] : NULL;
	if (sl && sl->gap_ns * 2 >= g->total_ns && strcmp(sl->line, "(no Python frame)"))
		ia_addf(c->root_cause, sizeof c->root_cause, " Most gaps start when the sync at %s returns.", sl->line);
	if (v->blk >= 0.2 || v->rq >= 0.2)
		ia_addf(c->root_cause, sizeof c->root_cause, " The rest of the gaps: blocked %.0f%%, waiting for a CPU %.0f%%.",
			100 * v->blk, 100 * v->rq);
	/* a checkpoint saved (or loaded) in the loop: its serialization and
	 * writes on the CPU, its flush or fsync in D state */
	const char *ckpt_line;
	double ckpt = coll ? 0 : checkpoint_share(g, &ckpt_line);
	int ckpt_io = g->main_blocked_ns && (double)g->main_iowait_ns >= IOWAIT_DOMINANT * (double)g->main_blocked_ns &&
		      v->blk >= 0.2;
	if (ckpt >= CHECKPOINT_SHARE) {
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of its samples are torch's serialization (torch.save or torch.load%s%s): a checkpoint "
			"written or read between steps%s.", 100 * ckpt, ckpt_line ? " at " : "", ckpt_line ? ckpt_line : "",
			ckpt_io ? ", then waited for on storage (the blocked time, in D state)" : "");
		if (ckpt_line)
			snprintf(c->source, sizeof c->source, "%s", ckpt_line);
		ia_chain_fix(c, "Save checkpoints less often, or off the training thread: copy the state to the host "
				"and let a background thread or process write it (torch.distributed.checkpoint.async_save), "
				"so the next steps' GPU work is queued meanwhile%s",
			     ckpt_io ? "; an fsync or flush in the loop waits for the disk every time" : "");
	}
	/* the optimizer stepping on the CPU: its fix leads (before the fresh
	 * memory its temporaries fault in, which it removes too) */
	const char *optim_line = NULL;
	double optim = coll || ckpt >= CHECKPOINT_SHARE ? 0 : cpu_optimizer_share(g, &optim_line);
	if (optim >= CPU_OPTIMIZER_SHARE) {
		ia_addf(c->root_cause, sizeof c->root_cause,
			" %.0f%% of its samples are torch.optim's update computing on the host%s%s: the parameters and "
			"optimizer state it steps are CPU tensors, so every step waits for the CPU's pass over them.",
			100 * optim, optim_line ? ", stepped at " : "", optim_line ? optim_line : "");
		if (optim_line)
			snprintf(c->source, sizeof c->source, "%s", optim_line);
		ia_chain_fix(c, "Step the optimizer on the GPU: keep the parameters it updates and its state there "
				"(torch.optim.Adam(model.parameters(), fused=True) updates them in a few kernels); where GPU "
				"memory forces the offload, use an offload built for it (DeepSpeed's ZeRO-Offload with "
				"DeepSpeedCPUAdam: a vectorized update overlapped with the GPU's work, through pinned "
				"buffers)");
		ia_chain_fix_move(c, c->nfixes - 1, 0);
	}
	if (coll && !v->workers)
		ia_chain_fix(c, "Assemble batches in worker processes: DataLoader(..., num_workers=%d, persistent_workers=True, "
				"pin_memory=True) (%d CPUs: one left for the main process)", v->nw, v->cpus);
	if (coll)
		ia_batch_level_fix(c);
	/* Python frames that are not the DataLoader's: the code to fix is named,
	 * not guessed; the DataLoader is named only when its frames are there */
	int hot_elsewhere = hot && !strstr(hot->python, "torch/utils/data");
	/* most samples under the DataLoader's fetch, in the main process: the
	 * Dataset's code (the user's, or a library's) runs on the loop's thread */
	if (in_loader)
		ia_chain_fix(c, "Load in worker processes: DataLoader(..., num_workers=%d, persistent_workers=True, "
				"pin_memory=True) (%d CPUs: one left for the main process) — the Dataset's __getitem__ runs "
				"in the loop's process now%s%s%s", v->nw, v->cpus, hot && hot->user_python[0] ? ", " : "",
			     hot && hot->user_python[0] ? "the most at " : "", hot && hot->user_python[0] ? hot->user_python : "");
	else if (!coll && !v->workers && interp >= INTERPRETER_SHARE && !hot_elsewhere)
		ia_chain_fix(c, "If batches come from a DataLoader with num_workers=0, its per-sample __getitem__ and "
				"collation run here: num_workers=%d, persistent_workers=True, pin_memory=True (%d CPUs), "
				"or for an in-memory tensor shuffle once and slice (x = x[torch.randperm(N)]; "
				"batch = x[i:i+B])", v->nw, v->cpus);
	if (!coll && hot && interp >= INTERPRETER_SHARE) {
		/* the function named is the most sampled one; where it holds a
		 * sliver of the samples (c21, c62, c74: PyTorch's or a library's
		 * internals, 5-14 %), the user's line most of them come from
		 * says where to look, else its share is said with it */
		double hot_share = nmain ? (double)ia_gap_stack_n(hot, IA_GAP_MAIN) / (double)nmain : 0, ushare = 0;
		const char *uline = hot_share < HOT_NAME_SHARE && nmain ? ia_role_user_line(g, IA_GAP_MAIN, &ushare) : NULL;
		if (uline && ushare >= HOT_STACK_SHARE)
			ia_chain_fix(c, "Make the Python code under %s cheaper (%.0f%% of the samples, spread over many functions: "
					"the most sampled holds %.0f%%), or take it off the critical path: do it on the GPU, in "
					"another process, or after queueing the next step's GPU work", uline, 100 * ushare,
				     100 * hot_share);
		else
			ia_chain_fix(c, "Make the Python code the samples name cheaper (%s first, %.0f%% of the samples), or "
					"take it off the critical path: do it on the GPU, in another process, or after "
					"queueing the next step's GPU work", ia_python_where(hot, where, sizeof where),
				     100 * hot_share);
		/* a mechanism in a minority of the samples of Python code is that
		 * code's by-product (c59: the collector walks the tuples the metric
		 * makes, 39 %): the code's fix removes both, so it comes first */
		if (mech_fix >= 0 && mech_share < MECH_LEADS_SHARE)
			ia_chain_fix_move(c, c->nfixes - 1, mech_fix);
	}
	else if (optim >= CPU_OPTIMIZER_SHARE)
		;   /* (its fix above: the native code under the user's line is the optimizer's) */
	else if (!coll && hot_native && ckpt < CHECKPOINT_SHARE && gpu_launch_symbol(hot_native->label))
		ia_chain_fix(c, "The CPU time goes to %s at %s (%.0f%% of the samples): the host's side of queueing GPU "
				"work (a CUDA library preparing its launches), not work to move to the GPU — fewer, larger "
				"launches cut it (larger batches, torch.compile, CUDA Graphs)", hot_native->label,
			     hot_native->user_python, ia_pct(hot_native->main, nmain));
	else if (!coll && hot_native && ckpt < CHECKPOINT_SHARE)
		ia_chain_fix(c, "The CPU time goes to %s at %s (%.0f%% of the samples): do that work on the GPU (before "
				"copying results back)%s", hot_native->label, hot_native->user_python,
			     ia_pct(hot_native->main, nmain), parallel ? ", or less of it: it has every CPU already"
			     : ", in another thread or process, or after queueing the next step's GPU work so the two overlap");
	else if (!coll && user_line && ckpt < CHECKPOINT_SHARE)
		ia_chain_fix(c, "The CPU time goes to native code under %s (%.0f%% of the samples: operations on the CPU, "
				"not Python): do that work on the GPU%s", user_line, 100 * user_share,
			     parallel ? ", or less of it: it has every CPU already"
			     : ", in another thread or process, or after queueing the next step's GPU work so the two overlap");
	else if (!coll && ckpt < CHECKPOINT_SHARE)
		ia_chain_fix(c, "Profile the host code that runs between CUDA calls (py-spy or torch.profiler's CPU view): "
				"it runs while the GPU has nothing to do; move it off the critical path or overlap it "
				"with GPU work");
	if (v->end_py)
		ia_chain_fix(c, "The GPU waits for the work issued at %s (%s after each gap): look at what runs before it",
			     v->end->line, ia_api_name(v->a->t, v->end->api));
}
