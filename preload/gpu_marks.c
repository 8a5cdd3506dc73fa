/*
 * gpu_marks.c — the calling threads' side of the GPU marks (gpu_marks.h):
 * find the stream's slot, note when work was queued, and now and then
 * record a mark behind it.  No allocation and no waiting: a slot or queue
 * that is full, or a lock someone else holds, means "no mark this time".
 */
#include "gpu_marks.h"

#include <string.h>

#include "clock.h"
#include "fork.h"
#include "gpu_driver.h"
#include "ingero/api.h"
#include "ingero/event.h"
#include "record.h"

struct ingero_gpu_stream ingero_gpu_streams[INGERO_GPU_STREAMS];

/* A retired slot keeps this key, so probes go on past it. */
#define TOMB UINT64_MAX

static unsigned slot_hash(uint64_t key)
{
	/* stream handles are heap pointers: drop the alignment bits */
	return (unsigned)((key >> 4) ^ (key >> 12) ^ (key >> 20));
}

static struct ingero_gpu_stream *slot_of(uint64_t stream, bool create)
{
	uint64_t key = stream + 1;
	unsigned h = slot_hash(key);
	for (unsigned i = 0; i < INGERO_GPU_STREAMS; i++) {
		struct ingero_gpu_stream *s = &ingero_gpu_streams[(h + i) % INGERO_GPU_STREAMS];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
		if (k == key)
			return s;
		if (k == 0) {
			if (!create)
				return NULL;
			uint64_t none = 0;
			if (atomic_compare_exchange_strong(&s->key, &none, key) || none == key)
				return s;
		}
	}
	return NULL;
}

/* The per-thread default stream is a different stream in every thread: the
 * watcher could not record behind another thread's, so it is not timed. */
static bool ptsz[INGERO_API_MAX];   /* the API's stream 0 means the per-thread one */

void ingero_gpu_tables_init(void)
{
	for (unsigned api = 1; api < INGERO_API_MAX; api++) {
		const char *n = ingero_api_name(api);
		size_t len = n ? strlen(n) : 0;
		ptsz[api] = len > 5 && (strcmp(n + len - 5, "_ptsz") == 0 || strcmp(n + len - 5, "_ptds") == 0);
	}
}

static bool per_thread_stream(uint64_t stream, unsigned api)
{
	return stream == INGERO_STREAM_PER_THREAD || (stream == 0 && api < INGERO_API_MAX && ptsz[api]);
}

