/*
 * wire_decode.c — the collector's side of wire.h: one nng message in,
 * a fully checked array of records out (or an error and nothing).
 *
 * Two passes.  First a bounds walk over the raw msgpack bytes
 * (msgpack_walk.h: it bounds what msgpack-c will allocate), at most
 * MAX_DEPTH deep.  msgpack-c then builds the object
 * tree, and the second pass checks each record's fields against wire.h and
 * fills struct ingero_wire_record, frames going into the msgpack zone so
 * that one free releases everything.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "ingero/api.h"
#include "ingero/wire_decode.h"
#include "ingero/nccl.h"
#include "msgpack_walk.h"

/* message → records → record → frame list → frame */
#define MAX_DEPTH 6

/* --- typed field access ------------------------------------------------------ */

static int get_u64(const msgpack_object *o, uint64_t *v)
{
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -1;
	*v = o->via.u64;
	return 0;
}

static int get_u32(const msgpack_object *o, uint32_t *v)
{
	uint64_t x;

	if (get_u64(o, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* a pid or tid: a positive 32-bit value that fits pid_t */
static int get_id(const msgpack_object *o, uint32_t *v)
{
	return get_u32(o, v) || *v == 0 || *v > INT_MAX ? -1 : 0;
}

static int get_i32(const msgpack_object *o, int32_t *v)
{
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT32_MAX) {
		*v = (int32_t)o->via.u64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER && o->via.i64 >= INT32_MIN) {
		*v = (int32_t)o->via.i64;
		return 0;
	}
	return -1;
}

/* str or bin (nil too when nullable); returns INGERO_WIRE_E_* */
static int get_str(const msgpack_object *o, struct ingero_wire_str *s, int nullable)
{
	if (o->type == MSGPACK_OBJECT_NIL && nullable) {
		s->ptr = NULL;
		s->len = 0;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_STR) {
		s->ptr = o->via.str.ptr;
		s->len = o->via.str.size;
	} else if (o->type == MSGPACK_OBJECT_BIN) {
		s->ptr = o->via.bin.ptr;
		s->len = o->via.bin.size;
	} else {
		return INGERO_WIRE_E_RECORD;
	}
	if (s->len > INGERO_WIRE_MAX_STR)
		return INGERO_WIRE_E_LIMIT;
	if (!s->ptr)
		s->ptr = "";   /* a zero-length str may carry no pointer */
	return 0;
}

#define FIELD_U64(i, dst)  do { if (get_u64(&f[i], (dst))) return INGERO_WIRE_E_RECORD; } while (0)
#define FIELD_U32(i, dst)  do { if (get_u32(&f[i], (dst))) return INGERO_WIRE_E_RECORD; } while (0)
#define FIELD_ID(i, dst)   do { if (get_id(&f[i], (dst))) return INGERO_WIRE_E_RECORD; } while (0)
#define FIELD_STR(i, dst, nullable) \
	do { int e_ = get_str(&f[i], (dst), (nullable)); if (e_) return e_; } while (0)

/* --- records ------------------------------------------------------------------ */

static int dec_hello(const msgpack_object *f, uint32_t n, struct ingero_wire_hello *h)
{
	if (n < 7)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &h->pid);
	FIELD_U32(2, &h->ppid);
	FIELD_U64(3, &h->start_ns);
	FIELD_STR(4, &h->comm, 0);
	FIELD_STR(5, &h->exe, 0);
	FIELD_STR(6, &h->cmdline, 0);
	return 0;
}

static int dec_call(const msgpack_object *f, uint32_t n, struct ingero_cuda_call *c)
{
	uint32_t api, dir, flags;

	/* 13 fields, or 19 with launch geometry; longer is a newer sender */
	if (n < 13 || (n > 13 && n < 19))
		return INGERO_WIRE_E_RECORD;
	memset(c, 0, sizeof(*c));
	FIELD_U32(1, &api);
	if (api == 0 || api >= INGERO_API_MAX)
		return INGERO_WIRE_E_RECORD;
	c->api = (uint16_t)api;
	FIELD_ID(2, &c->pid);
	FIELD_ID(3, &c->tid);
	FIELD_U64(4, &c->start_ns);
	FIELD_U64(5, &c->dur_ns);
	FIELD_U64(6, &c->stream);
	FIELD_U64(7, &c->bytes);
	FIELD_U32(8, &dir);
	FIELD_U32(9, &flags);
	if (dir > INGERO_DIR_PEER || flags > UINT8_MAX)
		return INGERO_WIRE_E_RECORD;
	c->dir = (uint8_t)dir;
	c->flags = (uint8_t)flags;
	if (get_i32(&f[10], &c->ret))
		return INGERO_WIRE_E_RECORD;
	FIELD_U64(11, &c->stack_id);
	FIELD_U64(12, &c->kernel);
	if (n >= 19) {
		for (int i = 0; i < 3; i++) {
			FIELD_U32(13 + i, &c->grid[i]);
			FIELD_U32(16 + i, &c->block[i]);
		}
	}
	return 0;
}

static int dec_counts(const msgpack_object *f, uint32_t n, struct ingero_wire_counts *c)
{
	if (n < 4)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &c->pid);
	FIELD_U64(2, &c->made);
	FIELD_U64(3, &c->dropped);
	return 0;
}

