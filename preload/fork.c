/*
 * fork.c — process identity across fork, exec and spawn, and the choice of
 * the ring a process writes into.
 *
 * nng cannot be used in a fork child once the parent used it (it panics:
 * "nng is not fork-reentrant safe").  So:
 *
 *   - the library constructor maps a shared ring before any fork; the
 *     process that mapped it is its owner, and only the owner ever starts a
 *     sender thread and touches nng, on its first CUDA call;
 *   - a fork child inherits the mapping and, at its first CUDA call, writes
 *     into the same ring (after a HELLO with its pid and ppid) when the
 *     owner's sender runs, or when nng was already used in its ancestry;
 *   - otherwise (the parent never started a sender: the child was forked
 *     before any CUDA call and calls CUDA first) the child maps a fresh ring
 *     and becomes an owner itself — it may use nng, as nng was never
 *     initialised in its ancestry;
 *   - exec (and multiprocessing spawn/forkserver, which exec a fresh
 *     interpreter) runs the constructor again: a new owner, whose HELLO
 *     carries getppid(), the real parent.
 *
 * The fork handler runs in the child only and does async-signal-safe work:
 * it resets process-wide fields; the decision waits for the first record.
 */
#include "fork.h"

#include <ingero/procfs.h>

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "gpu_marks.h"
#include "intern.h"
#include "pinned.h"
#include "record.h"
#include "sender.h"

static void after_fork_child(void)
{
	ingero_hot.pid = (uint32_t)getpid();
	ingero_self.ppid = (uint32_t)getppid();
	atomic_fetch_add_explicit(&ingero_hot.gen, 1, memory_order_relaxed);
	ingero_tls.launch_fast = false;   /* (the child's one thread) */
	ingero_self.start_ns = ingero_now();
	ingero_hot.owner = false;
	ingero_self.forked = true;
	ingero_self.procslot = -1;
	atomic_store_explicit(&ingero_hot.state,
			      ingero_hot.shm ? INGERO_SELF_UNCHECKED : INGERO_SELF_OFF,
			      memory_order_relaxed);
	ingero_sender_forget();
	ingero_pinned_after_fork();
	ingero_nvtx_after_fork();
	/* the parent's GPU-mark watcher is not here, nor is CUDA usable: no
	 * marks (a child of a process that had not started one may start its own) */
	if (atomic_load_explicit(&ingero_hot.gpu_on, memory_order_relaxed) != 0)
		atomic_store_explicit(&ingero_hot.gpu_on, -1, memory_order_relaxed);
}

void ingero_self_init(struct ingero_shm *shm)
{
	ingero_hot.pid = (uint32_t)getpid();
	ingero_self.ppid = (uint32_t)getppid();
	atomic_store_explicit(&ingero_hot.gen, 1, memory_order_relaxed);
	ingero_self.start_ns = ingero_now();
	ingero_hot.shm = shm;
	ingero_self.lanes = shm ? ingero_shm_lanes(shm) : NULL;
	ingero_self.nlanes = shm ? shm->nlanes : 0;
	ingero_hot.owner = shm != NULL;
	atomic_store_explicit(&ingero_hot.state, shm ? INGERO_SELF_UNCHECKED : INGERO_SELF_OFF,
			      memory_order_release);
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* Runs once per process, in the thread that records first. */
static bool choose_ring(void)
{
	struct ingero_self *s = &ingero_self;
	struct ingero_hot *h = &ingero_hot;
	if (!h->shm)
		return false;
	if (s->forked && !s->nng_touched &&
	    atomic_load_explicit(&h->shm->sender_state, memory_order_acquire) != INGERO_SENDER_RUNNING) {
		struct ingero_shm *fresh = ingero_shm_create(ingero_cfg.ring_events, ingero_cfg.lanes, h->pid);
		if (fresh) {
			/* The inherited mapping stays: descendants forked before
			 * this point may still write into it. */
			h->shm = fresh;
			s->lanes = ingero_shm_lanes(fresh);
			s->nlanes = fresh->nlanes;
			h->owner = true;
			ingero_intern_reset();
			ingero_debug("fork child %u: parent %u has no sender, tracing on its own ring",
				     h->pid, s->ppid);
		}
	}
	ingero_clock_check();
	char st;
	uint64_t start = 0;
	if (ingero_read_stat(h->pid, &st, &start) < 0)
		start = 0;   /* unknown: never named an orphan */
	s->procslot = ingero_shm_proc_claim(h->shm, h->pid, s->ppid, start);
	if (h->owner) {
		if (atomic_load_explicit(&h->shm->sender_state, memory_order_acquire) == INGERO_SENDER_NONE &&
		    ingero_sender_start(h->shm) != 0)
			ingero_debug("sender did not start: events will be counted as dropped");
	} else {
		ingero_emit_hello();
	}
	s->forked = false;
	return true;
}

bool ingero_activate_slow(void)
{
	int st = atomic_load_explicit(&ingero_hot.state, memory_order_acquire);
	if (st == INGERO_SELF_UNCHECKED) {
		if (atomic_compare_exchange_strong(&ingero_hot.state, &st, INGERO_SELF_ACTIVATING)) {
			bool ok = choose_ring();
			atomic_store_explicit(&ingero_hot.state, ok ? INGERO_SELF_ACTIVE : INGERO_SELF_OFF,
					      memory_order_release);
			return ok;
		}
	}
	/* Another thread is choosing: it takes microseconds (an mmap, a
	 * pthread_create); wait for it rather than write into the old ring. */
	for (int i = 0; i < 100000 && atomic_load_explicit(&ingero_hot.state, memory_order_acquire) ==
					       INGERO_SELF_ACTIVATING; i++)
		sched_yield();
	return atomic_load_explicit(&ingero_hot.state, memory_order_acquire) == INGERO_SELF_ACTIVE;
}
