/*
 * collector_wire.h — a test-side encoder for wire.h messages (msgpack-c),
 * shared by the collector's unit tests, fuzz seeds and test senders.  It
 * writes exactly the layout of include/ingero/wire.h; it is not the preload
 * library's encoder, on purpose: the collector's tests must not depend on
 * the code they check against.
 *
 * Usage: tw_begin(&w, sender, n_records), then n_records tw_* records,
 * then w.sb.data / w.sb.size is the message; tw_free(&w).
 */
#ifndef INGERO_TESTS_COLLECTOR_WIRE_H
#define INGERO_TESTS_COLLECTOR_WIRE_H

#include <stdio.h>
#include <string.h>

#include <msgpack.h>

#include "ingero/event.h"
#include "ingero/wire.h"

struct tw {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static inline void tw_str(struct tw *w, const char *s)
{
	if (!s) {
		msgpack_pack_nil(&w->pk);
		return;
	}
	msgpack_pack_str(&w->pk, strlen(s));
	msgpack_pack_str_body(&w->pk, s, strlen(s));
}

static inline void tw_begin_v(struct tw *w, unsigned version, unsigned sender, unsigned n_records)
{
	msgpack_sbuffer_init(&w->sb);
	msgpack_packer_init(&w->pk, &w->sb, msgpack_sbuffer_write);
	msgpack_pack_array(&w->pk, 3);
	msgpack_pack_unsigned_int(&w->pk, version);
	msgpack_pack_unsigned_int(&w->pk, sender);
	msgpack_pack_array(&w->pk, n_records);
}

static inline void tw_begin(struct tw *w, unsigned sender, unsigned n_records)
{
	tw_begin_v(w, INGERO_WIRE_VERSION, sender, n_records);
}

static inline void tw_free(struct tw *w)
{
	msgpack_sbuffer_destroy(&w->sb);
}

static inline void tw_hello(struct tw *w, unsigned pid, unsigned ppid, uint64_t start_ns,
			    const char *comm, const char *exe, const char *cmdline)
{
	msgpack_pack_array(&w->pk, 7);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_HELLO);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_unsigned_int(&w->pk, ppid);
	msgpack_pack_uint64(&w->pk, start_ns);
	tw_str(w, comm);
	tw_str(w, exe);
	tw_str(w, cmdline);
}

/* A CALL; with launch geometry when c->grid[0] is set. */
static inline void tw_call(struct tw *w, const struct ingero_cuda_call *c)
{
	int launch = c->grid[0] != 0;

	msgpack_pack_array(&w->pk, launch ? 19 : 13);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_CALL);
	msgpack_pack_unsigned_int(&w->pk, c->api);
	msgpack_pack_unsigned_int(&w->pk, c->pid);
	msgpack_pack_unsigned_int(&w->pk, c->tid);
	msgpack_pack_uint64(&w->pk, c->start_ns);
	msgpack_pack_uint64(&w->pk, c->dur_ns);
	msgpack_pack_uint64(&w->pk, c->stream);
	msgpack_pack_uint64(&w->pk, c->bytes);
	msgpack_pack_unsigned_int(&w->pk, c->dir);
	msgpack_pack_unsigned_int(&w->pk, c->flags);
	msgpack_pack_int(&w->pk, c->ret);
	msgpack_pack_uint64(&w->pk, c->stack_id);
	msgpack_pack_uint64(&w->pk, c->kernel);
	if (launch) {
		for (int i = 0; i < 3; i++)
			msgpack_pack_unsigned_int(&w->pk, c->grid[i]);
		for (int i = 0; i < 3; i++)
			msgpack_pack_unsigned_int(&w->pk, c->block[i]);
	}
}

static inline void tw_counts(struct tw *w, unsigned pid, uint64_t made, uint64_t dropped)
{
	msgpack_pack_array(&w->pk, 4);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_COUNTS);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, made);
	msgpack_pack_uint64(&w->pk, dropped);
}

