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
#include "block.bpf.h"
#include "samples.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);                  /* tgid */
	__type(value, struct py_proc);
} py_procs SEC(".maps");

static __always_inline u64 rd_u64(u64 addr, bool *ok)
{
	u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		*ok = false;
	return v;
}

struct thread_scan {
	const struct py_proc *p;
	u64 self, ts, mine;
	u32 found, n;
	bool ok;
};

/* one thread state of the list (bpf_loop callback: the verifier checks the
 * body once, not once per iteration) */
static long scan_one(u64 i, void *arg)
{
	struct thread_scan *s = arg;

	if (!s->ts || !s->ok)
		return 1;
	if (rd_u64(s->ts + s->p->ts_thread_id, &s->ok) == s->self) {
		s->mine = s->ts;
		s->found++;
	}
	s->ts = rd_u64(s->ts + s->p->ts_next, &s->ok);
	s->n++;
	return 0;
}

struct frame_walk {
	const struct py_proc *p;
	struct sample_event *e;
	u8 *buf;   /* a frame's first fr_span bytes (py_frame_buf), or NULL */
	u64 fr;
	bool ok;
};

/* Room for one frame's fields, copied in one read: each read of the
 * process's memory costs about as much whatever its length, and a frame's
 * four fields were four (a sample's walk of a 40-deep stack, ~160).  Per
 * CPU: the sampler's hrtimer does not fire inside the switch hook's
 * on_block (interrupts off there), so the two never share it at once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u8[INGERO_PY_FRAME_SPAN + 8]);
} py_frame_buf SEC(".maps");

/* the field at off of the copied frame (off < INGERO_PY_FRAME_SPAN: the
 * collector checked it against fr_span; the mask is the verifier's bound) */
static __always_inline u64 buf_u64(const u8 *buf, u32 off)
{
	return *(const u64 *)(buf + (off & (INGERO_PY_FRAME_SPAN - 1)));
}

/* one frame of the chain (bpf_loop callback, like scan_one) */
static long walk_one(u64 i, void *arg)
{
	struct frame_walk *w = arg;
	const struct py_proc *p = w->p;
	struct sample_event *e = w->e;
	u64 fr = w->fr, code, instr = 0;
	u8 owner = 0, *buf = w->buf;
	u32 n, span = p->fr_span;

	if (!fr || !w->ok || e->n_py >= INGERO_PY_DEPTH)
		return 1;
	if (buf && span && span <= INGERO_PY_FRAME_SPAN) {
		if (bpf_probe_read_user(buf, span, (void *)fr)) {
			w->ok = false;
			return 1;
		}
		code = buf_u64(buf, p->fr_code);
		instr = p->instr_is_int ? (u64)(s64)(s32)buf_u64(buf, p->fr_instr) : buf_u64(buf, p->fr_instr);
		if (p->fr_owner >= 0)
			owner = (u8)buf_u64(buf, (u32)p->fr_owner);
		n = e->n_py;
		if (code && owner != p->skip_owner && n < INGERO_PY_DEPTH) {
			e->py[n].code = code;
			e->py[n].instr = instr;
			e->n_py = n + 1;
		}
		w->fr = buf_u64(buf, p->fr_prev);
		return 0;
	}
	code = rd_u64(fr + p->fr_code, &w->ok);
	if (p->instr_is_int) {
		s32 lasti = 0;

		if (bpf_probe_read_user(&lasti, sizeof(lasti), (void *)(fr + p->fr_instr)))
			w->ok = false;
		instr = (u64)(s64)lasti;
	} else {
		instr = rd_u64(fr + p->fr_instr, &w->ok);
	}
	if (p->fr_owner >= 0 && bpf_probe_read_user(&owner, sizeof(owner), (void *)(fr + (u32)p->fr_owner)))
		w->ok = false;
	n = e->n_py;
	if (w->ok && code && owner != p->skip_owner && n < INGERO_PY_DEPTH) {
		e->py[n].code = code;
		e->py[n].instr = instr;
		e->n_py = n + 1;
	}
	w->fr = rd_u64(fr + p->fr_prev, &w->ok);
	return 0;
}

/* Whether thread state ts runs the cyclic garbage collector: its
 * interpreter is collecting (gc.collecting, set by the thread that holds
 * the GIL) and the GIL's last holder is ts.  Python code the collection
 * runs (gc.callbacks, __del__ finalizers, weakref callbacks) can let the
 * GIL go at the switch interval while the flag is still set: another
 * thread that takes it then reads as collecting until it gives it back (a
 * thread spinning beside a loop with a gc.callbacks hook got 3-5 % of its
 * samples so).  A failed read says no. */
static __always_inline u32 in_gc(const struct py_proc *p, u64 interp, u64 ts)
{
	bool ok = true;
	s32 collecting = 0;
	u64 holder;

	if (p->gc_collecting < 0 || !interp ||
	    bpf_probe_read_user(&collecting, sizeof(collecting), (void *)(interp + (u32)p->gc_collecting)) ||
	    !collecting)
		return 0;
	if (p->gil_holder_rt >= 0)
		holder = rd_u64(p->runtime + (u32)p->gil_holder_rt, &ok);
	else if (p->gil_holder_interp >= 0)
		holder = rd_u64(interp + (u32)p->gil_holder_interp, &ok);
	else
		return 0;
	return ok && holder == ts;
}

