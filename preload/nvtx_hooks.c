/*
 * nvtx_hooks.c — the program's NVTX ranges and marks (torch.cuda.nvtx,
 * emit_nvtx, the nvtx package, C/C++ code), timed as a profiler's tool.
 *
 * NVTX v3 is header-only: each library that uses it carries its own copy,
 * which on its first call reads $NVTX_INJECTION64_PATH, dlopens that
 * library and calls its InitializeInjectionNvtx2 with a function that hands
 * out the copy's callback tables; the tool writes its functions into the
 * slots it wants, and from then on that copy's nvtxRangePushA & co. call
 * them (with no tool, they return at once).  ingero-run points the variable
 * at this library (already loaded: dlopen returns it), so every copy in the
 * process comes here — torch's, the nvtx package's, a C program's.
 *
 * What is recorded: the default domain's pushed ranges (a thread's nested
 * ones, sent when popped with how deep they sat), started/ended ranges
 * (which may end on another thread) and marks.  Named domains (NCCL's and
 * other libraries' own) are given handles so they stay apart and are left
 * out.  NVTX's ABI: nvtx_abi.h.
 *
 * These run on the program's threads, any of them, at any time after the
 * library was found: no lock, no allocation on the range paths (a thread's
 * open ranges are a fixed array of its own; started ranges a fixed table
 * claimed with a CAS, the oldest evicted when it is full); what does not
 * fit is counted, carried by the next range and sent whole as the process
 * stops (RANGE_STATS).  A process's first range starts its recording as a
 * CUDA call would (a process that uses NVTX is a GPU program's).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "hooks.h"
#include "ingero/utf8.h"
#include "ingero/wire.h"
#include "nvtx_abi.h"

/* --- names ----------------------------------------------------------------- */

#define NAME_MAX_ INGERO_RANGE_NAME_MAX

struct name {
	uint16_t len;
	char s[NAME_MAX_];
};

/* A name's used bytes only (the slots are 160 bytes; most names a few). */
static void name_copy(struct name *dst, const struct name *src)
{
	dst->len = src->len;
	memcpy(dst->s, src->s, src->len);
}

static void name_ascii(struct name *n, const char *s)
{
	n->len = s ? (uint16_t)ingero_utf8_cut(s, NAME_MAX_) : 0;
	if (n->len)
		memcpy(n->s, s, n->len);
}

/* A wide string as UTF-8 (what is not a code point becomes '?'). */
static void name_wide(struct name *n, const wchar_t *w)
{
	size_t k = 0;
	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		if ((c >= 0xd800 && c <= 0xdfff) || c >= 0x110000)
			c = '?';
		size_t m = ingero_utf8_put(n->s + k, NAME_MAX_ - k, c);
		if (!m)
			break;
		k += m;
	}
	n->len = (uint16_t)k;
}

/* A registered string's handle is its copy here (never freed: NVTX has no
 * unregister, and handles live as long as the program uses them). */
static const void *register_name(const struct name *n)
{
	struct name *r = malloc(sizeof *r);
	if (r)
		name_copy(r, n);
	return r;
}

static void name_attr(struct name *n, const struct nvtx_attr *a)
{
	n->len = 0;
	if (!a || a->size < sizeof(struct nvtx_attr) || !a->message)
		return;
	switch (a->message_type) {
	case MSG_ASCII:      name_ascii(n, a->message); break;
	case MSG_UNICODE:    name_wide(n, a->message); break;
	case MSG_REGISTERED: name_copy(n, a->message); break;
	default: break;
	}
}

/* --- records --------------------------------------------------------------- */

static _Atomic uint64_t range_lost;

static bool recording(void)
{
	return ingero_recording_now() && ingero_is_active();
}

