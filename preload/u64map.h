/*
 * u64map.h — a small growable hash map from 64-bit keys to pointers, for
 * the sender thread's private bookkeeping (never used on the hot path, and
 * never shared between threads).
 */
#ifndef INGERO_PRELOAD_U64MAP_H
#define INGERO_PRELOAD_U64MAP_H

#include <stddef.h>
#include <stdint.h>

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
