/*
 * shm.h — the memory a traced process shares with its forked descendants:
 * a small header (who owns it, whether its sender runs), a table of
 * per-process drop counters, and the event ring.
 *
 * After the ring come the lanes (lane.h): each thread's own queue of CALL
 * records, claimed at its first recorded call.
 *
 * It is one MAP_SHARED|MAP_ANONYMOUS mapping, created by the library
 * constructor (before any fork) or by a forked child that has to become an
 * owner itself (fork.c).  Everything in it is reached with atomics only:
 * no lock lives here, so no fork or signal can leave one held.
 */
#ifndef INGERO_PRELOAD_SHM_H
#define INGERO_PRELOAD_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "lane.h"
#include "ring.h"

#define INGERO_SHM_MAGIC 0x494e4752u   /* "INGR" */
#define INGERO_PROCTAB_SLOTS 4096

/* One traced process that writes into this ring. */
struct ingero_proc_slot {
	_Atomic uint32_t pid;          /* 0 while being filled in */
	uint32_t ppid;
	_Atomic uint64_t ring_dropped; /* CALL records that found the ring full */
	uint64_t start_ticks;          /* its start (procfs.h), to know it again at the owner's exit */
};

enum ingero_sender_state {
	INGERO_SENDER_NONE = 0,     /* the owner has not started one (yet) */
	INGERO_SENDER_RUNNING = 1,  /* drains this ring */
	INGERO_SENDER_GONE = 2,     /* failed to start, or the owner is exiting */
};

struct ingero_shm {
	uint32_t magic;
	uint32_t owner_pid;
	uint64_t bytes;
	_Atomic int sender_state;           /* enum ingero_sender_state */
	_Atomic uint32_t sleeping;          /* the sender waits on doorbell */
	_Atomic uint32_t doorbell;
	_Atomic uint32_t nprocs;            /* proc slots handed out */
	_Atomic uint64_t unattributed_dropped; /* drops of processes beyond the table */
	_Atomic uint64_t lost_late;         /* records published after being skipped */
	uint32_t nlanes;                    /* lanes after the ring (lane.h), maybe 0 */
	_Atomic uint32_t lane_claims;       /* lanes claimed so far (INGERO_DEBUG's exit line) */
	uint64_t lanes_off;                 /* their offset from the mapping's start */
	char pad[48];
	struct ingero_proc_slot procs[INGERO_PROCTAB_SLOTS];
};

#define INGERO_SHM_RING_OFF (((sizeof(struct ingero_shm)) + 4095) & ~(size_t)4095)

static inline struct ingero_ring *ingero_shm_ring(struct ingero_shm *s)
{
	return (struct ingero_ring *)((char *)s + INGERO_SHM_RING_OFF);
}

static inline struct ingero_lane *ingero_shm_lanes(struct ingero_shm *s)
{
	return (struct ingero_lane *)((char *)s + s->lanes_off);
}

/* A fresh mapping with a ring of cap slots and nlanes lanes; NULL if mmap
 * fails.  Pages are untouched until used (a claimed lane's by its thread). */
struct ingero_shm *ingero_shm_create(uint64_t cap, uint32_t nlanes, uint32_t owner_pid);
void ingero_shm_destroy(struct ingero_shm *s);

/* A slot in the process table for pid, or -1 when the table is full. */
int ingero_shm_proc_claim(struct ingero_shm *s, uint32_t pid, uint32_t ppid, uint64_t start_ticks);

/* Counts a CALL lost before the sender saw it (ring full or late). */
void ingero_shm_count_drop(struct ingero_shm *s, int procslot);

/* Sender side: sleep until woken or timeout_ns; producers: wake it. */
void ingero_shm_wait(struct ingero_shm *s, uint64_t timeout_ns);
void ingero_shm_wake(struct ingero_shm *s);
/* Producers: wake the sender if it sleeps; of many producers, one makes
 * the system call. */
static inline void ingero_shm_nudge(struct ingero_shm *s)
{
	uint32_t one = 1;
	if (atomic_load_explicit(&s->sleeping, memory_order_relaxed) &&
	    atomic_compare_exchange_strong(&s->sleeping, &one, 0))
		ingero_shm_wake(s);
}

#endif