/* A STACK with n native frames named sym0.. in module mod, and one Python frame. */
static inline void tw_stack(struct tw *w, unsigned pid, uint64_t id, unsigned n_native,
			    const char *mod, unsigned n_python)
{
	char name[32];

	msgpack_pack_array(&w->pk, 5);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_STACK);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, id);
	msgpack_pack_array(&w->pk, n_native);
	for (unsigned i = 0; i < n_native; i++) {
		msgpack_pack_array(&w->pk, 4);
		msgpack_pack_uint64(&w->pk, 0x400000 + 16 * i);
		snprintf(name, sizeof name, "sym%u", i);
		tw_str(w, i == n_native - 1 ? NULL : name);
		tw_str(w, mod);
		msgpack_pack_uint64(&w->pk, i);
	}
	msgpack_pack_array(&w->pk, n_python);
	for (unsigned i = 0; i < n_python; i++) {
		msgpack_pack_array(&w->pk, 3);
		tw_str(w, "train.py");
		tw_str(w, "step");
		msgpack_pack_unsigned_int(&w->pk, 57 + i);
	}
}

static inline void tw_kernel(struct tw *w, unsigned pid, uint64_t addr, const char *name)
{
	msgpack_pack_array(&w->pk, 4);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_KERNEL);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, addr);
	tw_str(w, name);
}

static inline void tw_bye(struct tw *w, unsigned pid, uint64_t end_ns)
{
	msgpack_pack_array(&w->pk, 3);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_BYE);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, end_ns);
}

static inline void tw_orphan(struct tw *w, unsigned pid)
{
	msgpack_pack_array(&w->pk, 2);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_ORPHAN);
	msgpack_pack_unsigned_int(&w->pk, pid);
}

static inline void tw_gpu(struct tw *w, unsigned pid, uint64_t stream, uint64_t rec, uint64_t done,
			  unsigned flags)
{
	msgpack_pack_array(&w->pk, 6);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_GPU);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, stream);
	msgpack_pack_uint64(&w->pk, rec);
	msgpack_pack_uint64(&w->pk, done);
	msgpack_pack_unsigned_int(&w->pk, flags);
}

static inline void tw_gpu_stats(struct tw *w, unsigned pid, uint64_t made, uint64_t lost)
{
	msgpack_pack_array(&w->pk, 4);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_GPU_STATS);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, made);
	msgpack_pack_uint64(&w->pk, lost);
}

static inline void tw_capture(struct tw *w, unsigned pid, uint64_t t, unsigned recording)
{
	msgpack_pack_array(&w->pk, 4);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_CAPTURE);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_uint64(&w->pk, t);
	msgpack_pack_unsigned_int(&w->pk, recording);
}

/* An NVTX range (wire.h RANGE). */
static inline void tw_range(struct tw *w, unsigned pid, unsigned tid, uint64_t start, uint64_t dur, unsigned depth,
			    unsigned kind, const char *name, uint64_t lost)
{
	msgpack_pack_array(&w->pk, 9);
	msgpack_pack_unsigned_int(&w->pk, INGERO_REC_RANGE);
	msgpack_pack_unsigned_int(&w->pk, pid);
	msgpack_pack_unsigned_int(&w->pk, tid);
	msgpack_pack_uint64(&w->pk, start);
	msgpack_pack_uint64(&w->pk, dur);
	msgpack_pack_unsigned_int(&w->pk, depth);
	msgpack_pack_unsigned_int(&w->pk, kind);
	msgpack_pack_str(&w->pk, strlen(name));
	msgpack_pack_str_body(&w->pk, name, strlen(name));
	msgpack_pack_uint64(&w->pk, lost);
}

/* A record of a type this version does not know. */
static inline void tw_unknown(struct tw *w)
{
	msgpack_pack_array(&w->pk, 2);
	msgpack_pack_unsigned_int(&w->pk, 99);
	tw_str(w, "future");
}

/* A plausible call of the given api. */
static inline struct ingero_cuda_call tw_sample_call(unsigned api, unsigned pid, unsigned tid,
						     uint64_t start_ns)
{
	struct ingero_cuda_call c;

	memset(&c, 0, sizeof c);
	c.api = (uint16_t)api;
	c.pid = pid;
	c.tid = tid;
	c.start_ns = start_ns;
	c.dur_ns = 1000 + start_ns % 777;
	c.stream = 0x7f0000001000ull;
	c.bytes = 1u << 20;
	c.dir = INGERO_DIR_HTOD;
	c.flags = INGERO_FLAG_ASYNC;
	c.ret = 0;
	return c;
}

#endif
