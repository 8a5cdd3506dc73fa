/*
 * scan_internal.h — inside the table scan (scan.c, scan_merge.c): the
 * chunks the workers read and the job that holds them, and the side
 * arrays' growth both use.  scan.c plans and reads the chunks;
 * scan_merge.c packs what they read into one ia_scan_result.
 */
#ifndef IA_SCAN_INTERNAL_H
#define IA_SCAN_INTERNAL_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "load/scan.h"

struct chunk {
	int calls;                 /* 1: cuda_calls, 0: off_cpu */
	sqlite3_int64 lo, hi;      /* rowid range, or block ids (whole-trace mode) */
	size_t planned;            /* rows the range holds (whole-trace mode) */
	void *rows;                /* fixed slice, or a growable buffer (window mode) */
	size_t n, cap;
	int own;                   /* rows is a buffer of our own */
	struct ia_map tidpid;
	uint64_t *sids;            /* distinct stack ids met, [0] = 0 */
	size_t nsids, scap;
	struct ia_map smap;
	struct ia_off_waker *wk, *aside;   /* off_cpu: its rows' wakers, and tids too large for a row (rows.h), */
	size_t nwk, wkcap, naside, asidecap;   /* by row index in the chunk */
	struct ia_off_waker *nx;   /* and a preempted row's next task, a woken one's holder */
	struct ia_off_holder *ho;
	size_t nnx, nxcap, nho, hocap;
	int failed;
	char err[256];
};

struct job {
	const char *path;
	uint64_t from, to;
	int windowed;
	int blocks;                /* CUDA calls stored in call_blocks (version 2) */
	int off_syscall;           /* off_cpu.syscall (version 5) */
	int off_waker;             /* off_cpu.waker_tid (version 7) */
	int off_holder;            /* 1: holder_pid, holder_ns (version 9); 2: and holder_tid (10) */
	char off_sql[2][320];      /* the off_cpu statement: by rowids, by time */
	struct chunk *chunks;
	size_t nchunks;
	atomic_size_t next;
};

/* One (interval, tid) beside the rows: a waker, or a tid too large for its row. */
static inline int side_push(struct ia_off_waker **v, size_t *n, size_t *cap, size_t off, uint32_t tid)
{
	if (ia_grow((void **)v, cap, *n + 1, sizeof **v) < 0)
		return -1;
	(*v)[(*n)++] = (struct ia_off_waker){ (uint32_t)off, tid };
	return 0;
}

static inline int holder_push(struct ia_off_holder **v, size_t *n, size_t *cap, size_t off, struct ia_off_holder h)
{
	if (ia_grow((void **)v, cap, *n + 1, sizeof **v) < 0)
		return -1;
	h.off = (uint32_t)off;
	(*v)[(*n)++] = h;
	return 0;
}

/* The chunks' stack ids merged, their rows packed table by table (the
 * calls' stack indexes remapped, the side arrays' indexes moved), and the
 * tids' pids; base[] gives its arrays up to r.  0, or -1 out of memory. */
int ia_scan_merge(struct job *j, void *base[2], struct ia_scan_result *r);

#endif
