/*
 * pack.h — encoding wire.h records with msgpack-c's packer.  Pure
 * functions of their inputs, so they are unit-tested against the decoder.
 */
#ifndef INGERO_PRELOAD_PACK_H
#define INGERO_PRELOAD_PACK_H

#include <msgpack.h>
#include <stdint.h>

#include "ingero/event.h"
#include "record.h"

/* A native frame as the sender resolved it (NULL strings become nil). */
struct ingero_native_sym {
	const char *symbol;
	const char *module;
	uint64_t offset;
};
typedef void (*ingero_symbolize_fn)(uint64_t ip, int innermost, struct ingero_native_sym *out,
				    void *arg);

/* A pid or tid the wire accepts (1..INT32_MAX): ring records come from
 * other processes and are checked before they are packed. */
static inline int ingero_pack_valid_id(uint32_t id)
{
	return id != 0 && id <= 0x7fffffffu;
}

void ingero_pack_header(msgpack_packer *pk, uint32_t sender_pid, uint32_t nrec);
void ingero_pack_hello(msgpack_packer *pk, uint32_t pid, uint32_t ppid, uint64_t start_ns,
		       const char *comm, const char *exe, const char *cmdline);
/* The most bytes one call record packs into: an array header and 19 integers of up to 9 bytes. */
#define INGERO_PACK_CALL_MAX (1 + 19 * 9)
void ingero_pack_call(msgpack_packer *pk, const struct ingero_cuda_call *ev);
void ingero_pack_counts(msgpack_packer *pk, uint32_t pid, uint64_t made, uint64_t dropped);
void ingero_pack_kernel(msgpack_packer *pk, uint32_t pid, uint64_t addr, const char *name, size_t len);
void ingero_pack_bye(msgpack_packer *pk, uint32_t pid, uint64_t end_ns);
void ingero_pack_orphan(msgpack_packer *pk, uint32_t pid);
void ingero_pack_gpu(msgpack_packer *pk, uint32_t pid, uint64_t stream, uint64_t recorded_ns,
		     uint64_t done_ns, uint32_t flags);
void ingero_pack_gpu_stats(msgpack_packer *pk, uint32_t pid, uint64_t made, uint64_t lost);
void ingero_pack_capture(msgpack_packer *pk, uint32_t pid, uint64_t t_ns, uint32_t recording);
/* A COLL record from its ring form (nccl_pack.c): checked, its ticks made
 * ns, its `lost` raised by send_lost (COLL records in batches the sender
 * could not send).  -1 when the ring form is bad (nothing packed). */
int ingero_pack_coll_record(msgpack_packer *pk, const void *buf, uint32_t len, uint64_t send_lost);
void ingero_pack_range_stats(msgpack_packer *pk, uint32_t pid, uint64_t lost);
/* An NVTX range (nvtx_pack.c), as ingero_pack_coll_record. */
int ingero_pack_range_record(msgpack_packer *pk, const void *buf, uint32_t len, uint64_t send_lost);
/* A STACK record from its ring form (len bytes); -1 if the ring form is
 * inconsistent (then nothing was packed). */
int ingero_pack_stack(msgpack_packer *pk, const struct rrec_stack *st, uint32_t len,
		      ingero_symbolize_fn sym, void *arg);

#endif
