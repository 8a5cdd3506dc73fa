/*
 * fuzz_collector_pyline.c — the decoders of what the collector reads from a
 * traced CPython (common/python_layout.c), whose bytes a process can make
 * anything: a line table of either format for any offset, 3.13's
 * _Py_DebugOffsets, and a str object through a bounded reader.  Whatever
 * the bytes: no read outside them, no overflow, a line of -1 or at least
 * 1, a str no longer than asked for.
 */
#include <stdint.h>
#include <string.h>

#include "ingero/python_layout.h"

struct region {
	const uint8_t *p;
	size_t n;
};

static int rd(void *ctx, uint64_t addr, void *out, size_t n)
{
	const struct region *r = ctx;
	if (addr < 0x1000 || addr - 0x1000 > r->n || n > r->n - (addr - 0x1000))
		return -1;
	memcpy(out, r->p + (addr - 0x1000), n);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	int minor = 10 + data[0] % 4;
	int off = (int)(data[1] | data[2] << 8) - 16;
	const uint8_t *t = data + 3;
	size_t n = size - 3;
	int line = ingero_py_line(minor, t, n, 1000, off);
	if (line != -1 && line < 1)   /* a line, or none */
		__builtin_trap();
	struct ingero_py_layout L;
	(void)ingero_py_layout_debug(&L, t, n);
	struct region r = { t, n };
	char out[40];
	long k = ingero_py_str(ingero_py_layout(minor), rd, &r, 0x1000 + (data[1] % 64), 0, out, sizeof out,
			       data[2] & 1);
	if (k > (long)sizeof out)
		__builtin_trap();
	return 0;
}