static int dec_native(const msgpack_object *o, struct ingero_wire_native_frame *fr)
{
	const msgpack_object *f;

	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 4)
		return INGERO_WIRE_E_RECORD;
	f = o->via.array.ptr;
	FIELD_U64(0, &fr->ip);
	FIELD_STR(1, &fr->symbol, 1);
	FIELD_STR(2, &fr->module, 1);
	FIELD_U64(3, &fr->offset);
	return 0;
}

static int dec_python(const msgpack_object *o, struct ingero_wire_python_frame *fr)
{
	const msgpack_object *f;

	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 3)
		return INGERO_WIRE_E_RECORD;
	f = o->via.array.ptr;
	FIELD_STR(0, &fr->file, 0);
	FIELD_STR(1, &fr->function, 0);
	FIELD_U32(2, &fr->line);
	return 0;
}

static int dec_stack(const msgpack_object *f, uint32_t n, struct ingero_wire_stack *s,
		     msgpack_zone *z)
{
	const msgpack_object *nat = &f[3], *py = &f[4];
	struct ingero_wire_native_frame *nf = NULL;
	struct ingero_wire_python_frame *pf = NULL;
	int e;

	if (n < 5)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &s->pid);
	FIELD_U64(2, &s->id);
	if (nat->type != MSGPACK_OBJECT_ARRAY || py->type != MSGPACK_OBJECT_ARRAY)
		return INGERO_WIRE_E_RECORD;
	if (nat->via.array.size > INGERO_WIRE_MAX_NATIVE || py->via.array.size > INGERO_WIRE_MAX_PYTHON)
		return INGERO_WIRE_E_LIMIT;
	s->n_native = nat->via.array.size;
	s->n_python = py->via.array.size;
	if (s->n_native) {
		nf = msgpack_zone_malloc(z, s->n_native * sizeof(*nf));
		if (!nf)
			return INGERO_WIRE_E_NOMEM;
		for (uint32_t i = 0; i < s->n_native; i++)
			if ((e = dec_native(&nat->via.array.ptr[i], &nf[i])))
				return e;
	}
	if (s->n_python) {
		pf = msgpack_zone_malloc(z, s->n_python * sizeof(*pf));
		if (!pf)
			return INGERO_WIRE_E_NOMEM;
		for (uint32_t i = 0; i < s->n_python; i++)
			if ((e = dec_python(&py->via.array.ptr[i], &pf[i])))
				return e;
	}
	s->native = nf;
	s->python = pf;
	return 0;
}

static int dec_kernel(const msgpack_object *f, uint32_t n, struct ingero_wire_kernel *k)
{
	if (n < 4)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &k->pid);
	FIELD_U64(2, &k->addr);
	FIELD_STR(3, &k->name, 0);
	return 0;
}

static int dec_bye(const msgpack_object *f, uint32_t n, struct ingero_wire_bye *b)
{
	if (n < 3)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &b->pid);
	FIELD_U64(2, &b->end_ns);
	return 0;
}

static int dec_orphan(const msgpack_object *f, uint32_t n, struct ingero_wire_orphan *o)
{
	if (n < 2)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &o->pid);
	return 0;
}

