/*
 * test_preload_pack.c — what the sender packs (preload/pack.c) is what the
 * collector's decoder (common/wire_decode.c) reads back, record by record:
 * the wire contract checked from the producing side.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ingero/api.h"
#include "ingero/nccl.h"
#include "ingero/wire_decode.h"
#include "../../preload/pack.h"

static void fake_sym(uint64_t ip, int innermost, struct ingero_native_sym *out, void *arg)
{
	(void)innermost;
	(void)arg;
	out->symbol = ip == 0x1000 ? "main" : NULL;
	out->module = ip == 0x1000 ? "/usr/bin/prog" : NULL;
	out->offset = ip & 0xff;
}

static size_t build_stack(unsigned char *b, uint64_t id)
{
	struct rrec_stack *st = (struct rrec_stack *)b;
	memset(st, 0, sizeof *st);
	st->h.type = INGERO_RREC_STACK;
	st->h.pid = 42;
	st->id = id;
	st->n_native = 2;
	st->n_python = 2;
	st->ips[0] = 0x1000;
	st->ips[1] = 0x2042;
	size_t off = sizeof *st + 2 * sizeof(uint64_t);
	const char *files[2] = { "/srv/train.py", "/usr/lib/python3/torch/nn.py" };
	const char *funcs[2] = { "Model.forward", "<module>" };
	for (int i = 0; i < 2; i++) {
		struct rrec_pyframe fr = { (uint32_t)(10 + i), (uint16_t)strlen(files[i]), (uint16_t)strlen(funcs[i]) };
		memcpy(b + off, &fr, sizeof fr);
		memcpy(b + off + sizeof fr, files[i], fr.file_len);
		memcpy(b + off + sizeof fr + fr.file_len, funcs[i], fr.func_len);
		off += sizeof fr + fr.file_len + fr.func_len;
	}
	return off;
}

static void round_trip(void **state)
{
	(void)state;
	msgpack_sbuffer body, msg;
	msgpack_packer pk, mp;
	msgpack_sbuffer_init(&body);
	msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);

	ingero_pack_hello(&pk, 42, 1, 123, "python3", "/usr/bin/python3.11", "python3 train.py --epochs 2");
	struct ingero_cuda_call c = { 0 };
	c.api = INGERO_API_CUDA_MEMCPY_ASYNC;
	c.dir = INGERO_DIR_HTOD;
	c.flags = INGERO_FLAG_HOST_PINNED | INGERO_FLAG_ASYNC;
	c.ret = -2;
	c.pid = 43;
	c.tid = 44;
	c.start_ns = 1000;
	c.dur_ns = 55;
	c.stream = 0x7f00;
	c.bytes = 1 << 20;
	c.stack_id = 0xdeadbeefcafef00dull;
	ingero_pack_call(&pk, &c);
	struct ingero_cuda_call l = { 0 };
	l.api = INGERO_API_CU_LAUNCH_KERNEL;
	l.pid = 42;
	l.tid = 42;
	l.kernel = 0x5000;
	l.grid[0] = 8, l.grid[1] = 2, l.grid[2] = 1;
	l.block[0] = 256, l.block[1] = 1, l.block[2] = 1;
	ingero_pack_call(&pk, &l);
	ingero_pack_counts(&pk, 43, 10, 3);
	unsigned char sb[1024];
	size_t sl = build_stack(sb, 0x77);
	assert_int_equal(ingero_pack_stack(&pk, (struct rrec_stack *)sb, (uint32_t)sl, fake_sym, NULL), 0);
	ingero_pack_kernel(&pk, 42, 0x5000, "_Z6kernelv", 10);
	ingero_pack_bye(&pk, 42, 999);
	ingero_pack_capture(&pk, 42, 12345, 1);

	msgpack_sbuffer_init(&msg);
	msgpack_packer_init(&mp, &msg, msgpack_sbuffer_write);
	ingero_pack_header(&mp, 42, 8);
	msgpack_sbuffer_write(&msg, body.data, body.size);

	struct ingero_wire_batch b;
	assert_int_equal(ingero_wire_decode(msg.data, msg.size, &b), INGERO_WIRE_OK);
	assert_int_equal(b.sender_pid, 42);
	assert_int_equal(b.n_records, 8);
	assert_int_equal(b.n_calls, 2);
	const struct ingero_wire_record *r = b.records;
	assert_int_equal(r[0].type, INGERO_REC_HELLO);
	assert_int_equal(r[0].u.hello.ppid, 1);
	assert_int_equal(r[0].u.hello.cmdline.len, strlen("python3 train.py --epochs 2"));
	assert_int_equal(r[1].type, INGERO_REC_CALL);
	assert_memory_equal(&r[1].u.call, &c, sizeof c);
	assert_int_equal(r[2].type, INGERO_REC_CALL);
	assert_memory_equal(&r[2].u.call, &l, sizeof l);
	assert_int_equal(r[3].type, INGERO_REC_COUNTS);
	assert_int_equal(r[3].u.counts.made, 10);
	assert_int_equal(r[3].u.counts.dropped, 3);
	assert_int_equal(r[4].type, INGERO_REC_STACK);
	const struct ingero_wire_stack *s = &r[4].u.stack;
	assert_int_equal(s->id, 0x77);
	assert_int_equal(s->n_native, 2);
	assert_int_equal(s->native[0].ip, 0x1000);
	assert_int_equal(s->native[0].symbol.len, 4);
	assert_null(s->native[1].symbol.ptr);   /* unknown symbol: nil */
	assert_int_equal(s->n_python, 2);
	assert_int_equal(s->python[0].line, 10);
	assert_memory_equal(s->python[0].function.ptr, "Model.forward", 13);
	assert_memory_equal(s->python[1].file.ptr, "/usr/lib/python3/torch/nn.py", 28);
	assert_int_equal(r[5].type, INGERO_REC_KERNEL);
	assert_memory_equal(r[5].u.kernel.name.ptr, "_Z6kernelv", 10);
	assert_int_equal(r[6].type, INGERO_REC_BYE);
	assert_int_equal(r[6].u.bye.end_ns, 999);
	assert_int_equal(r[7].type, INGERO_REC_CAPTURE);
	assert_int_equal(r[7].u.capture.pid, 42);
	assert_int_equal(r[7].u.capture.t_ns, 12345);
	assert_int_equal(r[7].u.capture.recording, 1);
	ingero_wire_batch_free(&b);
	msgpack_sbuffer_destroy(&body);
	msgpack_sbuffer_destroy(&msg);
}

