/*
 * pack.c — one function per wire.h record type; field order is the
 * contract in include/ingero/wire.h.  Strings longer than the decoder's
 * INGERO_WIRE_MAX_STR are cut (keeping their end for file paths, whose tail
 * is what identifies them).
 */
#include "pack.h"

#include <string.h>

#include "ingero/api.h"
#include "ingero/wire.h"

static void pack_str(msgpack_packer *pk, const char *s, size_t n)
{
	if (!s) {
		msgpack_pack_nil(pk);
		return;
	}
	if (n > INGERO_WIRE_MAX_STR)
		n = INGERO_WIRE_MAX_STR;
	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

static void pack_tail(msgpack_packer *pk, const char *s, size_t n)
{
	if (n > INGERO_WIRE_MAX_STR) {
		s += n - INGERO_WIRE_MAX_STR;
		n = INGERO_WIRE_MAX_STR;
	}
	pack_str(pk, s, n);
}

void ingero_pack_header(msgpack_packer *pk, uint32_t sender_pid, uint32_t nrec)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint32(pk, INGERO_WIRE_VERSION);
	msgpack_pack_uint32(pk, sender_pid);
	msgpack_pack_array(pk, nrec);
}

void ingero_pack_hello(msgpack_packer *pk, uint32_t pid, uint32_t ppid, uint64_t start_ns,
		       const char *comm, const char *exe, const char *cmdline)
{
	msgpack_pack_array(pk, 7);
	msgpack_pack_uint32(pk, INGERO_REC_HELLO);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint32(pk, ppid);
	msgpack_pack_uint64(pk, start_ns);
	pack_str(pk, comm ? comm : "", comm ? strlen(comm) : 0);
	pack_tail(pk, exe ? exe : "", exe ? strlen(exe) : 0);
	pack_str(pk, cmdline ? cmdline : "", cmdline ? strlen(cmdline) : 0);
}

void ingero_pack_call(msgpack_packer *pk, const struct ingero_cuda_call *ev)
{
	int launch = ingero_api_class(ev->api) == INGERO_CLASS_LAUNCH && ev->kernel;
	msgpack_pack_array(pk, launch ? 19 : 13);
	msgpack_pack_uint32(pk, INGERO_REC_CALL);
	msgpack_pack_uint16(pk, ev->api);
	msgpack_pack_uint32(pk, ev->pid);
	msgpack_pack_uint32(pk, ev->tid);
	msgpack_pack_uint64(pk, ev->start_ns);
	msgpack_pack_uint64(pk, ev->dur_ns);
	msgpack_pack_uint64(pk, ev->stream);
	msgpack_pack_uint64(pk, ev->bytes);
	msgpack_pack_uint8(pk, ev->dir);
	msgpack_pack_uint8(pk, ev->flags);
	msgpack_pack_int32(pk, ev->ret);
	msgpack_pack_uint64(pk, ev->stack_id);
	msgpack_pack_uint64(pk, ev->kernel);
	if (launch) {
		for (int i = 0; i < 3; i++)
			msgpack_pack_uint32(pk, ev->grid[i]);
		for (int i = 0; i < 3; i++)
			msgpack_pack_uint32(pk, ev->block[i]);
	}
}

void ingero_pack_counts(msgpack_packer *pk, uint32_t pid, uint64_t made, uint64_t dropped)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint32(pk, INGERO_REC_COUNTS);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, made);
	msgpack_pack_uint64(pk, dropped);
}

void ingero_pack_kernel(msgpack_packer *pk, uint32_t pid, uint64_t addr, const char *name, size_t len)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint32(pk, INGERO_REC_KERNEL);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, addr);
	pack_str(pk, name ? name : "", name ? len : 0);
}

void ingero_pack_bye(msgpack_packer *pk, uint32_t pid, uint64_t end_ns)
{
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint32(pk, INGERO_REC_BYE);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, end_ns);
}

void ingero_pack_gpu(msgpack_packer *pk, uint32_t pid, uint64_t stream, uint64_t recorded_ns,
		     uint64_t done_ns, uint32_t flags)
{
	msgpack_pack_array(pk, 6);
	msgpack_pack_uint32(pk, INGERO_REC_GPU);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, stream);
	msgpack_pack_uint64(pk, recorded_ns);
	msgpack_pack_uint64(pk, done_ns);
	msgpack_pack_uint32(pk, flags);
}

void ingero_pack_gpu_stats(msgpack_packer *pk, uint32_t pid, uint64_t made, uint64_t lost)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint32(pk, INGERO_REC_GPU_STATS);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, made);
	msgpack_pack_uint64(pk, lost);
}

void ingero_pack_capture(msgpack_packer *pk, uint32_t pid, uint64_t t_ns, uint32_t recording)
{
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint32(pk, INGERO_REC_CAPTURE);
	msgpack_pack_uint32(pk, pid);
	msgpack_pack_uint64(pk, t_ns);
	msgpack_pack_uint32(pk, recording);
}

void ingero_pack_orphan(msgpack_packer *pk, uint32_t pid)
{
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint32(pk, INGERO_REC_ORPHAN);
	msgpack_pack_uint32(pk, pid);
}

int ingero_pack_stack(msgpack_packer *pk, const struct rrec_stack *st, uint32_t len,
		      ingero_symbolize_fn sym, void *arg)
{
	if (len < sizeof *st || !ingero_pack_valid_id(st->h.pid) || st->n_native > INGERO_WIRE_MAX_NATIVE ||
	    st->n_python > INGERO_WIRE_MAX_PYTHON ||
	    sizeof *st + (size_t)st->n_native * sizeof(uint64_t) > len)
		return -1;
	/* walk the Python frames once to check them before packing anything */
	const unsigned char *base = (const unsigned char *)st;
	size_t off = sizeof *st + (size_t)st->n_native * sizeof(uint64_t);
	for (unsigned i = 0; i < st->n_python; i++) {
		struct rrec_pyframe fr;
		if (off + sizeof fr > len)
			return -1;
		memcpy(&fr, base + off, sizeof fr);
		off += sizeof fr + fr.file_len + fr.func_len;
		if (off > len)
			return -1;
	}

	msgpack_pack_array(pk, 5);
	msgpack_pack_uint32(pk, INGERO_REC_STACK);
	msgpack_pack_uint32(pk, st->h.pid);
	msgpack_pack_uint64(pk, st->id);
	msgpack_pack_array(pk, st->n_native);
	for (unsigned i = 0; i < st->n_native; i++) {
		struct ingero_native_sym ns = { 0 };
		if (sym)
			sym(st->ips[i], i == 0, &ns, arg);
		msgpack_pack_array(pk, 4);
		msgpack_pack_uint64(pk, st->ips[i]);
		pack_str(pk, ns.symbol, ns.symbol ? strlen(ns.symbol) : 0);
		pack_tail(pk, ns.module, ns.module ? strlen(ns.module) : 0);
		msgpack_pack_uint64(pk, ns.offset);
	}
	msgpack_pack_array(pk, st->n_python);
	off = sizeof *st + (size_t)st->n_native * sizeof(uint64_t);
	for (unsigned i = 0; i < st->n_python; i++) {
		struct rrec_pyframe fr;
		memcpy(&fr, base + off, sizeof fr);
		const char *file = (const char *)base + off + sizeof fr;
		msgpack_pack_array(pk, 3);
		pack_tail(pk, file, fr.file_len);
		pack_str(pk, file + fr.file_len, fr.func_len);
		msgpack_pack_uint32(pk, fr.line);
		off += sizeof fr + fr.file_len + fr.func_len;
	}
	return 0;
}
