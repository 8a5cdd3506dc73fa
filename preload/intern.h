/*
 * intern.h — fixed-size lock-free sets of 64-bit keys, used to send each
 * stack and each kernel name into the ring once per process rather than
 * with every call.  A set that is full simply answers "new" again: the
 * sender deduplicates too, so being full costs ring space, not correctness.
 */
#ifndef INGERO_PRELOAD_INTERN_H
#define INGERO_PRELOAD_INTERN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>


struct ingero_set {
	uint32_t cap;               /* power of two */
	_Atomic uint64_t *keys;     /* 0 = empty */
};

#define INGERO_SET_PROBES 64

#define INGERO_SET_CAP 16384

/* A key's first slot: Fibonacci hashing, one multiply (kernel handles and
 * host stubs are aligned pointers, stack ids hashes already).  Shared by the sets' add
 * and probe: every launch probes the kernels' set, and splitmix64's two
 * multiplies and shifts were half a line of the launch path's code.  The
 * slot is bits 32 up of the product, which depend on the key's low 46
 * bits: all of a user-space pointer's. */
static inline uint32_t ingero_set_slot(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* Key 0 is never stored (it means "no stack"/"no kernel").  Inline: every
 * launch asks whether its kernel was named yet; with keys and cap known
 * where it is inlined (ingero_kernel_keys), no line of the set's own. */
static inline bool ingero_set_has_in(_Atomic uint64_t *keys, uint32_t cap, uint64_t key)
{
	if (!key)
		return false;
	uint32_t m = cap - 1;
	uint32_t i = ingero_set_slot(key, m);
	for (int p = 0; p < INGERO_SET_PROBES; p++, i = (i + 1) & m) {
		/* acquire: what was put into the ring before the key was added
		 * (its definition) is ordered before what the caller puts next */
		uint64_t k = atomic_load_explicit(&keys[i], memory_order_acquire);
		if (k == key)
			return true;
		if (k == 0)
			return false;
	}
	return false;
}

static inline bool ingero_set_has(const struct ingero_set *s, uint64_t key)
{
	return ingero_set_has_in(s->keys, s->cap, key);
}
/* 1: added, 0: was there, -1: no room. */
int ingero_set_add(struct ingero_set *s, uint64_t key);
void ingero_set_clear(struct ingero_set *s);

/* Per-process sets: stacks and kernels this process put into its ring. */
extern struct ingero_set ingero_stacks_put;
extern struct ingero_set ingero_kernels_put;
/* the kernels set's table (INGERO_SET_CAP keys), for the per-launch check */
extern _Atomic uint64_t ingero_kernel_keys[INGERO_SET_CAP] __attribute__((visibility("hidden")));
/* A fork child that becomes an owner starts with empty sets. */
void ingero_intern_reset(void);



/* A fixed-size lock-free map of 64-bit keys to 64-bit values (0 = none),
 * insert-or-update, never shrinking: kernel handles and host stubs. */
struct ingero_kv {
	uint32_t cap;               /* power of two */
	_Atomic uint64_t *keys;
	_Atomic uint64_t *vals;
};
/* 0 when absent. */
uint64_t ingero_kv_get(const struct ingero_kv *m, uint64_t key);
/* false when full. */
bool ingero_kv_put(struct ingero_kv *m, uint64_t key, uint64_t val);

#endif
