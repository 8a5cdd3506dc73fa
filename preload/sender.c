/*
 * sender.c — the owner's sender thread.
 *
 * It drains the shared ring in order, and the threads' lanes (lane.h),
 * turns their records into wire.h
 * records with msgpack-c, and pushes batches over nng.  It is the only code
 * that touches nng, and it only runs in the ring's owner (fork.c says why).
 *
 * Never blocking the program.  The ring decouples producers from this
 * thread; this thread never waits long itself: the push socket has no send
 * queue (NNG_OPT_SENDBUF 0), so a send succeeds only when a connected pipe
 * takes the message.  Without a pipe (no collector yet, or it went away)
 * the thread stops draining: the ring buffers a collector restart, and once
 * full, producers drop and count.  With a pipe, a send may wait up to
 * SEND_TIMEOUT_MS for the pipe to finish the previous message; a failed
 * send drops the batch and counts its CALL records as dropped for their
 * processes.
 *
 * Accounting.  For each pid: made = CALLs drained from the ring + CALLs the
 * ring refused (shm process table); dropped = refused + lost in failed
 * sends.  COUNTS records carry both, every second and at exit, so that
 * received + dropped = made at the collector.
 *
 * Definitions.  HELLO, STACK and KERNEL records are kept here (packed) and
 * put into a batch the first time a CALL of that batch needs them, so a
 * definition always travels with, or before, its first use.  A failed send
 * leaves them unconfirmed (they go again with the next use); a new
 * connection (a restarted collector) unconfirms everything.
 *
 * Exit.  ingero_sender_stop() (library destructor) asks for a final drain,
 * waits a bounded time for it, and returns even if the thread is stuck.
 * The final batch, COUNTS and BYE are sent blocking with a short timeout;
 * then a small trailing message: with no send queue, its acceptance means
 * the pipe has finished writing the real ones, so closing the socket
 * cannot drop them.
 */
#include <ingero/procfs.h>
#include <ingero/sched_batch.h>
#include "sender.h"
#include "sender_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fork.h"
#include "gpu_marks.h"
#include "intern.h"
#include "ingero/msgpack_sink.h"
#include "pack.h"
#include "record.h"
#include "stack.h"
#include "symbolize.h"
#include "ingero/u64map.h"

struct sender_state ingero_snd;

/* --- turning ring records into wire records ------------------------------------------- */
static void on_call(struct ingero_cuda_call *ev)
{
	struct pid_acct *a = snd_pid_acct(ev->pid);
	if (a) {
		a->drained++;
		if (!a->hello.bytes)
			snd_hello_synthesize(a);
		snd_def_use(&a->hello);
	}
	if (ev->stack_id) {
		struct def *d = ingero_map_get(&S.stacks, ev->stack_id);
		if (d)
			snd_def_use(d);
		else
			ev->stack_id = 0;   /* its definition was lost: do not dangle */
	}
	if (ev->kernel && ingero_api_class(ev->api) == INGERO_CLASS_LAUNCH) {
		struct def *d = ingero_map_get(&S.kernels, snd_kernel_key(ev->pid, ev->kernel));
		/* (its KERNEL record may have found the ring full while the
		 * call went into the thread's lane: named here, replaced if the
		 * record comes with a later launch) */
		if (!d && S.cache_bytes < DEF_CACHE_MAX && (d = snd_kernel_define(ev->pid, ev->kernel, NULL, 0)))
			d->synth = 1;
		snd_def_use(d);
	}
	/* room first, so that the sink copies each field without a call */
	ingero_sbuffer_reserve(&S.body, INGERO_PACK_CALL_MAX);
	ingero_pack_call(&S.pk, ev);
	S.nrec++;
	snd_batch_count(ev->pid);
}

/* A mark's completion lies between its recording and the moment the
 * watcher saw it complete, whatever the GPU clock said. */
