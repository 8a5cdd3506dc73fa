// SPDX-License-Identifier: GPL-2.0
/*
 * proc.bpf.c — the process tree, and enrolment at fork.
 *
 * A child process of a traced process is put in `traced` here, in the
 * kernel, before it can run (sched_process_fork fires before the child is
 * woken), so nothing it does escapes us.  Threads inherit their tgid's
 * enrolment for free.  Every fork on the machine is reported (cheap next to
 * a fork) so the collector can verify senders' descendants; exec, exit and
 * thread creation/renaming only for traced processes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traced.bpf.h"
#include "proc.h"

char LICENSE[] SEC("license") = "GPL";

static __always_inline void fill_event(struct proc_ev *e, struct task_struct *t)
{
	e->pid = t->tgid;
	e->tid = t->pid;
	e->ppid = 0;
	e->ts_ns = bpf_ktime_get_ns();
	e->exit_code = 0;
	e->traced = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
}

static __always_inline struct proc_ev *new_event(u32 kind, u32 slot, struct task_struct *t)
{
	struct proc_ev *e = reserve(sizeof(*e), kind, slot);

	if (e)
		fill_event(e, t);
	return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = parent->tgid, ctgid = child->tgid;
	bool traced_parent = is_traced(ptgid);
	struct proc_ev *e;

	if (ctgid == ptgid) {   /* a new thread */
		if (!traced_parent)
			return 0;
		e = new_event(EV_THREAD, DROP_THREAD, child);
		if (e)
			submit(e);
		return 0;
	}
	if (traced_parent) {
		/* the parent's flags: a child forked while it is paused starts paused */
		u32 *pv = bpf_map_lookup_elem(&traced, &ptgid);
		u32 v = pv ? *pv : INGERO_TRACED_ON;

		if (bpf_map_update_elem(&traced, &ctgid, &v, BPF_ANY))
			count_drop(DROP_TRACED_MAP);
	}
	e = new_event(EV_FORK, DROP_FORK, child);
	if (!e)
		return 0;
	e->ppid = ptgid;
	e->traced = traced_parent;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct proc_exec_ev *e;
	unsigned long a0, a1;
	u32 n;

	if (!is_traced(p->tgid))
		return 0;
	e = reserve(sizeof(*e), EV_EXEC, DROP_EXEC);
	if (!e)
		return 0;
	fill_event(&e->h, p);
	/* the arguments as the new program sees them, on its own stack (the
	 * exec is past its point of no return: p's mm is the new one) */
	a0 = BPF_CORE_READ(p, mm, arg_start);
	a1 = BPF_CORE_READ(p, mm, arg_end);
	n = a1 > a0 ? a1 - a0 : 0;
	if (n > INGERO_EXEC_ARGS - 1)
		n = INGERO_EXEC_ARGS - 1;
	n &= INGERO_EXEC_ARGS - 1;   /* the bound, where the verifier sees it */
	e->args_len = 0;
	e->pad = 0;
	/* never past arg_end: the environment follows (it may hold secrets) */
	if (n && !bpf_probe_read_user(e->args, n, (void *)a0))
		e->args_len = n;
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	u32 tgid = p->tgid;
	struct proc_ev *e;

	if (!group_dead || !is_traced(tgid))
		return 0;
	e = new_event(EV_EXIT, DROP_EXIT, p);
	if (e) {
		e->exit_code = BPF_CORE_READ(p, signal, group_exit_code) ?: p->exit_code;
		submit(e);
	}
	return 0;
}

/* Forget a process once its leader's task is freed, not at exit: the exit
 * path still runs (and is scheduled) after sched_process_exit.  Its pid is
 * free for reuse from here on. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	u32 tgid = p->tgid;

	if (p->pid == tgid)
		bpf_map_delete_elem(&traced, &tgid);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *t, const char *comm)
{
	struct proc_ev *e;

	if (!is_traced(t->tgid))
		return 0;
	e = new_event(EV_THREAD, DROP_THREAD, t);
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(&e->comm, sizeof(e->comm), comm);
	submit(e);
	return 0;
}
