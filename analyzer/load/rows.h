/*
 * rows.h — the two big tables' rows as the analyzer holds them: a CUDA call
 * in 40 bytes and an off-CPU interval in 24, so 10M of each stay well under
 * 1 GB.  Apart from trace.h so that the scanner that fills them (scan.c)
 * needs nothing of the loaded trace around them.
 */
#ifndef IA_ROWS_H
#define IA_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ia_call {
	uint64_t start, dur, bytes;
	uint32_t th;          /* index into trace.threads */
	uint32_t stack;       /* index into trace.stack_ids; 0 = no stack */
	uint16_t api;
	uint8_t flags, dir;
	uint32_t stream;      /* the stream handle, folded (ia_stream_key) */
	uint32_t work;        /* what it queued for the GPU, hashed so that calls queuing alike work
	                       * meet (gpu_time.c times some, estimates the others): a launch by its
	                       * kernel and geometry, a copy or memset by kind and size to a power of
	                       * two; 0 = nothing, or not known (scan.c) */
	uint32_t func;        /* the same without the geometry or size: the kernel alone, the kind of copy */
};

/* A stream handle folded to 32 bits (the padding of ia_call holds it): the
 * same fold for calls and GPU marks, so they meet on it. */
static inline uint32_t ia_stream_key(uint64_t stream)
{
	return (uint32_t)(stream ^ (stream >> 32));
}

#define IA_OFF_PREEMPTED 0x80000000u   /* left the CPU still runnable */
#define IA_OFF_IOWAIT    0x40000000u   /* blocked in uninterruptible sleep (D: disk, page-fault I/O) */
/* bits 22-29: what it blocked in, a syscalls.h code (thread indexes and
 * a node's tids are < 2^22, pid_max; a tid that is not — a merged file's,
 * load/merged.h — is read as IA_OFF_TID_ASIDE there, the tid itself beside
 * the rows: ia_scan_result.aside) */
#define IA_OFF_SYS_SHIFT 22
#define IA_OFF_SYS       (0xffu << IA_OFF_SYS_SHIFT)
#define IA_OFF_FLAGS     (IA_OFF_PREEMPTED | IA_OFF_IOWAIT | IA_OFF_SYS)
#define IA_OFF_TID_ASIDE ((1u << IA_OFF_SYS_SHIFT) - 1)
#define ia_off_sys(o)    ((uint8_t)(((o)->th & IA_OFF_SYS) >> IA_OFF_SYS_SHIFT))
struct ia_off {
	uint64_t start, end;  /* switched out, switched back in */
	uint32_t runq;        /* end - max(runnable, start): waiting on a run queue (saturated) */
	uint32_t th;          /* thread index | IA_OFF_FLAGS bits */
};

/* Who ended an off-CPU interval (off_cpu.waker_tid, schema 7), beside the
 * intervals rather than in them (and, in the same shape, the tid of an
 * interval whose tid does not fit its row): most rows have none (preempted, a timer,
 * an interrupt), and 4 more bytes on every row would be 80 MB on a trace
 * of 20 M.  Sorted by off. */
struct ia_off_waker {
	uint32_t off;         /* index into the intervals (trace.offs) */
	uint32_t tid;         /* the thread that woke it */
};

/* Whom a woken interval waited behind for a CPU (off_cpu.holder_pid,
 * holder_tid and holder_ns, schemas 9 and 10), beside the intervals as the
 * wakers are: only rows that have one and waited on a run queue.  Sorted
 * by off.  (A preempted interval's next task, off_cpu.next_pid, is beside
 * its row as an ia_off_waker of that pid: trace.off_nexts.)  Read once by
 * the scan, so that who took a thread's CPU (competitors.c) is not read
 * from the file again, row by row through an index. */
struct ia_off_holder {
	uint32_t off;
	int32_t pid;
	uint32_t tid;         /* 0: not said (schema 9) */
	uint32_t pad;
	uint64_t held_ns;
	uint64_t runnable_ns; /* as the row says it (the interval's runq is clamped to it) */
};

/* In a side table sorted by offs index (ia_off_waker, ia_off_holder: n
 * entries of size bytes, each beginning with its uint32_t off), the entry
 * of off: its index, or n when the row has none. */
static inline size_t ia_off_side_find(const void *side, size_t n, size_t size, uint32_t off)
{
	const unsigned char *b = side;
	size_t lo = 0, hi = n;
	uint32_t at = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		memcpy(&at, b + mid * size, sizeof at);
		if (at < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n)
		memcpy(&at, b + lo * size, sizeof at);
	return lo < n && at == off ? lo : n;
}

/* What to load: the small tables always; the big ones on request. */
/* IA_LOAD_OFF_SYSCALL: the file's off_cpu rows carry syscall; IA_LOAD_OFF_WAKER:
 * and waker_tid (both set by the loader) */
/* IA_LOAD_OFF_HOLDER, IA_LOAD_OFF_HOLDER_TID: holder_pid and holder_ns (schema 9), holder_tid (10) */
enum { IA_LOAD_CALLS = 1, IA_LOAD_OFFCPU = 2, IA_LOAD_ALL = 3, IA_LOAD_OFF_SYSCALL = 4, IA_LOAD_OFF_WAKER = 8,
       IA_LOAD_OFF_HOLDER = 16, IA_LOAD_OFF_HOLDER_TID = 32, IA_LOAD_CHECK_LATE = 64 };

#endif
