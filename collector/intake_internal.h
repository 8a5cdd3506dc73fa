/*
 * intake_internal.h — what the intake's files share (intake.c: messages,
 * parking, the receiver thread; intake_socket.c: the nng socket, its
 * listener and the peers as they connect); the rest of the collector uses
 * intake.h.
 */
#ifndef INGERO_COLLECTOR_INTAKE_INTERNAL_H
#define INGERO_COLLECTOR_INTAKE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "ingero/u64map.h"
#include "ingero/wire_decode.h"
#include "identity.h"
#include "intake.h"

#define MAX_SENDERS 1024
#define PARK_MAX_MS 300
#define SENDER_PARK_BYTES (32u << 20)
#define PARK_BYTES (128u << 20)

struct sender_slot {
	uint32_t pipe_id;        /* 0 = free */
	uint64_t last_used;
	size_t parked_bytes;     /* of its messages parked now */
	struct sender s;
};

/* A sender as it connected: its namespace is read then, while it surely
 * lives (its messages may be read after it exited: the receiver starts
 * once BPF is loaded, and may be behind). */
#define PEERS 256
struct peer {
	uint32_t pipe_id, pid, ns_pid;
	int in_ns;
};

/* A message with records not decided yet; it owns the message and its
 * decoded batch (strings point into the message). */
struct parked {
	struct parked *next;
	nng_msg *msg;
	struct ingero_wire_batch b;
	uint8_t *open;           /* per record: 1 = not decided yet */
	uint32_t pipe_id, sender_pid;
	uint64_t epoch, at_ns;   /* proc_tree_epoch and time when parked */
};

struct intake {
	struct intake_opts o;
	nng_socket sock;
	pthread_t thread;
	volatile int stop;
	pthread_mutex_t lock;
	struct intake_stats st;
	struct sender_slot *senders;
	uint64_t tick;
	struct ingero_cuda_call *calls;
	size_t calls_cap;
	nng_listener l;
	/* whose counts are final: pid -> the sender that speaks for it (its
	 * ring's owner), and the senders whose last message (their own BYE,
	 * packed with their final counts) arrived */
	struct u64map speaker, closed;
	struct parked *parked, **parked_tail;   /* oldest first */
	pthread_mutex_t peers_lock;
	struct peer peers[PEERS];               /* the last connections (on_connect) */
	unsigned next_peer;
	size_t parked_bytes;
	int started;              /* the receiver thread runs */
	char *endpoint;           /* as listened on (a restart listens there again) */
	uint64_t watch_next;      /* when the listener is looked at next (intake_socket.c) */
	uint64_t watch_other;     /* its failed accepts then */
	uint64_t deadline_ns;     /* once stopping: when to stop taking messages */
	volatile int finished;    /* the receiver thread is done */
};

/* intake_socket.c: the namespace a sender had as it connected (when
 * known) into s; the listener looked at, and listened again if nng stopped
 * taking senders (the receiver calls it between messages). */
void intake_peer_namespace(struct intake *in, uint32_t pipe_id, struct sender *s);
void intake_watch_listener(struct intake *in);

#endif
