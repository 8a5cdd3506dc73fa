/*
 * record.c — the hot path after a wrapper has timed its call: identify the
 * thread, take a stack when configured, name the kernel once, and put one
 * CALL record into the shared ring.  Nothing here locks, allocates or
 * blocks; a full ring is a counted drop.
 */
#include "record.h"

#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fork.h"
#include "gpu_marks.h"
#include "kernel.h"
#include "stack.h"

__thread struct ingero_tls ingero_tls __attribute__((tls_model("initial-exec")));
_Atomic uint64_t ingero_self_ticks, ingero_self_calls;
_Atomic uint64_t ingero_mode_real[2], ingero_mode_gap[2], ingero_mode_calls[2], ingero_mode_gaps[2],
	ingero_mode_short[2], ingero_mode_shorts[2];
#ifdef INGERO_SELF_SEGMENTS
_Atomic uint64_t ingero_self_seg[INGERO_SELF_SEGMENTS];
#endif

__attribute__((noinline)) void ingero_mode_time_add(int mode, uint64_t real, uint64_t in, uint64_t out)
{
	struct ingero_tls *t = &ingero_tls;
	struct ingero_mode_time *m = &t->mode_time[mode];
	if (!t->gap_max) {   /* 0 again while the TSC's rate is not known yet */
		uint64_t tpu = ingero_clock_ticks_per_us();
		t->gap_max = INGERO_GAP_MAX_NS / 1000 * tpu;
		t->gap_short = INGERO_GAP_SHORT_NS / 1000 * tpu;
	}
	uint64_t gap = in - t->last_exit;
	t->last_exit = out;
	m->real_ticks += real;
	if (gap < t->gap_max) {
		m->gap_ticks += gap;
		m->gaps++;
		if (gap < t->gap_short) {
			m->short_ticks += gap;
			m->shorts++;
		}
	}
	if (++m->calls == 256) {
		atomic_fetch_add_explicit(&ingero_mode_real[mode], m->real_ticks, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_mode_gap[mode], m->gap_ticks, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_mode_calls[mode], m->calls, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_mode_gaps[mode], m->gaps, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_mode_short[mode], m->short_ticks, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_mode_shorts[mode], m->shorts, memory_order_relaxed);
		*m = (struct ingero_mode_time){ 0 };
	}
}

static inline uint32_t my_tid(void)
{
	struct ingero_tls *t = &ingero_tls;
	unsigned g = atomic_load_explicit(&ingero_hot.gen, memory_order_relaxed);
	if (__builtin_expect(t->gen != g || !t->tid, 0)) {
		t->tid = (uint32_t)gettid();
		t->gen = g;
		/* a fork child's thread: the lane is its parent thread's */
		t->lane.lane = NULL;
		t->lane_retry = 0;
	}
	return t->tid;
}

uint32_t ingero_tid(void)
{
	return my_tid();
}

/* A record that did not go in (rc: the ring's why): a call is a counted
 * drop; the sender is woken to make room. */
static __attribute__((noinline, cold)) bool put_failed(struct ingero_shm *shm, int rc, bool is_call)
{
	if (rc == INGERO_RING_LOST)
		atomic_fetch_add_explicit(&shm->lost_late, 1, memory_order_relaxed);
	if (is_call)
		ingero_shm_count_drop(shm, ingero_self.procslot);
	ingero_shm_nudge(shm);
	return false;
}

/* A fork child's call once its ring's sender has stopped: the ring may
 * not be drained again; count it as dropped instead of writing it (other
 * records — a BYE — still go in: the final drain may yet take them). */
static inline bool child_sender_gone(struct ingero_shm *shm)
{
	return __builtin_expect(!ingero_hot.owner, 0) &&
	       atomic_load_explicit(&shm->sender_state, memory_order_relaxed) == INGERO_SENDER_GONE;
}

