/*
 * scan.h — reading the two big tables (cuda_calls, off_cpu) fast.
 *
 * Internal to the trace loader.  Rows come back in storage order with the
 * raw tid in the th field (off_cpu: | IA_OFF_FLAGS bits), stack ids reduced
 * to indexes into a sorted table, and the tid -> pid pairs met.
 */
#ifndef IA_SCAN_H
#define IA_SCAN_H

#include "load/rows.h"

#include <stddef.h>

struct ia_scan_result {
	struct ia_call *calls; size_t ncalls;
	struct ia_off *offs; size_t noffs;
	struct ia_off_waker *wakers; size_t nwakers;   /* (IA_LOAD_OFF_WAKER) by offs index */
	struct ia_off_waker *aside; size_t naside;     /* the tids of offs rows read as IA_OFF_TID_ASIDE, by index */
	struct ia_off_waker *nexts; size_t nnexts;     /* a preempted row's next_pid (as tid), by index */
	struct ia_off_holder *holders; size_t nholders;   /* (IA_LOAD_OFF_HOLDER) by index */
	uint64_t *stack_ids; size_t nstacks;   /* sorted, unique; [0] = 0 (no stack) */
	uint32_t *tids; int *pids; size_t ntids;   /* tids met; pids -1 (not read per row) */
};

/* The threads that read the tables (this one among them). */
#define IA_SCAN_THREADS 2

/* what: IA_LOAD_CALLS | IA_LOAD_OFFCPU.  blocks: the calls are in
 * call_blocks (ia_trace.blocks).  [from, to) absolute; from = 0 and
 * to = UINT64_MAX read everything.  0, or -1 with one line in err. */
int ia_scan_tables(const char *path, int blocks, uint64_t from, uint64_t to, int what,
		   struct ia_scan_result *r, char *err, size_t errlen);
void ia_scan_result_free(struct ia_scan_result *r);

#endif
