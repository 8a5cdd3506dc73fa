/*
 * fuzz_preload_stack.c — the sender turns STACK ring records (built by
 * producers in any process of the tree, so treated as untrusted bytes) into
 * wire records: whatever the bytes, ingero_pack_stack either refuses them
 * without packing anything, or packs a record the collector's decoder
 * accepts with the frame counts it declared.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingero/wire_decode.h"
#include "../../preload/pack.h"

static void sym(uint64_t ip, int innermost, struct ingero_native_sym *out, void *arg)
{
	(void)innermost;
	(void)arg;
	out->symbol = (ip & 1) ? "f" : NULL;
	out->module = (ip & 2) ? "/lib/m.so" : NULL;
	out->offset = ip & 0xfff;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	/* an aligned copy, as the ring hands records to the sender */
	uint64_t *buf = calloc(1, size + sizeof(struct rrec_stack) + 8);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	const struct rrec_stack *st = (const struct rrec_stack *)buf;
	msgpack_sbuffer body, msg;
	msgpack_packer pk, mp;
	msgpack_sbuffer_init(&body);
	msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
	int rc = ingero_pack_stack(&pk, st, (uint32_t)size, sym, NULL);
	if (rc != 0) {
		if (body.size != 0)
			abort();   /* refused, but something was packed */
	} else {
		msgpack_sbuffer_init(&msg);
		msgpack_packer_init(&mp, &msg, msgpack_sbuffer_write);
		ingero_pack_header(&mp, 1, 1);
		msgpack_sbuffer_write(&msg, body.data, body.size);
		struct ingero_wire_batch b;
		if (ingero_wire_decode(msg.data, msg.size, &b) != INGERO_WIRE_OK)
			abort();
		if (b.n_records != 1 || b.records[0].u.stack.n_native != st->n_native ||
		    b.records[0].u.stack.n_python != st->n_python)
			abort();
		ingero_wire_batch_free(&b);
		msgpack_sbuffer_destroy(&msg);
	}
	msgpack_sbuffer_destroy(&body);
	free(buf);
	return 0;
}
