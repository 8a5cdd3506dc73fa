/*
 * metrics.h — the collector's figures in the Prometheus text exposition
 * format (version 0.0.4), served over HTTP on --metrics ADDR:PORT.
 *
 * Two threads of their own, apart from the collector's work: a refresher
 * that rebuilds the page every refresh period (the caller's `figures`
 * function: the analysis of the file so far, main_metrics.c), and a small
 * HTTP server that answers GET /metrics with the page as it last was — a
 * copy under a mutex held for a memcpy — one connection at a time, the
 * request cut at 4 KiB, every read and write under a 1 s timeout.  A scrape
 * never waits for an analysis and an analysis never waits for a scrape.
 */
#ifndef INGERO_COLLECTOR_METRICS_H
#define INGERO_COLLECTOR_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct metrics;

/* Builds the page: a malloc'd NUL-terminated text, NULL when it could not
 * (the previous page stays).  final: the trace has ended. */
typedef char *(*metrics_figures_fn)(void *arg, int final);

/* Listens on addr ("HOST:PORT", "[V6]:PORT"), NULL with a one-line reason
 * in err when it cannot (a bad address, the port taken).  refresh_ms: how
 * often the page is rebuilt while the trace runs (0: only at the end). */
struct metrics *metrics_start(const char *addr, unsigned refresh_ms, metrics_figures_fn fn, void *arg, char *err,
			      size_t errlen);
/* The port it listens on (for ":0"). */
unsigned metrics_port(const struct metrics *m);
/* The trace has ended: stops the refresher, builds the final page, keeps
 * serving it for linger_s seconds (or until SIGINT/SIGTERM sets *stop), then
 * closes and frees everything.  NULL is a no-op. */
void metrics_finish(struct metrics *m, double linger_s, volatile int *stop);

/* The HTTP answer to one request (exposed for tests): status line, headers
 * and body into out (malloc'd); the request is the bytes read so far. */
char *metrics_http_answer(const char *req, size_t len, const char *page, size_t *outlen);

#endif
