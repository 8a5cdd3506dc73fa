/*
 * msgpack_sink.h — a faster sink for msgpack-c's packer into an sbuffer.
 *
 * msgpack-c hands its sink 1 to 9 bytes per integer; the generic
 * msgpack_sbuffer_write checks and memcpy's each piece through a call.
 * This sink copies short pieces by hand into room reserved beforehand
 * (ingero_sbuffer_reserve) and falls back to msgpack_sbuffer_write, which
 * grows the buffer, when there is none.  Used by the call-block encoder
 * (common/call_block.c) and the preload's sender (one record per CUDA call).
 */
#ifndef INGERO_MSGPACK_SINK_H
#define INGERO_MSGPACK_SINK_H

#include <msgpack.h>
#include <stdlib.h>

static inline int ingero_sbuffer_sink(void *data, const char *buf, size_t len)
{
	msgpack_sbuffer *sb = data;

	if (sb->alloc - sb->size < len)
		return msgpack_sbuffer_write(sb, buf, len);
	char *d = sb->data + sb->size;
	for (size_t i = 0; i < len; i++)
		d[i] = buf[i];
	sb->size += len;
	return 0;
}

/* Room for `bytes` more bytes (doubling from 4 KiB); -1 when out of memory. */
static inline int ingero_sbuffer_reserve(msgpack_sbuffer *sb, size_t bytes)
{
	size_t need = sb->size + bytes;

	if (need <= sb->alloc)
		return 0;
	size_t cap = sb->alloc ? sb->alloc : 4096;
	while (cap < need)
		cap *= 2;
	char *p = realloc(sb->data, cap);
	if (!p)
		return -1;
	sb->data = p;
	sb->alloc = cap;
	return 0;
}

#endif
