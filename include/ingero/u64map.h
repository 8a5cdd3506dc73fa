/*
 * u64map.h — a small growable hash map from 64-bit keys to pointers, for
 * one thread's private bookkeeping (the preload's sender thread, the
 * collector's per-process Python state; never the preload's hot path, and
 * never shared between threads).
 */
#ifndef INGERO_U64MAP_H
#define INGERO_U64MAP_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit mix (splitmix64's finaliser) for keys that are not hashes yet. */
static inline uint64_t ingero_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

struct u64map {
	uint64_t *keys;
	void **vals;
	size_t cap, len;   /* cap a power of two; key 0 is allowed (kept apart) */
	void *zero_val;
	int has_zero;
};

void *ingero_map_get(const struct u64map *m, uint64_t key);
/* Inserts or replaces; -1 when out of memory. */
int ingero_map_put(struct u64map *m, uint64_t key, void *val);
/* Calls fn for every entry. */
void ingero_map_each(struct u64map *m, void (*fn)(uint64_t key, void *val, void *arg), void *arg);
void ingero_map_free(struct u64map *m);

#endif
