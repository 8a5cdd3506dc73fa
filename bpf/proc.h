/*
 * proc.h — process-tree records proc.bpf.c emits (contract with
 * collector/proc_tree.c).  EV_FORK is sent for every new process on the
 * machine (not threads), so the collector knows every parent/child pair
 * when it must decide whether a sender may speak for a pid; `traced` says
 * whether the child was enrolled (its parent was traced).  EV_EXEC,
 * EV_EXIT and EV_THREAD are sent for traced processes only.
 */
#ifndef INGERO_BPF_PROC_H
#define INGERO_BPF_PROC_H

#include "traced.h"

struct proc_ev {
	__u32 kind;          /* EV_FORK, EV_EXEC, EV_EXIT, EV_THREAD */
	__u32 pid;           /* tgid (EV_THREAD: the owning process) */
	__u32 tid;           /* EV_THREAD: the thread; else = pid */
	__u32 ppid;          /* EV_FORK: parent tgid */
	__u64 ts_ns;
	__s32 exit_code;     /* EV_EXIT: task->exit_code (wait status) */
	__u32 traced;        /* EV_FORK: child enrolled */
	char comm[INGERO_TASK_COMM];
};

#endif
