/*
 * gather.c — the data the batches are made of, and the work of making them.
 *
 * The dataset is one big array of random bytes (the design's in-memory
 * tensor), allocated once before any fork so workers share it copy-on-write.
 * A shuffled batch gathers rows at random positions into a freshly mapped
 * buffer: fresh pages every time, like a collate function allocating its
 * output tensor, so every batch costs page faults and page allocations.
 * gather_rows is kept out of line so CPU samples name it.
 */
#include "starve.h"

#include <string.h>
#include <sys/mman.h>

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

void dataset_make(struct dataset *d, size_t bytes, size_t row_bytes, uint64_t seed)
{
	uint64_t s = seed | 1;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("cannot allocate the %zu-byte array", bytes);
	for (size_t i = 0; i + 8 <= bytes; i += 8) {
		uint64_t v = xorshift(&s);
		memcpy(p + i, &v, 8);
	}
	d->data = p;
	d->bytes = bytes;
	d->row_bytes = row_bytes;
	d->rows = bytes / row_bytes;
}

__attribute__((noinline)) void gather_rows(char *dst, const struct dataset *d, size_t rows, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
	for (size_t i = 0; i < rows; i++) {
		size_t r = (size_t)(xorshift(&s) % d->rows);
		memcpy(dst + i * d->row_bytes, d->data + r * d->row_bytes, d->row_bytes);
	}
}

char *fresh_buffer(size_t bytes)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("cannot map a %zu-byte batch buffer", bytes);
	return p;
}

void fresh_buffer_free(char *p, size_t bytes)
{
	munmap(p, bytes);
}
