/*
 * fnv.h — FNV-1a over bytes, the one hash the library's stack ids, the
 * sampler's stack ids and the store's frame dedup are made of.
 */
#ifndef INGERO_FNV_H
#define INGERO_FNV_H

#include <stdint.h>

#define INGERO_FNV_SEED 0xcbf29ce484222325ull

/* FNV-1a over n bytes at p, continuing from h (INGERO_FNV_SEED to start). */
static inline uint64_t ingero_fnv(uint64_t h, const void *p, uint64_t n)
{
	const unsigned char *b = p;
	for (uint64_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
