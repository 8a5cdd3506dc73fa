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
	const char *endpoint;     /* nng URL; ipc:// paths get a 0666 socket */
	int open_mode;            /* enrol any process that sends (no -- CMD, no -p) */
	struct tracer *tracer;    /* NULL in CUDA-only mode */
	struct store *store;
};

struct intake_stats {
	uint64_t messages, malformed, records, calls, spoofed, untraced, unknown;
	uint64_t first_msg_ns;    /* CLOCK_MONOTONIC of the first message, 0 = none */
	uint64_t last_msg_ns;     /* ... and of the last */
};

struct intake *intake_start(const struct intake_opts *o);   /* NULL: said on stderr */
void intake_stats(struct intake *in, struct intake_stats *out);
/* takes what is still queued, then closes; FINAL (may be NULL) gets the
 * figures including that last intake */
void intake_stop(struct intake *in, struct intake_stats *final);

#endif
