/*
 * gpu_watch.c — the watcher thread of the GPU marks (gpu_marks.h).
 *
 * It makes each stream's events (in the stream's context), reads which
 * marks have completed and when, marks the streams that got new work (once a
 * poll; where the GPU keeps up, once the stream went quiet), and puts one GPU
 * record per completed mark into the ring.
 *
 * When: on the host's clock, from cuEventElapsedTime after an anchor event
 * renewed every ANCHOR_EVERY_NS, scaled by the GPU clock's fitted rate
 * (gpu_clock.h).  The sender clamps a completion into [recorded, seen by
 * the watcher] and flags it when it had to.
 *
 * The thread runs CUDA calls of its own: it sets its stream capture mode to
 * relaxed, so a program capturing a CUDA graph in global mode is not
 * disturbed by its queries, and never records into a capturing stream.
 * It polls every INGERO_GPU_POLL_US while a mark is outstanding or a stream
 * has unmarked work, and every IDLE_POLL_NS otherwise.  It also sets the
 * calling threads' ration: stretched while the workload is steady
 * (gpu_marks.h), whole again after a new kernel.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fork.h"
#include "gpu_clock.h"
#include "gpu_driver.h"
#include "gpu_marks.h"
#include "record.h"

#define MAX_CTX 8
#define EVENTS_PER_STREAM INGERO_GPU_QUEUE
/* The GPU clock's rate is fitted, but an anchor's offset drifts with what
 * is left of it: a quarter of a second keeps that under ~1 us at 4 ppm
 * (the elapsed time, a float in ms, is exact to ~15 ns over it) */
#define ANCHOR_EVERY_NS 250000000ull
/* Nothing outstanding: look again this much later.  Not a futex the
 * program's threads would wake: in a VM, waking a thread on another CPU
 * costs the waker an IPI, tens of microseconds (device runs, docs). */
#define IDLE_POLL_NS 2000000ull
#define STATS_EVERY_NS 1000000000ull
#define STOP_WAIT_NS 1000000000ull
#define KEEPS_UP_NS 20000ull
/* At exit: how long the watcher waits for the marks behind the program's
 * last work to complete (well inside the stop's own bound, STOP_WAIT_NS). */
#define FINAL_DRAIN_NS 100000000ull


static struct {
	pthread_t th;
	_Atomic int stop;
	bool running;
	const struct ingero_gpu_driver *d;
	struct ingero_gpu_clock clocks[MAX_CTX];
	uint64_t poll_ns, poll_ticks;
	uint64_t stats_at;
	/* the ration: INGERO_GPU_MARK_US in ticks, halved `halvings` times; the
	 * latest new kernel seen, and the ration's marks made by then */
	uint64_t base_ticks, fresh_seen, rationed_then;
	unsigned halvings;
} W;

#define STEADY_HALVINGS_MAX 4

/* The ration follows the workload: each INGERO_GPU_MARK_STEADY of its
 * marks since the latest new kernel halve it (to a sixteenth at most); a
 * new kernel makes it whole.  The calling threads read the period only
 * when a mark may be due, and the burst on every launch (ingero_hot's
 * line): both written only when they change. */
static void ration_follow(void)
{
	uint64_t fresh = atomic_load_explicit(&ingero_gpu.fresh_at, memory_order_relaxed);
	uint64_t made = atomic_load_explicit(&ingero_gpu.rationed, memory_order_relaxed);
	if (fresh != W.fresh_seen) {
		W.fresh_seen = fresh;
		W.rationed_then = made;
	}
	uint64_t steady = ingero_cfg.gpu_mark_steady;
	uint64_t h = steady ? (made - W.rationed_then) / steady : 0;
	unsigned halvings = h > STEADY_HALVINGS_MAX ? STEADY_HALVINGS_MAX : (unsigned)h;
	if (halvings == W.halvings)
		return;
	/* made whole: the budget the stretched ration ran ahead by is
	 * forgiven, else the first marks would wait for the old periods */
	if (halvings < W.halvings)
		atomic_store_explicit(&ingero_hot.gpu_next_mark, ingero_ticks(), memory_order_relaxed);
	W.halvings = halvings;
	uint64_t period = W.base_ticks << halvings;
	atomic_store_explicit(&ingero_gpu.mark_ticks, period, memory_order_relaxed);
	atomic_store_explicit(&ingero_hot.gpu_burst_ticks, INGERO_GPU_MARK_BURST * period, memory_order_relaxed);
}