static void emit(uint8_t kind, uint32_t tid, uint16_t depth, bool tsc, uint64_t start, uint64_t end,
		 const struct name *n)
{
	union {
		struct rrec_range r;
		char bytes[sizeof(struct rrec_range) + NAME_MAX_];
	} u;
	memset(&u.r, 0, sizeof u.r);
	u.r.h.type = INGERO_RREC_RANGE;
	u.r.h.flags = tsc ? INGERO_RREC_TSC : 0;
	u.r.h.pid = ingero_hot.pid;
	u.r.tid = tid;
	u.r.depth = depth;
	u.r.kind = kind;
	u.r.start = start;
	u.r.dur = end > start ? end - start : 0;
	u.r.lost = atomic_load_explicit(&range_lost, memory_order_relaxed);
	u.r.name_len = n->len;
	memcpy(u.r.name, n->s, n->len);
	/* every byte sent written: the struct (its padding zeroed) and the name
	 * from where it starts, inside or past the padding */
	size_t len = offsetof(struct rrec_range, name) + n->len;
	if (!ingero_put(u.bytes, (uint32_t)(len > sizeof u.r ? len : sizeof u.r), false))
		atomic_fetch_add_explicit(&range_lost, 1, memory_order_relaxed);
}

void ingero_nvtx_final(void)
{
	struct rrec_range_stats st;
	memset(&st, 0, sizeof st);
	st.lost = atomic_load_explicit(&range_lost, memory_order_relaxed);
	if (!st.lost)
		return;
	st.h.type = INGERO_RREC_RANGE_STATS;
	st.h.pid = ingero_hot.pid;
	ingero_put(&st, sizeof st, false);
}

/* --- a thread's pushed ranges ---------------------------------------------- */

#define DEPTH 16   /* deeper ones are counted (their pops kept in step), not timed */

struct open_range {
	uint64_t start;                /* 0: pushed while not recording */
	bool tsc;
	struct name name;
};
static __thread struct {
	uint32_t depth;                /* pushed and not popped, all of them */
	struct open_range r[DEPTH];
} pushed __attribute__((tls_model("initial-exec")));

static int push(const struct name *n)
{
	uint32_t d = pushed.depth;
	if (d >= DEPTH) {
		atomic_fetch_add_explicit(&range_lost, 1, memory_order_relaxed);
	} else {
		struct open_range *o = &pushed.r[d];
		o->start = 0;
		if (recording()) {
			name_copy(&o->name, n);
			o->tsc = ingero_hot.use_tsc;
			o->start = ingero_stamp(o->tsc);
		}
	}
	atomic_signal_fence(memory_order_seq_cst);
	pushed.depth = d + 1;
	return (int)d;
}

static int pop(void)
{
	uint32_t d = pushed.depth;
	if (d == 0)
		return -2;             /* NVTX's answer to a pop with nothing pushed */
	d--;
	/* the range copied before the depth goes down: a signal handler that
	 * pushes and pops in between reuses its slot */
	struct open_range o;
	bool timed = d < DEPTH && pushed.r[d].start;
	if (timed) {
		o.start = pushed.r[d].start;
		o.tsc = pushed.r[d].tsc;
		name_copy(&o.name, &pushed.r[d].name);
	}
	atomic_signal_fence(memory_order_seq_cst);
	pushed.depth = d;
	if (timed && recording())
		emit(INGERO_RANGE_PUSH, ingero_tid(), (uint16_t)d, o.tsc, o.start, ingero_stamp(o.tsc), &o.name);
	return (int)d;
}

static int nv_push_a(const char *msg)
{
	struct name n;
	name_ascii(&n, msg);
	return push(&n);
}

static int nv_push_w(const wchar_t *msg)
{
	struct name n;
	name_wide(&n, msg);
	return push(&n);
}

static int nv_push_ex(const struct nvtx_attr *a)
{
	struct name n;
	name_attr(&n, a);
	return push(&n);
}

/* --- started ranges (any thread may end them) ------------------------------ */

#define STARTED 64

struct started_range {
	_Atomic uint64_t id;           /* 0 free, 1 being filled, else the range's id */
	uint64_t start;
	bool tsc;
	uint32_t tid;
	struct name name;
};
static struct started_range started[STARTED];
static _Atomic uint64_t next_id = 1;

