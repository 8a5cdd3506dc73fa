/*
 * competitors.h — the untraced processes that took CPUs from the traced
 * ones, named and summed over the stretches a rule looks at.
 *
 * The collector records a competitor when it takes a CPU from a traced
 * thread that is still runnable (schema.h: competitors, per bucket).  A
 * CPU hog is often many processes of one name (12 `sh` busy loops); a
 * person acts on the name, so they are grouped by name, with how many
 * processes and their CPU time over the windows asked about (partial
 * buckets pro rata).
 */
#ifndef IA_COMPETITORS_H
#define IA_COMPETITORS_H

#include "load/series.h"
#include "load/trace.h"

#include <cjson/cJSON.h>

/* Who a group of CPU takers is to the job (ia_cpu_takers; IA_TAKER_NONE
 * elsewhere): its DataLoader workers or its main process, the tracer's own
 * processes (the collector: untraced, named ingero-…), or — from holder_tid
 * (schema 10), a thread named apart — the tracer's thread or one of the
 * waiter's own process; IA_TAKER_UNNAMED: the parts of woken waits their
 * longest holder did not hold (the trace names one holder a wait). */
enum ia_taker_role {
	IA_TAKER_NONE,
	IA_TAKER_WORKER,
	IA_TAKER_MAIN,
	IA_TAKER_TRACER,
	IA_TAKER_OWN_THREAD,
	IA_TAKER_TRACER_PROC,
	IA_TAKER_UNNAMED,
	/* the waiter's own process where the thread is not known: a
	 * preemption names only the process (off_cpu.next_pid, a tgid) */
	IA_TAKER_OWN_PROC,
};

struct ia_comp_group {
	char comm[32];          /* "(no name)" when the collector saw none */
	unsigned npids;
	uint64_t cpu_ns;        /* over the windows */
	uint64_t preemptions;   /* over the whole trace */
	int traced;             /* ia_cpu_takers: a process of the traced job */
	enum ia_taker_role role;   /* ia_cpu_takers: how the lists name the group */
};

struct ia_per_process;

/* Groups over windows w[0..2n) (start, end pairs), most CPU first: up to
 * max of them in out, their count returned; *total: every competitor's
 * CPU time over the windows. */
size_t ia_competitors_in(const struct ia_evidence *e, const uint64_t *w, size_t n, struct ia_comp_group *out,
			 size_t max, uint64_t *total);
/* The taker of the part of a woken thread's wait its longest holder did
 * not hold (other tasks, not named). */
#define IA_TAKER_OTHERS (-1)
/* Who took the CPU from thread tid while it was runnable (its preempted
 * off-CPU intervals, off_cpu.next_pid; and from schema 9 its waits after a
 * wake-up: off_cpu.holder_ns of each its longest holder's, off_cpu.holder_pid
 * — "(idle)" when the CPU was idle — and the rest IA_TAKER_OTHERS's) over
 * windows w[0..2n): grouped by
 * name (a traced process's, else the competitors table's, else "pid N")
 * and, with pp, by a traced process's role (the job's DataLoader workers,
 * its main process: "python3 (32 DataLoader workers)" is not a stranger);
 * where the trace says which thread held the CPU (holder_tid, schema 10),
 * a thread of the waiter's own process and the tracer's threads by the
 * thread's name ("pt_autograd_0 (its own process's thread)"),
 * most time first, up to max, the unnamed rest (IA_TAKER_UNNAMED) last
 * however large: not a task the user can act on; *total: all of that time; *untraced: the part
 * taken by untraced processes.  This is the time the thread lost, which the
 * competitors table (CPU of a competitor's first stint) undercounts.
 * 0, or -1 with a reason. */
int ia_cpu_takers(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_evidence *e, uint32_t tid,
		  const uint64_t *w, size_t n,
		  struct ia_comp_group *out, size_t max, size_t *nout, uint64_t *total, uint64_t *untraced,
		  char *err, size_t errlen);
/* "sh (12 processes) 7.76s, python3 (32 DataLoader workers) 1.06s,
 * pt_data_pin (its own process's thread) 400ms, ingero-sender (the
 * tracer's thread) 2ms, python3 (main process) 12ms, kworker/3:1 1.2ms,
 * others not named 1.6s" */
char *ia_competitors_text(char *buf, size_t len, const struct ia_comp_group *g, size_t n);
/* [{comm, processes, cpu_ns[, role]}] (role: "worker", "main", "tracer", "own_thread" where known;
 * for a thread named apart, "processes" counts the threads of that name) */
cJSON *ia_competitors_json(const struct ia_comp_group *g, size_t n);

#endif