/* After a record went in: wake a sleeping sender once the ring is a quarter
 * full (at least 256 slots).  Looked at every 64th record a thread puts, so
 * that most calls leave the shared header's line alone; it reads the
 * sender's lines only while the sender sleeps. */
static inline bool wake_check_due(struct ingero_shm *shm)
{
	return __builtin_expect((++ingero_tls.puts & 63) == 0, 0) &&
	       atomic_load_explicit(&shm->sleeping, memory_order_relaxed);
}

static inline void put_done(struct ingero_shm *shm, struct ingero_ring *r)
{
	if (wake_check_due(shm) && ingero_ring_used(r) > (r->cap >> 2))
		ingero_shm_nudge(shm);
}

bool ingero_put(const void *rec, uint32_t len, bool is_call)
{
	struct ingero_shm *shm = ingero_hot.shm;
	struct ingero_ring *r = ingero_shm_ring(shm);
	if (is_call && child_sender_gone(shm)) {
		ingero_shm_count_drop(shm, ingero_self.procslot);
		return false;
	}
	int rc = ingero_ring_put(r, rec, len);
	if (rc != INGERO_RING_OK)
		return put_failed(shm, rc, is_call);
	put_done(shm, r);
	return true;
}

/* The thread's first recorded call (or the first since a fork): a lane of
 * its own if one is free; if none is, the ring for the next 4,096 calls
 * before looking again. */
static __attribute__((noinline, cold)) bool lane_claim(struct ingero_shm *shm)
{
	struct ingero_tls *t = &ingero_tls;
	if (ingero_self.nlanes == 0 || (t->lane_retry && --t->lane_retry))
		return false;
	if (ingero_lane_claim(ingero_self.lanes, ingero_self.nlanes, ingero_lane_owner(ingero_hot.pid, t->tid),
			      &t->lane)) {
		atomic_fetch_add_explicit(&shm->lane_claims, 1, memory_order_relaxed);
		return true;
	}
	t->lane_retry = 4096;
	return false;
}

/* After a call went into the lane: as put_done, the sender is woken when
 * it sleeps and the lane is a quarter full (the head read again first). */
static inline void lane_done(struct ingero_shm *shm, struct ingero_lane_writer *w)
{
	if (wake_check_due(shm) && ingero_lane_writer_used(w) > INGERO_LANE_UNITS / 4) {
		w->head = atomic_load_explicit(&w->lane->head, memory_order_acquire);
		if (ingero_lane_writer_used(w) > INGERO_LANE_UNITS / 4)
			ingero_shm_nudge(shm);
	}
}

/* A CALL record into a ring slot (the thread has no lane, or it is full),
 * written straight in — one copy of the event, of a size the compiler
 * knows (no libc memcpy: its code is lines a big program has evicted too). */
static void put_call_ring(struct ingero_shm *shm, const struct ingero_cuda_call *ev, bool tsc)
{
	_Static_assert(sizeof(struct rrec_call) <= INGERO_SLOT_DATA, "a CALL record fits one slot");
	struct ingero_ring *r = ingero_shm_ring(shm);
	uint64_t pos;
	if (!ingero_ring_claim(r, 1, &pos)) {
		put_failed(shm, INGERO_RING_FULL, true);
		return;
	}
	struct ingero_slot *sl = ingero_ring_slot(r, pos);
	struct rrec_call *rec = (struct rrec_call *)sl->data;
	sl->len = sizeof *rec;
	sl->reserved = 0;
	rec->h = (struct rrec_hdr){ .type = INGERO_RREC_CALL, .flags = tsc ? INGERO_RREC_TSC : 0,
				    .pid = ev->pid };
	__builtin_memcpy(&rec->ev, ev, sizeof *ev);
	int rc = ingero_ring_publish(r, pos, 1);
	if (rc != INGERO_RING_OK)
		put_failed(shm, rc, true);
	else
		put_done(shm, r);
}