static void push(void *ctx)
{
	W.d->ctx_push(ctx);
}

static void pop(void)
{
	void *c;
	W.d->ctx_pop(&c);
}

static struct ingero_gpu_clock *clock_of(void *ctx)
{
	for (int i = 0; i < MAX_CTX; i++) {
		struct ingero_gpu_clock *c = &W.clocks[i];
		if (c->ctx == ctx)
			return c->ok ? c : NULL;
		if (!c->ctx) {
			c->ctx = ctx;
			push(ctx);
			ingero_gpu_clock_open(c, W.d);
			pop();
			return c->ok ? c : NULL;
		}
	}
	return NULL;
}

static void make_events(struct ingero_gpu_stream *s)
{
	push(s->ctx);
	int ok = 1;
	for (unsigned i = 0; i < EVENTS_PER_STREAM && ok; i++)
		ok = W.d->event_create(&s->q[i].ev, 0) == INGERO_CU_SUCCESS;
	pop();
	/* (a stream destroyed meanwhile stays retired: ingero_gpu_forget's -1 wins) */
	int zero = 0;
	atomic_compare_exchange_strong_explicit(&s->ready, &zero, ok ? 1 : -1, memory_order_release,
						memory_order_relaxed);
}

static void emit(uint64_t stream, const struct ingero_gpu_mark *m, uint64_t done, uint64_t seen,
		 uint32_t flags)
{
	struct rrec_gpu g;
	memset(&g, 0, sizeof g);
	g.h.type = INGERO_RREC_GPU;
	g.h.flags = ingero_hot.use_tsc ? INGERO_RREC_TSC : 0;
	g.h.pid = ingero_hot.pid;
	g.mflags = flags;
	g.stream = stream;
	g.rec = m->rec;
	g.done_ns = done;
	g.seen_ns = seen;
	if (!ingero_put(&g, sizeof g, false))
		atomic_fetch_add_explicit(&ingero_gpu.lost, 1, memory_order_relaxed);
}

/* When a mark completed, on the host's clock; 0 while it has not.  One
 * driver call per completed mark where the anchor is good: the elapsed time
 * is refused (NOT_READY) until the mark is done, so it is the query too;
 * every watcher call shares the driver's locks with the program's calls. */
static int done_at(struct ingero_gpu_clock *c, const struct ingero_gpu_mark *m, uint64_t *done, uint32_t *flags)
{
	if (c) {
		int r = ingero_gpu_clock_read(c, W.d, m->ev, done);
		if (r == INGERO_CU_NOT_READY)
			return 0;
		if (r == INGERO_CU_SUCCESS)
			return 1;
	}
	int r = W.d->event_query(m->ev);
	if (r == INGERO_CU_NOT_READY)
		return 0;
	*done = ingero_now();
	*flags |= INGERO_GPU_MARK_COARSE;
	return r == INGERO_CU_SUCCESS ? 1 : -1;
}