static void on_gpu(struct rrec_gpu *g)
{
	uint64_t rec = (g->h.flags & INGERO_RREC_TSC) ? ingero_clock_ns(g->rec) : g->rec;
	uint64_t done = g->done_ns;
	uint32_t flags = g->mflags;
	if (done < rec || done > g->seen_ns) {
		done = done < rec ? rec : g->seen_ns;
		flags |= INGERO_GPU_MARK_CLAMPED;
	}
	ingero_pack_gpu(&S.pk, g->h.pid, g->stream, rec, done, flags);
	S.nrec++;
}

/* A CALL from the ring or a lane: checked (it comes from other processes'
 * memory), its ticks made nanoseconds. */
static void on_call_taken(struct ingero_cuda_call *ev, bool tsc)
{
	if (!ingero_pack_valid_id(ev->pid) || !ingero_pack_valid_id(ev->tid) || ev->api == 0 ||
	    ev->api >= INGERO_API_MAX) {
		S.bad_records++;
		return;
	}
	if (tsc) {
		uint64_t start = ingero_clock_ns(ev->start_ns);
		uint64_t end = ingero_clock_ns(ev->start_ns + ev->dur_ns);
		ev->start_ns = start;
		ev->dur_ns = end > start ? end - start : 0;
	}
	on_call(ev);
}

static void on_record(const unsigned char *buf, uint32_t len)
{
	struct rrec_hdr h;
	if (len < sizeof h)
		return;
	memcpy(&h, buf, sizeof h);
	/* A bad pid would make the collector refuse the whole batch; records
	 * come from other processes' memory, so check rather than trust. */
	if (!ingero_pack_valid_id(h.pid)) {
		S.bad_records++;
		return;
	}
	switch (h.type) {
	case INGERO_RREC_CALL: {
		struct rrec_call c;
		if (len < sizeof c)
			return;
		memcpy(&c, buf, sizeof c);
		if (c.ev.pid != h.pid) {
			S.bad_records++;
			return;
		}
		on_call_taken(&c.ev, c.h.flags & INGERO_RREC_TSC);
		break;
	}
	case INGERO_RREC_HELLO: {
		struct rrec_hello hl;
		if (len < sizeof hl)
			return;
		memcpy(&hl, buf, sizeof hl);
		hl.comm[sizeof hl.comm - 1] = 0;
		struct pid_acct *a = snd_pid_acct(hl.h.pid);
		if (a) {
			snd_hello_define(a, hl.ppid, hl.start_ns, hl.comm);
			snd_def_use(&a->hello);
		}
		break;
	}
	case INGERO_RREC_STACK: {
		const struct rrec_stack *st = (const struct rrec_stack *)buf;
		if (len < sizeof *st || ingero_map_get(&S.stacks, st->id) || S.cache_bytes >= DEF_CACHE_MAX)
			return;
		struct def *d = calloc(1, sizeof *d);
		if (!d)
			return;
		msgpack_sbuffer sb;
		msgpack_packer pk;
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		if (ingero_pack_stack(&pk, st, len, ingero_symbolize, NULL) == 0 && snd_def_set(d, &sb) == 0 &&
		    ingero_map_put(&S.stacks, st->id, d) == 0) {
			S.cache_bytes += d->len;
		} else {
			free(d->bytes);
			free(d);
		}
		msgpack_sbuffer_destroy(&sb);
		break;
	}
	case INGERO_RREC_KERNEL: {
		const struct rrec_kernel *k = (const struct rrec_kernel *)buf;
		if (len < sizeof *k || sizeof *k + k->name_len > len)
			return;
		struct def *d = ingero_map_get(&S.kernels, snd_kernel_key(k->h.pid, k->addr));
		if (d && d->synth && k->name_len) {
			snd_kernel_pack(d, k->h.pid, k->addr, k->name, k->name_len);   /* sent again, named */
			d->synth = 0;
			d->resend = d->in_batch;
		} else if (!d && S.cache_bytes < DEF_CACHE_MAX) {
			snd_kernel_define(k->h.pid, k->addr, k->name, k->name_len);
		}
		break;
	}
	case INGERO_RREC_BYE: {
		struct rrec_bye b;
		if (len < sizeof b)
			return;
		memcpy(&b, buf, sizeof b);
		ingero_pack_bye(&S.pk, b.h.pid, b.end_ns);
		S.nrec++;
		break;
	}
	case INGERO_RREC_GPU: {
		struct rrec_gpu g;
		if (len < sizeof g)
			return;
		memcpy(&g, buf, sizeof g);
		on_gpu(&g);
		break;
	}
	case INGERO_RREC_GPU_STATS: {
		struct rrec_gpu_stats st;
		if (len < sizeof st)
			return;
		memcpy(&st, buf, sizeof st);
		ingero_pack_gpu_stats(&S.pk, st.h.pid, st.made, st.lost);
		S.nrec++;
		break;
	}
	case INGERO_RREC_COLL:   /* (nccl_pack.c) */
		if (ingero_pack_coll_record(&S.pk, buf, len, S.coll_lost) == 0) {
			S.nrec++;
			S.coll_in_batch++;
		} else {
			S.bad_records++;
		}
		break;
	case INGERO_RREC_RANGE:  /* (nvtx_pack.c) */
		if (ingero_pack_range_record(&S.pk, buf, len, S.range_lost) == 0) {
			S.nrec++;
			S.range_in_batch++;
		} else {
			S.bad_records++;
		}
		break;
	case INGERO_RREC_RANGE_STATS: {
		struct rrec_range_stats st;
		if (len < sizeof st)
			return;
		memcpy(&st, buf, sizeof st);
		ingero_pack_range_stats(&S.pk, st.h.pid, st.lost + S.range_lost);
		S.nrec++;
		break;
	}
	case INGERO_RREC_CAPTURE: {
		struct rrec_capture c;
		if (len < sizeof c)
			return;
		memcpy(&c, buf, sizeof c);
		ingero_pack_capture(&S.pk, c.h.pid, c.t_ns, c.recording ? 1 : 0);
		S.nrec++;
		break;
	}
	default:
		break;
	}
}

