/*
 * intake.c — receiving the preload library's messages.
 *
 * One nng pull socket, one receiver thread.  For each message: who sent it
 * (the IPC pipe's peer pid/uid, which the kernel vouches for), decode it
 * whole (common/wire_decode.c; a malformed message is counted and dropped,
 * nothing from it is stored), then check every record's pid/tid against the
 * sender (identity.c) and, when the collector was given targets (-- CMD or
 * -p), against the traced tree.  Accepted CUDA calls go to the store as one
 * array per message.  Counters by cause go to the losses table under the
 * sender's pid.
 *
 * Nothing a sender sends makes the receiver wait.  A record for a pid the
 * collector does not know yet (its fork may still be in the kernel's ring:
 * records can overtake it) parks its message: the receiver goes on with
 * the next, and decides the parked records once the ring has been drained
 * twice since (proc_tree_epoch), or PARK_MAX_MS later, whichever is first.
 * A sender may have SENDER_PARK_BYTES parked, all senders PARK_BYTES;
 * past that its records are decided at once.  A spoofed or unknown pid so
 * costs a few lookups, never a wait, and is counted.
 *
 * Stopping is bounded (intake_request_stop): what is queued is taken until
 * the deadline, what is parked is then decided, and messages still queued
 * are discarded and counted (losses 'drain_limit_messages').
 *
 * ipc:// endpoints: the folder is created (0755) and the socket made 0666 so
 * unprivileged programs can send; the socket, its listener and the peers as
 * they connect are intake_socket.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nng/nng.h>

#include "ingero/config.h"
#include "ingero/schema.h"
#include "ingero/u64map.h"
#include "ingero/wire_decode.h"
#include "identity.h"
#include "intake.h"
#include "intake_internal.h"
#include "proc_env.h"
#include "proc_tree.h"
#include "procs.h"
#include "store.h"
#include "tracer.h"

static struct sender *sender_of(struct intake *in, nng_msg *msg)
{
	nng_pipe p = nng_msg_get_pipe(msg);
	uint32_t id = nng_pipe_id(p);
	uint64_t pid = 0, uid = UINT32_MAX;
	struct sender_slot *free_slot = NULL, *oldest = &in->senders[0];

	in->tick++;
	for (int i = 0; i < MAX_SENDERS; i++) {
		struct sender_slot *sl = &in->senders[i];

		if (sl->pipe_id == id) {
			sl->last_used = in->tick;
			return &sl->s;
		}
		if (!sl->pipe_id && !free_slot)
			free_slot = sl;
		if (sl->last_used < oldest->last_used && !sl->parked_bytes)
			oldest = sl;
	}
	/* nng hands the peer credentials out as 64-bit values */
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) || pid == 0 || pid > INT32_MAX)
		return NULL;   /* not an IPC peer: nobody vouches for it */
	nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &uid);
	if (!free_slot)
		free_slot = oldest;
	free_slot->pipe_id = id;
	free_slot->last_used = in->tick;
	free_slot->parked_bytes = 0;   /* an evicted sender's parked messages are refused */
	identity_init(&free_slot->s, (uint32_t)pid, (uint32_t)uid);
	intake_peer_namespace(in, id, &free_slot->s);   /* as it connected */
	return &free_slot->s;
}

/* NUL-terminated copy of a wire string into buf. */
static const char *cstr(const struct ingero_wire_str *s, char *buf, size_t size)
{
	size_t n;

	if (!s->ptr)
		return NULL;
	n = s->len < size - 1 ? s->len : size - 1;
	memcpy(buf, s->ptr, n);
	buf[n] = 0;
	return buf;
}

/* May records for this (root) pid be stored?  1: yes (enrolled when it
 * belongs), 0: no; with may_wait, 2: ask again once the kernel's events
 * are in (its fork may still be in the ring, and the fork record is exact:
 * enrolling from /proc walks every process for its children). */
static int admit(struct intake *in, uint32_t pid, int may_wait)
{
	if (proc_tree_is_traced(pid))
		return 1;
	if (may_wait)
		return 2;
	/* a process that predates its traced ancestor's enrolment (or, in open
	 * mode, any verified sender): enrol it, with the children it already has */
	if (in->o.open_mode || proc_tree_in_traced_tree(pid)) {
		procs_enroll(in->o.tracer, in->o.store, pid, 1);
		return 1;
	}
	return 0;
}

