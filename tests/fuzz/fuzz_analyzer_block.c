/*
 * fuzz_analyzer_block.c — libFuzzer target for the call-block decoder
 * (common/call_block.c), which reads a report.db's call_blocks.data, bytes
 * a damaged or hand-edited file can make anything.  Whatever the bytes,
 * ingero_block_decode either refuses them with a reason and no calls, or
 * yields 1 to INGERO_BLOCK_MAX_CALLS calls whose fields are in range; and
 * what it yields encodes and decodes again to the same calls.
 * Seeds: tests/fuzz/corpus/fuzz_analyzer_block/ (written by the encoder:
 * build/tests/unit/test_analyzer_block --seeds DIR).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include <ingero/call_block.h>

#define PID 4242u

static struct ingero_cuda_call first[INGERO_BLOCK_MAX_CALLS], second[INGERO_BLOCK_MAX_CALLS];
static msgpack_sbuffer sb;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160] = "";
	size_t n = 1, n2;

	if (ingero_block_decode(data, size, PID, first, &n, err, sizeof err)) {
		if (n != 0 || strncmp(err, "call block: ", 12))
			abort();
		return 0;
	}
	if (n == 0 || n > INGERO_BLOCK_MAX_CALLS)
		abort();
	for (size_t i = 0; i < n; i++)
		if (first[i].pid != PID || first[i].tid == 0 || first[i].tid > INT_MAX)
			abort();
	if (ingero_block_encode(&sb, first, n))
		abort();
	if (ingero_block_decode(sb.data, sb.size, PID, second, &n2, err, sizeof err) || n2 != n ||
	    memcmp(first, second, n * sizeof first[0]))
		abort();
	return 0;
}