static void unconfirm(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	((struct def *)val)->confirmed = 0;
}

static void unconfirm_acct(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	struct pid_acct *a = val;
	a->hello.confirmed = 0;
	a->sent_made = a->sent_dropped = UINT64_MAX;
}

/* A new pipe: possibly a restarted collector that knows nothing yet. */
static void on_connect_change(void)
{
	unsigned c = atomic_load(&S.connects);
	if (c == S.seen_connects)
		return;
	S.seen_connects = c;
	ingero_map_each(&S.stacks, unconfirm, NULL);
	ingero_map_each(&S.kernels, unconfirm, NULL);
	ingero_map_each(&S.pids, unconfirm_acct, NULL);
}

/* After each record taken: a full batch goes out.  *now is the drain's
 * clock (one read per drain, not per record: it only times holes and the
 * batch's start), read again after a send, which can wait. */
static void record_taken(uint64_t *now, int final)
{
	if (S.nrec >= BATCH_RECORDS || S.body.size >= BATCH_BYTES) {
		snd_send_batch(final);
		*now = ingero_now();
	}
}

struct lane_take_ctx {
	uint64_t now;
	int final;
};

static void on_lane_call(struct ingero_cuda_call *ev, bool tsc, void *arg)
{
	struct lane_take_ctx *c = arg;
	if (S.nrec == 0)
		S.batch_start = c->now;
	on_call_taken(ev, tsc);
	S.lane_calls++;
	record_taken(&c->now, c->final);
}

/* (The lanes are ingero_self's: as the mapping's maker laid them out, not
 * read back from the shared header.)  Which lane records may be taken:
 * those published before the ring's tail
 * was read (ring_upto), once the ring is taken to there (lane.h).  Kept
 * across drains until the lanes reach it, so that a ring kept busy cannot
 * keep them waiting, while a drain still takes at most max records. */
static struct {
	bool armed;
	uint64_t ring_upto;
	uint64_t upto[INGERO_LANES_MAX];
} L;

