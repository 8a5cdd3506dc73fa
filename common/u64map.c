/*
 * u64map.c — open addressing, linear probing, load factor ≤ 1/2, doubling.
 */
#include "ingero/u64map.h"

#include <stdlib.h>

static size_t slot_of(const struct u64map *m, uint64_t key)
{
	size_t i = (size_t)ingero_mix64(key) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *ingero_map_get(const struct u64map *m, uint64_t key)
{
	if (key == 0)
		return m->has_zero ? m->zero_val : NULL;
	if (!m->cap)
		return NULL;
	size_t i = slot_of(m, key);
	return m->keys[i] ? m->vals[i] : NULL;
}

static int grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *nk = calloc(ncap, sizeof *nk);
	void **nv = calloc(ncap, sizeof *nv);
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	struct u64map n = { nk, nv, ncap, 0, m->zero_val, m->has_zero };
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = slot_of(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.len++;
	}
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

int ingero_map_put(struct u64map *m, uint64_t key, void *val)
{
	if (key == 0) {
		m->zero_val = val;
		m->has_zero = 1;
		return 0;
	}
	if ((m->len + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	size_t i = slot_of(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return 0;
}

void ingero_map_each(struct u64map *m, void (*fn)(uint64_t key, void *val, void *arg), void *arg)
{
	if (m->has_zero)
		fn(0, m->zero_val, arg);
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			fn(m->keys[i], m->vals[i], arg);
}

void ingero_map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct u64map){ 0 };
}
