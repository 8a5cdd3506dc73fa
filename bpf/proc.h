/*
 * proc.h — process-tree records proc.bpf.c emits (contract with
 * collector/proc_tree.c).  EV_FORK is sent for every new process on the
 * machine (not threads), so the collector knows every parent/child pair
 * when it must decide whether a sender may speak for a pid; `traced` says
 * whether the child was enrolled (its parent was traced).  EV_EXEC,
 * EV_EXIT and EV_THREAD are sent for traced processes only (EV_EXEC as a
 * struct proc_exec_ev).
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

/* EV_EXEC carries the new program's first arguments, read from its own
 * memory at exec: a process that lives a few milliseconds (nvidia-smi run
 * by a training loop) is gone before the collector could read
 * /proc/PID/cmdline. */
#define INGERO_EXEC_ARGS 256
struct proc_exec_ev {
	struct proc_ev h;
	__u32 args_len;      /* bytes in args: NUL-separated, maybe cut */
	__u32 pad;
	char args[INGERO_EXEC_ARGS];
};

#endif
