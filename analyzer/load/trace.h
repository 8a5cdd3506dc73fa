/*
 * trace.h — a report.db loaded into compact arrays, the input of every
 * analysis (stats, per-process, alignment, gaps, chains).
 *
 * The two big tables are read once each, by a sequential scan in storage
 * order (index-ordered scans cost a b-tree lookup per row), into fixed-size
 * records.  A CUDA call is 40 bytes and an off-CPU interval 24, so 10M of
 * each stay well under 1 GB.  Both are indexed per thread in time order (a
 * permutation, 4 bytes a row), so "what was thread T doing in [a, b)" is a
 * binary search, and nothing depends on the order rows were stored in.
 *
 * Small tables (session, processes, threads, apis) are read whole.  The
 * filter (time window, process subtree) is applied while reading, so every
 * analysis sees only what the user asked about.
 */
#ifndef IA_TRACE_H
#define IA_TRACE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include <ingero/api.h>

#include "load/capture.h"
#include "load/rows.h"
#include "load/trace_end.h"

/* What the user asked to look at.  Times are relative to the trace start
 * (session start_mono_ns, else the first event); since = the last N ns. */
struct ia_filter {
	int has_from, has_to, has_since;
	uint64_t from_rel, to_rel, since;
	int pid;              /* 0 = every process; else PID and its descendants */
};

struct ia_thread {
	uint32_t tid, proc;   /* proc: index into trace.procs */
	char comm[32];
	uint64_t first_ns, last_ns;   /* first and last evidence of this thread */
	uint32_t off_first, off_n;    /* its intervals: trace.off_by_th[off_first .. +off_n) */
	uint32_t call_first, call_n;  /* its calls: trace.call_by_th[call_first .. +call_n) */
	uint64_t ncalls;
};

struct ia_proc {
	int pid, ppid;
	int parent;           /* index of the parent in trace.procs, -1 if untraced */
	char comm[32];
	char *exe, *cmdline;
	uint64_t start_ns, exit_ns;   /* 0 = unknown */
	int exit_code, has_exit_code;
	uint64_t announced, made, dropped;
	int selected;         /* inside the -p subtree */
	uint64_t *calls;      /* [INGERO_API_MAX] counts, NULL when it made none */
	uint64_t ncalls;
};

struct ia_check;

struct ia_trace {
	sqlite3 *db;
	int blocks;           /* calls stored in call_blocks (schema 2), not a cuda_calls table */
	int off_syscall;      /* off_cpu has its syscall column (schema 5) */
	int off_waker;        /* off_cpu has waker_tid/waker_pid (schema 7): who ended a sleep */
	int off_holder;       /* off_cpu has holder_pid (schema 9): whom a woken thread waited behind */
	int off_holder_tid;   /* ... and holder_tid (schema 10): which thread of that process */
	struct ia_filter filter;
	uint64_t t0;          /* origin for displayed times */
	uint64_t from, to;    /* effective window, absolute ns: [from, to) */
	uint64_t first_ns, last_ns;   /* first and last evidence inside the window */
	int cpus;             /* session.cpus, 0 = unknown */
	int gpus;             /* session.gpus, the GPUs nvidia-smi listed (none under MIG), 0 = unknown */
	/* the CPUs its cgroup's quota allows the job (session.cpu_limit, 0 =
	 * none), and how the quota throttled it while traced */
	double cpu_limit;
	uint64_t cpu_limit_periods, cpu_limit_throttled_periods, cpu_limit_throttled_ns;
	char *command, *host, *gpu, *mode;

	struct ia_call *calls; size_t ncalls;      /* in storage order: reach them by thread */
	struct ia_off *offs; size_t noffs;         /* in storage order: reach them by thread */
	uint32_t *call_by_th;                      /* calls indexes grouped by thread, by start */
	uint32_t *off_by_th;                       /* offs indexes grouped by thread, by start */
	struct ia_off_waker *off_wakers; size_t noff_wakers;   /* who woke which of offs, by its index (off_waker) */
	struct ia_off_waker *off_nexts; size_t noff_nexts;     /* a preempted one's next task (pid as tid), by index */
	struct ia_off_holder *off_holders; size_t noff_holders;   /* whom a woken one waited behind, by index */
	struct ia_thread *threads; size_t nthreads;
	struct ia_proc *procs; size_t nprocs;
	uint64_t *stack_ids; size_t nstacks;       /* stack_ids[0] = 0 (none) */
	char *api_names[INGERO_API_MAX];           /* from the apis table, for ids api.h lacks */
	struct ia_loss { char *source; uint64_t count; } *losses; size_t nlosses;   /* non-zero, by source */
	struct ia_capture capture;                 /* cudaProfilerStart/Stop windows (capture.h) */
	struct ia_trace_status status;             /* cut short, or whole (trace_status.h) */

