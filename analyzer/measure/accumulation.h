/*
 * accumulation.h — gradient accumulation, told by the calls: backward
 * passes a step.
 *
 * A CUDA backward runs on PyTorch's autograd thread (pt_autograd_N): its
 * calls come as one run between the main thread's (other threads' calls
 * left out).  A loop that
 * accumulates gradients runs k forward and backward passes (micro-batches)
 * before one optimizer step, so each step (step_times.h: from one start of
 * the step's signature to the next) holds k runs of about one size (c74:
 * 303, 251, 303 and 303 launches — the first pass after zero_grad writes
 * the gradients, the others add into them), each after a forward of its
 * own on the main thread, and one of them shorter than the others by an add
 * a parameter tensor (ACCUM_ADDS_SHARE).  A GAN's critic steps and SAM's two
 * passes zero the gradients before each pass: one length, no accumulation
 * (nor is a loop whose every pass adds: one that accumulates after
 * zero_grad(set_to_none=False), PyTorch's default before 2.0, or into
 * Megatron's main_grad or DeepSpeed ZeRO's buffers — not told apart, no
 * claim; passes of varying length, as a mixture of experts' or dynamic
 * shapes', may be read either way).  DDP's reducer cuts a
 * backward into one long run and short ones (c52: 150, 7, 22, 25), which
 * are not passes.  The evidence is the call pattern, whatever code runs
 * the loop (Accelerate's accumulate(), DDP's no_sync(), a hand-written
 * `if (i + 1) % k == 0: opt.step()`), where the samples see those
 * contexts only as they are entered and left.
 */
#ifndef IA_ACCUMULATION_H
#define IA_ACCUMULATION_H

#include "measure/gaps.h"
#include "measure/step_times.h"

/* The median steady step's full backward passes (the lower median): runs
 * of the autograd threads' calls at least ACCUM_RUN_SHARE of the step's
 * longest, each after a forward on the main thread (main_thread: its
 * thread index; UINT32_MAX: any thread not autograd's) of about the
 * others' size, all but the shortest longer by its adds into the
 * gradients.  0 without steps or autograd threads; 1 for a loop that does
 * not accumulate. */
uint32_t ia_backward_passes(const struct ia_trace *t, const struct ia_gaps *g, uint32_t main_thread,
			    const struct ia_step_times *s);

#endif
