/*
 * store.h — the report.db writer (schema.h).  Producers (intake, the BPF
 * consumer) queue rows from any thread; one writer thread commits them in
 * batched transactions with prepared statements.  Nothing queued is lost:
 * store_sync() waits until everything queued so far is committed, and
 * store_calls() makes a fast sender wait (then the preload library's own
 * ring fills and it counts its drops) rather than grow without bound.
 */
#ifndef INGERO_COLLECTOR_STORE_H
#define INGERO_COLLECTOR_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "ingero/event.h"

struct store;

struct store_opts {
	uint64_t max_bytes;        /* --max-size; 0 = no cap */
	unsigned flush_ms;         /* commit at least this often (default 50) */
	size_t max_pending_calls;  /* queued CUDA calls before producers wait */
};

struct off_cpu_row {
	uint32_t pid, tid, next_pid, cpu;
	uint64_t start_ns, runnable_ns, end_ns;
	uint32_t preempted;
	/* the system call it blocked in (x86_64 number; -1: outside one, a page
	 * fault), when known (stored NULL otherwise: preempted, or not read) */
	int32_t syscall;
	uint32_t syscall_known;
	uint32_t waker_tid, waker_pid;   /* who woke it; 0: not seen (stored NULL) */
	uint32_t holder_pid;             /* who held its CPU longest while it waited; 0: the CPU was idle */
	uint64_t holder_ns;              /* that time, of its wait */
	uint32_t holder_tid;             /* that task's thread id (0 with an idle CPU) */
};

/* A processes-table upsert: NULL strings / negative numbers are "unknown"
 * and keep what is stored; made/dropped/announced keep the maximum. */
struct proc_row {
	uint32_t pid;
	int64_t ppid;
	const char *comm, *exe, *cmdline;
	int64_t start_ns, exit_ns;
	int64_t exit_code;         /* -1 = unknown */
	int announced;             /* 1 = sent a HELLO */
	int64_t made, dropped;
};

/* An on-CPU sample (cpu_samples), or where a thread blocked
 * (off_cpu_stacks: ts_ns is the block's off_cpu start_ns). */
struct sample_row {
	uint32_t pid, tid, cpu;
	uint32_t blocked;          /* an off_cpu_stacks row */
	double chance;             /* ... and the chance its block had of a stack (0, 1] */
	uint64_t ts_ns;
	int64_t stack_id;          /* 0 = none */
};

/* One frame of a stored stack; kind "native", "kernel" or "python" (a
 * list column of stacks each, schema 8: another kind is not stored), depth
 * 0 the innermost of its kind (a stack's depths of a kind run 0, 1, ...;
 * one frame a depth, the first given; below 1024). */
struct frame_row {
	const char *kind;
	uint32_t depth;
	uint64_t ip;               /* 0 = unknown (python frames) */
	const char *symbol, *module, *file;
	uint64_t offset;
	int64_t line;              /* -1 = none */
};

struct store *store_open(const char *path, const struct store_opts *o);
void store_close(struct store *s);        /* commits everything, then closes */
/* Commits everything and closes the file (the WAL folded back), keeping the
 * counters readable until store_close; returns the CLOCK_MONOTONIC time at
 * which the last CUDA calls were committed and copied into the file. */
uint64_t store_finish(struct store *s);
void store_sync(struct store *s);         /* returns when all queued rows are committed */

void store_calls(struct store *s, const struct ingero_cuda_call *c, size_t n);
void store_off_cpu(struct store *s, const struct off_cpu_row *r);
void store_process(struct store *s, const struct proc_row *r);
void store_thread(struct store *s, uint32_t tid, uint32_t pid, const char *comm);
void store_cpu_busy(struct store *s, uint32_t cpu, uint64_t bucket_ns, uint64_t busy_ns);
void store_page_allocs(struct store *s, uint32_t pid, uint64_t bucket_ns,
		       uint64_t pages, uint64_t allocs, uint64_t faults);
void store_competitor(struct store *s, uint32_t pid, const char *comm, uint64_t bucket_ns,
		      uint64_t cpu_ns, uint64_t preemptions, uint64_t held_ns);
void store_sample(struct store *s, const struct sample_row *r);
void store_stack(struct store *s, int64_t id, uint32_t pid, const struct frame_row *f, size_t n);
void store_kernel(struct store *s, uint32_t pid, uint64_t addr, const char *name, size_t len);
/* One GPU mark (gpu_marks table; pid already in the root namespace). */
struct ingero_wire_gpu;
void store_gpu_mark(struct store *s, uint32_t pid, const struct ingero_wire_gpu *g);
/* One NCCL call (collectives; pid and tid already in the root namespace). */
struct ingero_wire_coll;
struct ingero_wire_range;
void store_collective(struct store *s, const struct ingero_wire_coll *c);
/* An NVTX range (wire.h RANGE), its name copied. */
void store_range(struct store *s, const struct ingero_wire_range *r);
/* The process asked to record (recording 1) or pause (0) at t_ns: table capture. */
void store_capture(struct store *s, uint32_t pid, uint64_t t_ns, uint32_t recording);
void store_session(struct store *s, const char *key, const char *value);
/* A process's launcher variables (process_env; proc_env.h): kv holds
 * "NAME\0VALUE\0..." (kv_len bytes), replacing what pid had. */
void store_process_env(struct store *s, uint32_t pid, const char *kv, size_t kv_len);

/* Losses (losses table): add to a counter, or raise it to at least `value`. */
void store_loss_add(struct store *s, const char *source, uint32_t pid, uint64_t delta);
void store_loss_max(struct store *s, const char *source, uint32_t pid, uint64_t value);
uint64_t store_loss_get(struct store *s, const char *source, uint32_t pid);

/* Rows committed so far, for tests and benchmarks. */
uint64_t store_committed_calls(struct store *s);
/* A write failed (disk full, an I/O error): recording stopped; 1 and why
 * (why may be NULL), else 0.  Rows queued from then on are counted in
 * losses not_stored_* (store_fail.c); the CUDA calls among them: */
int store_broken(struct store *s, char *why, size_t size);
uint64_t store_not_stored_calls(struct store *s);
/* CLOCK_MONOTONIC when the last commit holding CUDA calls ended. */
uint64_t store_calls_committed_at(struct store *s);

#endif
