/*
 * sched.h — records sched.bpf.c emits (the contract with collector/sched.c).
 *
 * off_cpu_event: one off-CPU interval of a traced thread, from the switch
 * that took it off a CPU (start_ns) to the switch that put it back (end_ns).
 * runnable_ns is when it became runnable again: its wake-up, or start_ns
 * when it was preempted (it never stopped being runnable), or end_ns when
 * no wake-up was seen.  end_ns - runnable_ns is its run-queue delay.
 * syscall: for a thread that blocked (not preempted), the system call it
 * blocked in (x86_64 numbers: 202 futex, 230 clock_nanosleep, ...), -1 when
 * it blocked outside one (a page fault); OFF_NO_SYSCALL when preempted.
 *
 * cpu_busy_event: busy (non-idle) time of one CPU in buckets
 * [first_bucket, last_bucket] (bucket start times, ns), busy_ns in each;
 * a long uninterrupted run is sent as one range of full buckets.
 *
 * holder_pid: of the stints of tasks on the CPU the thread came back on
 * while it waited for it (runnable_ns to end_ns; the CPU's last
 * CPU_STINTS), the longest one's task, and holder_ns its time in the wait:
 * whom a thread woken and left waiting waited behind — where "waiting for
 * a CPU" mostly is, and which next_pid (who took the CPU as it left) does
 * not say.  The rest of the wait is other tasks'.  holder_tid: that task's
 * thread id — which thread of a process (the waiter's own autograd or
 * pin-memory thread, the tracer's sender) it was.
 */
#ifndef INGERO_BPF_SCHED_H
#define INGERO_BPF_SCHED_H

#include "traced.h"

struct off_cpu_event {
	__u32 kind;          /* EV_OFF_CPU */
	__u32 pid;           /* tgid */
	__u32 tid;
	__u32 next_pid;      /* tgid of the task that took the CPU; 0 = idle */
	__u64 start_ns;
	__u64 runnable_ns;
	__u64 end_ns;
	__u32 cpu;           /* the CPU it left */
	__u32 preempted;     /* how it left the CPU: enum off_cpu_how */
	__s32 syscall;
	__u32 waker_tid;
	__u32 waker_pid;     /* its tgid */
	__u32 holder_pid;    /* tgid of the task that held its CPU longest while it waited; 0 = idle */
	__u64 holder_ns;     /* that time (of end_ns - runnable_ns) */
	__u32 holder_tid;    /* that task's thread id; 0 = idle */
	__u32 pad;
};

#define OFF_NO_SYSCALL (-2)

/* How a thread left the CPU (off_cpu.preempted, docs/schema.md). */
enum off_cpu_how {
	OFF_SLEPT = 0,           /* blocked, interruptible: a lock, a queue, a socket, sleep */
	OFF_PREEMPTED = 1,       /* still runnable: it lost the CPU */
	OFF_UNINTERRUPTIBLE = 2, /* blocked in D state: disk or page-fault I/O, some kernel locks */
};

struct cpu_busy_event {
	__u32 kind;          /* EV_CPU_BUSY */
	__u32 cpu;
	__u64 first_bucket;
	__u64 last_bucket;
	__u64 busy_ns;       /* in each bucket of the range */
};

/* Competitor aggregation (map `competitors`, drained by the collector):
 * untraced tasks that took a CPU from a preempted traced thread, or that a
 * woken traced thread waited behind (named here: only traced processes are
 * in the processes table). */
struct comp_key {
	__u32 pid;           /* tgid of the competitor */
	__u32 pad;
	__u64 bucket;
};

struct comp_val {
	__u64 cpu_ns;        /* time it ran in those stints */
	__u64 preemptions;   /* stints that began by preempting a traced thread */
	__u64 held_ns;       /* traced threads' waits for a CPU, after a wake-up, that
				ended as it left the CPU (off_cpu_event.holder_pid) */
	char comm[INGERO_TASK_COMM];
};

#define CPU_STINTS 4   /* a power of two */

/* Per-CPU state the collector reads at the end to flush the open bucket,
 * and the CPU's last stints (who ran, from when to when) for holder_pid. */
struct cpu_acct {
	__u64 last_ts;       /* last switch on this CPU */
	__u64 bucket;        /* open bucket */
	__u64 busy;          /* busy ns accumulated in it */
	__u32 running;       /* a non-idle task is on the CPU */
	__u32 pad;
	/* the competitor on this CPU, if any */
	__u32 comp_tid;
	__u32 comp_tgid;
	__u64 comp_since;
	__u64 stint_from[CPU_STINTS], stint_to[CPU_STINTS];
	__u32 stint_pid[CPU_STINTS];   /* tgid; 0 = idle */
	__u32 stint_tid[CPU_STINTS];   /* its thread id */
	__u32 stint_next;              /* where the next one goes (mod CPU_STINTS) */
};

#endif
