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

#include "config.h"
#include "fork.h"
#include "gpu_marks.h"
#include "kernel.h"
#include "stack.h"

__thread struct ingero_tls ingero_tls __attribute__((tls_model("initial-exec")));
struct ingero_hot ingero_hot __attribute__((aligned(64)));

static inline uint32_t my_tid(void)
{
	struct ingero_tls *t = &ingero_tls;
	unsigned g = atomic_load_explicit(&ingero_self.gen, memory_order_relaxed);
	if (__builtin_expect(t->gen != g || !t->tid, 0)) {
		t->tid = (uint32_t)gettid();
		t->gen = g;
	}
	return t->tid;
}

bool ingero_put(const void *rec, uint32_t len, bool is_call)
{
	struct ingero_shm *shm = ingero_self.shm;
	struct ingero_ring *r = ingero_shm_ring(shm);
	/* A fork child's call once its ring's sender has stopped: the ring may
	 * not be drained again; count it as dropped instead of writing it (other
	 * records — a BYE — still go in: the final drain may yet take them). */
	if (is_call && __builtin_expect(!ingero_self.owner, 0) &&
	    atomic_load_explicit(&shm->sender_state, memory_order_relaxed) == INGERO_SENDER_GONE) {
		ingero_shm_count_drop(shm, ingero_self.procslot);
		return false;
	}
	int rc = ingero_ring_put(r, rec, len);
	if (rc == INGERO_RING_LOST)
		atomic_fetch_add_explicit(&shm->lost_late, 1, memory_order_relaxed);
	if (rc != INGERO_RING_OK) {
		if (is_call)
			ingero_shm_count_drop(shm, ingero_self.procslot);
		ingero_shm_nudge(shm);
		return false;
	}
	/* Wake a sleeping sender once the ring is a quarter full (at least 256
	 * slots).  Looked at every 64th record a thread puts, so that most
	 * calls leave the shared header's line alone; it reads the sender's
	 * lines only while the sender sleeps. */
	if ((++ingero_tls.puts & 63) == 0 && atomic_load_explicit(&shm->sleeping, memory_order_relaxed) &&
	    ingero_ring_used(r) > (r->cap >> 2))
		ingero_shm_nudge(shm);
	return true;
}

static bool want_stack(unsigned api, enum ingero_api_class c, enum ingero_kernel_kind kk, uint8_t *flags)
{
	if (c == INGERO_CLASS_LAUNCH) {
		if (ingero_hot.stack_classes & (1u << INGERO_CLASS_LAUNCH))
			return true;
		uint32_t n = ingero_hot.launch_sample;
		if (n && ++ingero_tls.launches >= n) {
			ingero_tls.launches = 0;
			*flags |= INGERO_FLAG_STACK_SAMPLED;
			return true;
		}
		return false;
	}
	(void)kk;
	if (c == INGERO_CLASS_FREE && (ingero_hot.stack_classes & INGERO_STACK_WAITING_FREES_ONLY) &&
	    (!ingero_api_free_waits(api) || (*flags & INGERO_FLAG_NULL_FREE)))
		return false;
	return (ingero_hot.stack_classes >> c) & 1u;
}

void ingero_emit(struct ingero_cuda_call *ev, enum ingero_api_class cls, enum ingero_kernel_kind kernel_kind,
		 bool tsc)
{
	if (!ingero_is_active())
		return;
	struct rrec_call rec;
	rec.h.type = INGERO_RREC_CALL;
	rec.h.flags = tsc ? INGERO_RREC_TSC : 0;
	rec.h.pad = 0;
	rec.h.pid = ingero_self.pid;
	ev->pid = ingero_self.pid;
	ev->tid = my_tid();
	if (ev->ret == 0 && (cls == INGERO_CLASS_LAUNCH ||
			     ((cls == INGERO_CLASS_COPY || cls == INGERO_CLASS_MEMSET) &&
			      (ev->flags & INGERO_FLAG_ASYNC))))
		ingero_gpu_note(ev->stream, ev->start_ns + ev->dur_ns, ev->api,
				cls == INGERO_CLASS_LAUNCH ? ev->kernel : 0);
	ev->stack_id = 0;
	if (want_stack(ev->api, cls, kernel_kind, &ev->flags)) {
		struct ingero_stack_budget *b = &ingero_tls.stack_budget;
		uint64_t t0 = ingero_now();
		ingero_stack_budget_pause(b, atomic_load_explicit(&ingero_paused_ns, memory_order_relaxed));
		if (ingero_stack_budget_allows(b, ingero_cfg.stack_budget_ppm,
					       ev->flags & INGERO_FLAG_STACK_SAMPLED, t0)) {
			ev->stack_id = ingero_stack_take(ev->pid);
			ingero_stack_budget_spend(b, ingero_now() - t0);
		} else {
			ev->flags |= INGERO_FLAG_STACK_WITHHELD;
		}
	}
	if (!ev->stack_id)
		ev->flags &= (uint8_t)~INGERO_FLAG_STACK_SAMPLED;
	if (kernel_kind != INGERO_KERNEL_NONE && ev->kernel)
		ingero_kernel_note(ev->kernel, kernel_kind, ev->pid);
	rec.ev = *ev;
	ingero_put(&rec, sizeof rec, true);
}

void ingero_emit_hello(void)
{
	struct rrec_hello h;
	memset(&h, 0, sizeof h);
	h.h.type = INGERO_RREC_HELLO;
	h.h.pid = ingero_self.pid;
	h.ppid = ingero_self.ppid;
	h.start_ns = ingero_self.start_ns;
	prctl(PR_GET_NAME, h.comm, 0, 0, 0);
	ingero_put(&h, sizeof h, false);
}

void ingero_emit_bye(void)
{
	if (atomic_load_explicit(&ingero_self.state, memory_order_acquire) != INGERO_SELF_ACTIVE)
		return;
	struct rrec_bye b;
	memset(&b, 0, sizeof b);
	b.h.type = INGERO_RREC_BYE;
	b.h.pid = ingero_self.pid;
	b.end_ns = ingero_now();
	ingero_put(&b, sizeof b, false);
}