/* Takes up to max records: what the ring has, then the lanes' share. */
static int drain(int max, uint64_t hole_timeout, int final)
{
	static unsigned char buf[INGERO_RING_MAX_REC];
	struct ingero_ring *r = ingero_shm_ring(S.shm);
	if (!L.armed) {
		for (uint32_t i = 0; i < ingero_self.nlanes; i++)
			L.upto[i] = atomic_load_explicit(&ingero_self.lanes[i].tail, memory_order_acquire);
		L.ring_upto = atomic_load_explicit(&r->tail, memory_order_seq_cst);
		L.armed = true;
	}
	int n = 0;
	uint64_t now = ingero_now();
	while (n < max) {
		uint32_t len;
		int rc = ingero_ring_get(r, buf, &len, now, hole_timeout);
		if (rc == INGERO_RING_SKIPPED) {
			S.holes++;
			continue;
		}
		if (rc != INGERO_RING_GOT)
			break;
		if (S.nrec == 0)
			S.batch_start = now;
		on_record(buf, len);
		n++;
		record_taken(&now, final);
	}
	/* the ring not yet taken to there (a hole, or max): the lanes wait */
	if ((int64_t)(atomic_load_explicit(&r->head, memory_order_relaxed) - L.ring_upto) < 0)
		return n;
	struct lane_take_ctx ctx = { now, final };
	bool reached = true;
	for (uint32_t i = 0; i < ingero_self.nlanes; i++) {
		if (L.upto[i] == atomic_load_explicit(&ingero_self.lanes[i].head, memory_order_relaxed))
			continue;
		if (n < max)
			n += (int)ingero_lane_take(&ingero_self.lanes[i], L.upto[i], (uint32_t)(max - n), on_lane_call,
						   &ctx, &S.bad_records);
		reached &= L.upto[i] == atomic_load_explicit(&ingero_self.lanes[i].head, memory_order_relaxed);
	}
	L.armed = !reached;
	return n;
}

/* Records put into the ring or a lane and not yet taken (approximate). */
static uint64_t pending(void)
{
	uint64_t n = ingero_ring_used(ingero_shm_ring(S.shm));
	for (uint32_t i = 0; i < ingero_self.nlanes; i++)
		n += atomic_load_explicit(&ingero_self.lanes[i].tail, memory_order_acquire) -
		     atomic_load_explicit(&ingero_self.lanes[i].head, memory_order_relaxed);
	return n;
}

/* --- the thread ----------------------------------------------------------------------- */
static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	(void)arg;
	if (ev == NNG_PIPE_EV_ADD_POST) {
		atomic_fetch_add(&S.pipes, 1);
		atomic_fetch_add(&S.connects, 1);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		atomic_fetch_sub(&S.pipes, 1);
	}
}

static void open_socket(void)
{
	int rv = nng_push0_open(&S.sock);
	if (rv != 0) {
		ingero_debug("nng_push0_open: %s", nng_strerror(rv));
		return;
	}
	nng_socket_set_int(S.sock, NNG_OPT_SENDBUF, 0);
	nng_socket_set_ms(S.sock, NNG_OPT_SENDTIMEO, SEND_TIMEOUT_MS);
	/* a collector that restarts is found within 200 ms: at most one backoff
	 * fits the exit's wait for a pipe (FINAL_CONNECT_WAIT_NS), so a program
	 * ending soon after still hands its last calls and counts to it (with
	 * backoff up to 1 s, a clean-clone run's tests/e2e/preload_loss.sh lost
	 * them); a retry against a missing socket file is one cheap syscall */
	nng_socket_set_ms(S.sock, NNG_OPT_RECONNMINT, 50);
	nng_socket_set_ms(S.sock, NNG_OPT_RECONNMAXT, 200);
	nng_pipe_notify(S.sock, NNG_PIPE_EV_ADD_POST, pipe_event, NULL);
	nng_pipe_notify(S.sock, NNG_PIPE_EV_REM_POST, pipe_event, NULL);
	/* non-blocking dial: an absent collector is normal, nng keeps retrying */
	rv = nng_dial(S.sock, ingero_cfg.endpoint, NULL, NNG_FLAG_NONBLOCK);
	if (rv != 0) {
		ingero_debug("nng_dial %s: %s", ingero_cfg.endpoint, nng_strerror(rv));
		nng_close(S.sock);
		return;
	}
	S.sock_ok = 1;
}

