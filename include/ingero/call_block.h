/*
 * call_block.h — how CUDA calls are stored: blocks of up to
 * INGERO_BLOCK_MAX_CALLS calls of one process in one row of call_blocks
 * (schema.h, version 2).
 *
 * Why blocks: one SQLite row per call costs ~1–2 µs of b-tree and index
 * work, which caps a 2-core machine far below the preload library's rate;
 * a block row costs the same and carries a thousand calls.  The cuda_calls
 * virtual table (analyzer, and the SQLite extension for the sqlite3 shell)
 * shows them again as one row per call.
 *
 * The blob is one msgpack array, columns rather than rows so that values
 * alike sit together:
 *   [INGERO_BLOCK_FORMAT, n, tid, api, start, dur, stream, bytes, dir,
 *    flags, ret, stack_id, kernel, grid_x, grid_y, grid_z,
 *    block_x, block_y, block_z]
 * Each column is either one integer (every call has that value) or an array
 * of exactly n integers.  start holds the first call's start_ns, then each
 * call's difference from the one before (signed: threads interleave).
 * Unsigned 64-bit values (stream, stack_id, kernel) travel as msgpack
 * unsigned integers.  The pid is the row's, not the blob's.
 */
#ifndef INGERO_CALL_BLOCK_H
#define INGERO_CALL_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "event.h"

#define INGERO_BLOCK_FORMAT 1
#define INGERO_BLOCK_MAX_CALLS 1024
#define INGERO_BLOCK_COLUMNS 17

/* The blob for c[0..n), 0 < n <= INGERO_BLOCK_MAX_CALLS, replacing sb's
 * contents (the buffer is reused: no allocation once it is big enough).
 * 0, or -1 when out of memory. */
int ingero_block_encode(msgpack_sbuffer *sb, const struct ingero_cuda_call *c, size_t n);

/* call_blocks.first_ns and last_ns for c[0..n), n > 0: the smallest and
 * largest start_ns as SQLite compares them (signed 64-bit), so that
 * "last_ns >= T" never skips a block holding a call at T or later. */
void ingero_block_span(const struct ingero_cuda_call *c, size_t n, int64_t *first, int64_t *last);

/* The calls of one blob into out[0..*n), every call given `pid`.
 * out must hold INGERO_BLOCK_MAX_CALLS.  0, or -1 with a reason in err
 * (malformed, wrong format, values out of range) and *n = 0. */
int ingero_block_decode(const void *data, size_t len, uint32_t pid,
			struct ingero_cuda_call *out, size_t *n, char *err, size_t errlen);

#endif