/* A CALL record: into the thread's lane, plain stores only; where it has
 * none, or it is full (the sender is behind: woken), into a ring slot. */
static inline __attribute__((always_inline)) void put_call(const struct ingero_cuda_call *ev, bool tsc)
{
	struct ingero_shm *shm = ingero_hot.shm;
	if (child_sender_gone(shm)) {
		ingero_shm_count_drop(shm, ingero_self.procslot);
		return;
	}
	struct ingero_lane_writer *w = &ingero_tls.lane;
	if (__builtin_expect(w->lane != NULL, 1) || lane_claim(shm)) {
		if (__builtin_expect(ingero_lane_put(w, ev, tsc), 1)) {
			lane_done(shm, w);
			return;
		}
		ingero_shm_nudge(shm);
	}
	put_call_ring(shm, ev, tsc);
}

/* One launch in launch_sample takes a stack (sampling is on by default):
 * whether this one is due, counted. */
static inline __attribute__((always_inline)) bool launch_sample_due(void)
{
	uint32_t n = ingero_hot.launch_sample;
	if (__builtin_expect(n != 0, 1) && __builtin_expect(++ingero_tls.launches >= n, 0)) {
		ingero_tls.launches = 0;
		return true;
	}
	return false;
}

static bool want_stack(unsigned api, enum ingero_api_class c, enum ingero_kernel_kind kk, uint8_t *flags)
{
	if (c == INGERO_CLASS_LAUNCH) {
		if (ingero_hot.stack_classes & (1u << INGERO_CLASS_LAUNCH))
			return true;
		if (!launch_sample_due())
			return false;
		*flags |= INGERO_FLAG_STACK_SAMPLED;
		return true;
	}
	(void)kk;
	if (c == INGERO_CLASS_FREE && (ingero_hot.stack_classes & INGERO_STACK_WAITING_FREES_ONLY) &&
	    (!ingero_api_free_waits(api) || (*flags & INGERO_FLAG_NULL_FREE)))
		return false;
	return (ingero_hot.stack_classes >> c) & 1u;
}

/* A launch sample was refused at t0 (ns): until the budget could allow
 * one, the thread's due samples are known refused (ingero_emit_launch).
 * In a steady loop whose syncs take stacks the credit stays below what a
 * sample needs, and nearly every due one (a launch in 256 by default) was
 * refused after a trip through the general path and its cold lines. */
static void samples_refused(const struct ingero_stack_budget *b, uint64_t t0)
{
	uint64_t at = ingero_stack_budget_sampled_after(b, ingero_cfg.stack_budget_ppm);
	uint64_t tpu = ingero_clock_ticks_per_us();
	if (!at || at <= t0 || !tpu)
		return;
	/* in ticks, rounded down: a sample asked a little early is only
	 * refused again */
	ingero_tls.samples_refused_until = ingero_ticks() + (at - t0) * (tpu - 1) / 1000;
}

/* A stack for this call, within the thread's stack-time budget: out of
 * line, as most calls take none. */
static __attribute__((noinline, cold)) void emit_stack(struct ingero_cuda_call *ev)
{
	struct ingero_stack_budget *b = &ingero_tls.stack_budget;
	uint64_t t0 = ingero_now();
	ingero_stack_budget_pause(b, atomic_load_explicit(&ingero_paused_ns, memory_order_relaxed));
	if (ingero_stack_budget_allows(b, ingero_cfg.stack_budget_ppm, ev->flags & INGERO_FLAG_STACK_SAMPLED,
				       t0)) {
		ev->stack_id = ingero_stack_take(ev->pid, ev->api ^ ev->kernel * 0x9e3779b97f4a7c15ull,
						 ev->flags & INGERO_FLAG_STACK_SAMPLED);
		uint64_t dt = ingero_now() - t0;
		ingero_stack_budget_spend(b, dt);
		atomic_fetch_add_explicit(&ingero_stacks_ns, dt, memory_order_relaxed);
	} else {
		ev->flags |= INGERO_FLAG_STACK_WITHHELD;
		if (ev->flags & INGERO_FLAG_STACK_SAMPLED)
			samples_refused(b, t0);
	}
	if (!ev->stack_id)
		ev->flags &= (uint8_t)~INGERO_FLAG_STACK_SAMPLED;
}

