// SPDX-License-Identifier: GPL-2.0
/*
 * sched.bpf.c — scheduler evidence for traced threads.
 *
 * sched_switch keeps, per traced thread, when it left the CPU and why
 * (task storage `start`); sched_wakeup marks when it became runnable; the switch that
 * brings it back closes the interval, and the thread's next switch away
 * emits it (sched.h): a woken thread waits for its switch-in to finish,
 * while no one waits for a thread to leave, so the ring's reservation is
 * kept off the path between a wake-up and the work it releases (a step's
 * hand-over between PyTorch's main and autograd threads).  Intervals still
 * closed but unsent at the collector's stop are sent by the task iterator
 * flush_closed.  The same
 * switch hook accounts every CPU's busy time in buckets and the untraced
 * tasks that took a CPU from a preempted traced thread (competitors), and
 * adds each traced thread's page faults since its last switch away to the
 * memory aggregate (mem_map.bpf.h): the kernel counts them per task
 * already (min_flt, maj_flt), so the fault path runs no program of ours.
 * Raw BTF tracepoints only: they need neither tracefs nor kprobes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "traced.bpf.h"
#include "mem_map.bpf.h"
#include "block.bpf.h"
#include "sched.h"

#define TASK_RUNNING 0
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD    0x80
#define TASK_NOLOAD  0x400   /* with UNINTERRUPTIBLE: TASK_IDLE, a kernel thread's idle wait */

char LICENSE[] SEC("license") = "GPL";

struct start {
	u64 start_ns;    /* an interval is open or closed: when it began; 0: none */
	u64 runnable_ns;
	u64 end_ns;      /* closed (switched back in), not sent yet: when */
	u32 next_pid;
	u32 cpu;
	u32 preempted;
	s32 syscall;     /* the system call it blocked in (off_cpu_event) */
	u32 waker_tid;   /* who woke it (off_cpu_event); 0: not yet */
	u32 waker_pid;
	u32 holder_pid;  /* who held its CPU longest while it waited (off_cpu_event) */
	u32 holder_tid;
	u64 holder_ns;
	u32 flags;       /* traced_flags(tgid) as of generation gen */
	u32 gen;
	u32 flt_known;   /* flt holds the task's faults as last seen */
	u64 flt;         /* min_flt + maj_flt at the last switch away (or birth) */
	/* which of its blocks get a stack (block.bpf.h) */
	u32 blk_x_us;    /* a stack per this much blocked time, in expectation */
	u32 blk_pad;
	u64 blk_last;    /* when the last stack was taken */
	u64 blk_adj;     /* ... or x last halved */
	u32 blk_mean_us[BLOCK_CLASSES];   /* mean block length by system call class */
};

/* Bumped by the collector after each enrolment, pause or resume from user
 * space (tracer.c):
 * a task's cached traced flag from an older generation is looked up again.
 * Enrolments made here (a traced parent's fork) concern new tasks, which
 * have no cached flag yet. */
__u32 traced_gen;

/* When sched_switch was detached at the collector's stop, set before the
 * task iterator flush_closed runs: the end of the scheduler evidence. */
__u64 stop_ns;

/* Per-task storage rather than a hash by tid: a pointer away from the task,
 * no hashing on the hot path, freed with the task.  It also caches whether
 * the task's process is traced, so a switch costs no `traced` hash lookup
 * (two per switch, for every task on the machine, before). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_acct);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct comp_key);
	__type(value, struct comp_val);
} competitors SEC(".maps");

static __always_inline void emit_busy(u32 cpu, u64 first, u64 last, u64 busy)
{
	struct cpu_busy_event *e;

	if (!busy)
		return;
	e = reserve(sizeof(*e), EV_CPU_BUSY, DROP_CPU_BUSY);
	if (!e)
		return;
	e->cpu = cpu;
	e->first_bucket = first;
	e->last_bucket = last;
	e->busy_ns = busy;
	submit(e);
}

/* Close the CPU's time since its last switch: busy if a task ran. */
static __always_inline void account_cpu(struct cpu_acct *st, u32 cpu, u64 now)
{
	u64 b = bucket_of(now);

	if (st->last_ts == 0) {
		st->bucket = b;
		return;
	}
	if (b == st->bucket) {
		if (st->running)
			st->busy += now - st->last_ts;
		return;
	}
	/* the open bucket ends before now */
	if (st->running) {
		u64 end = st->bucket + bucket_ns;

		emit_busy(cpu, st->bucket, st->bucket, st->busy + end - st->last_ts);
		if (b > end)
			emit_busy(cpu, end, b - bucket_ns, bucket_ns);
		st->busy = now - b;
	} else {
		emit_busy(cpu, st->bucket, st->bucket, st->busy);
		st->busy = 0;
	}
	st->bucket = b;
}