static void fill_started(struct started_range *s, uint64_t id, const struct name *n)
{
	name_copy(&s->name, n);
	s->tid = ingero_tid();
	s->tsc = ingero_hot.use_tsc;
	s->start = ingero_stamp(s->tsc);
	atomic_store_explicit(&s->id, id, memory_order_release);
}

static nvtx_range_id start_range(const struct name *n)
{
	if (!recording())
		return 0;
	uint64_t id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
	for (int i = 0; i < STARTED; i++) {
		struct started_range *s = &started[(id + (uint64_t)i) % STARTED];
		uint64_t free_ = 0;
		if (atomic_compare_exchange_strong_explicit(&s->id, &free_, 1, memory_order_acquire,
							    memory_order_relaxed)) {
			fill_started(s, id, n);
			return id;
		}
	}
	/* full: ranges never ended (or ended in another process) would hold
	 * their slots for good; the oldest gives its slot up, counted lost */
	struct started_range *old = NULL;
	uint64_t old_id = 0;
	for (int i = 0; i < STARTED; i++) {
		uint64_t v = atomic_load_explicit(&started[i].id, memory_order_acquire);
		if (v > 1 && (!old || v < old_id))
			old = &started[i], old_id = v;
	}
	atomic_fetch_add_explicit(&range_lost, 1, memory_order_relaxed);
	if (!old || !atomic_compare_exchange_strong_explicit(&old->id, &old_id, 1, memory_order_acquire,
							     memory_order_relaxed))
		return 0;
	fill_started(old, id, n);
	return id;
}

