/*
 * sender_internal.h — what the sender's two files share (sender.c: the
 * thread, the ring and lanes drained, the socket, exit; sender_batch.c: the
 * batch being built, the definitions sent with it, per-process accounting
 * and COUNTS).  Only the sender thread touches this state.
 */
#ifndef INGERO_SENDER_INTERNAL_H
#define INGERO_SENDER_INTERNAL_H

#include <msgpack.h>
#include <nng/nng.h>
#include <pthread.h>
#include <stdint.h>

#include "shm.h"
#include "ingero/u64map.h"

#define BATCH_RECORDS 2048
#define BATCH_BYTES (256u << 10)
#define BATCH_LINGER_NS 20000000ull
#define IDLE_WAIT_NS 5000000ull
#define COUNTS_EVERY_NS 1000000000ull
#define HOLE_TIMEOUT_NS 1000000000ull
#define FINAL_HOLE_TIMEOUT_NS 50000000ull
#define SEND_TIMEOUT_MS 50
#define FINAL_SEND_TIMEOUT_MS 300
#define FINAL_BUDGET_NS 1200000000ull
#define FINAL_CONNECT_WAIT_NS 250000000ull
#define STOP_WAIT_NS 2000000000ull
#define DEF_CACHE_MAX (64u << 20)
#define CALIBRATE_EVERY_NS 5000000ull

/* A record defined once and sent with its first use (per connection). */
struct def {
	char *bytes;
	size_t len;
	uint8_t confirmed;   /* went out in a message the socket accepted */
	uint8_t in_batch;    /* already in the batch being built */
	uint8_t synth;       /* a kernel named here for want of its KERNEL record: a later one replaces it */
	uint8_t resend;      /* replaced while in the batch: the batch holds the old bytes */
};

struct pid_acct {
	uint32_t pid, ppid;
	uint64_t drained;        /* CALLs taken from the ring */
	uint64_t send_dropped;   /* CALLs in batches that failed to send */
	uint64_t sent_made, sent_dropped;   /* the last COUNTS that went out */
	struct def hello;
};

struct sender_state {
	struct ingero_shm *shm;
	pthread_t th;
	int running;
	_Atomic int stop;
	_Atomic int done;
	_Atomic int pipes;
	_Atomic unsigned connects;
	unsigned seen_connects;
	nng_socket sock;
	int sock_ok;
	int discard;                 /* the exit's budget spent: batches fail unsent (counted dropped) */

	msgpack_sbuffer body;
	msgpack_packer pk;
	uint32_t nrec;
	uint64_t batch_start;
	struct def **defs;           /* definitions in the current batch */
	size_t ndefs, capdefs;
	uint32_t *bpid, *bcount;     /* CALLs per pid in the current batch */
	size_t nb, capb;

	struct u64map pids, stacks, kernels;
	uint64_t cache_bytes;
	uint64_t last_counts;
	uint64_t holes, failed_sends, sent_msgs, bad_records;
	uint64_t coll_in_batch, coll_lost;   /* COLL records in this batch; in batches that failed */
	uint64_t range_in_batch, range_lost; /* RANGE records, the same */
	uint64_t lane_calls, lanes_freed;   /* calls taken from lanes; lanes freed (INGERO_DEBUG) */
	char comm[17], exe[1024], cmdline[4096];
};

extern struct sender_state ingero_snd;
#define S ingero_snd

int snd_def_set(struct def *d, const msgpack_sbuffer *sb);
void snd_def_use(struct def *d);
struct pid_acct *snd_pid_acct(uint32_t pid);
void snd_hello_define(struct pid_acct *a, uint32_t ppid, uint64_t start_ns, const char *comm);
void snd_hello_synthesize(struct pid_acct *a);
void snd_batch_count(uint32_t pid);
int snd_send_buf(const msgpack_sbuffer *hdr, const msgpack_sbuffer *body, int final);
void snd_batch_reset(void);
void snd_send_batch(int final);
int snd_send_counts(int final, int force, uint32_t bye_pid, uint64_t bye_ns);
uint64_t snd_kernel_key(uint32_t pid, uint64_t addr);
/* /proc/PID/exe into buf ("" when unreadable) */
void snd_read_exe(uint32_t pid, char *buf, size_t cap);
/* A process's CALLs made and dropped so far. */
void snd_pid_figures(const struct pid_acct *a, uint64_t *made, uint64_t *dropped);
/* Marks a process's figures as sent (an ingero_map_each callback). */
void snd_counts_mark(uint64_t key, void *val, void *arg);
void snd_kernel_pack(struct def *d, uint32_t pid, uint64_t addr, const char *name, size_t len);
struct def *snd_kernel_define(uint32_t pid, uint64_t addr, const char *name, size_t len);

#endif