static int dec_gpu(const msgpack_object *f, uint32_t n, struct ingero_wire_gpu *g)
{
	if (n < 6)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &g->pid);
	FIELD_U64(2, &g->stream);
	FIELD_U64(3, &g->recorded_ns);
	FIELD_U64(4, &g->done_ns);
	FIELD_U32(5, &g->flags);
	/* a completion before its recording cannot be: the sender clamps */
	if (g->done_ns < g->recorded_ns)
		return INGERO_WIRE_E_RECORD;
	return 0;
}

static int dec_gpu_stats(const msgpack_object *f, uint32_t n, struct ingero_wire_gpu_stats *g)
{
	if (n < 4)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &g->pid);
	FIELD_U64(2, &g->made);
	FIELD_U64(3, &g->lost);
	return 0;
}

static int dec_capture(const msgpack_object *f, uint32_t n, struct ingero_wire_capture *c)
{
	if (n < 4)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &c->pid);
	FIELD_U64(2, &c->t_ns);
	FIELD_U32(3, &c->recording);
	if (c->recording > 1)
		return INGERO_WIRE_E_RECORD;
	return 0;
}

#define FIELD_I32(i, dst)  do { if (get_i32(&f[i], (dst))) return INGERO_WIRE_E_RECORD; } while (0)

static int dec_coll(const msgpack_object *f, uint32_t n, struct ingero_wire_coll *c)
{
	if (n < 18)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &c->pid);
	FIELD_ID(2, &c->tid);
	FIELD_U32(3, &c->op);
	FIELD_U64(4, &c->comm);
	FIELD_U64(5, &c->comm_id);
	FIELD_U64(6, &c->seq);
	FIELD_I32(7, &c->rank);
	FIELD_I32(8, &c->nranks);
	FIELD_U64(9, &c->count);
	FIELD_I32(10, &c->dtype);
	FIELD_I32(11, &c->peer);
	FIELD_U64(12, &c->stream);
	FIELD_U64(13, &c->start_ns);
	FIELD_U64(14, &c->dur_ns);
	FIELD_I32(15, &c->ret);
	FIELD_U32(16, &c->flags);
	FIELD_U64(17, &c->lost);
	/* an op this version has no name for would have nothing to be stored as */
	if (c->op == 0 || c->op >= INGERO_NCCL_MAX || !ingero_nccl_name(c->op))
		return INGERO_WIRE_E_RECORD;
	return 0;
}

static int dec_range(const msgpack_object *f, uint32_t n, struct ingero_wire_range *r)
{
	if (n < 9)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &r->pid);
	FIELD_ID(2, &r->tid);
	FIELD_U64(3, &r->start_ns);
	FIELD_U64(4, &r->dur_ns);
	FIELD_U32(5, &r->depth);
	FIELD_U32(6, &r->kind);
	FIELD_STR(7, &r->name, 0);
	FIELD_U64(8, &r->lost);
	if (r->kind == 0 || r->kind >= INGERO_RANGE_KIND_MAX)
		return INGERO_WIRE_E_RECORD;
	return 0;
}

static int dec_range_stats(const msgpack_object *f, uint32_t n, struct ingero_wire_range_stats *r)
{
	if (n < 3)
		return INGERO_WIRE_E_RECORD;
	FIELD_ID(1, &r->pid);
	FIELD_U64(2, &r->lost);
	return 0;
}

/* One record; 1 when its type is unknown (skipped), 0 when decoded. */
static int dec_record(const msgpack_object *o, struct ingero_wire_record *r, msgpack_zone *z)
{
	const msgpack_object *f;
	uint32_t n;

	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size < 1)
		return INGERO_WIRE_E_RECORD;
	f = o->via.array.ptr;
	n = o->via.array.size;
	FIELD_U32(0, &r->type);
	switch (r->type) {
	case INGERO_REC_HELLO:  return dec_hello(f, n, &r->u.hello);
	case INGERO_REC_CALL:   return dec_call(f, n, &r->u.call);
	case INGERO_REC_COUNTS: return dec_counts(f, n, &r->u.counts);
	case INGERO_REC_STACK:  return dec_stack(f, n, &r->u.stack, z);
	case INGERO_REC_KERNEL: return dec_kernel(f, n, &r->u.kernel);
	case INGERO_REC_BYE:    return dec_bye(f, n, &r->u.bye);
	case INGERO_REC_ORPHAN: return dec_orphan(f, n, &r->u.orphan);
	case INGERO_REC_GPU:    return dec_gpu(f, n, &r->u.gpu);
	case INGERO_REC_GPU_STATS: return dec_gpu_stats(f, n, &r->u.gpu_stats);
	case INGERO_REC_CAPTURE: return dec_capture(f, n, &r->u.capture);
	case INGERO_REC_COLL:   return dec_coll(f, n, &r->u.coll);
	case INGERO_REC_RANGE:  return dec_range(f, n, &r->u.range);
	case INGERO_REC_RANGE_STATS: return dec_range_stats(f, n, &r->u.range_stats);
	default:                return 1;
	}
}