/* ingero_emit's body.  stack: whether the call takes one, or -1 to decide
 * here (want_stack); a launch's fast path (ingero_emit_launch) has decided. */
static inline __attribute__((always_inline)) void emit(struct ingero_cuda_call *ev, enum ingero_api_class cls,
						       enum ingero_kernel_kind kernel_kind, bool tsc, int stack)
{
	if (__builtin_expect(!ingero_is_active(), 0))
		return;
	ev->pid = ingero_hot.pid;
	ev->tid = my_tid();
	if (ev->ret == 0 &&
	    (cls == INGERO_CLASS_LAUNCH ||
	     ((cls == INGERO_CLASS_COPY || cls == INGERO_CLASS_MEMSET) && (ev->flags & INGERO_FLAG_ASYNC))))
		ingero_gpu_note(ev->stream, ev->start_ns + ev->dur_ns, ev->api,
				cls == INGERO_CLASS_LAUNCH ? ev->kernel : 0);
	ev->stack_id = 0;
	if (stack > 0)
		ev->flags |= INGERO_FLAG_STACK_SAMPLED;
	if (stack > 0 || (stack < 0 && want_stack(ev->api, cls, kernel_kind, &ev->flags)))
		emit_stack(ev);
	if (kernel_kind != INGERO_KERNEL_NONE && ev->kernel != 0)
		ingero_kernel_note(ev->kernel, kernel_kind, ev->pid);
	put_call(ev, tsc);
}

void ingero_emit(struct ingero_cuda_call *ev, enum ingero_api_class cls, enum ingero_kernel_kind kernel_kind,
		 bool tsc)
{
	emit(ev, cls, kernel_kind, tsc, -1);
}

/* A launch whose unit cannot go into the lane as it is: made a record and
 * taken by the general path (stack: as emit's). */
static __attribute__((noinline, cold)) void launch_general(const struct ingero_lane_short *u,
							   enum ingero_kernel_kind kernel_kind, int stack)
{
	struct ingero_cuda_call ev = ingero_lane_short_call(u, 0, 0);
	emit(&ev, INGERO_CLASS_LAUNCH, kernel_kind, u->tag & INGERO_LANE_TSC, stack);
	/* what the launch path assumes (ingero_tls.launch_fast), now that
	 * emit has cached the id and claimed a lane where it could */
	struct ingero_tls *t = &ingero_tls;
	t->launch_fast = atomic_load_explicit(&ingero_hot.state, memory_order_acquire) == INGERO_SELF_ACTIVE &&
			 t->tid && t->lane.lane && !(ingero_hot.stack_classes & (1u << INGERO_CLASS_LAUNCH)) &&
			 ingero_hot.owner;
	/* the id and lane are this process's while the gen is the one they
	 * were cached under — read after the store: a signal handler that
	 * forked between those reads and the store left the child this flag
	 * from its parent's state (the fork handler had cleared it before) */
	atomic_signal_fence(memory_order_seq_cst);
	if (t->gen != atomic_load_explicit(&ingero_hot.gen, memory_order_relaxed))
		t->launch_fast = false;
}

/* The lane is full (the sender is behind: woken): the launch goes into the
 * ring, noted already. */
static __attribute__((noinline, cold)) void launch_lane_full(const struct ingero_lane_short *u)
{
	struct ingero_shm *shm = ingero_hot.shm;
	struct ingero_cuda_call ev = ingero_lane_short_call(u, ingero_hot.pid, ingero_tls.tid);
	ingero_shm_nudge(shm);
	put_call_ring(shm, &ev, u->tag & INGERO_LANE_TSC);
}

