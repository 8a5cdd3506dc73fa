/*
 * sender.h — the owner's sender thread: drains the shared ring, packs
 * msgpack batches (wire.h) and pushes them over nng without blocking.
 */
#ifndef INGERO_PRELOAD_SENDER_H
#define INGERO_PRELOAD_SENDER_H

#include "shm.h"

/* Starts the thread for a ring this process owns.  0 on success. */
int ingero_sender_start(struct ingero_shm *shm);
/* At exit: the final drain, COUNTS and BYE, within a bounded time. */
void ingero_sender_stop(void);
/* In a fork child: the parent's sender thread does not exist here. */
void ingero_sender_forget(void);

#endif