	/* internal */
	void *maps;
	/* the page check still running (IA_LOAD_CHECK_LATE, check.h): ia_trace_checked */
	struct ia_check *check;
};


/* Loads from an open database.  0 on success; -1 with a one-line reason,
 * IA_TRACE_NO_PID (also < 0) when the filter's pid is not in the trace (a
 * usage error, not the file's fault). */
#define IA_TRACE_NO_PID (-2)
int ia_trace_load(struct ia_trace *t, sqlite3 *db, const struct ia_filter *f, int what,
		  char *err, size_t errlen);
/* what | IA_LOAD_CHECK_LATE: the load returns while the page check
 * (check.h) still runs, and this waits for it — for a command that
 * computes before it prints (ia_analyze calls it last), so that on two
 * CPUs the check runs beside the analysis's one thread rather than beside
 * the scan's two and then alone.  0 when the file was found sound (or the
 * check was waited for at load), else -1 with the damage in err.  Nothing
 * computed from the trace may be shown before it returned 0. */
int ia_trace_checked(const struct ia_trace *t, char *err, size_t errlen);
void ia_trace_free(struct ia_trace *t);

/* Name of an API id, never NULL. */
const char *ia_api_name(const struct ia_trace *t, unsigned api);
/* Index of a pid in procs, -1 when absent. */
int ia_proc_index(const struct ia_trace *t, int pid);
/* Thread index of a tid, -1 when absent. */
int ia_thread_index(const struct ia_trace *t, uint32_t tid);

/* Off-CPU of thread th over [a, b): total, runnable part.  Uses the per-thread index. */
void ia_thread_off_in(const struct ia_trace *t, uint32_t th, uint64_t a, uint64_t b,
		      uint64_t *off_ns, uint64_t *runq_ns, uint64_t *nswitch);
/* First position in the thread's list whose interval may overlap [a, ...). */
size_t ia_thread_off_lower(const struct ia_trace *t, uint32_t th, uint64_t a);
/* The thread's off-CPU interval that starts at start (a sampled block's, in
 * off_cpu_stacks), NULL when it is not kept. */
const struct ia_off *ia_thread_off_at(const struct ia_trace *t, uint32_t th, uint64_t start);

/* Lifetime of a thread inside the window (first to last evidence, from the
 * process start for its main thread and to the process exit). */
/* One of the tracer's own threads in a traced process (the preload's
 * sender and GPU watcher, "ingero-…", and nng's, "nng:…"): its CPU and
 * scheduling are the tracer's, not the program's.  Since 2026-12-02 the
 * BPF programs record none of theirs (bpf/traced.bpf.h); older traces
 * have them, and every reader leaves them out by this. */
int ia_thread_is_tracer(const struct ia_thread *x);
void ia_thread_span(const struct ia_trace *t, uint32_t th, uint64_t *a, uint64_t *b);

/* CPU time of thread th inside windows w[0..n) — pairs (start, end), sorted
 * and disjoint: its lifetime there minus its off-CPU time.  Linear merge. */
uint64_t ia_thread_oncpu_windows(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n);
/* The same, and its time runnable but not running (waiting for a CPU)
 * inside those windows added to *runq (NULL: not wanted), in one walk. */
uint64_t ia_thread_cpu_windows(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n, uint64_t *runq);

/* Session value by key (strdup'd into the trace on load for known keys); NULL if none. */
const char *ia_session(const struct ia_trace *t, const char *key);
/* The session keys that start with prefix, one per call from *i = 0: the
 * key less the prefix (its value in *val), NULL after the last. */
const char *ia_session_next(const struct ia_trace *t, const char *prefix, size_t *i, const char **val);

#endif