/* Copy a wire string into the arena at *p, NUL-terminated; NULL for nil. */
static const char *arena_str(char **p, const struct ingero_wire_str *ws)
{
	const char *r = cstr(ws, *p, ws->len + 1);

	if (r)
		*p += strlen(r) + 1;
	return r;
}

static void store_stack_record(struct intake *in, const struct ingero_wire_stack *k, uint32_t pid)
{
	struct frame_row f[INGERO_WIRE_MAX_NATIVE + INGERO_WIRE_MAX_PYTHON];
	size_t need = 1, n = 0;
	char *strs, *p;

	/* one arena for every NUL-terminated copy */
	for (uint32_t i = 0; i < k->n_native; i++)
		need += k->native[i].symbol.len + k->native[i].module.len + 2;
	for (uint32_t i = 0; i < k->n_python; i++)
		need += k->python[i].file.len + k->python[i].function.len + 2;
	strs = p = malloc(need);

	if (!strs)
		return;
	for (uint32_t i = 0; i < k->n_native; i++, n++) {
		const struct ingero_wire_native_frame *nf = &k->native[i];

		f[n] = (struct frame_row){ .kind = "native", .depth = i, .ip = nf->ip,
					   .offset = nf->offset, .line = -1 };
		f[n].symbol = arena_str(&p, &nf->symbol);
		f[n].module = arena_str(&p, &nf->module);
	}
	for (uint32_t i = 0; i < k->n_python; i++, n++) {
		const struct ingero_wire_python_frame *pf = &k->python[i];

		f[n] = (struct frame_row){ .kind = "python", .depth = i, .line = pf->line };
		f[n].file = arena_str(&p, &pf->file);
		f[n].symbol = arena_str(&p, &pf->function);
	}
	store_stack(in->o.store, (int64_t)k->id, pid, f, n);
	free(strs);
}

/* The pid and tid a record speaks for; 0 for a type this version skips. */
static int record_ids(const struct ingero_wire_record *r, uint32_t *pid, uint32_t *tid)
{
	*tid = 0;
	switch (r->type) {
	case INGERO_REC_CALL:   *pid = r->u.call.pid; *tid = r->u.call.tid; return 1;
	case INGERO_REC_HELLO:  *pid = r->u.hello.pid; return 1;
	case INGERO_REC_COUNTS: *pid = r->u.counts.pid; return 1;
	case INGERO_REC_STACK:  *pid = r->u.stack.pid; return 1;
	case INGERO_REC_KERNEL: *pid = r->u.kernel.pid; return 1;
	case INGERO_REC_BYE:    *pid = r->u.bye.pid; return 1;
	case INGERO_REC_ORPHAN: *pid = r->u.orphan.pid; return 1;
	case INGERO_REC_GPU:    *pid = r->u.gpu.pid; return 1;
	case INGERO_REC_GPU_STATS: *pid = r->u.gpu_stats.pid; return 1;
	case INGERO_REC_CAPTURE: *pid = r->u.capture.pid; return 1;
	case INGERO_REC_COLL:   *pid = r->u.coll.pid; *tid = r->u.coll.tid; return 1;
	case INGERO_REC_RANGE:  *pid = r->u.range.pid; *tid = r->u.range.tid; return 1;
	case INGERO_REC_RANGE_STATS: *pid = r->u.range_stats.pid; return 1;
	default: return 0;
	}
}

/* One admitted record (pid resolved) into the store; a call is kept in
 * in->calls (at *ncalls), stored with the message's others. */
