// SPDX-License-Identifier: GPL-2.0
/*
 * samples.bpf.c — on-CPU stack samples of traced threads.
 *
 * Attached by the collector to one software CPU-clock perf event per CPU
 * (hardware PMU events do not exist in many VMs).  Stacks are interned by
 * the kernel in `stacks`; the collector reads and symbolizes each id once
 * per process.  A full or colliding stack map loses the stack, not the
 * sample, and is counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traced.bpf.h"
#include "samples.h"

#define EEXIST 17
#define ENOMEM 12

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__type(key, u32);
	__uint(value_size, INGERO_STACK_DEPTH * sizeof(u64));
} stacks SEC(".maps");

static __always_inline void count_stack_loss(long id)
{
	if (id == -EEXIST || id == -ENOMEM)
		count_drop(DROP_STACK);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;
	struct sample_event *e;

	if (!is_traced(tgid))
		return 0;
	e = reserve(sizeof(*e), EV_SAMPLE, DROP_SAMPLE);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = (u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	e->user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	e->kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
	/* A leaf function without a frame of its own (memcpy and friends) hides
	 * its caller from frame-pointer unwinding; the return address is still
	 * at the top of the user stack.  User registers even when the sample
	 * hit the kernel. */
	e->user_sp_word = 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs)
		bpf_probe_read_user(&e->user_sp_word, sizeof(e->user_sp_word),
				    (void *)BPF_CORE_READ(regs, sp));
	count_stack_loss(e->user_stack);
	count_stack_loss(e->kernel_stack);
	submit(e);
	return 0;
}
