/*
 * chain_knobs.c — the fixes in the words of the library that runs the
 * loop.  A fix says what to change in PyTorch's own terms (DataLoader(...,
 * num_workers=15), torch.compile(model), a larger batch, a fused
 * optimizer); where the loop is Hugging Face's Trainer
 * (transformers/trainer.py in most of the main thread's samples in the
 * steady state), the user builds none of those objects: the Trainer does,
 * from its TrainingArguments.  Each finding whose fixes name such a change
 * gets one fix more that names the arguments doing it (c62: a Trainer job
 * told "CUDA Graphs ... torch.compile(model)" and "larger batches").
 * Where the loop accumulates gradients (several backward passes a step,
 * accumulation.h, or Accelerate's or DDP's no_sync() in the main thread's
 * samples: ia_knobs_read, before the rules), the host-bound finding's
 * "larger batches" is a larger
 * micro-batch with fewer accumulation steps: the effective batch is the
 * user's choice already, and the host pays its cost per launch per
 * micro-batch (c74: micro-batches of 8, four a step).
 */
#include "rules/chain_build.h"

#include "load/phase_rules.h"
#include "load/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAINER_MIN_SAMPLES 20   /* main-thread samples in the steady state, at least */
#define TRAINER_SHARE 0.50       /* of them under transformers/trainer.py */
/* samples in no_sync() that say the loop accumulates: one (its frame is on
 * the stack only while the context is entered and left, a few microseconds
 * a micro-batch: c74 has one; no loop enters it without accumulating) */
#define ACCUMULATE_MIN_SAMPLES 1

struct tally {
	struct ia_stack_names *names;
	uint64_t trainer, accumulate;
};

static void count(uint64_t stack, void *arg)
{
	struct tally *t = arg;
	unsigned h = stack ? ia_stack_phase_hints(t->names, stack) : 0;
	t->trainer += !!(h & IA_HINT_HF_TRAINER);
	t->accumulate += !!(h & IA_HINT_ACCUMULATE);
}

/* Whether a fix of c contains s; with num, the first positive integer
 * right after it in a fix that adds workers (not one that says they fight
 * for the CPUs, nor "a DataLoader with num_workers=0"). */
static int fixes_say(const struct ia_chain *c, const char *s, int *num)
{
	int found = 0;
	for (int f = 0; f < c->nfixes; f++) {
		if (num && strstr(c->fixes[f], "fight for"))
			continue;
		for (const char *p = strstr(c->fixes[f], s); p; p = strstr(p + 1, s)) {
			if (!num)
				return 1;
			found = 1;
			if ((*num = atoi(p + strlen(s))) > 0)
				return 1;
		}
	}
	return num ? 0 : found;
}

/* The arguments for c's fixes, "" when none applies. */
static void trainer_args(const struct ia_chain *c, char *out, size_t n)
{
	int workers = 0, prefetch = 0;
	out[0] = 0;
	if (fixes_say(c, "num_workers=", &workers) && workers > 0) {
		ia_addf(out, n, "%sdataloader_num_workers=%d, dataloader_persistent_workers=True", out[0] ? "; " : "",
			workers);
		if (fixes_say(c, "prefetch_factor=", &prefetch) && prefetch > 0)
			ia_addf(out, n, ", dataloader_prefetch_factor=%d", prefetch);
	}
	if (fixes_say(c, "reduce-overhead", NULL))
		ia_addf(out, n, "%storch_compile=True, torch_compile_mode=\"reduce-overhead\" (CUDA graphs)",
			out[0] ? "; " : "");
	else if (fixes_say(c, "torch.compile(model", NULL))
		ia_addf(out, n, "%storch_compile=True", out[0] ? "; " : "");
	if (fixes_say(c, "fused=True", NULL))
		ia_addf(out, n, "%soptim=\"adamw_torch_fused\"", out[0] ? "; " : "");
	if (fixes_say(c, "Larger batches", NULL))
		ia_addf(out, n, "%sa larger per_device_train_batch_size", out[0] ? "; " : "");
	else if (fixes_say(c, "Larger micro-batches", NULL))
		ia_addf(out, n, "%sa larger per_device_train_batch_size with fewer gradient_accumulation_steps",
			out[0] ? "; " : "");
	/* the Trainer reads its loss for the log: every step with logging_steps=1 */
	if (c->kind == IA_KIND_SYNC_PER_STEP)
		ia_addf(out, n, "%slogging_steps of 50 or more (each log reads the loss, a sync)", out[0] ? "; " : "");
}

void ia_knobs_read(struct ia_analysis *a)
{
	struct tally t = { .names = a->names };
	uint64_t total = ia_phases_main_samples(&a->ph, a->gaps.win_start, a->gaps.win_end, 1, count, &t);
	a->knobs.trainer = total >= TRAINER_MIN_SAMPLES && (double)t.trainer >= TRAINER_SHARE * (double)total;
	a->knobs.accumulates[0] = 0;
	if (a->backward_passes >= 2)
		snprintf(a->knobs.accumulates, sizeof a->knobs.accumulates,
			 "%u backward passes a step, each after a forward of its own", a->backward_passes);
	else if (t.accumulate >= ACCUMULATE_MIN_SAMPLES)
		snprintf(a->knobs.accumulates, sizeof a->knobs.accumulates, "no_sync() in its samples");
}

void ia_knobs_translate(struct ia_analysis *a)
{
	if (!a->knobs.trainer)
		return;
	for (size_t i = 0; i < a->nchains; i++) {
		struct ia_chain *c = &a->chains[i];
		char args[300];   /* (with the words before it, within a fix's 400 bytes) */
		if (ia_kind_is_phase(c->kind) || c->nfixes == IA_CHAIN_MAX_LINES)
			continue;
		trainer_args(c, args, sizeof args);
		if (args[0])
			ia_chain_fix(c, "The loop is Hugging Face's Trainer: set these in its TrainingArguments — %s", args);
	}
}