static void store_record(struct intake *in, const struct sender *s, const struct ingero_wire_record *r,
			 uint32_t pid, uint32_t tid, size_t *ncalls)
{
	struct proc_row pr = { .pid = pid, .ppid = -1, .start_ns = -1, .exit_ns = -1, .exit_code = -1,
			       .made = -1, .dropped = -1 };
	char comm[64], exe[INGERO_WIRE_MAX_STR + 1], cmd[INGERO_WIRE_MAX_STR + 1];

	switch (r->type) {
	case INGERO_REC_CALL:
		in->calls[*ncalls] = r->u.call;
		in->calls[*ncalls].pid = pid;
		in->calls[*ncalls].tid = tid;
		(*ncalls)++;
		break;
	case INGERO_REC_HELLO:
		if (!ingero_map_get(&in->speaker, pid))
			ingero_map_put(&in->speaker, pid, (void *)(uintptr_t)s->pid);
		pr.announced = 1;
		pr.comm = cstr(&r->u.hello.comm, comm, sizeof comm);
		pr.exe = cstr(&r->u.hello.exe, exe, sizeof exe);
		pr.cmdline = cstr(&r->u.hello.cmdline, cmd, sizeof cmd);
		pr.start_ns = (int64_t)r->u.hello.start_ns;
		pr.ppid = proc_tree_ppid(pid);
		store_process(in->o.store, &pr);
		if (!in->o.tracer && proc_env_record(in->o.store, pid) < 0)   /* no exec records to read it at */
			store_loss_add(in->o.store, INGERO_LOSS_ENV_UNREAD, pid, 1);
		break;
	case INGERO_REC_COUNTS:
		pr.made = (int64_t)r->u.counts.made;
		pr.dropped = (int64_t)r->u.counts.dropped;
		store_process(in->o.store, &pr);
		store_loss_max(in->o.store, INGERO_LOSS_PRELOAD_DROPPED, pid, r->u.counts.dropped);
		break;
	case INGERO_REC_STACK:
		store_stack_record(in, &r->u.stack, pid);
		break;
	case INGERO_REC_KERNEL:
		store_kernel(in->o.store, pid, r->u.kernel.addr, r->u.kernel.name.ptr, r->u.kernel.name.len);
		break;
	case INGERO_REC_ORPHAN:
		/* a process, not calls: how many of its calls follow is unknowable */
		store_loss_max(in->o.store, INGERO_LOSS_AFTER_OWNER, pid, 1);
		break;
	case INGERO_REC_GPU:
		store_gpu_mark(in->o.store, pid, &r->u.gpu);
		break;
	case INGERO_REC_GPU_STATS:
		store_loss_max(in->o.store, INGERO_LOSS_GPU_MARKS, pid, r->u.gpu_stats.lost);
		break;
	case INGERO_REC_CAPTURE:
		store_capture(in->o.store, pid, r->u.capture.t_ns, r->u.capture.recording);
		tracer_capture(in->o.tracer, pid, (int)r->u.capture.recording);
		break;
	case INGERO_REC_COLL: {
		struct ingero_wire_coll c = r->u.coll;

		c.pid = pid;
		c.tid = tid;
		store_collective(in->o.store, &c);
		if (c.lost)
			store_loss_max(in->o.store, INGERO_LOSS_COLL_DROPPED, pid, c.lost);
		break;
	}
	case INGERO_REC_RANGE: {
		struct ingero_wire_range g = r->u.range;

		g.pid = pid;
		g.tid = tid;
		store_range(in->o.store, &g);
		if (g.lost)
			store_loss_max(in->o.store, INGERO_LOSS_RANGE_DROPPED, pid, g.lost);
		break;
	}
	case INGERO_REC_RANGE_STATS:
		store_loss_max(in->o.store, INGERO_LOSS_RANGE_DROPPED, pid, r->u.range_stats.lost);
		break;
	case INGERO_REC_BYE:
		if (pid == s->pid)   /* a sender's own BYE comes with its final counts */
			ingero_map_put(&in->closed, pid, (void *)1);
		/* the kernel's exit record is exact; without BPF this is all we have */
		if (!in->o.tracer) {
			pr.exit_ns = (int64_t)r->u.bye.end_ns;
			store_process(in->o.store, &pr);
		}
		break;
	}
}

/* Room for a message's calls in in->calls. */
static int calls_room(struct intake *in, uint32_t n)
{
	if (n <= in->calls_cap)
		return 0;
	struct ingero_cuda_call *c = realloc(in->calls, n * sizeof(*c));
	if (!c)
		return -1;
	in->calls = c;
	in->calls_cap = n;
	return 0;
}