static __always_inline void comp_add(u32 tgid, u64 now, u64 cpu_ns, u64 preemptions, u64 held_ns,
				     struct task_struct *t)
{
	struct comp_key k = { .pid = tgid, .bucket = bucket_of(now) };
	struct comp_val *v = bpf_map_lookup_elem(&competitors, &k);

	if (!v) {
		struct comp_val zero = {};

		if (t)
			BPF_CORE_READ_STR_INTO(&zero.comm, t, comm);
		/* EEXIST when another CPU inserted it first: fine */
		bpf_map_update_elem(&competitors, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&competitors, &k);
		if (!v) {
			count_drop(DROP_COMP_MAP);
			return;
		}
	}
	if (cpu_ns)
		__sync_fetch_and_add(&v->cpu_ns, cpu_ns);
	if (preemptions)
		__sync_fetch_and_add(&v->preemptions, preemptions);
	if (held_ns)
		__sync_fetch_and_add(&v->held_ns, held_ns);
}

/* Who held this CPU longest while s's thread waited for it (runnable_ns
 * to now): the longest of the CPU's last CPU_STINTS stints within the wait,
 * prev's the last (a task there twice counts its longer stint: one pass,
 * the verifier's budget). */
static __always_inline void holder_of(struct start *s, struct cpu_acct *st, u64 now)
{
	u64 from = s->runnable_ns ? s->runnable_ns : now, best = 0;
	u32 who = 0, whot = 0;

	s->holder_pid = 0;
	s->holder_tid = 0;
	s->holder_ns = 0;
	if (!st || from >= now)
		return;
	for (u32 i = 0; i < CPU_STINTS; i++) {
		u64 a = st->stint_from[i] > from ? st->stint_from[i] : from;
		u64 b = st->stint_to[i] < now ? st->stint_to[i] : now;

		if (b > a && b - a > best) {
			best = b - a;
			who = st->stint_pid[i];
			whot = st->stint_tid[i];
		}
	}
	s->holder_pid = who;
	s->holder_tid = whot;
	s->holder_ns = best;
}

/* The task's storage (created where `create` asks), with its traced flags
 * fresh; NULL for the idle task or when there is none (then, when it was
 * to be created, *flags from the hash; else 0). */
static __always_inline struct start *task_state(struct task_struct *t, u32 tgid, u32 *flags, u64 create)
{
	struct start *s;
	u32 gen = traced_gen + 1;   /* storage starts zeroed: 0 = never looked up */

	*flags = 0;
	if (!tgid)
		return NULL;
	s = bpf_task_storage_get(&start, t, 0, create);
	if (!s) {
		if (create)   /* (no room: the caller counts what is lost) */
			*flags = traced_flags(tgid);
		return NULL;
	}
	if (s->gen != gen) {
		s->flags = traced_flags(tgid);
		s->gen = gen;
	}
	*flags = s->flags;
	return s;
}

/* The kernel's own count of t's page faults, minor and major. */
static __always_inline u64 task_faults(struct task_struct *t)
{
	return t->min_flt + t->maj_flt;
}

/* The faults t made since s last saw its count go to its process's bucket
 * of now, where its memory evidence is recorded; the first sight of a task
 * older than the trace only takes its count. */
static __always_inline void add_faults(struct start *s, struct task_struct *t, u32 tgid, u32 flags, u64 now)
{
	u64 flt = task_faults(t);
	struct mem_val *v;

	if (s->flt_known && flt > s->flt && flags_record(flags, INGERO_TRACED_NO_MEM) &&
	    (v = mem_slot(tgid, now)))
		__sync_fetch_and_add(&v->faults, flt - s->flt);
	s->flt = flt;
	s->flt_known = 1;
}

/* Send the task's closed interval.  (Never twice: a task switches on one
 * CPU at a time, and flush_closed runs once sched_switch is detached.) */
static __always_inline void send_closed(struct start *s, u32 tgid, u32 tid)
{
	u64 end = s->end_ns;
	struct off_cpu_event *e;

	e = reserve(sizeof(*e), EV_OFF_CPU, DROP_SCHED_SWITCH);
	if (e) {
		e->pid = tgid;
		e->tid = tid;
		e->next_pid = s->next_pid;
		e->start_ns = s->start_ns;
		/* (a wake-up after the stop, of one cut there, is not its) */
		e->runnable_ns = s->runnable_ns && s->runnable_ns <= end ? s->runnable_ns : end;
		e->end_ns = end;
		e->cpu = s->cpu;
		e->preempted = s->preempted;
		e->syscall = s->syscall;
		e->waker_tid = s->waker_tid;
		e->waker_pid = s->waker_pid;
		e->holder_pid = s->holder_pid;
		e->holder_ns = s->holder_ns;
		e->holder_tid = s->holder_tid;
		e->pad = 0;
		submit(e);
	}
	s->end_ns = 0;
}

