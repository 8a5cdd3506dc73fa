/*
 * intake.h — the preload stream: an nng pull socket and the thread that
 * decodes, verifies and queues what arrives.
 */
#ifndef INGERO_COLLECTOR_INTAKE_H
#define INGERO_COLLECTOR_INTAKE_H

#include <stdint.h>

struct tracer;
struct store;
struct intake;

struct intake_opts {
	int open_mode;            /* enrol any process that sends (no -- CMD, no -p) */
	struct tracer *tracer;    /* NULL in CUDA-only mode */
	struct store *store;
};

struct intake_stats {
	uint64_t messages, malformed, records, calls, spoofed, untraced, unknown;
	uint64_t listener_restarts;   /* nng stopped taking senders and listened again (intake_socket.c) */
	uint64_t first_msg_ns;    /* CLOCK_MONOTONIC of the first message, 0 = none */
	uint64_t last_msg_ns;     /* ... and of the last */
	/* when the queue is known to hold nothing a closed sender sent: no
	 * connection open, and the queue found empty (a receive timed out)
	 * after the last one closed (main.c's drain ends then) */
	int open_pipes;           /* connections of senders open now */
	uint64_t last_close_ns;   /* the last one closed */
	uint64_t empty_ns;        /* a receive last found the queue empty */
};

/* Listens on the nng URL (ipc:// paths get a 0666 socket), taking nothing
 * yet: NULL with *status the exit status (said on stderr: 2 when another
 * collector listens there or the URL is not one, else 4). */
struct intake *intake_listen(const char *endpoint, int *status);
/* Starts the receiver thread; -1 (said) on failure. */
int intake_start(struct intake *in, const struct intake_opts *o);
void intake_stats(struct intake *in, struct intake_stats *out);
/* Stopping: what is queued is taken until deadline_ns (CLOCK_MONOTONIC),
 * then what waits for the kernel's events is decided and what is still
 * queued discarded and counted; intake_stopped() says when that is done
 * (the caller keeps the tracer turning meanwhile, so those events come). */
void intake_request_stop(struct intake *in, uint64_t deadline_ns);
int intake_stopped(struct intake *in);
/* Stops (at once, unless requested before), then closes; FINAL (may be
 * NULL) gets the figures including that last intake. */
void intake_stop(struct intake *in, struct intake_stats *final);

#endif