/* What one pass over a message's records did. */
struct pass {
	uint64_t spoofed, untraced;
	size_t ncalls;
	uint32_t left;           /* records left open for a later pass */
};

/* Leave record i open for a later pass; 0, or -1 when there is no memory
 * to remember it (then it is decided now). */
static int leave_open(const struct ingero_wire_batch *b, uint8_t **open, uint32_t i)
{
	if (!*open && !(*open = calloc(b->n_records, 1)))
		return -1;
	(*open)[i] = 1;
	return 0;
}

/* One pass over a message's records: on the first (open NULL) every
 * record, later only those left open.  Each is stored or counted, or, with
 * may_wait, left open when the kernel's events in flight may decide it. */
static void take_records(struct intake *in, struct sender *s, const struct ingero_wire_batch *b,
			 uint8_t **open, int may_wait, struct pass *ps)
{
	int first = !*open;
	uint32_t last_pid = 0, wait_pid = 0, wait_tid = 0;
	int last_admitted = 0, waiting = 0;

	memset(ps, 0, sizeof(*ps));
	for (uint32_t i = 0; i < b->n_records; i++) {
		const struct ingero_wire_record *r = &b->records[i];
		uint32_t pid, tid;
		int rc;

		if (!first && !(*open)[i])
			continue;
		if (!first)
			(*open)[i] = 0;
		if (!record_ids(r, &pid, &tid))
			continue;
		/* a pair just left open is left open again without a look-up */
		if (waiting && pid == wait_pid && tid == wait_tid && leave_open(b, open, i) == 0) {
			ps->left++;
			continue;
		}
		rc = identity_resolve(s, &pid, &tid, may_wait);
		if (rc > 0) {
			if (leave_open(b, open, i) == 0) {
				waiting = 1;
				wait_pid = pid;   /* still as sent: nothing resolved */
				wait_tid = tid;
				ps->left++;
				continue;
			}
			rc = identity_resolve(s, &pid, &tid, 0);
		}
		if (rc < 0) {
			ps->spoofed++;
			continue;
		}
		/* one decision per run of records of the same pid */
		if (pid != last_pid) {
			last_pid = pid;
			last_admitted = admit(in, pid, may_wait);
		}
		if (last_admitted == 2) {
			if (leave_open(b, open, i) == 0) {
				ps->left++;
				continue;
			}
			last_admitted = admit(in, pid, 0);
		}
		if (!last_admitted) {
			ps->untraced++;
			continue;
		}
		store_record(in, s, r, pid, tid, &ps->ncalls);
	}
	store_calls(in->o.store, in->calls, ps->ncalls);
	if (ps->spoofed)
		store_loss_add(in->o.store, INGERO_LOSS_SPOOFED, s->pid, ps->spoofed);
	if (ps->untraced)
		store_loss_add(in->o.store, INGERO_LOSS_UNTRACED_SENDER, s->pid, ps->untraced);
	pthread_mutex_lock(&in->lock);
	in->st.calls += ps->ncalls;
	in->st.spoofed += ps->spoofed;
	in->st.untraced += ps->untraced;
	pthread_mutex_unlock(&in->lock);
}

/* May this sender park a message of len bytes? */
static int may_park(const struct intake *in, const struct sender_slot *sl, size_t len)
{
	uint64_t epoch;

	return proc_tree_epoch(&epoch) && !in->stop && sl->parked_bytes + len <= SENDER_PARK_BYTES &&
	       in->parked_bytes + len <= PARK_BYTES;
}

static struct sender_slot *slot_of(struct sender *s)
{
	return (struct sender_slot *)((char *)s - offsetof(struct sender_slot, s));
}

static void parked_free(struct intake *in, struct parked *p)
{
	size_t len = nng_msg_len(p->msg);

	for (int i = 0; i < MAX_SENDERS; i++)
		if (in->senders[i].pipe_id == p->pipe_id) {
			in->senders[i].parked_bytes -= len;
			break;
		}
	in->parked_bytes -= len;
	ingero_wire_batch_free(&p->b);
	nng_msg_free(p->msg);
	free(p->open);
	free(p);
}

