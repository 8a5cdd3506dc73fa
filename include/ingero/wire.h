/*
 * wire.h — the message format from the preload library to the collector.
 *
 * Transport: nng push (preload) → pull (collector) on the endpoint from
 * config.h.  One nng message is one msgpack value:
 *
 *     [ version, sender_pid, [ record, record, ... ] ]
 *
 *   version     uint  INGERO_WIRE_VERSION; anything else is rejected.
 *   sender_pid  uint  getpid() of the process that owns the nng socket.
 *   records     array of records, each an array whose first element is its
 *               type.  A sender speaks for itself and for its descendants
 *               (forked children write into the sender's shared ring), so
 *               a record's pid may differ from sender_pid.
 *
 * Records (fields in this order; "str" is msgpack str or bin):
 *
 *   HELLO  [1, pid, ppid, start_ns, comm:str, exe:str, cmdline:str]
 *          A process starts being traced (library init, or a fork child's
 *          first event).  cmdline has its arguments joined by spaces and may
 *          be truncated.
 *   CALL   [2, api, pid, tid, start_ns, dur_ns, stream, bytes, dir, flags,
 *           ret:int, stack_id, kernel]
 *          or the same followed by [gx, gy, gz, bx, by, bz] for launches.
 *          Fields as in struct ingero_cuda_call (event.h).
 *   COUNTS [3, pid, made, dropped]
 *          Cumulative for that process since it started being traced:
 *          calls recorded and calls lost (ring full, collector absent or
 *          slow).  The latest value wins; the collector keeps the maximum.
 *          made == calls the collector stored + dropped, when nothing else
 *          was lost after the sender.
 *   STACK  [4, pid, stack_id, native:[[ip, symbol:str|nil, module:str|nil,
 *           offset], ...], python:[[file:str, function:str, line], ...]]
 *          Defines a stack id (a 64-bit hash of its frames, so processes
 *          intern independently without collisions in practice).  Frames
 *          are innermost first.  Sent once per sender before, or in the
 *          same message as, the first CALL that refers to it.
 *   KERNEL [5, pid, addr, name:str]
 *          Names a launched function address in that process's image.
 *   BYE    [6, pid, end_ns]
 *          The process is exiting (sent when the library sees it).
 *   ORPHAN [7, pid]
 *          Sent by a ring's owner as it stops: pid (a fork child writing
 *          into that ring) was still running.  Nothing will drain the ring
 *          after this, and the child cannot send (nng is not fork-safe), so
 *          its CUDA calls from here on are lost, and cannot be counted.
 *   GPU    [8, pid, stream, recorded_ns, done_ns, flags]
 *          A GPU mark (measured GPU time): every piece of work the process
 *          had queued on `stream` before recorded_ns had finished on the
 *          GPU at done_ns (GPU clock, in CLOCK_MONOTONIC).  flags: 1 the
 *          mark was recorded by the library after the stream went quiet
 *          (trailing), 2 the GPU time was clamped into [recorded, seen],
 *          4 no GPU timestamp (done = when the library saw it complete).
 *   GPU_STATS [9, pid, made, lost]
 *          Cumulative marks recorded and lost (queue full, a driver error,
 *          outstanding at exit).  The latest value wins.
 *   CAPTURE [10, pid, t_ns, recording]
 *          The process asked to record (recording 1: cudaProfilerStart) or
 *          to pause (0: cudaProfilerStop) at t_ns, under
 *          INGERO_CAPTURE=cudaProfilerApi; such a process starts paused, so
 *          its first CAPTURE is a 1.  Sent on each change, not repeated.
 *   COLL   [11, pid, tid, op, comm, comm_id, seq, rank:int, nranks:int, count,
 *           dtype:int, peer:int, stream, start_ns, dur_ns, ret:int, flags, lost]
 *          An NCCL call (include/ingero/nccl.h: op, flags), as table
 *          collectives stores it (docs/schema.md): rank, nranks, dtype and
 *          peer are -1 when unknown or not the call's.  lost: COLL records
 *          the process lost before this one (ring full); the latest wins.
 *   RANGE  [12, pid, tid, start_ns, dur_ns, depth, kind, name:str, lost]
 *          An NVTX range of the program's (nvtx_hooks.c), sent when it
 *          ends: kind 1 a thread's pushed range (depth: how many of the
 *          thread's ranges enclosed it), 2 a started/ended one (may end on
 *          another thread; depth 0), 3 a mark (dur 0).  lost: RANGE records
 *          the process lost before this one; the latest wins.
 *   RANGE_STATS [13, pid, lost]
 *          Sent as the process stops (only when it lost some): RANGE
 *          records it lost in all, those after its last RANGE included.
 *          The latest wins, as for RANGE's lost.
 *
 * Unknown record types are skipped and counted by the decoder (forward
 * compatibility within a version); a record of a known type with missing
 * fields or wrong types makes the whole message malformed: it is rejected
 * and counted, and nothing from it is stored.
 */
#ifndef INGERO_WIRE_H
#define INGERO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define INGERO_WIRE_VERSION 1

enum ingero_record_type {
	INGERO_REC_HELLO = 1,
	INGERO_REC_CALL = 2,
	INGERO_REC_COUNTS = 3,
	INGERO_REC_STACK = 4,
	INGERO_REC_KERNEL = 5,
	INGERO_REC_BYE = 6,
	INGERO_REC_ORPHAN = 7,
	INGERO_REC_GPU = 8,
	INGERO_REC_GPU_STATS = 9,
	INGERO_REC_CAPTURE = 10,
	INGERO_REC_COLL = 11,
	INGERO_REC_RANGE = 12,
	INGERO_REC_RANGE_STATS = 13,
};

/* RANGE kinds (wire, and nvtx_ranges.kind as text) */
enum ingero_range_kind {
	INGERO_RANGE_PUSH = 1,
	INGERO_RANGE_START = 2,
	INGERO_RANGE_MARK = 3,
	INGERO_RANGE_KIND_MAX
};

static inline const char *ingero_range_kind_name(unsigned kind)
{
	return kind == INGERO_RANGE_PUSH ? "push" : kind == INGERO_RANGE_START ? "start" : "mark";
}

/* The longest range name sent; longer ones are cut (UTF-8 kept whole). */
#define INGERO_RANGE_NAME_MAX 160

/* Limits the decoder enforces; the encoder never exceeds them. */
#define INGERO_WIRE_MAX_MSG_BYTES   (16u << 20)
#define INGERO_WIRE_MAX_STR         4096
#define INGERO_WIRE_MAX_NATIVE      128
#define INGERO_WIRE_MAX_PYTHON      64

#endif
