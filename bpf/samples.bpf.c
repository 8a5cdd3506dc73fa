// SPDX-License-Identifier: GPL-2.0
/*
 * samples.bpf.c — on-CPU stack samples of traced threads.
 *
 * Attached by the collector to one software CPU-clock perf event per CPU
 * (hardware PMU events do not exist in many VMs).  Both stacks are copied
 * into the ring record with bpf_get_stack (about 2 KB a sample: at 99 Hz on
 * 16 CPUs, 3 MB/s at most), so nothing is lost to stack-map collisions.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traced.bpf.h"
#include "samples.h"

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;
	struct sample_event *e;
	struct pt_regs *regs;
	long n;

	if (!is_traced(tgid))
		return 0;
	e = reserve(sizeof(*e), EV_SAMPLE, DROP_SAMPLE);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = (u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	n = bpf_get_stack(ctx, e->user, sizeof(e->user), BPF_F_USER_STACK);
	e->n_user = n > 0 ? n / sizeof(u64) : 0;
	n = bpf_get_stack(ctx, e->kernel, sizeof(e->kernel), 0);
	e->n_kernel = n > 0 ? n / sizeof(u64) : 0;
	/* A leaf function without a frame of its own (memcpy and friends) hides
	 * its caller from frame-pointer unwinding; its return address is still
	 * at the top of the user stack.  User registers even when the sample
	 * hit the kernel. */
	e->user_sp_word = 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs)
		bpf_probe_read_user(&e->user_sp_word, sizeof(e->user_sp_word),
				    (void *)BPF_CORE_READ(regs, sp));
	submit(e);
	return 0;
}