/* The sampled thread's Python frames: find its thread state by
 * pthread_self() (the thread pointer, fsbase on x86-64) in the main
 * interpreter's list, then follow the frame chain.  A state made by one
 * thread for another carries its maker's id until the other binds it; two
 * states with this thread's id are ambiguous: no frames rather than
 * another thread's. */
static __always_inline void python_frames(struct sample_event *e, const struct py_proc *p,
					  struct task_struct *task)
{
	u64 self = BPF_CORE_READ(task, thread.fsbase);
	bool ok = true;
	u64 interp = rd_u64(p->runtime + p->rt_interp_main, &ok);
	struct thread_scan s = { .p = p, .self = self, .ok = ok };
	u64 ts, fr;

	s.ts = interp ? rd_u64(interp + p->interp_threads_head, &s.ok) : 0;
	e->py_status = PY_NO_THREAD;
	bpf_loop(INGERO_PY_THREADS, scan_one, &s, 0);
	ok = s.ok;
	if (!ok || s.ts) {
		e->py_status = PY_READ_FAILED;   /* a list longer than we search counts as unread */
		return;
	}
	if (s.found > 1)
		e->py_status = PY_AMBIGUOUS;
	if (s.found != 1)
		return;
	ts = s.mine;
	e->py_gc = in_gc(p, interp, ts);
	fr = rd_u64(ts + p->ts_frame, &ok);
	if (p->cf_current >= 0 && fr)
		fr = rd_u64(fr + (u32)p->cf_current, &ok);
	/* shim frames are skipped, so up to twice as many frames are looked at */
	u32 zero = 0;
	struct frame_walk w = { .p = p, .e = e, .buf = bpf_map_lookup_elem(&py_frame_buf, &zero), .fr = fr, .ok = ok };
	bpf_loop(INGERO_PY_DEPTH * 2, walk_one, &w, 0);
	e->py_status = w.ok || e->n_py ? PY_OK : PY_READ_FAILED;
}

/* The user half of a record, the thread being current: its user stack, the
 * word at its stack pointer, and its Python frames where python and the
 * process runs CPython. */
static __always_inline void user_side(void *ctx, struct sample_event *e, struct task_struct *task, u32 tgid,
				      bool python)
{
	struct pt_regs *regs;
	struct py_proc *py;
	long n;

	n = bpf_get_stack(ctx, e->user, sizeof(e->user), BPF_F_USER_STACK);
	e->n_user = n > 0 ? n / sizeof(u64) : 0;
	/* A leaf function without a frame of its own (memcpy and friends) hides
	 * its caller from frame-pointer unwinding; its return address is still
	 * at the top of the user stack.  User registers even when the sample
	 * hit the kernel. */
	e->user_sp_word = 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (regs)
		bpf_probe_read_user(&e->user_sp_word, sizeof(e->user_sp_word), (void *)BPF_CORE_READ(regs, sp));
	e->n_py = 0;
	e->py_status = PY_NONE;
	e->py_gc = 0;
	py = python ? bpf_map_lookup_elem(&py_procs, &tgid) : NULL;
	if (py)
		python_frames(e, py, task);
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, bool python)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;
	struct sample_event *e;
	long n;

	if (!is_recorded(tgid, INGERO_TRACED_NO_SAMPLES) || is_tracer_thread(bpf_get_current_task_btf()))
		return 0;
	e = reserve(sizeof(*e), EV_SAMPLE, DROP_SAMPLE);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = (u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = bpf_ktime_get_ns();
	n = bpf_get_stack(ctx, e->kernel, sizeof(e->kernel), 0);
	e->n_kernel = n > 0 ? n / sizeof(u64) : 0;
	user_side(ctx, e, bpf_get_current_task_btf(), tgid, python);
	e->chance = 0;
	submit(e);
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, true);
}

/* Without Python frames, for a kernel that refuses the walk (no bpf_loop
 * before 5.17): native stacks must not depend on it. */
SEC("perf_event")
int on_sample_native(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, false);
}

/* Where a traced thread was as it blocked: tail-called by sched.bpf.c's
 * switch hook for the blocks it picks (block.bpf.h), while the thread is
 * still current, so its user stack and Python frames read as a sample's.
 * ts_ns is the switch's time, the start_ns of the block's off_cpu row.
 * No kernel stack: the system call it blocked in is in that row. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_block, bool preempt, struct task_struct *prev)
{
	u32 tgid = prev->tgid, zero = 0;
	struct block_pick *at = bpf_map_lookup_elem(&block_at, &zero);
	struct sample_event *e;

	if (!at)
		return 0;
	e = reserve(sizeof(*e), EV_BLOCK, DROP_BLOCK);
	if (!e)
		return 0;
	e->pid = tgid;
	e->tid = prev->pid;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_ns = at->at;
	e->chance = at->chance;
	e->n_kernel = 0;
	user_side(ctx, e, prev, tgid, true);
	submit(e);
	return 0;
}