static bool trylock(struct ingero_gpu_stream *s)
{
	int free_ = 0;
	return atomic_compare_exchange_strong_explicit(&s->lock, &free_, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static void unlock(struct ingero_gpu_stream *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

bool ingero_gpu_record(struct ingero_gpu_stream *s, uint64_t stream, uint64_t now, uint32_t flags)
{
	const struct ingero_gpu_driver *d = ingero_gpu_driver();
	atomic_store_explicit(&s->last_mark, now, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
	if (!d || head - tail >= INGERO_GPU_QUEUE)
		return false;   /* the GPU is that far behind: the marks in flight say enough */
	/* A mark inside a stream being captured would become a node of the
	 * program's CUDA graph: never. */
	int cap = -1;
	void *h = (void *)(uintptr_t)stream;
	if (d->stream_is_capturing(h, &cap) != INGERO_CU_SUCCESS || cap != INGERO_CU_CAPTURE_NONE)
		return false;
	struct ingero_gpu_mark *m = &s->q[head % INGERO_GPU_QUEUE];
	uint64_t covered = atomic_load_explicit(&s->last_submit, memory_order_relaxed);
	m->rec = ingero_ticks();
	m->rec_ns = ingero_hot.use_tsc ? ingero_now() : m->rec;
	if (d->event_record(m->ev, h) != INGERO_CU_SUCCESS) {
		atomic_fetch_add_explicit(&ingero_gpu.lost, 1, memory_order_relaxed);
		return false;
	}
	m->flags = flags;
	atomic_store_explicit(&s->marked_upto, covered, memory_order_relaxed);
	atomic_store_explicit(&s->head, head + 1, memory_order_release);
	atomic_fetch_add_explicit(&ingero_gpu.made, 1, memory_order_relaxed);
	return true;
}

/* The process's first submission: its watcher is started (by the
 * process that owns the ring).  Out of the launch path's line of code. */
static __attribute__((noinline, cold)) void note_before_watch(void)
{
	if (ingero_hot.owner)
		ingero_gpu_watch_start();
}

/* A stream not ready yet (its first submission, or events still to be
 * made): out of the launch path's line of code. */
static __attribute__((noinline, cold)) void note_first(struct ingero_gpu_stream *s, uint64_t stream)
{
	if (atomic_load_explicit(&s->ready, memory_order_acquire) != 0 || s->ctx || !trylock(s))
		return;
	/* the watcher needs the stream's context to make events; the
	 * caller's thread is where it is current */
	const struct ingero_gpu_driver *d = ingero_gpu_driver();
	void *ctx = NULL;
	if (d && d->stream_get_ctx((void *)(uintptr_t)stream, &ctx) == INGERO_CU_SUCCESS && ctx)
		s->ctx = ctx;
	else
		atomic_store_explicit(&s->ready, -1, memory_order_relaxed);
	unlock(s);
}

/* The calling thread's runs (gpu_marks.h), in ingero_tls.mark_state, on
 * the thread's first line: 0, a run may start; 1 to INGERO_GPU_MARK_RUN - 1,
 * the marks of the run going on; PASSING | n, n launches with budget for a
 * run still to pass over (counted in note_in, in line). */
#define PASSING 0x8000u

/* The ration's budget a launch in state st needs, as how far the bucket's
 * time may be ahead of the launch's: a run goes on with one mark's, starts
 * with two (INGERO_GPU_MARK_BURST marks' worth is the whole bucket). */
static inline uint64_t run_room(uint16_t st)
{
	uint64_t room = atomic_load_explicit(&ingero_hot.gpu_burst_ticks, memory_order_relaxed);
	return st != 0 && !(st & PASSING) ? room : room - room / INGERO_GPU_MARK_BURST;
}

/* A ration's mark was recorded (or not: the run ends): a run ends after
 * INGERO_GPU_MARK_RUN, and the next starts after a drawn number of the
 * launches that find budget for it (xorshift, seeded by the thread's id). */
static __attribute__((noinline, cold)) void run_went(bool marked)
{
	struct ingero_tls *t = &ingero_tls;
	if (marked && ++t->mark_state < INGERO_GPU_MARK_RUN)
		return;
	if (!marked && (t->mark_state == 0 || (t->mark_state & PASSING)))
		return;   /* no run to end */
	uint32_t x = t->mark_rng ? t->mark_rng : t->tid * 2654435761u + 1;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->mark_rng = x;
	uint16_t n = (uint16_t)(x % INGERO_GPU_MARK_SKIP);
	t->mark_state = n ? (uint16_t)(PASSING | n) : 0;
}

/* The calling threads' ration, a token bucket (GCRA): bursts of
 * INGERO_GPU_MARK_BURST kernels, one per mark_ticks on average, taken in
 * runs: a run starts with two marks' budget and goes on while there is
 * one.  True when this launch is to be marked (its mark paid for). */
static bool ration_allows(uint64_t t1)
{
	struct ingero_tls *t = &ingero_tls;
	if (t->mark_state & PASSING)
		return false;
	uint64_t tat = atomic_load_explicit(&ingero_hot.gpu_next_mark, memory_order_relaxed);
	uint64_t base = tat > t1 ? tat : t1;
	if (base - t1 > run_room(t->mark_state)) {
		run_went(false);
		return false;
	}
	uint64_t period = atomic_load_explicit(&ingero_gpu.mark_ticks, memory_order_relaxed);
	if (atomic_compare_exchange_strong_explicit(&ingero_hot.gpu_next_mark, &tat, base + period,
						    memory_order_relaxed, memory_order_relaxed))
		return true;
	run_went(false);
	return false;
}

/* A mark may be due (the ration has one, or a new kernel is owed one):
 * this thread marks its submission, one kernel at a time (the watcher
 * marks every poll).  Where the GPU keeps up, a mark right behind a
 * kernel times it from its launch; where the GPU lags, from the mark
 * before it, right behind the launch before (the run's): either way a
 * kernel's own time, which the watcher's marks behind a poll's worth of
 * work cannot tell.  prev: the stream's submission before this one, read
 * only while new kernels are owed marks. */
static __attribute__((noinline)) void note_mark(struct ingero_gpu_stream *s, uint64_t stream, uint64_t t1,
						uint64_t prev, uint64_t kernel)
{
	if (!atomic_load_explicit(&ingero_gpu.mark_ticks, memory_order_relaxed)) {
		run_went(false);   /* (a run this launch breaks ends) */
		return;   /* INGERO_GPU_MARK_US=0: the watcher's marks alone */
	}
	/* shortly after a kernel new to the process appeared, every launch is
	 * marked, outside the ration (gpu_fresh.c), where the GPU keeps up
	 * (where it lags, the program queues faster than kernels run: every
	 * launch's mark would be too many); one right behind a marked launch
	 * times its kernel alone, and pays what a new kernel is owed */
	void *owed = NULL;
	bool fresh = false;
	uint32_t n = atomic_load_explicit(&ingero_hot.gpu_fresh_n, memory_order_relaxed);
	if (n) {
		if (t1 < atomic_load_explicit(&ingero_gpu.fresh_at, memory_order_relaxed) + ingero_gpu.fresh_ticks)
			fresh = atomic_load_explicit(&s->keeps_up, memory_order_relaxed);
		else   /* the window is over: what it left unpaid is forgotten, or
			* every launch after it would come here (owing, note_in) */
			atomic_compare_exchange_strong_explicit(&ingero_hot.gpu_fresh_n, &n, 0, memory_order_relaxed,
								memory_order_relaxed);
	}
	if (fresh && kernel && atomic_load_explicit(&s->marked_upto, memory_order_relaxed) == prev)
		owed = ingero_gpu_fresh_find(kernel, t1);
	if (!fresh && !ration_allows(t1))
		return;
	bool marked = false;
	if (trylock(s)) {
		marked = atomic_load_explicit(&s->ready, memory_order_relaxed) == 1 && ingero_gpu_record(s, stream, t1, 0);
		unlock(s);
	}
	if (!fresh) {
		run_went(marked);
		if (marked)   /* (what stretches the ration while steady: gpu_watch.c) */
			atomic_fetch_add_explicit(&ingero_gpu.rationed, 1, memory_order_relaxed);
	}
	if (marked && owed)
		ingero_gpu_fresh_paid(owed);
}

/* The submission noted in a ready stream's slot (a store: the line is not
 * read unless a mark may be due, by what ingero_hot's line says). */
static inline __attribute__((always_inline)) void note_in(struct ingero_gpu_stream *s, uint64_t stream,
							  uint64_t t1, uint64_t kernel)
{
	bool owing = atomic_load_explicit(&ingero_hot.gpu_fresh_n, memory_order_relaxed) != 0;
	uint64_t prev = owing ? atomic_load_explicit(&s->last_submit, memory_order_relaxed) : 0;
	atomic_store_explicit(&s->last_submit, t1, memory_order_relaxed);
	if (!owing) {
		/* the ration's budget for this launch (most find none: one
		 * compare); a launch that finds a start's budget while the thread
		 * passes over launches is counted here */
		uint64_t nm = atomic_load_explicit(&ingero_hot.gpu_next_mark, memory_order_relaxed);
		uint16_t st = ingero_tls.mark_state;
		if (__builtin_expect(nm > t1 + atomic_load_explicit(&ingero_hot.gpu_burst_ticks, memory_order_relaxed), 1)) {
			/* a run this unmarked launch breaks ends: the next mark
			 * would time nothing alone */
			if (__builtin_expect(st != 0 && !(st & PASSING), 0))
				run_went(false);
			return;
		}
		if (nm > t1 + run_room(st))
			return;
		if (st & PASSING) {
			ingero_tls.mark_state = (st & ~PASSING) > 1 ? (uint16_t)(st - 1) : 0;
			return;
		}
	}
	note_mark(s, stream, t1, prev, kernel);
}

/* The answer "not timed" kept for a (stream, API): a per-thread stream
 * stays one, and a full table stays full (retired slots are not reused). */
static struct ingero_gpu_stream no_slot;

/* A thread's first submission on a stream through an API (or the first
 * since a slot was retired, or while the stream is not ready): the slot
 * found by a probe, and kept for its next once the stream is ready. */
static void remember(uint64_t key, uint32_t gen, struct ingero_gpu_stream *s)
{
	ingero_tls.gpu_key = key;
	ingero_tls.gpu_gen = gen;
	ingero_tls.gpu_slot = s;
}

static __attribute__((noinline)) void note_new_stream(uint64_t stream, uint64_t t1, unsigned api, uint64_t kernel,
						      uint64_t key, uint32_t gen)
{
	struct ingero_gpu_stream *s;
	if (per_thread_stream(stream, api) || !(s = slot_of(stream, true))) {
		remember(key, gen, &no_slot);
		return;
	}
	int ready = atomic_load_explicit(&s->ready, memory_order_acquire);
	if (ready == -1) {   /* never timed (no context, events refused): kept as such */
		remember(key, gen, &no_slot);
		return;
	}
	if (ready != 1) {
		atomic_store_explicit(&s->last_submit, t1, memory_order_relaxed);
		note_first(s, stream);
		ingero_tls.gpu_slot = NULL;   /* probed again until the watcher readies it */
		return;
	}
	remember(key, gen, s);
	note_in(s, stream, t1, kernel);
}

/* Every launch and async copy comes here: the common case (the stream
 * this thread used last, ready, nothing to mark) reads ingero_hot's line
 * (hot_data.h) and the thread's own, and writes the stream's last submission,
 * with every call a tail call (no registers to save). */
INGERO_HOT_AT(13) void ingero_gpu_note_slow(uint64_t stream, uint64_t t1, unsigned api, uint64_t kernel)
{
	/* (a fork child of a process that ran the watcher finds -1: fork.c) */
	int on = atomic_load_explicit(&ingero_hot.gpu_on, memory_order_acquire);
	if (__builtin_expect(on != 1, 0)) {
		if (on == 0)
			note_before_watch();
		return;
	}
	/* a thread mostly queues on one stream through one API: the last
	 * answer, while no slot has been retired since (its stream destroyed) */
	uint64_t key = stream ^ ((uint64_t)api << 52);   /* handles are user-space pointers */
	uint32_t gen = atomic_load_explicit(&ingero_hot.gpu_slots_gen, memory_order_acquire);
	struct ingero_gpu_stream *s = ingero_tls.gpu_slot;
	if (__builtin_expect(key != ingero_tls.gpu_key || gen != ingero_tls.gpu_gen || !s, 0))
		note_new_stream(stream, t1, api, kernel, key, gen);
	else if (__builtin_expect(s != &no_slot, 1))
		note_in(s, stream, t1, kernel);
}

bool ingero_gpu_mark_now(uint64_t stream)
{
	int on = atomic_load_explicit(&ingero_hot.gpu_on, memory_order_acquire);
	if (on != 1) {
		if (on == 0)
			note_before_watch();
		return false;
	}
	struct ingero_gpu_stream *s;
	if (per_thread_stream(stream, INGERO_API_NONE) || !(s = slot_of(stream, true)))
		return false;
	int ready = atomic_load_explicit(&s->ready, memory_order_acquire);
	if (ready != 1) {
		if (ready == 0)
			note_first(s, stream);
		return false;
	}
	bool marked = false;
	if (trylock(s)) {
		marked = ingero_gpu_record(s, stream, ingero_ticks(), 0);
		unlock(s);
	}
	return marked;
}

void ingero_gpu_pause(uint64_t ns)
{
	/* (before the watcher runs there is no ration to hold back) */
	atomic_fetch_add_explicit(&ingero_hot.gpu_next_mark, ns * ingero_gpu.tpu / 1000, memory_order_relaxed);
}

void ingero_gpu_forget(uint64_t stream)
{
	if (atomic_load_explicit(&ingero_hot.gpu_on, memory_order_acquire) != 1 ||
	    atomic_load_explicit(&ingero_hot.gen, memory_order_relaxed) != ingero_gpu.gen)
		return;
	struct ingero_gpu_stream *s = slot_of(stream, false);
	if (!s)
		return;
	/* whoever holds the lock is inside one cuEventRecord; bounded anyway */
	bool held = false;
	for (unsigned i = 0; i < 1000000 && !(held = trylock(s)); i++)
		__builtin_ia32_pause();
	atomic_store_explicit(&s->ready, -1, memory_order_relaxed);
	atomic_store_explicit(&s->key, TOMB, memory_order_release);
	/* every thread's cached slot is looked up again (it may be this one) */
	atomic_fetch_add_explicit(&ingero_hot.gpu_slots_gen, 1, memory_order_release);
	if (held)
		unlock(s);
}
