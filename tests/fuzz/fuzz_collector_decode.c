/*
 * fuzz_collector_decode.c — libFuzzer target for the wire decoder
 * (common/wire_decode.c): any byte string is either refused or yields
 * records whose every field and string can be read in bounds.
 * Seeds: tests/fuzz/corpus/fuzz_collector_decode/ (collector_send seeds).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingero/wire_decode.h"

static volatile uint64_t sink;

static void touch(const struct ingero_wire_str *s)
{
	for (uint32_t i = 0; s->ptr && i < s->len; i++)
		sink += (unsigned char)s->ptr[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ingero_wire_batch b;

	if (ingero_wire_decode(data, size, &b))
		return 0;
	for (uint32_t i = 0; i < b.n_records; i++) {
		const struct ingero_wire_record *r = &b.records[i];

		switch (r->type) {
		case INGERO_REC_HELLO:
			touch(&r->u.hello.comm);
			touch(&r->u.hello.exe);
			touch(&r->u.hello.cmdline);
			break;
		case INGERO_REC_CALL:
			sink += r->u.call.start_ns + r->u.call.api;
			break;
		case INGERO_REC_STACK:
			for (uint32_t j = 0; j < r->u.stack.n_native; j++) {
				touch(&r->u.stack.native[j].symbol);
				touch(&r->u.stack.native[j].module);
			}
			for (uint32_t j = 0; j < r->u.stack.n_python; j++) {
				touch(&r->u.stack.python[j].file);
				touch(&r->u.stack.python[j].function);
			}
			break;
		case INGERO_REC_KERNEL:
			touch(&r->u.kernel.name);
			break;
		default:
			sink += r->type;
		}
	}
	ingero_wire_batch_free(&b);
	return 0;
}