/* The system call a thread that blocks is in: the number its entry saved
 * (x86_64: orig_ax; the exception entries set it to -1, so a page fault
 * reads -1).  Read only as a traced thread blocks, not at every switch. */
static __always_inline s32 blocked_in(struct task_struct *t)
{
#ifdef __TARGET_ARCH_x86
	/* a BTF pointer: read directly (a checked load, no helper call) */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	return regs ? (s32)regs->orig_ax : OFF_NO_SYSCALL;
#else
	return OFF_NO_SYSCALL;
#endif
}

/* The chance this block gets a stack (block.bpf.h), in 2^-32 units, if it
 * was drawn; 0 if not. */
static __always_inline u32 block_drawn(struct start *s, u64 now, s32 syscall, bool first_thread)
{
	u64 near = BLOCK_NEAR_NS, far = BLOCK_FAR_NS;
	u32 x = s->blk_x_us ? s->blk_x_us : 1000, mean = s->blk_mean_us[block_class(syscall)];
	u32 chance;

	if (!first_thread) {
		near *= BLOCK_OTHER_THREADS;
		far *= BLOCK_OTHER_THREADS;
	}
	if (now - s->blk_adj > far) {   /* none for a while: more */
		if (x > BLOCK_X_MIN_US)
			x /= 2;
		s->blk_adj = now;
	}
	s->blk_x_us = x;
	chance = mean >= x ? 0xffffffffu : (u32)(((u64)mean << 32) / x);
	if (!chance || (chance != 0xffffffffu && bpf_get_prandom_u32() >= chance))
		return 0;
	if (s->blk_last && now - s->blk_last < near && x < BLOCK_X_MAX_US)
		s->blk_x_us = x * 2;   /* too close: fewer */
	s->blk_last = now;
	s->blk_adj = now;
	return chance;
}

/* A block just ended (the thread is back on a CPU): its length, up to its
 * wake-up, into the moving average of its system call's class. */
