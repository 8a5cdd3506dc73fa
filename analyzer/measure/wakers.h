/*
 * wakers.h — follow the wait: who ended the main thread's sleeps in the
 * gaps, and what that thread did meanwhile, hop by hop to the end cause.
 *
 * A blocked thread is woken by the task that released its lock, filled
 * its queue or wrote to its pipe (off_cpu.waker_tid, schema version 7: the
 * current task of the sched_waking that ended the sleep).  For the main
 * thread's blocked time inside the steady state's gaps, the waker that
 * ended most of it is the first hop; over exactly the stretches it was
 * waited for, that thread was on a CPU (its samples name the line), waiting
 * for one (who held the CPUs), or blocked itself — in I/O, asleep, or on
 * yet another thread, which is the next hop (at most IA_WAIT_HOPS, never a
 * thread twice).  The last hop's state is the end cause the finding ranks
 * and fixes by.
 */
#ifndef IA_WAKERS_H
#define IA_WAKERS_H

#include "load/series.h"
#include "load/stacks.h"
#include "load/syscalls.h"
#include "load/trace.h"
#include "measure/collectives.h"
#include "measure/competitors.h"
#include "measure/gaps.h"
#include "measure/per_process.h"

#include <cjson/cJSON.h>

#define IA_WAIT_HOPS 3
/* A waker is followed when it ended at least this share of the waits. */
#define IA_WAKER_SHARE 0.5

enum ia_wait_end {
	IA_WAITEND_NONE,       /* no waker ended most of the waits (or the trace does not say) */
	IA_WAITEND_ONCPU,      /* the last thread ran: its own work is what the loop waits for */
	IA_WAITEND_RUNQ,       /* it waited for a CPU: other tasks (or a quota) held them */
	IA_WAITEND_IO,         /* it waited on storage (D state) */
	IA_WAITEND_SLEEP,      /* it slept (time.sleep, a timer): it paces itself */
	IA_WAITEND_BLOCKED,    /* it blocked on something else (a sleep, a socket, a thread not followed) */
};

struct ia_wait_hop {
	uint32_t th;                 /* index into trace.threads */
	uint64_t waited_ns;          /* the previous hop's blocked time this thread ended */
	uint64_t share_pm;           /* of that hop's blocked time, per mille */
	uint64_t oncpu_ns, runq_ns, blocked_ns, iowait_ns;   /* this thread during those waits */
	uint64_t sys_ns[256];        /* its blocked time by system call (syscalls.h codes) */
	/* its most sampled line in those waits (the user's innermost frame),
	 * and that line's most sampled native leaf or Python function */
	char label[160], line[200];
	uint64_t samples, top_samples;   /* its samples there; of them, at that line */
	/* the mechanism family most of those samples are in (mechanisms.h:
	 * copying memory, fresh memory, the garbage collector…), and its samples */
	int mech;
	uint64_t mech_samples;
};

struct ia_wakers {
	int known;                   /* the trace records wakers (version 7) */
	uint64_t blocked_ns;         /* the main thread's blocked time in the steady gaps */
	uint64_t woken_ns;           /* of it, with a waker recorded */
	struct ia_wait_hop hop[IA_WAIT_HOPS]; size_t nhops;
	enum ia_wait_end end;
	/* IA_WAITEND_RUNQ: who held the CPUs the last hop waited for */
	struct ia_comp_group takers[4]; size_t ntakers;
	uint64_t takers_ns;
};

/* 0, or -1 with a reason; w->known 0 for traces before version 7. */
int ia_wakers_compute(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_evidence *ev,
		      struct ia_stack_names *names, const struct ia_gaps *g, struct ia_wakers *w, char *err,
		      size_t errlen);
/* The mechanism family (enum ia_mech) half or more of the hop's samples
 * are in, else IA_MECH_NONE. */
int ia_wait_hop_mech(const struct ia_wait_hop *h);
/* The hop is the DataLoader's pin-memory thread (PyTorch names it
 * "pt_data_pin"; else its line is in torch/utils/data/_utils/pin_memory.py). */
int ia_wait_hop_is_pin_thread(const struct ia_trace *t, const struct ia_wait_hop *h);
/* The hop is a thread of the process's gloo collectives: PyTorch names
 * them "pt_gloo…", or it ran their copies (gloo, collectives.h). */
int ia_wait_hop_is_gloo(const struct ia_trace *t, const struct ia_coll_tids *gloo, const struct ia_wait_hop *h);
/* "thread tid 812 "python3"", "the autograd engine thread tid 925
 * "pt_autograd_0"" (PyTorch's threads by their role) into buf */
const char *ia_wait_hop_name(const struct ia_trace *t, const struct ia_wait_hop *h, char *buf, size_t n);
/* 1 when that name starts with the thread's role ("the autograd engine
 * thread ..."): it then takes no article of its own. */
int ia_wait_hop_has_role(const struct ia_trace *t, const struct ia_wait_hop *h);
/* The whole path in one sentence ("the main thread waited 2.1s for thread
 * tid N "x" (90% of its waits), which waited 2.0s for a CPU taken by sh
 * (10 processes) 1.9s"), "" when no waker ended most of the waits. */
const char *ia_wakers_text(const struct ia_trace *t, const struct ia_wakers *w, char *buf, size_t n);
/* {hops: [{tid, comm, waited_ns, share, oncpu_ns, runq_ns, blocked_ns, iowait_ns, line}], end} */
void ia_wakers_json(cJSON *parent, const struct ia_trace *t, const struct ia_wakers *w);

#endif
