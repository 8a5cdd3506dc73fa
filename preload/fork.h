/*
 * fork.h — who this process is for the library, and which ring it writes
 * into.  See fork.c for the rules across fork, exec and spawn.
 */
#ifndef INGERO_PRELOAD_FORK_H
#define INGERO_PRELOAD_FORK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hot_data.h"
#include "shm.h"

enum ingero_self_state {
	INGERO_SELF_UNCHECKED = 0,  /* nothing recorded yet in this process */
	INGERO_SELF_ACTIVATING = 1, /* one thread is choosing the ring / starting the sender */
	INGERO_SELF_ACTIVE = 2,     /* records go into `shm` */
	INGERO_SELF_OFF = 3,        /* disabled, or no ring: pass-through */
};

/* The process: its state (enum ingero_self_state), gen, pid, shm and
 * owner, which every call reads, are in ingero_hot (hot_data.h). */
struct ingero_self {
	uint32_t ppid;
	uint64_t start_ns;          /* library init, or the fork */
	struct ingero_lane *lanes;  /* its lanes, as the mapping's maker laid them out (not read back from it) */
	uint32_t nlanes;
	bool forked;                /* a fork child that has not chosen its ring yet */
	bool nng_touched;           /* nng was used here, or in an ancestor before the fork */
	int procslot;               /* our entry in shm->procs, -1 if none */
};

extern struct ingero_self ingero_self;

/* Constructor: pid, the first ring, the fork handlers. */
void ingero_self_init(struct ingero_shm *shm);
/* First record of this process: choose the ring, start the sender if we own
 * it, announce the process.  Returns false when records must be dropped
 * silently (library off). */
bool ingero_activate_slow(void);

static inline bool ingero_is_active(void)
{
	return atomic_load_explicit(&ingero_hot.state, memory_order_acquire) == INGERO_SELF_ACTIVE ||
	       ingero_activate_slow();
}

#endif