/* What the launch path does once it knows the launch takes no stack: the
 * GPU note, the kernel's name, the unit into the thread's lane. */
static inline __attribute__((always_inline)) void launch_put(const struct ingero_lane_short *u,
							    enum ingero_kernel_kind kernel_kind)
{
	struct ingero_lane_writer *w = &ingero_tls.lane;
	if (__builtin_expect(u->ret == 0, 1))
		ingero_gpu_note(u->stream, u->start + u->dur, u->api, u->kernel);
	INGERO_SEG(2);
	if (__builtin_expect(kernel_kind != INGERO_KERNEL_NONE && u->kernel != 0, 1))
		ingero_kernel_note(u->kernel, kernel_kind, ingero_hot.pid);
	INGERO_SEG(3);
	if (__builtin_expect(!ingero_lane_room(w, 1), 0)) {
		launch_lane_full(u);
		return;
	}
	ingero_lane_put_unit(w, u);
	lane_done(ingero_hot.shm, w);
	INGERO_SEG(4);
}

/* A launch sample the budget is known to refuse: the launch as the
 * general path would record it (the stack withheld), without asking. */
static __attribute__((noinline, cold)) void launch_refused(const struct ingero_lane_short *u,
							   enum ingero_kernel_kind kernel_kind)
{
	struct ingero_lane_short w = *u;
	w.flags |= INGERO_FLAG_STACK_WITHHELD;
	launch_put(&w, kernel_kind);
}

/* The launch path: what emit does for a launch, in one straight run of
 * code and with the unit copied as it is, when the process records, this
 * thread's id is cached for it, it has a lane, launches take no stack by
 * class, and the process owns its ring (a fork child's sender may be gone):
 * one flag the general path sets (launch_fast), rather than six checks
 * in the launch path's code; anything else is the general path's. */
INGERO_HOT_AT(12) void ingero_emit_launch(const struct ingero_lane_short *u, enum ingero_kernel_kind kernel_kind)
{
	INGERO_SEG(1);
	struct ingero_tls *t = &ingero_tls;
	if (__builtin_expect(!t->launch_fast, 0)) {
		launch_general(u, kernel_kind, -1);
		return;
	}
	if (launch_sample_due()) {
		if (__builtin_expect(u->start + u->dur >= t->samples_refused_until, 0)) {
			launch_general(u, kernel_kind, 1);
			return;
		}
		launch_refused(u, kernel_kind);
		return;
	}
	launch_put(u, kernel_kind);
}

void ingero_emit_hello(void)
{
	struct rrec_hello h;
	memset(&h, 0, sizeof h);
	h.h.type = INGERO_RREC_HELLO;
	h.h.pid = ingero_hot.pid;
	h.ppid = ingero_self.ppid;
	h.start_ns = ingero_self.start_ns;
	prctl(PR_GET_NAME, h.comm, 0, 0, 0);
	ingero_put(&h, sizeof h, false);
}

void ingero_emit_capture(bool on, uint64_t t_ns)
{
	if (!ingero_is_active())
		return;
	struct rrec_capture c;
	memset(&c, 0, sizeof c);
	c.h.type = INGERO_RREC_CAPTURE;
	c.h.pid = ingero_hot.pid;
	c.t_ns = t_ns;
	c.recording = on;
	ingero_put(&c, sizeof c, false);
}

void ingero_emit_bye(void)
{
	if (atomic_load_explicit(&ingero_hot.state, memory_order_acquire) != INGERO_SELF_ACTIVE)
		return;
	ingero_nvtx_final();
	struct rrec_bye b;
	memset(&b, 0, sizeof b);
	b.h.type = INGERO_RREC_BYE;
	b.h.pid = ingero_hot.pid;
	b.end_ns = ingero_now();
	ingero_put(&b, sizeof b, false);
}