/* A short-lived program may exit before the dial completed: give a
 * collector that is there (its IPC socket file exists) a moment. */
static void await_pipe(uint64_t budget_ns)
{
	const char *ep = ingero_cfg.endpoint;
	if (!S.sock_ok || atomic_load(&S.pipes) > 0)
		return;
	if (strncmp(ep, "ipc://", 6) == 0 && access(ep + 6, F_OK) != 0)
		return;
	uint64_t until = ingero_now() + budget_ns;
	while (atomic_load(&S.pipes) == 0 && ingero_now() < until) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
}

static void report_one(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	struct pid_acct *a = val;
	snd_counts_mark(0, a, NULL);
	ingero_debug("pid %u: %llu calls made, %llu dropped", a->pid, (unsigned long long)a->sent_made,
		     (unsigned long long)a->sent_dropped);
}

/* INGERO_SELF_TIME: one line on stderr, asked for (not a debug line) */
static void report_self_time(void)
{
	if (!ingero_cfg.self_time)
		return;
	uint64_t calls = atomic_load(&ingero_self_calls), tpu = ingero_clock_ticks_per_us();
	if (!calls || !tpu) {
		fprintf(stderr, "ingero: self time: nothing timed (fewer than 256 recorded calls)\n");
		return;
	}
	fprintf(stderr, "ingero: self time: %.1f ns a recorded call, over %llu calls (pid %d)\n",
		1000.0 * (double)atomic_load(&ingero_self_ticks) / (double)tpu / (double)calls,
		(unsigned long long)calls, (int)getpid());
	uint64_t unwound = atomic_load(&ingero_stacks_unwound), remembered = atomic_load(&ingero_stacks_remembered);
	if (unwound + remembered)
		fprintf(stderr, "ingero: stacks: %llu unwound, %llu remembered, %.1f us a stack; %llu launch samples "
			"passed over on threads without Python frames (pid %d)\n",
			(unsigned long long)unwound, (unsigned long long)remembered,
			(double)atomic_load(&ingero_stacks_ns) / 1000.0 / (double)(unwound + remembered),
			(unsigned long long)atomic_load(&ingero_stacks_thinned), (int)getpid());
	/* by capture mode: what recording does to the rest of each call and
	 * to the program's code between calls (record.h) */
	for (int m = 0; m < 2; m++) {
		uint64_t n = atomic_load(&ingero_mode_calls[m]), g = atomic_load(&ingero_mode_gaps[m]),
			 sh = atomic_load(&ingero_mode_shorts[m]);
		if (n)
			fprintf(stderr, "ingero: %s: real functions %.1f ns a call over %llu calls, the program %.1f ns "
				"between calls over %llu, %.1f ns over the %llu under %llu us (pid %d)\n",
				m ? "recording" : "paused",
				1000.0 * (double)atomic_load(&ingero_mode_real[m]) / (double)tpu / (double)n,
				(unsigned long long)n,
				g ? 1000.0 * (double)atomic_load(&ingero_mode_gap[m]) / (double)tpu / (double)g : 0.0,
				(unsigned long long)g,
				sh ? 1000.0 * (double)atomic_load(&ingero_mode_short[m]) / (double)tpu / (double)sh : 0.0,
				(unsigned long long)sh, INGERO_GAP_SHORT_NS / 1000, (int)getpid());
	}
#ifdef INGERO_SELF_SEGMENTS
	for (int i = 0; i < INGERO_SELF_SEGMENTS; i++)
		fprintf(stderr, "ingero: self time segment %d: %.1f ns\n", i,
			1000.0 * (double)atomic_load(&ingero_self_seg[i]) / (double)tpu / (double)calls);
#endif
}

struct unsent {
	uint64_t made, dropped;
	uint32_t procs;
};

