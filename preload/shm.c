/*
 * shm.c — creating the shared mapping, the process table and the doorbell
 * (see shm.h).  The doorbell is a futex on shared memory (not
 * FUTEX_PRIVATE), so a producer in a forked child can wake the owner's
 * sender; producers only make that system call when the sender said it
 * sleeps and the ring is filling up, never per event.
 */
#include "shm.h"

#include <linux/futex.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ingero_shm *ingero_shm_create(uint64_t cap, uint32_t nlanes, uint32_t owner_pid)
{
	size_t lanes_off = (INGERO_SHM_RING_OFF + ingero_ring_bytes(cap) + 4095) & ~(size_t)4095;
	size_t bytes = lanes_off + (size_t)nlanes * sizeof(struct ingero_lane);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct ingero_shm *s = p;   /* mmap gives zeroes: an empty ring, an empty table */
	s->magic = INGERO_SHM_MAGIC;
	s->owner_pid = owner_pid;
	s->bytes = bytes;
	s->nlanes = nlanes;
	s->lanes_off = lanes_off;
	ingero_ring_init(ingero_shm_ring(s), cap);
	return s;
}

void ingero_shm_destroy(struct ingero_shm *s)
{
	if (s)
		munmap(s, s->bytes);
}

int ingero_shm_proc_claim(struct ingero_shm *s, uint32_t pid, uint32_t ppid, uint64_t start_ticks)
{
	uint32_t i = atomic_fetch_add_explicit(&s->nprocs, 1, memory_order_relaxed);
	if (i >= INGERO_PROCTAB_SLOTS) {
		atomic_store_explicit(&s->nprocs, INGERO_PROCTAB_SLOTS, memory_order_relaxed);
		return -1;
	}
	s->procs[i].ppid = ppid;
	s->procs[i].start_ticks = start_ticks;
	atomic_store_explicit(&s->procs[i].pid, pid, memory_order_release);
	return (int)i;
}

void ingero_shm_count_drop(struct ingero_shm *s, int procslot)
{
	if (procslot >= 0)
		atomic_fetch_add_explicit(&s->procs[procslot].ring_dropped, 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&s->unattributed_dropped, 1, memory_order_relaxed);
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void ingero_shm_wait(struct ingero_shm *s, uint64_t timeout_ns)
{
	uint32_t bell = atomic_load_explicit(&s->doorbell, memory_order_acquire);
	atomic_store_explicit(&s->sleeping, 1, memory_order_seq_cst);
	struct timespec ts = { (time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u) };
	futex(&s->doorbell, FUTEX_WAIT, bell, &ts);
	atomic_store_explicit(&s->sleeping, 0, memory_order_relaxed);
}

void ingero_shm_wake(struct ingero_shm *s)
{
	atomic_fetch_add_explicit(&s->doorbell, 1, memory_order_release);
	futex(&s->doorbell, FUTEX_WAKE, 1, NULL);
}