static void bad_stack_in_ring_is_refused(void **state)
{
	(void)state;
	unsigned char sb[1024];
	size_t sl = build_stack(sb, 0x78);
	msgpack_sbuffer body;
	msgpack_packer pk;
	msgpack_sbuffer_init(&body);
	msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
	for (size_t cut = 0; cut < sl; cut++)
		assert_int_equal(ingero_pack_stack(&pk, (struct rrec_stack *)sb, (uint32_t)cut, NULL, NULL), -1);
	assert_int_equal(body.size, 0);   /* nothing half-packed */
	msgpack_sbuffer_destroy(&body);
}

static void long_strings_are_cut_to_the_limit(void **state)
{
	(void)state;
	char *big = malloc(INGERO_WIRE_MAX_STR * 2 + 1);
	memset(big, 'a', INGERO_WIRE_MAX_STR * 2);
	big[INGERO_WIRE_MAX_STR * 2] = 0;
	memcpy(big + INGERO_WIRE_MAX_STR * 2 - 3, "end", 3);
	msgpack_sbuffer msg;
	msgpack_packer pk;
	msgpack_sbuffer_init(&msg);
	msgpack_packer_init(&pk, &msg, msgpack_sbuffer_write);
	ingero_pack_header(&pk, 1, 1);
	ingero_pack_hello(&pk, 1, 0, 0, "x", big, big);
	struct ingero_wire_batch b;
	assert_int_equal(ingero_wire_decode(msg.data, msg.size, &b), INGERO_WIRE_OK);
	assert_int_equal(b.records[0].u.hello.exe.len, INGERO_WIRE_MAX_STR);
	/* a path keeps its end */
	assert_memory_equal(b.records[0].u.hello.exe.ptr + INGERO_WIRE_MAX_STR - 3, "end", 3);
	ingero_wire_batch_free(&b);
	msgpack_sbuffer_destroy(&msg);
	free(big);
}

/* An NCCL call (COLL): every field back as packed, -1s kept, what was lost
 * added up; a bad ring form (short, no tid, unknown op) packs nothing. */