/* Decides the parked records whose time has come (all of them when final):
 * the ring has been drained twice since they were parked, or PARK_MAX_MS
 * passed (the tracer stopped turning). */
static void parked_retry(struct intake *in, int final)
{
	uint64_t epoch, now = mono_now_ns();
	struct parked *p;
	struct pass ps;

	proc_tree_epoch(&epoch);
	while ((p = in->parked)) {
		if (!final && epoch < p->epoch + 2 && now < p->at_ns + PARK_MAX_MS * 1000000ull)
			break;   /* the ones after it were parked later */
		in->parked = p->next;
		if (!in->parked)
			in->parked_tail = &in->parked;
		struct sender_slot *sl = NULL;
		for (int i = 0; i < MAX_SENDERS && !sl; i++)
			if (in->senders[i].pipe_id == p->pipe_id)
				sl = &in->senders[i];
		if (sl) {
			take_records(in, &sl->s, &p->b, &p->open, 0, &ps);
		} else {   /* its sender's slot went to another: nobody vouches for it now */
			uint64_t n = 0;

			for (uint32_t i = 0; i < p->b.n_records; i++)
				n += p->open[i];
			store_loss_add(in->o.store, INGERO_LOSS_SPOOFED, p->sender_pid, n);
			pthread_mutex_lock(&in->lock);
			in->st.spoofed += n;
			pthread_mutex_unlock(&in->lock);
		}
		parked_free(in, p);
	}
}

