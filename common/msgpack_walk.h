/*
 * msgpack_walk.h — checking untrusted msgpack before msgpack-c unpacks it.
 *
 * msgpack-c allocates an array's element storage from the declared count
 * before it reads a single element, so five bytes claiming 2^32 elements
 * would make it ask for ~100 GB.  The walk checks that every container's
 * elements are really present, that the buffer is exactly one value, has no
 * maps or extension types (our formats use neither) and is at most
 * max_depth deep.  After it, msgpack-c's allocations are bounded by a small
 * multiple of the input size.  Used by every decoder of untrusted msgpack:
 * wire messages (wire_decode.c) and stored call blocks (call_block.c).
 */
#ifndef INGERO_MSGPACK_WALK_H
#define INGERO_MSGPACK_WALK_H

#include <stddef.h>
#include <stdint.h>

#define INGERO_WALK_MAX_DEPTH 8

/* 0 when p[0..len) is exactly one msgpack value within those limits, and
 * no array declares more than max_elems elements (0: no such limit; the
 * bytes left still bound it: msgpack-c builds ~24 bytes per element, so a
 * large blob of one-byte integers would still cost 24 times its size). */
int ingero_msgpack_walk(const uint8_t *p, size_t len, int max_depth, uint64_t max_elems);

#endif
