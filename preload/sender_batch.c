/*
 * sender_batch.c — the batch the sender thread builds and what it
 * accounts (sender_internal.h): definitions (HELLO, KERNEL) put into a
 * batch with their first use and confirmed once a send succeeds, the CALLs
 * per process in the batch, COUNTS and the orphans at the end.  The
 * design — never blocking, what is counted as dropped — is sender.c's.
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

/* --- small helpers ------------------------------------------------------------ */
void snd_read_exe(uint32_t pid, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/exe", pid);
	ssize_t n = readlink(path, buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
}

int snd_def_set(struct def *d, const msgpack_sbuffer *sb)
{
	char *b = malloc(sb->size);
	if (!b)
		return -1;
	memcpy(b, sb->data, sb->size);
	free(d->bytes);
	d->bytes = b;
	d->len = sb->size;
	d->confirmed = 0;
	return 0;
}

/* Puts a definition into the batch unless the collector has it already. */
void snd_def_use(struct def *d)
{
	if (!d || !d->bytes || d->confirmed || d->in_batch)
		return;
	if (S.ndefs == S.capdefs) {
		size_t n = S.capdefs ? S.capdefs * 2 : 256;
		struct def **p = realloc(S.defs, n * sizeof *p);
		if (!p)
			return;
		S.defs = p;
		S.capdefs = n;
	}
	msgpack_sbuffer_write(&S.body, d->bytes, d->len);
	S.nrec++;
	d->in_batch = 1;
	S.defs[S.ndefs++] = d;
}

struct pid_acct *snd_pid_acct(uint32_t pid)
{
	struct pid_acct *a = ingero_map_get(&S.pids, pid);
	if (a)
		return a;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->pid = pid;
	a->sent_made = a->sent_dropped = UINT64_MAX;
	if (ingero_map_put(&S.pids, pid, a) != 0) {
		free(a);
		return NULL;
	}
	return a;
}

void snd_hello_define(struct pid_acct *a, uint32_t ppid, uint64_t start_ns, const char *comm)
{
	char exe[1024], cmd[4096];
	if (a->pid == S.shm->owner_pid) {
		snprintf(exe, sizeof exe, "%s", S.exe);
		snprintf(cmd, sizeof cmd, "%s", S.cmdline);
	} else {
		/* a fork child: same image as the owner unless it exec'd (then
		 * it is an owner of its own and not here) */
		snd_read_exe(a->pid, exe, sizeof exe);
		ingero_read_cmdline(a->pid, cmd, sizeof cmd);
		if (!exe[0])
			snprintf(exe, sizeof exe, "%s", S.exe);
		if (!cmd[0])
			snprintf(cmd, sizeof cmd, "%s", S.cmdline);
	}
	a->ppid = ppid;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	ingero_pack_hello(&pk, a->pid, ppid, start_ns, comm, exe, cmd);
	snd_def_set(&a->hello, &sb);
	msgpack_sbuffer_destroy(&sb);
}

/* A process whose HELLO never arrived (the ring was full): announce it from
 * what the process table and /proc say. */
void snd_hello_synthesize(struct pid_acct *a)
{
	uint32_t ppid = 0;
	uint32_t n = atomic_load(&S.shm->nprocs);
	for (uint32_t i = 0; i < n && i < INGERO_PROCTAB_SLOTS; i++)
		if (atomic_load(&S.shm->procs[i].pid) == a->pid)
			ppid = S.shm->procs[i].ppid;
	char comm[32] = "", path[64];
	snprintf(path, sizeof path, "/proc/%u/comm", a->pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snd_hello_define(a, ppid, 0, comm);
}

void snd_batch_count(uint32_t pid)
{
	for (size_t i = 0; i < S.nb; i++)
		if (S.bpid[i] == pid) {
			S.bcount[i]++;
			return;
		}
	if (S.nb == S.capb) {
		size_t n = S.capb ? S.capb * 2 : 16;
		uint32_t *p = realloc(S.bpid, n * sizeof *p);
		uint32_t *c = p ? realloc(S.bcount, n * sizeof *c) : NULL;
		if (p)
			S.bpid = p;
		if (!c)
			return;   /* out of memory: the count is lost from accounting, not the call */
		S.bcount = c;
		S.capb = n;
	}
	S.bpid[S.nb] = pid;
	S.bcount[S.nb++] = 1;
}

/* --- sending -------------------------------------------------------------------- */
int snd_send_buf(const msgpack_sbuffer *hdr, const msgpack_sbuffer *body, int final)
{
	if (!S.sock_ok || S.discard)
		return -1;
	nng_msg *m;
	if (nng_msg_alloc(&m, 0) != 0)
		return -1;
	if (nng_msg_append(m, hdr->data, hdr->size) != 0 ||
	    (body && nng_msg_append(m, body->data, body->size) != 0)) {
		nng_msg_free(m);
		return -1;
	}
	(void)final;
	/* no pipe: fail now rather than wait (the collector is not there) */
	int flags = atomic_load(&S.pipes) == 0 ? NNG_FLAG_NONBLOCK : 0;
	int rv = nng_sendmsg(S.sock, m, flags);
	if (rv != 0) {
		nng_msg_free(m);
		S.failed_sends++;
		return -1;
	}
	S.sent_msgs++;
	return 0;
}

void snd_batch_reset(void)
{
	msgpack_sbuffer_clear(&S.body);
	S.nrec = 0;
	S.ndefs = 0;
	S.nb = 0;
	S.batch_start = 0;
}

void snd_send_batch(int final)
{
	if (S.nrec == 0)
		return;
	msgpack_sbuffer hdr;
	msgpack_packer hp;
	msgpack_sbuffer_init(&hdr);
	msgpack_packer_init(&hp, &hdr, msgpack_sbuffer_write);
	ingero_pack_header(&hp, S.shm->owner_pid, S.nrec);
	int ok = snd_send_buf(&hdr, &S.body, final) == 0;
	msgpack_sbuffer_destroy(&hdr);
	for (size_t i = 0; i < S.ndefs; i++) {
		S.defs[i]->in_batch = 0;
		if (ok && !S.defs[i]->resend)
			S.defs[i]->confirmed = 1;
		S.defs[i]->resend = 0;
	}
	if (!ok) {
		S.coll_lost += S.coll_in_batch;   /* carried by the next COLL (wire.h) */
		S.range_lost += S.range_in_batch;
	}
	S.coll_in_batch = S.range_in_batch = 0;
	if (!ok)
		for (size_t i = 0; i < S.nb; i++) {
			struct pid_acct *a = snd_pid_acct(S.bpid[i]);
			if (a)
				a->send_dropped += S.bcount[i];
		}
	snd_batch_reset();
}

struct counts_ctx {
	msgpack_packer *pk;
	uint32_t n;
	int force;
};

/* A process's figures so far: made = drained + refused by the ring,
 * dropped = refused + lost in failed sends (the accounting in sender.c). */
void snd_pid_figures(const struct pid_acct *a, uint64_t *made, uint64_t *dropped)
{
	uint64_t ring_dropped = 0;
	uint32_t n = atomic_load(&S.shm->nprocs);
	for (uint32_t i = 0; i < n && i < INGERO_PROCTAB_SLOTS; i++)
		if (atomic_load_explicit(&S.shm->procs[i].pid, memory_order_acquire) == a->pid)
			ring_dropped += atomic_load(&S.shm->procs[i].ring_dropped);
	*made = a->drained + ring_dropped;
	*dropped = ring_dropped + a->send_dropped;
}

static void counts_one(uint64_t key, void *val, void *arg)
{
	(void)key;
	struct counts_ctx *c = arg;
	struct pid_acct *a = val;
	uint64_t made, dropped;
	snd_pid_figures(a, &made, &dropped);
	if (made == 0 && dropped == 0)
		return;
	if (!c->force && made == a->sent_made && dropped == a->sent_dropped)
		return;
	ingero_pack_counts(c->pk, a->pid, made, dropped);
	c->n++;
}

void snd_counts_mark(uint64_t key, void *val, void *arg)
{
	(void)key;
	(void)arg;
	struct pid_acct *a = val;
	snd_pid_figures(a, &a->sent_made, &a->sent_dropped);
}

/* COUNTS for every process whose figures changed (all of them if force). */
/* The fork children writing into this ring that still run as it stops:
 * one ORPHAN record each (wire.h) — their later calls cannot be counted.
 * A slot names the same process while its start time is the one it
 * claimed with (a reused pid has another; a reparented grandchild the same). */
static uint32_t pack_orphans(msgpack_packer *pk)
{
	uint32_t n = atomic_load(&S.shm->nprocs), norph = 0;
	for (uint32_t i = 0; i < n && i < INGERO_PROCTAB_SLOTS; i++) {
		uint32_t pid = atomic_load_explicit(&S.shm->procs[i].pid, memory_order_acquire);
		uint64_t start = S.shm->procs[i].start_ticks, now_start;
		char state;
		if (!pid || pid == S.shm->owner_pid || pid == ingero_hot.pid || !start ||
		    ingero_read_stat(pid, &state, &now_start) < 0 || state == 'Z' || state == 'X' || now_start != start)
			continue;
		ingero_pack_orphan(pk, pid);
		norph++;
	}
	if (norph)
		ingero_debug("%u fork children still running as the sender stops: their later calls are lost",
			     norph);
	return norph;
}

int snd_send_counts(int final, int force, uint32_t bye_pid, uint64_t bye_ns)
{
	/* processes that only ever dropped still need an entry */
	uint32_t n = atomic_load(&S.shm->nprocs);
	for (uint32_t i = 0; i < n && i < INGERO_PROCTAB_SLOTS; i++) {
		uint32_t pid = atomic_load_explicit(&S.shm->procs[i].pid, memory_order_acquire);
		if (pid)
			snd_pid_acct(pid);
	}
	msgpack_sbuffer body;
	msgpack_packer pk;
	msgpack_sbuffer_init(&body);
	msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
	struct counts_ctx c = { &pk, 0, force };
	ingero_map_each(&S.pids, counts_one, &c);
	if (bye_pid) {   /* the owner's last counts: its bye, and the children it leaves running */
		ingero_pack_bye(&pk, bye_pid, bye_ns);
		c.n++;
		c.n += pack_orphans(&pk);
	}
	int rc = 0;
	if (c.n) {
		msgpack_sbuffer hdr;
		msgpack_packer hp;
		msgpack_sbuffer_init(&hdr);
		msgpack_packer_init(&hp, &hdr, msgpack_sbuffer_write);
		ingero_pack_header(&hp, S.shm->owner_pid, c.n);
		rc = snd_send_buf(&hdr, &body, final);
		if (rc == 0)
			ingero_map_each(&S.pids, snd_counts_mark, NULL);
		msgpack_sbuffer_destroy(&hdr);
	}
	msgpack_sbuffer_destroy(&body);
	return rc;
}

/* --- kernel definitions (sent with the first call of each kernel) ---------------------- */
uint64_t snd_kernel_key(uint32_t pid, uint64_t addr)
{
	return ingero_mix64(addr ^ ((uint64_t)pid << 32)) | 1;
}

/* A kernel's definition, packed into d (replacing what it held). */
void snd_kernel_pack(struct def *d, uint32_t pid, uint64_t addr, const char *name, size_t len)
{
	if (!len) {
		name = ingero_symbol_name(addr);
		len = name ? strlen(name) : 0;
	}
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	ingero_pack_kernel(&pk, pid, addr, name, len);
	size_t old = d->bytes ? d->len : 0;
	if (snd_def_set(d, &sb) == 0)
		S.cache_bytes += d->len - old;
	msgpack_sbuffer_destroy(&sb);
}

struct def *snd_kernel_define(uint32_t pid, uint64_t addr, const char *name, size_t len)
{
	struct def *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	snd_kernel_pack(d, pid, addr, name, len);
	if (ingero_map_put(&S.kernels, snd_kernel_key(pid, addr), d) != 0) {
		S.cache_bytes -= d->len;
		free(d->bytes);
		free(d);
		return NULL;
	}
	return d;
}