/* Completed marks of one stream, oldest first; true while some are not. */
static bool drain(struct ingero_gpu_stream *s, struct ingero_gpu_clock *c, uint64_t stream)
{
	uint32_t head = atomic_load_explicit(&s->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
	while (tail != head) {
		struct ingero_gpu_mark *m = &s->q[tail % INGERO_GPU_QUEUE];
		uint32_t flags = m->flags;
		uint64_t done = 0;
		int r = done_at(c, m, &done, &flags);
		if (r == 0)
			break;
		if (r > 0) {
			/* done as soon as recorded: the stream was empty, the GPU
			 * keeps up with it (calling threads then mark kernels) */
			atomic_store_explicit(&s->keeps_up, done <= m->rec_ns + KEEPS_UP_NS, memory_order_relaxed);
			emit(stream, m, done, ingero_now(), flags);
		} else {
			atomic_fetch_add_explicit(&ingero_gpu.lost, 1, memory_order_relaxed);
		}
		tail++;
		atomic_store_explicit(&s->tail, tail, memory_order_release);
	}
	return tail != head;
}

/* A mark behind the stream's work queued since its last one, at most one
 * per poll period. */
static bool mark_new_work(struct ingero_gpu_stream *s, uint64_t stream, uint64_t now)
{
	uint64_t sub = atomic_load_explicit(&s->last_submit, memory_order_relaxed);
	if (sub <= atomic_load_explicit(&s->marked_upto, memory_order_relaxed))
		return false;
	if (stream == INGERO_STREAM_PER_THREAD || now - atomic_load_explicit(&s->last_mark, memory_order_relaxed) < W.poll_ticks)
		return true;   /* look again at the next poll */
	/* where the GPU keeps up, the calling threads mark the kernels; the
	 * watcher adds one only once the stream has gone quiet (its driver
	 * calls share the program's locks: fewer is cheaper) */
	if (atomic_load_explicit(&s->keeps_up, memory_order_relaxed) && now - sub < W.poll_ticks)
		return true;
	int free_ = 0;
	if (!atomic_compare_exchange_strong(&s->lock, &free_, 1))
		return true;
	if (atomic_load_explicit(&s->ready, memory_order_relaxed) == 1 &&
	    atomic_load_explicit(&s->last_submit, memory_order_relaxed) >
		    atomic_load_explicit(&s->marked_upto, memory_order_relaxed)) {
		push(s->ctx);
		if (!ingero_gpu_record(s, stream, ingero_ticks(), INGERO_GPU_MARK_WATCHER))
			atomic_store_explicit(&s->marked_upto, sub, memory_order_relaxed);
		pop();
	}
	atomic_store_explicit(&s->lock, 0, memory_order_release);
	return true;
}

static void emit_stats(void)
{
	struct rrec_gpu_stats st;
	memset(&st, 0, sizeof st);
	st.h.type = INGERO_RREC_GPU_STATS;
	st.h.pid = ingero_hot.pid;
	st.made = atomic_load(&ingero_gpu.made);
	st.lost = atomic_load(&ingero_gpu.lost);
	ingero_put(&st, sizeof st, false);
}

/* One pass over the streams: read the completed marks and, unless the
 * program is exiting (mark 0), mark new work; true when another poll is due
 * soon (at exit: while marks are outstanding). */
static bool pass(bool mark)
{
	bool busy = false;
	ration_follow();
	uint64_t now = ingero_ticks();
	for (unsigned i = 0; i < INGERO_GPU_STREAMS; i++) {
		struct ingero_gpu_stream *s = &ingero_gpu_streams[i];
		uint64_t key = atomic_load_explicit(&s->key, memory_order_acquire);
		if (!key)
			continue;
		int ready = atomic_load_explicit(&s->ready, memory_order_acquire);
		if (ready == 0 && s->ctx)
			make_events(s);
		if (!s->ctx)
			continue;
		struct ingero_gpu_clock *c = clock_of(s->ctx);
		uint64_t stream = key - 1;
		busy |= drain(s, c, stream);
		if (mark && atomic_load_explicit(&s->ready, memory_order_acquire) == 1)
			busy |= mark_new_work(s, stream, now);
	}
	uint64_t t = ingero_now();
	for (int i = 0; i < MAX_CTX && W.clocks[i].ctx; i++) {
		struct ingero_gpu_clock *c = &W.clocks[i];
		if (c->ok && t - c->renewed_at >= ANCHOR_EVERY_NS) {
			push(c->ctx);
			ingero_gpu_clock_renew(c, W.d);
			pop();
		}
	}
	if (t - W.stats_at >= STATS_EVERY_NS) {
		emit_stats();
		W.stats_at = t;
	}
	return busy;
}

/* Ticks per microsecond: over the time since the library's constructor,
 * or over 2 ms when that was too recent. */
static uint64_t ticks_per_us(void)
{
	uint64_t r = ingero_clock_ticks_per_us();
	if (r)
		return r;
	uint64_t t0 = __rdtsc(), n0 = ingero_now();
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	uint64_t t1 = __rdtsc(), n1 = ingero_now();
	r = n1 > n0 ? (t1 - t0) * 1000 / (n1 - n0) : 0;
	return r ? r : 1000;
}

static void *watch_main(void *arg)
{
	(void)arg;
	/* Not SCHED_BATCH, unlike the sender: with no idle CPU a watcher that
	 * waits for a tick marks the streams too late, and the measured GPU
	 * idle bounds widened from ~4 to ~35 points (e2e gpu_marks with a CPU
	 * busy, docs/benchmarks.md). */
	prctl(PR_SET_NAME, "ingero-gpu", 0, 0, 0);
	ingero_tls.depth = 1;   /* nothing this thread calls is the program's */
	int mode = INGERO_CU_CAPTURE_MODE_RELAXED;
	W.d->exchange_capture_mode(&mode);
	ingero_gpu_tables_init();
	uint64_t tpu = ticks_per_us();
	ingero_gpu.tpu = tpu;
	W.base_ticks = (uint64_t)ingero_cfg.gpu_mark_us * tpu;
	atomic_store_explicit(&ingero_gpu.mark_ticks, W.base_ticks, memory_order_relaxed);
	atomic_store_explicit(&ingero_hot.gpu_burst_ticks, INGERO_GPU_MARK_BURST * W.base_ticks,
			      memory_order_relaxed);
	ingero_gpu.fresh_ticks = (uint64_t)INGERO_GPU_FRESH_MS * 1000 * tpu;
	W.poll_ns = (uint64_t)ingero_cfg.gpu_poll_us * 1000;
	W.poll_ticks = (uint64_t)ingero_cfg.gpu_poll_us * tpu;
	W.stats_at = ingero_now();
	atomic_store_explicit(&ingero_hot.gpu_on, 1, memory_order_release);
	while (!atomic_load_explicit(&W.stop, memory_order_acquire)) {
		if (pass(true)) {
			struct timespec ts = { 0, (long)W.poll_ns };
			nanosleep(&ts, NULL);
			continue;
		}
		struct timespec ts = { 0, (long)IDLE_POLL_NS };
		nanosleep(&ts, NULL);
	}
	/* The program is exiting, its last work maybe still on the GPU: read
	 * the marks behind it as they complete, for a bounded time (the CUDA
	 * runtime's own teardown, which runs after us, waits for that work
	 * anyway); what is still outstanding then is lost. */
	uint64_t until = ingero_now() + FINAL_DRAIN_NS;
	while (pass(false) && ingero_now() < until) {
		struct timespec ts = { 0, (long)W.poll_ns };
		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; i < INGERO_GPU_STREAMS; i++) {
		struct ingero_gpu_stream *s = &ingero_gpu_streams[i];
		uint32_t n = atomic_load(&s->head) - atomic_load(&s->tail);
		atomic_fetch_add(&ingero_gpu.lost, n);
	}
	emit_stats();
	return NULL;
}

int ingero_gpu_watch_start(void)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&ingero_hot.gpu_on, &expect, 2))
		return 0;
	W.d = ingero_gpu_driver();
	if (!ingero_cfg.gpu_marks || !W.d) {
		ingero_debug("GPU marks off (%s)", W.d ? "INGERO_GPU_MARKS=0" : "driver lacks event functions");
		atomic_store(&ingero_hot.gpu_on, -1);
		return -1;
	}
	ingero_gpu.gen = atomic_load(&ingero_hot.gen);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rv = pthread_create(&W.th, NULL, watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rv != 0) {
		atomic_store(&ingero_hot.gpu_on, -1);
		return -1;
	}
	W.running = true;
	/* registered now, after the CUDA runtime registered its own teardown,
	 * so it runs before it: the watcher never queries a dead context */
	atexit(ingero_gpu_watch_stop);
	return 0;
}

void ingero_gpu_watch_stop(void)
{
	if (!W.running || (uint32_t)getpid() != ingero_hot.pid ||
	    atomic_load(&ingero_hot.gen) != ingero_gpu.gen)
		return;
	W.running = false;
	atomic_store(&ingero_hot.gpu_on, -1);
	atomic_store_explicit(&W.stop, 1, memory_order_release);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += STOP_WAIT_NS / 1000000000ull;
	if (pthread_timedjoin_np(W.th, NULL, &ts) != 0)
		ingero_debug("GPU watcher did not finish in time");
}
