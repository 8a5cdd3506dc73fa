/*
 * identity.h — who a sender is and whom it may speak for.
 *
 * A sender is the process at the other end of an IPC pipe; the kernel
 * vouches for its pid and uid (SO_PEERCRED through nng).  Records carry pids
 * and tids as the sender sees them; identity_resolve() maps them into the
 * root pid namespace (via NSpid when the sender lives in another one) and
 * accepts them only for the sender itself and its descendants.
 */
#ifndef INGERO_COLLECTOR_IDENTITY_H
#define INGERO_COLLECTOR_IDENTITY_H

#include <stdint.h>

#define IDENTITY_CACHE 256
/* walks of /proc a second for a namespaced sender's unknown pids */
#define IDENTITY_NS_SCANS 32

struct id_cache_entry {
	uint32_t wire_pid, wire_tid;     /* as sent; wire_tid 0 = empty */
	uint32_t pid, tid;               /* root namespace */
	int ok;                          /* 1 accepted, -1 refused */
	long refused_at;                 /* CLOCK_MONOTONIC s */
};

struct sender {
	uint32_t pid, uid;               /* root namespace, from the kernel */
	uint32_t ns_pid;                 /* the sender's pid in its own namespace */
	int in_ns;                       /* lives in a child pid namespace */
	long scan_second;                /* CLOCK_MONOTONIC s of the walks counted in scans */
	unsigned scans;
	struct id_cache_entry cache[IDENTITY_CACHE];
};

void identity_init(struct sender *s, uint32_t peer_pid, uint32_t peer_uid);

/* Translate and check one (pid, tid) pair; tid 0 = no thread to check.
 * 0 and the root-namespace ids on success, -1 when the sender may not
 * speak for them.  With may_wait, 1 instead of a refusal that the kernel's
 * fork and thread events still in flight might change: ask again (without
 * may_wait) once they are in (proc_tree_epoch). */
int identity_resolve(struct sender *s, uint32_t *pid, uint32_t *tid, int may_wait);

/* The NSpid line of /proc/PID/status: how many levels, and the innermost. */
int identity_nspid(uint32_t pid, uint32_t *innermost, int *levels);

#endif
