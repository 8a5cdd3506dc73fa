/*
 * intern.c — open addressing with linear probing over atomic 64-bit keys;
 * insertion is a CAS from 0, so threads (and a signal handler) may race
 * without a lock; entries are never removed, except all at once by
 * ingero_set_clear() in a single-threaded moment (a fork child).
 * The tables live in .bss: pages are only touched as keys arrive.
 */
#include "intern.h"

#include <string.h>

#include "ingero/u64map.h"   /* ingero_mix64 (the maps) */

static _Atomic uint64_t stack_keys[INGERO_SET_CAP];
_Atomic uint64_t ingero_kernel_keys[INGERO_SET_CAP];
struct ingero_set ingero_stacks_put = { INGERO_SET_CAP, stack_keys };
struct ingero_set ingero_kernels_put = { INGERO_SET_CAP, ingero_kernel_keys };

int ingero_set_add(struct ingero_set *s, uint64_t key)
{
	if (!key)
		return 0;
	uint32_t m = s->cap - 1;
	uint32_t i = ingero_set_slot(key, m);
	for (int p = 0; p < INGERO_SET_PROBES; p++, i = (i + 1) & m) {
		uint64_t k = atomic_load_explicit(&s->keys[i], memory_order_relaxed);
		if (k == key)
			return 0;
		if (k == 0) {
			/* release: pairs with ingero_set_has's acquire (intern.h) */
			if (atomic_compare_exchange_strong_explicit(&s->keys[i], &k, key, memory_order_release,
								    memory_order_relaxed))
				return 1;
			if (k == key)
				return 0;
		}
	}
	return -1;
}

void ingero_set_clear(struct ingero_set *s)
{
	for (uint32_t i = 0; i < s->cap; i++)
		atomic_store_explicit(&s->keys[i], 0, memory_order_relaxed);
}

void ingero_intern_reset(void)
{
	ingero_set_clear(&ingero_stacks_put);
	ingero_set_clear(&ingero_kernels_put);
}

uint64_t ingero_kv_get(const struct ingero_kv *m, uint64_t key)
{
	if (!key)
		return 0;
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)ingero_mix64(key) & mask;
	for (int p = 0; p < INGERO_SET_PROBES; p++, i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&m->vals[i], memory_order_acquire);
		if (k == 0)
			return 0;
	}
	return 0;
}

bool ingero_kv_put(struct ingero_kv *m, uint64_t key, uint64_t val)
{
	if (!key)
		return false;
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)ingero_mix64(key) & mask;
	for (int p = 0; p < INGERO_SET_PROBES; p++, i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
		if (k == 0 && atomic_compare_exchange_strong(&m->keys[i], &k, key))
			k = key;
		if (k == key) {
			atomic_store_explicit(&m->vals[i], val, memory_order_release);
			return true;
		}
	}
	return false;
}