static void collective_round_trip(void **state)
{
	(void)state;
	struct rrec_coll c;
	memset(&c, 0, sizeof c);
	c.h.type = INGERO_RREC_COLL;
	c.h.pid = 42;
	c.tid = 43;
	c.op = INGERO_NCCL_ALL_REDUCE;
	c.cflags = INGERO_COLL_MARK_BEFORE | INGERO_COLL_MARK_AFTER;
	c.rank = 3;
	c.nranks = 4;
	c.peer = -1;
	c.dtype = 7;
	c.ret = 0;
	c.comm = 0x5550;
	c.comm_id = 0xfedcba9876543210ull;
	c.seq = 17;
	c.count = 1 << 20;
	c.stream = 0x7f00;
	c.start = 1000;
	c.dur = 250;
	c.lost = 2;
	msgpack_sbuffer msg;
	msgpack_packer pk;
	msgpack_sbuffer_init(&msg);
	msgpack_packer_init(&pk, &msg, msgpack_sbuffer_write);
	ingero_pack_header(&pk, 42, 1);
	assert_int_equal(ingero_pack_coll_record(&pk, &c, sizeof c, 5), 0);
	struct ingero_wire_batch b;
	assert_int_equal(ingero_wire_decode(msg.data, msg.size, &b), INGERO_WIRE_OK);
	assert_int_equal(b.n_records, 1);
	const struct ingero_wire_coll *w = &b.records[0].u.coll;
	assert_int_equal(b.records[0].type, INGERO_REC_COLL);
	assert_int_equal(w->pid, 42);
	assert_int_equal(w->tid, 43);
	assert_int_equal(w->op, INGERO_NCCL_ALL_REDUCE);
	assert_int_equal(w->flags, 6);
	assert_int_equal(w->rank, 3);
	assert_int_equal(w->nranks, 4);
	assert_int_equal(w->peer, -1);
	assert_int_equal(w->dtype, 7);
	assert_true(w->comm_id == 0xfedcba9876543210ull);
	assert_int_equal(w->seq, 17);
	assert_int_equal(w->count, 1 << 20);
	assert_int_equal(w->stream, 0x7f00);
	assert_int_equal(w->start_ns, 1000);
	assert_int_equal(w->dur_ns, 250);
	assert_int_equal(w->lost, 7);
	ingero_wire_batch_free(&b);
	size_t before = msg.size;
	assert_int_equal(ingero_pack_coll_record(&pk, &c, sizeof c - 1, 0), -1);
	c.tid = 0;
	assert_int_equal(ingero_pack_coll_record(&pk, &c, sizeof c, 0), -1);
	c.tid = 43;
	c.op = 63;
	assert_int_equal(ingero_pack_coll_record(&pk, &c, sizeof c, 0), -1);
	assert_int_equal(msg.size, before);
	msgpack_sbuffer_destroy(&msg);
}

/* An NVTX range (RANGE): fields and name back as packed (the name right
 * after the struct's last field, not after its padding), lost added up; a
 * bad ring form (short, no tid, unknown kind, a name past the record or the
 * limit) packs nothing. */
static void range_round_trip(void **state)
{
	(void)state;
	union {
		struct rrec_range r;
		char bytes[sizeof(struct rrec_range) + INGERO_RANGE_NAME_MAX];
	} u;
	memset(&u, 0, sizeof u);
	u.r.h.type = INGERO_RREC_RANGE;
	u.r.h.pid = 42;
	u.r.tid = 43;
	u.r.depth = 2;
	u.r.kind = INGERO_RANGE_PUSH;
	u.r.start = 1000;
	u.r.dur = 250;
	u.r.lost = 2;
	u.r.name_len = 8;
	memcpy(u.r.name, "donn\xc3\xa9" "es", 8);
	msgpack_sbuffer msg;
	msgpack_packer pk;
	msgpack_sbuffer_init(&msg);
	msgpack_packer_init(&pk, &msg, msgpack_sbuffer_write);
	ingero_pack_header(&pk, 42, 1);
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, (uint32_t)sizeof u.r + 8, 5), 0);
	struct ingero_wire_batch b;
	assert_int_equal(ingero_wire_decode(msg.data, msg.size, &b), INGERO_WIRE_OK);
	assert_int_equal(b.n_records, 1);
	const struct ingero_wire_range *w = &b.records[0].u.range;
	assert_int_equal(b.records[0].type, INGERO_REC_RANGE);
	assert_int_equal(w->pid, 42);
	assert_int_equal(w->tid, 43);
	assert_int_equal(w->depth, 2);
	assert_int_equal(w->kind, INGERO_RANGE_PUSH);
	assert_int_equal(w->start_ns, 1000);
	assert_int_equal(w->dur_ns, 250);
	assert_int_equal(w->lost, 7);
	assert_int_equal(w->name.len, 8);
	assert_memory_equal(w->name.ptr, "donn\xc3\xa9" "es", 8);
	ingero_wire_batch_free(&b);
	size_t before = msg.size;
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, (uint32_t)sizeof u.r - 1, 0), -1);
	/* the name's 8 bytes end past a record of the struct alone */
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, (uint32_t)sizeof u.r, 0), -1);
	u.r.tid = 0;
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, sizeof u.bytes, 0), -1);
	u.r.tid = 43;
	u.r.kind = INGERO_RANGE_KIND_MAX;
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, sizeof u.bytes, 0), -1);
	u.r.kind = INGERO_RANGE_MARK;
	u.r.name_len = INGERO_RANGE_NAME_MAX + 1;
	assert_int_equal(ingero_pack_range_record(&pk, u.bytes, sizeof u.bytes, 0), -1);
	assert_int_equal(msg.size, before);
	msgpack_sbuffer_destroy(&msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(collective_round_trip),
		cmocka_unit_test(range_round_trip),
		cmocka_unit_test(bad_stack_in_ring_is_refused),
		cmocka_unit_test(long_strings_are_cut_to_the_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