static __always_inline void block_learn(struct start *s, u64 now)
{
	u64 end = s->runnable_ns ? s->runnable_ns : now;
	u64 us = end > s->start_ns ? (end - s->start_ns) / 1000 : 0;
	u32 d = us < 0x7fffffffu ? (u32)us : 0x7fffffffu;   /* (a block of hours: no wrap) */
	u32 c = block_class(s->syscall);
	u32 m = s->blk_mean_us[c];

	s->blk_mean_us[c] = !m ? d : d >= m ? m + (d - m) / 8 : m - (m - d) / 8;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	u64 now = bpf_ktime_get_ns();
	u32 cpu = bpf_get_smp_processor_id();
	u32 zero = 0;
	u32 prev_tid = prev->pid, prev_tgid = prev->tgid;
	u32 next_tid = next->pid, next_tgid = next->tgid;
	u32 prev_flags, next_flags;
	struct start *ps = task_state(prev, prev_tgid, &prev_flags, BPF_LOCAL_STORAGE_GET_F_CREATE);
	struct start *ns = task_state(next, next_tgid, &next_flags, BPF_LOCAL_STORAGE_GET_F_CREATE);
	bool prev_traced = flags_record(prev_flags, INGERO_TRACED_NO_SCHED);
	bool next_traced = flags_record(next_flags, INGERO_TRACED_NO_SCHED);
	/* a traced process's own threads are recorded, not the tracer's in
	 * it (which, taking a CPU from the program, are no competitor) */
	bool prev_rec = prev_traced && !is_tracer_thread(prev);
	bool next_rec = next_traced && !is_tracer_thread(next);
	struct cpu_acct *st = bpf_map_lookup_elem(&cpu_state, &zero);
	u32 block = 0;   /* its chance, when this block gets a stack */

	if (st) {
		/* prev's stint on this CPU, for the holder of a wait (sched.h) */
		if (st->last_ts) {
			u32 i = st->stint_next++ & (CPU_STINTS - 1);

			st->stint_pid[i] = prev_tid ? prev_tgid : 0;
			st->stint_tid[i] = prev_tid;
			st->stint_from[i] = st->last_ts;
			st->stint_to[i] = now;
		}
		account_cpu(st, cpu, now);
		st->last_ts = now;
		st->running = next_tid != 0;
		/* a competitor's stint ends when it leaves the CPU */
		if (st->comp_tid && st->comp_tid == prev_tid) {
			/* (prev: a bucket's first entry named, whichever adds it) */
			comp_add(st->comp_tgid, now, now - st->comp_since, 0, 0, prev);
			st->comp_tid = 0;
		}
	}

	if (ps && prev_flags)
		add_faults(ps, prev, prev_tgid, prev_flags, now);
	else if (!ps && !prev_rec && flags_record(prev_flags, INGERO_TRACED_NO_MEM))
		count_drop(DROP_START_MAP);   /* its faults since it came on: lost */
	/* a thread seen first as it comes on a CPU (asleep when its process
	 * was enrolled) counts its faults from here, not from its next switch */
	if (ns && next_flags && !ns->flt_known) {
		ns->flt = task_faults(next);
		ns->flt_known = 1;
	}

	/* its last interval, closed when it came on this CPU (recording then,
	 * whatever now); one still open here ran without a switch-in that
	 * closed it: its row is lost, and counted */
	if (ps && ps->start_ns) {
		if (ps->end_ns)
			send_closed(ps, prev_tgid, prev_tid);
		else   /* it ran (it is leaving a CPU) but no switch-in closed it */
			count_drop(DROP_UNCLOSED);
		ps->start_ns = 0;
	}
	if (prev_rec && !(prev_state & TASK_DEAD)) {
		bool preempted = preempt || prev_state == TASK_RUNNING;
		struct start *s = ps;

		if (s) {
			s->start_ns = now;
			s->runnable_ns = preempted ? now : 0;
			s->next_pid = next_tgid;
			s->cpu = cpu;
			s->preempted = preempted ? OFF_PREEMPTED
				: (prev_state & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) == TASK_UNINTERRUPTIBLE
				? OFF_UNINTERRUPTIBLE : OFF_SLEPT;
			s->syscall = preempted ? OFF_NO_SYSCALL : blocked_in(prev);
			s->waker_tid = 0;
			s->waker_pid = 0;
			if (!preempted && flags_record(prev_flags, INGERO_TRACED_NO_SAMPLES))
				block = block_drawn(s, now, s->syscall, prev_tid == prev_tgid);
		} else {
			count_drop(DROP_START_MAP);
		}
		if (preempted && next_tid && st && !next_traced) {
			st->comp_tid = next_tid;
			st->comp_tgid = next_tgid;
			st->comp_since = now;
			comp_add(next_tgid, now, 0, 1, 0, next);
		}
	}

	/* closed here, sent when it leaves (or by flush_closed); one whose
	 * thread comes back paused is dropped on purpose, not lost */
	if (ns && ns->start_ns && !ns->end_ns && !next_rec) {
		ns->start_ns = 0;
	} else if (ns && ns->start_ns && !ns->end_ns) {
		ns->end_ns = now;
		holder_of(ns, st, now);
		if (ns->syscall != OFF_NO_SYSCALL)
			block_learn(ns, now);
		/* woken and left waiting behind an untraced task, prev: its
		 * name and that time, for "waiting for a CPU" (a traced one is
		 * named by the processes table; another holder is not looked up
		 * here, its name comes from its own preemptions or waits) */
		if (prev_tid && !prev_traced && ns->preempted != OFF_PREEMPTED && ns->holder_ns &&
		    ns->holder_pid == prev_tgid)
			comp_add(prev_tgid, now, 0, 0, ns->holder_ns, prev);
	}
	/* last: a tail call does not come back */
	if (block) {
		struct block_pick *pick = bpf_map_lookup_elem(&block_at, &zero);

		if (pick) {
			pick->at = now;
			pick->chance = block;
			bpf_tail_call(ctx, &block_tail, 0);
		}
	}
	return 0;
}

/* An interval still open once sched_switch is detached (stop_ns set) ends
 * at the stop, as far as it is known: no holder. */
static __always_inline void cut_at_stop(struct start *s)
{
	if (!s->start_ns || s->end_ns || !stop_ns)
		return;
	s->end_ns = stop_ns > s->start_ns ? stop_ns : s->start_ns;
	s->holder_pid = 0;
	s->holder_tid = 0;
	s->holder_ns = 0;
}

