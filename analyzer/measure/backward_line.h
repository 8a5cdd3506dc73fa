/*
 * backward_line.h — the user's line that ran the backward pass.
 *
 * PyTorch runs a CUDA backward on threads of its own (pt_autograd_N): their
 * CUDA calls, the syncs among them, have no Python frame.  Meanwhile the
 * thread that called loss.backward() waits inside it (torch.autograd's
 * Python frames over Engine::execute), and its sampled stacks there — on a
 * CPU and blocked — hold the user's line.  Calls of the autograd threads
 * are that line's.
 */
#ifndef IA_BACKWARD_LINE_H
#define IA_BACKWARD_LINE_H

#include "load/stacks.h"
#include "load/trace.h"

/* 1 for a thread of PyTorch's autograd engine (comm "pt_autograd_N"). */
int ia_is_autograd_thread(const char *comm);

/* The user's line most often under the backward pass in thread tid's
 * sampled stacks (cpu_samples, and off_cpu_stacks where the trace has
 * them) into out ("" when none says); 0, or -1 with the reason in err. */
int ia_backward_line(const struct ia_trace *t, uint32_t tid, struct ia_stack_names *names, char *out, size_t n,
		     char *err, size_t errlen);

#endif
