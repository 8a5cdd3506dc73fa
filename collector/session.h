/*
 * session.h — the session table: what was traced, where, when, how.
 */
#ifndef INGERO_COLLECTOR_SESSION_H
#define INGERO_COLLECTOR_SESSION_H

#include <stdint.h>

struct store;
struct cli;

/* Writes the static keys at start; GPU facts come from nvidia-smi in the
 * background (session_end waits for it). */
void session_start(struct store *st, const struct cli *c, int argc, char **argv, const char *mode);
void session_end(struct store *st);
void session_set_u64(struct store *st, const char *key, uint64_t v);

#endif