static void sum_unsent(uint64_t key, void *val, void *arg)
{
	(void)key;
	struct unsent *u = arg;
	uint64_t made, dropped;
	snd_pid_figures(val, &made, &dropped);
	u->made += made;
	u->dropped += dropped;
	u->procs += made > 0;
}

/* The collector was there once and is gone at the end (killed?): the last
 * counts cannot reach the trace, which then lacks what came after it.
 * One line on stderr is the only place left to say how much. */
static void report_unsent(void)
{
	struct unsent u = { 0, 0, 0 };
	ingero_map_each(&S.pids, sum_unsent, &u);
	if (!u.made)
		return;
	fprintf(stderr, "ingero: pid %u: the collector was gone at exit (killed?): %llu CUDA calls made by "
		"%u process%s, %llu never sent; the trace lacks them and these counts\n",
		(unsigned)S.shm->owner_pid, (unsigned long long)u.made, u.procs, u.procs == 1 ? "" : "es",
		(unsigned long long)u.dropped);
}

/* What the exit's budget left in the ring and the lanes (a collector too
 * slow to take it, or none at all): taken without sending, each call
 * counted as dropped for its process, so that the COUNTS after it still
 * add up (made = drained + refused; dropped = refused + lost in sends)
 * instead of leaving those calls out of both.  No waiting: a slot still
 * being written is skipped (its writer counts it, ring.h), and the rounds
 * are bounded by what the ring and the lanes can hold. */
static void discard_rest(void)
{
	uint64_t left = pending(), rounds = left / BATCH_RECORDS + 2;
	if (!left)
		return;
	S.discard = 1;
	while (rounds-- && drain(BATCH_RECORDS, 0, 1) > 0)
		snd_send_batch(1);
	snd_send_batch(1);
	S.discard = 0;
	ingero_debug("exit: %llu records left unsent at the budget's end, counted as dropped",
		     (unsigned long long)left);
}

