/*
 * page_fuzz.c — overwrites one span of one page of a file, for the
 * analyzer's page-corruption test (tests/e2e/analyzer_page_fuzz.sh).
 *
 *   page_fuzz FILE SEED PAGE_SIZE PAGE...
 *
 * From SEED alone (a xorshift generator, the same on every machine): one
 * of the PAGEs (1-based page numbers), an offset in it (past the 100-byte
 * file header on page 1), and 256 bytes written there — zeros for an odd
 * SEED, pseudo-random bytes for an even one.  Prints "page P offset O
 * zeros|random".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SPAN 256

static uint64_t state;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

int main(int argc, char **argv)
{
	unsigned char buf[SPAN];
	long psize, page, off, first;
	FILE *f;

	if (argc < 5) {
		fprintf(stderr, "usage: page_fuzz FILE SEED PAGE_SIZE PAGE...\n");
		return 2;
	}
	state = 0x9e3779b97f4a7c15ull ^ (strtoull(argv[2], NULL, 10) * 0xbf58476d1ce4e5b9ull);
	for (int i = 0; i < 8; i++)
		next();
	psize = atol(argv[3]);
	if (psize < 512)
		return 2;
	page = atol(argv[4 + next() % (uint64_t)(argc - 4)]);
	first = page == 1 ? 100 : 0;
	off = first + (long)(next() % (uint64_t)(psize - first - SPAN + 1));
	int zeros = strtoull(argv[2], NULL, 10) % 2;
	for (int i = 0; i < SPAN; i++)
		buf[i] = zeros ? 0 : (unsigned char)next();
	f = fopen(argv[1], "r+b");
	if (!f || fseek(f, (page - 1) * psize + off, SEEK_SET) || fwrite(buf, 1, SPAN, f) != SPAN || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	printf("page %ld offset %ld %s\n", page, off, zeros ? "zeros" : "random");
	return 0;
}