/* A thread's faults since its last switch away, as it exits: the program's
 * exit can be seen, and the collector stop, before the thread's final
 * switch, and the stop's task iterator no longer finds a task that has
 * exited — its last stint's faults were lost (hundreds to thousands of a
 * program that faulted to its end, now and then).  A thread exits on its
 * own CPU: no switch of it runs meanwhile.  One never seen on a CPU has no
 * count to add to: no storage made for it here (every exit on the machine
 * comes here).  Likewise its last interval, closed as it came on the CPU
 * to exit: the switch that would send it is its last, after its parent
 * can reap it — a command the collector ends at its stop is reaped, and
 * sched_switch detached, before it (its last sleep was lost, now and
 * then); one still open once sched_switch is detached (stop_ns set) is
 * cut at the stop. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	u32 tgid = p->tgid, flags;
	struct start *s = task_state(p, tgid, &flags, 0);

	if (!s)
		return 0;
	if (flags)
		add_faults(s, p, tgid, flags, bpf_ktime_get_ns());
	cut_at_stop(s);
	if (s->start_ns && s->end_ns) {
		send_closed(s, tgid, p->pid);
		s->start_ns = 0;
	}
	return 0;
}

/* At the collector's stop, after sched_switch is detached: the intervals
 * closed since their thread's last switch away (a thread still on a CPU,
 * in a program that goes on), those still open cut at stop_ns, and the
 * faults made since. */
SEC("iter/task")
int flush_closed(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct start *s;
	u32 flags;

	if (!t)
		return 0;
	s = bpf_task_storage_get(&start, t, 0, 0);
	if (!s)
		return 0;
	/* one still open is a thread off a CPU at the stop (or back on one
	 * since, unseen): its interval up to the stop, as far as it is known —
	 * a main thread asleep in a long wait as the trace ends is evidence */
	cut_at_stop(s);
	if (s->end_ns) {
		send_closed(s, t->tgid, t->pid);
		s->start_ns = 0;
	}
	if ((flags = traced_flags(t->tgid)))
		add_faults(s, t, t->tgid, flags, bpf_ktime_get_ns());
	return 0;
}

/* A task with no storage never left a CPU while we watched: nothing to
 * mark, and no hash lookup for it. */
static __always_inline void mark_runnable(struct task_struct *p)
{
	struct start *s = bpf_task_storage_get(&start, p, 0, 0);
	u32 gen = traced_gen + 1;

	if (!s || !s->start_ns || s->end_ns || s->runnable_ns)
		return;
	if (s->gen != gen) {
		s->flags = traced_flags(p->tgid);
		s->gen = gen;
	}
	if (flags_record(s->flags, INGERO_TRACED_NO_SCHED) && !is_tracer_thread(p))
		s->runnable_ns = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	mark_runnable(p);
	return 0;
}

/* Who ended a traced thread's sleep: sched_waking runs in the waker's own
 * context (sched_wakeup may run later on the sleeper's CPU, from an IPI,
 * where the current task is whoever was there), so the current task is the
 * thread that released the lock, filled the queue or wrote to the pipe.
 * The first waking of a blocked interval counts; a wake-up from an
 * interrupt names the task it interrupted (0 on an idle CPU), which the
 * analyzer weighs as such.  Most tasks have no storage: one lookup, no
 * hashing. */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	struct start *s = bpf_task_storage_get(&start, p, 0, 0);
	u64 id;

	/* an open interval is a recorded thread's (on_switch opens no other) */
	if (!s || !s->start_ns || s->end_ns || s->waker_tid || s->preempted == OFF_PREEMPTED)
		return 0;
	id = bpf_get_current_pid_tgid();
	s->waker_tid = (u32)id;
	s->waker_pid = id >> 32;
	return 0;
}

/* A new thread or process is runnable from birth: its wait for a first
 * CPU is an off-CPU interval with no voluntary part; its faults count from
 * its first (a new task's counts start at zero). */
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	u64 now = bpf_ktime_get_ns();
	u32 gen = traced_gen + 1;   /* before the flags: a change between them bumps it again */
	u32 flags = traced_flags(p->tgid);
	struct start *s;

	if (!flags)
		return 0;
	s = bpf_task_storage_get(&start, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s) {
		count_drop(DROP_START_MAP);
		return 0;
	}
	s->flags = flags;
	s->gen = gen;
	s->flt = 0;
	s->flt_known = 1;
	if (!flags_record(flags, INGERO_TRACED_NO_SCHED))
		return 0;
	s->start_ns = now;
	s->runnable_ns = now;
	s->next_pid = 0;
	s->cpu = bpf_get_smp_processor_id();
	s->preempted = 0;
	s->syscall = OFF_NO_SYSCALL;   /* it never blocked */
	return 0;
}