/* 1 when the message was parked (it is kept), 0 when the caller frees it. */
static int handle_message(struct intake *in, nng_msg *msg)
{
	struct ingero_wire_batch b;
	struct sender *s = sender_of(in, msg);
	struct pass ps;
	uint8_t *open = NULL;
	int rc;

	pthread_mutex_lock(&in->lock);
	in->st.messages++;
	in->st.last_msg_ns = mono_now_ns();
	if (!in->st.first_msg_ns)
		in->st.first_msg_ns = in->st.last_msg_ns;
	pthread_mutex_unlock(&in->lock);
	if (!s) {
		store_loss_add(in->o.store, INGERO_LOSS_SPOOFED, 0, 1);
		return 0;
	}
	rc = ingero_wire_decode(nng_msg_body(msg), nng_msg_len(msg), &b);
	if (rc) {
		store_loss_add(in->o.store, INGERO_LOSS_MALFORMED, s->pid, 1);
		pthread_mutex_lock(&in->lock);
		in->st.malformed++;
		pthread_mutex_unlock(&in->lock);
		if (getenv("INGERO_DEBUG"))
			fprintf(stderr, "ingero-collector: message from pid %u rejected: %s\n",
				s->pid, ingero_wire_strerror(rc));
		return 0;
	}
	if (calls_room(in, b.n_calls) < 0) {
		store_loss_add(in->o.store, INGERO_LOSS_NO_MEMORY, s->pid, b.n_records);
		ingero_wire_batch_free(&b);
		return 0;
	}
	struct sender_slot *sl = slot_of(s);
	struct parked *p = NULL;
	size_t len = nng_msg_len(msg);
	if (may_park(in, sl, len))
		p = calloc(1, sizeof(*p));
	take_records(in, s, &b, &open, p != NULL, &ps);
	if (b.n_unknown)
		store_loss_add(in->o.store, INGERO_LOSS_UNKNOWN_RECORD, s->pid, b.n_unknown);
	pthread_mutex_lock(&in->lock);
	in->st.records += b.n_records;
	in->st.unknown += b.n_unknown;
	pthread_mutex_unlock(&in->lock);
	if (!ps.left) {
		free(p);
		free(open);
		ingero_wire_batch_free(&b);
		return 0;
	}
	p->msg = msg;
	p->b = b;
	p->open = open;
	p->pipe_id = sl->pipe_id;
	p->sender_pid = s->pid;
	p->at_ns = mono_now_ns();
	proc_tree_epoch(&p->epoch);
	*in->parked_tail = p;
	in->parked_tail = &p->next;
	sl->parked_bytes += len;
	in->parked_bytes += len;
	return 1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Once stopping, past the deadline: what is still queued is discarded,
 * counted (for at most 100 ms: a sender may never stop). */
static void cut_queue(struct intake *in)
{
	uint64_t until = mono_now_ns() + 100000000ull, n = 0;
	nng_msg *msg;

	while (mono_now_ns() < until && nng_recvmsg(in->sock, &msg, NNG_FLAG_NONBLOCK) == 0) {
		nng_msg_free(msg);
		n++;
	}
	if (n)
		store_loss_add(in->o.store, INGERO_LOSS_DRAIN_LIMIT, 0, n);
}

static void *receiver(void *arg)
{
	struct intake *in = arg;

	for (;;) {
		nng_msg *msg;
		int rv;

		if (__atomic_load_n(&in->stop, __ATOMIC_ACQUIRE) && mono_now_ns() >= in->deadline_ns) {
			parked_retry(in, 1);
			cut_queue(in);
			break;
		}
		rv = nng_recvmsg(in->sock, &msg, in->stop ? NNG_FLAG_NONBLOCK : 0);
		if (rv == 0 && !handle_message(in, msg))
			nng_msg_free(msg);
		parked_retry(in, 0);
		intake_watch_listener(in);
		if (rv == NNG_ETIMEDOUT) {   /* nothing queued for the whole timeout */
			pthread_mutex_lock(&in->lock);
			in->st.empty_ns = mono_now_ns();
			pthread_mutex_unlock(&in->lock);
		}
		if (rv == 0 || rv == NNG_ETIMEDOUT)
			continue;
		if (rv == NNG_EAGAIN && in->stop && in->parked) {
			sleep_ms(5);   /* the queue is empty: only the parked ones wait (for the ring) */
			continue;
		}
		if (in->stop || rv == NNG_ECLOSED) {
			parked_retry(in, 1);   /* NNG_EAGAIN once stopping: the queue is empty */
			break;
		}
	}
	in->finished = 1;
	return NULL;
}

int intake_start(struct intake *in, const struct intake_opts *o)
{
	in->o = *o;
	if (pthread_create(&in->thread, NULL, receiver, in)) {
		fprintf(stderr, "ingero-collector: cannot start the intake thread\n");
		return -1;
	}
	in->started = 1;
	return 0;
}

void intake_stats(struct intake *in, struct intake_stats *out)
{
	pthread_mutex_lock(&in->lock);
	*out = in->st;
	pthread_mutex_unlock(&in->lock);
}

static void counts_unknown(uint64_t pid, void *sender, void *arg)
{
	struct intake *in = arg;
	if (!ingero_map_get(&in->closed, (uint64_t)(uintptr_t)sender))
		store_loss_max(in->o.store, INGERO_LOSS_COUNTS_UNKNOWN, (uint32_t)pid, 1);
}

void intake_request_stop(struct intake *in, uint64_t deadline_ns)
{
	if (!in || in->stop)
		return;
	in->deadline_ns = deadline_ns;
	__atomic_store_n(&in->stop, 1, __ATOMIC_RELEASE);
}

int intake_stopped(struct intake *in)
{
	return !in || !in->started || __atomic_load_n(&in->finished, __ATOMIC_ACQUIRE);
}

void intake_stop(struct intake *in, struct intake_stats *final)
{
	if (!in)
		return;
	intake_request_stop(in, mono_now_ns());
	if (in->started) {
		pthread_join(in->thread, NULL);
		/* a process whose ring's owner never sent its last counts (killed, or
		 * its collector stalled until it had exited): what it lost is unknown */
		ingero_map_each(&in->speaker, counts_unknown, in);
	}
	ingero_map_free(&in->speaker);
	ingero_map_free(&in->closed);
	if (final)   /* after the join: what the thread took on its way out counts too */
		*final = in->st;
	nng_close(in->sock);
	while (in->parked) {   /* (none: the thread decided them) */
		struct parked *p = in->parked;

		in->parked = p->next;
		parked_free(in, p);
	}
	free(in->senders);
	free(in->calls);
	free(in->endpoint);
	pthread_mutex_destroy(&in->lock);
	pthread_mutex_destroy(&in->peers_lock);
	free(in);
}