int ingero_wire_decode(const void *buf, size_t len, struct ingero_wire_batch *out)
{
	msgpack_unpacked *up;
	const msgpack_object *top, *recs;
	size_t off = 0;
	uint64_t version, sender;
	int err = INGERO_WIRE_E_SHAPE;

	memset(out, 0, sizeof(*out));
	if (!buf || len == 0 || len > INGERO_WIRE_MAX_MSG_BYTES)
		return INGERO_WIRE_E_SIZE;
	if (ingero_msgpack_walk(buf, len, MAX_DEPTH, 0))
		return INGERO_WIRE_E_MSGPACK;
	up = malloc(sizeof(*up));
	if (!up)
		return INGERO_WIRE_E_NOMEM;
	msgpack_unpacked_init(up);
	switch (msgpack_unpack_next(up, buf, len, &off)) {
	case MSGPACK_UNPACK_SUCCESS:
		break;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		err = INGERO_WIRE_E_NOMEM;
		goto fail;
	default:
		err = INGERO_WIRE_E_MSGPACK;
		goto fail;
	}
	if (off != len) {
		err = INGERO_WIRE_E_MSGPACK;
		goto fail;
	}
	top = &up->data;
	if (top->type != MSGPACK_OBJECT_ARRAY || top->via.array.size != 3)
		goto fail;
	if (get_u64(&top->via.array.ptr[0], &version))
		goto fail;
	if (version != INGERO_WIRE_VERSION) {
		err = INGERO_WIRE_E_VERSION;
		goto fail;
	}
	if (get_u64(&top->via.array.ptr[1], &sender) || sender == 0 || sender > INT_MAX)
		goto fail;
	recs = &top->via.array.ptr[2];
	if (recs->type != MSGPACK_OBJECT_ARRAY)
		goto fail;

	out->version = (uint32_t)version;
	out->sender_pid = (uint32_t)sender;
	if (recs->via.array.size) {
		out->records = msgpack_zone_malloc(up->zone,
						   recs->via.array.size * sizeof(*out->records));
		if (!out->records) {
			err = INGERO_WIRE_E_NOMEM;
			goto fail;
		}
	}
	for (uint32_t i = 0; i < recs->via.array.size; i++) {
		struct ingero_wire_record *r = &out->records[out->n_records];
		int e = dec_record(&recs->via.array.ptr[i], r, up->zone);

		if (e < 0) {
			err = e;
			goto fail;
		}
		if (e == 1) {
			out->n_unknown++;
			continue;
		}
		out->n_calls += r->type == INGERO_REC_CALL;
		out->n_records++;
	}
	out->priv_ = up;
	return 0;
fail:
	msgpack_unpacked_destroy(up);
	free(up);
	memset(out, 0, sizeof(*out));
	return err;
}

void ingero_wire_batch_free(struct ingero_wire_batch *b)
{
	if (b->priv_) {
		msgpack_unpacked_destroy(b->priv_);
		free(b->priv_);
	}
	memset(b, 0, sizeof(*b));
}

const char *ingero_wire_strerror(int err)
{
	switch (err) {
	case INGERO_WIRE_OK:        return "ok";
	case INGERO_WIRE_E_SIZE:    return "empty or oversized message";
	case INGERO_WIRE_E_MSGPACK: return "not one well-formed msgpack value";
	case INGERO_WIRE_E_SHAPE:   return "not [version, sender_pid, [records]]";
	case INGERO_WIRE_E_VERSION: return "unsupported wire version";
	case INGERO_WIRE_E_RECORD:  return "record with missing or mistyped fields";
	case INGERO_WIRE_E_LIMIT:   return "string or frame list over the wire limits";
	case INGERO_WIRE_E_NOMEM:   return "out of memory";
	default:                    return "unknown error";
	}
}