static void end_range(nvtx_range_id id)
{
	if (id < 2)
		return;
	for (int i = 0; i < STARTED; i++) {
		struct started_range *s = &started[(id + (uint64_t)i) % STARTED];
		uint64_t want = id;
		/* claimed (1) before it is read: two ends of one id emit once */
		if (!atomic_compare_exchange_strong_explicit(&s->id, &want, 1, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		if (recording())
			emit(INGERO_RANGE_START, s->tid, 0, s->tsc, s->start, ingero_stamp(s->tsc), &s->name);
		atomic_store_explicit(&s->id, 0, memory_order_release);
		return;
	}
}

void ingero_nvtx_after_fork(void)
{
	/* the child's own: nothing lost yet; the forking thread's open ranges
	 * and the started ones are the parent's (their pops still count) */
	atomic_store_explicit(&range_lost, 0, memory_order_relaxed);
	for (int i = 0; i < DEPTH; i++)
		pushed.r[i].start = 0;
	for (int i = 0; i < STARTED; i++)
		atomic_store_explicit(&started[i].id, 0, memory_order_relaxed);
}

static nvtx_range_id nv_start_a(const char *msg)
{
	struct name n;
	name_ascii(&n, msg);
	return start_range(&n);
}

static nvtx_range_id nv_start_w(const wchar_t *msg)
{
	struct name n;
	name_wide(&n, msg);
	return start_range(&n);
}

static nvtx_range_id nv_start_ex(const struct nvtx_attr *a)
{
	struct name n;
	name_attr(&n, a);
	return start_range(&n);
}

/* --- marks ------------------------------------------------------------------ */

static void mark(const struct name *n)
{
	if (!recording())
		return;
	bool tsc = ingero_hot.use_tsc;
	uint64_t t = ingero_stamp(tsc);
	uint32_t d = pushed.depth;
	emit(INGERO_RANGE_MARK, ingero_tid(), (uint16_t)(d < DEPTH ? d : DEPTH), tsc, t, t, n);
}

static void nv_mark_a(const char *msg)
{
	struct name n;
	name_ascii(&n, msg);
	mark(&n);
}

static void nv_mark_w(const wchar_t *msg)
{
	struct name n;
	name_wide(&n, msg);
	mark(&n);
}

static void nv_mark_ex(const struct nvtx_attr *a)
{
	struct name n;
	name_attr(&n, a);
	mark(&n);
}

/* --- domains: the default one recorded, named ones kept apart -------------- */

static const char named_domain;        /* every named domain's handle */

/* (both nvtxDomainCreateA and W: the name is not kept) */
static nvtx_domain nv_domain_create(const void *name)
{
	(void)name;
	return &named_domain;
}

static const void *nv_register_a(nvtx_domain d, const char *s)
{
	(void)d;
	struct name n;
	name_ascii(&n, s);
	return register_name(&n);
}

static const void *nv_register_w(nvtx_domain d, const wchar_t *s)
{
	(void)d;
	struct name n;
	name_wide(&n, s);
	return register_name(&n);
}

static int nv_domain_push(nvtx_domain d, const struct nvtx_attr *a)
{
	return d ? 0 : nv_push_ex(a);
}

static int nv_domain_pop(nvtx_domain d)
{
	return d ? 0 : pop();
}

static nvtx_range_id nv_domain_start(nvtx_domain d, const struct nvtx_attr *a)
{
	return d ? 0 : nv_start_ex(a);
}

static void nv_domain_end(nvtx_domain d, nvtx_range_id id)
{
	if (!d)
		end_range(id);
}

static void nv_domain_mark(nvtx_domain d, const struct nvtx_attr *a)
{
	if (!d)
		nv_mark_ex(a);
}

/* --- the injection entry point ---------------------------------------------- */

static void fill(nvtx_table t, unsigned int size, unsigned int id, nvtx_fn fn)
{
	if (id < size && t[id])
		*t[id] = fn;
}

/* Called once by each NVTX copy in the process: 1 accepts (its calls come
 * here), 0 leaves that copy silent. */
INGERO_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get)
{
	/* set empty, the variable turns NVTX off: NVTX's dlopen("") finds this
	 * function in the program's global scope all the same */
	const char *path = getenv("NVTX_INJECTION64_PATH");
	if (path && !*path)
		return 0;
	const struct nvtx_callbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
	nvtx_table core = NULL, core2 = NULL;
	unsigned int n = 0, n2 = 0;
	if (!cb || cb->size < sizeof *cb || !cb->get_module_table ||
	    !cb->get_module_table(NVTX_CB_MODULE_CORE, &core, &n) || !core)
		return 0;
	fill(core, n, CORE_MarkEx, (nvtx_fn)nv_mark_ex);
	fill(core, n, CORE_MarkA, (nvtx_fn)nv_mark_a);
	fill(core, n, CORE_MarkW, (nvtx_fn)nv_mark_w);
	fill(core, n, CORE_RangeStartEx, (nvtx_fn)nv_start_ex);
	fill(core, n, CORE_RangeStartA, (nvtx_fn)nv_start_a);
	fill(core, n, CORE_RangeStartW, (nvtx_fn)nv_start_w);
	fill(core, n, CORE_RangeEnd, (nvtx_fn)end_range);
	fill(core, n, CORE_RangePushEx, (nvtx_fn)nv_push_ex);
	fill(core, n, CORE_RangePushA, (nvtx_fn)nv_push_a);
	fill(core, n, CORE_RangePushW, (nvtx_fn)nv_push_w);
	fill(core, n, CORE_RangePop, (nvtx_fn)pop);
	if (cb->get_module_table(NVTX_CB_MODULE_CORE2, &core2, &n2) && core2) {
		fill(core2, n2, CORE2_DomainMarkEx, (nvtx_fn)nv_domain_mark);
		fill(core2, n2, CORE2_DomainRangeStartEx, (nvtx_fn)nv_domain_start);
		fill(core2, n2, CORE2_DomainRangeEnd, (nvtx_fn)nv_domain_end);
		fill(core2, n2, CORE2_DomainRangePushEx, (nvtx_fn)nv_domain_push);
		fill(core2, n2, CORE2_DomainRangePop, (nvtx_fn)nv_domain_pop);
		fill(core2, n2, CORE2_DomainRegisterStringA, (nvtx_fn)nv_register_a);
		fill(core2, n2, CORE2_DomainRegisterStringW, (nvtx_fn)nv_register_w);
		fill(core2, n2, CORE2_DomainCreateA, (nvtx_fn)nv_domain_create);
		fill(core2, n2, CORE2_DomainCreateW, (nvtx_fn)nv_domain_create);
	}
	return 1;
}