static void final_flush(void)
{
	uint64_t deadline = ingero_now() + FINAL_BUDGET_NS;
	/* Children stop writing into the ring first (ingero_put counts their
	 * calls as dropped from here on), so the drops below include theirs. */
	atomic_store(&S.shm->sender_state, INGERO_SENDER_GONE);
	await_pipe(FINAL_CONNECT_WAIT_NS);
	ingero_clock_calibrate(0);
	if (S.sock_ok)
		nng_socket_set_ms(S.sock, NNG_OPT_SENDTIMEO, FINAL_SEND_TIMEOUT_MS);
	while (ingero_now() < deadline) {
		on_connect_change();
		drain(BATCH_RECORDS, FINAL_HOLE_TIMEOUT_NS, 1);
		snd_send_batch(1);
		if (pending() == 0)
			break;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	discard_rest();
	if (snd_send_counts(1, 0, S.shm->owner_pid, ingero_now()) && atomic_load(&S.connects) > 0)
		report_unsent();
	/* trailing message: accepted only once the pipe is done with the real
	 * ones (no send queue), so the close below cannot drop them */
	snd_send_counts(1, 1, 0, 0);
	if (ingero_cfg.debug)
		ingero_map_each(&S.pids, report_one, NULL);
	if (S.bad_records)
		ingero_debug("%llu malformed ring records skipped", (unsigned long long)S.bad_records);
	report_self_time();
	ingero_debug("sender done: %llu messages, %llu failed sends, %llu ring holes",
		     (unsigned long long)S.sent_msgs, (unsigned long long)S.failed_sends,
		     (unsigned long long)S.holes);
	ingero_debug("lanes: %u claimed, %llu freed, %llu calls taken from lanes",
		     atomic_load(&S.shm->lane_claims), (unsigned long long)S.lanes_freed,
		     (unsigned long long)S.lane_calls);
	if (S.sock_ok)
		nng_close(S.sock);
	S.sock_ok = 0;
}

static void *sender_main(void *arg)
{
	(void)arg;
	/* before open_socket (nng's threads inherit it) and before the name
	 * (which says the thread is up) */
	if (ingero_cfg.tracer_batch)
		ingero_sched_batch();
	prctl(PR_SET_NAME, "ingero-sender", 0, 0, 0);
	open_socket();   /* the dial proceeds (non-blocking) while the ring is faulted in */
	ingero_ring_prefault(ingero_shm_ring(S.shm));
	struct pid_acct *me = snd_pid_acct(S.shm->owner_pid);
	if (me)
		snd_hello_define(me, ingero_self.ppid, ingero_self.start_ns, S.comm);
	S.last_counts = ingero_now();
	while (!atomic_load_explicit(&S.stop, memory_order_acquire)) {
		ingero_clock_calibrate(CALIBRATE_EVERY_NS);
		on_connect_change();
		if (atomic_load(&S.pipes) == 0) {
			/* No collector (not yet, or gone): leave the events in the
			 * ring.  It buffers a collector restart; when it is full,
			 * producers drop and count.  At exit, what is left is
			 * drained and counted as dropped.  A plain sleep, not the
			 * doorbell: producers finding the ring full must not wake
			 * us for nothing. */
			struct timespec ts = { 0, (long)IDLE_WAIT_NS };
			nanosleep(&ts, NULL);
			continue;
		}
		int n = drain(4 * BATCH_RECORDS, HOLE_TIMEOUT_NS, 0);
		uint64_t now = ingero_now();
		if (S.nrec && (n == 0 || now - S.batch_start >= BATCH_LINGER_NS))
			snd_send_batch(0);
		if (now - S.last_counts >= COUNTS_EVERY_NS) {
			snd_send_counts(0, 0, 0, 0);
			S.last_counts = now;
			S.lanes_freed += ingero_lanes_free_gone(ingero_self.lanes, ingero_self.nlanes);
		}
		if (n == 0 || pending() == 0)
			ingero_shm_wait(S.shm, S.nrec ? BATCH_LINGER_NS / 4 : IDLE_WAIT_NS);
	}
	final_flush();
	atomic_store_explicit(&S.done, 1, memory_order_release);
	return NULL;
}

int ingero_sender_start(struct ingero_shm *shm)
{
	if (S.running)
		return 0;
	S.shm = shm;
	atomic_store(&S.stop, 0);
	atomic_store(&S.done, 0);
	msgpack_sbuffer_init(&S.body);
	msgpack_packer_init(&S.pk, &S.body, ingero_sbuffer_sink);
	prctl(PR_GET_NAME, S.comm, 0, 0, 0);
	snd_read_exe(ingero_hot.pid, S.exe, sizeof S.exe);
	ingero_read_cmdline(ingero_hot.pid, S.cmdline, sizeof S.cmdline);

	/* From here a fork child must not use nng (fork.c). */
	ingero_self.nng_touched = true;
	atomic_store_explicit(&shm->sender_state, INGERO_SENDER_RUNNING, memory_order_release);

	/* The program's signals are not ours to handle: block them all in
	 * our thread (and in nng's, which inherit the mask). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rv = pthread_create(&S.th, NULL, sender_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rv != 0) {
		atomic_store(&shm->sender_state, INGERO_SENDER_GONE);
		return -1;
	}
	S.running = 1;
	return 0;
}

void ingero_sender_stop(void)
{
	/* the watcher's last marks and counts go into the final drain, and
	 * the NVTX ranges lost */
	ingero_gpu_watch_stop();
	ingero_nvtx_final();
	if (!S.running)
		return;
	S.running = 0;
	atomic_store_explicit(&S.stop, 1, memory_order_release);
	ingero_shm_wake(S.shm);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += STOP_WAIT_NS / 1000000000ull;
	if (pthread_timedjoin_np(S.th, NULL, &ts) != 0)
		ingero_debug("sender did not finish in time; exiting without it");
}

void ingero_sender_forget(void)
{
	/* Only the forking thread exists in the child: no sender thread, no
	 * nng here.  The parent's bookkeeping is not ours to send. */
	S.running = 0;
	S.sock_ok = 0;
	S.lane_calls = S.lanes_freed = 0;
	L.armed = false;
}
