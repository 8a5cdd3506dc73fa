/*
 * chain_gaps.h — what the gaps_* rules share (chain_gaps.c, and
 * chain_gaps_workers.c for the DataLoader workers' part): the thresholds
 * and the one view of the gaps every cause reads.
 */
#ifndef IA_CHAIN_GAPS_H
#define IA_CHAIN_GAPS_H

#include "rules/chain_build.h"
#include "measure/competitors.h"
#include "measure/gap_bursts.h"

#define MAIN_STATE_DOMINANT 0.50     /* on-CPU / blocked share of the gaps */
#define MAIN_PREEMPTED 0.30          /* runnable share of the gaps */
#define WORKERS_BUSY 0.50            /* workers' CPU time / main's blocked gap time */
#define INTERPRETER_SHARE IA_INTERPRETER_SHARE   /* gap samples in the CPython interpreter (gaps.h) */
#define IN_LOADER_SHARE 0.50        /* main-thread gap samples under torch.utils.data: a DataLoader without workers */
#define IOWAIT_DOMINANT 0.50         /* D-state share of the main thread's blocked gap time: storage */
#define WAIT_DOMINANT 0.50           /* one kind of wait's share of it (syscalls.h): named as the cause */
/* D state worth a line of the timeline: a page fault's microseconds are not */
#define IOWAIT_SHOWN 0.10
/* what it blocked in, worth a line where blocked time is this share of the gaps */
#define BLOCKED_IN_SHOWN 0.10
/* whom it waited behind for a CPU (schema 9), worth a line where its waits
 * for a CPU are this share of the gaps: a woken thread's wait on a busy
 * machine is part of the story whatever the gaps' main cause */
#define BEHIND_SHOWN 0.05
#define HOT_STACK_SHARE 0.25         /* the main thread's top gap stack: its user line is the Source */
#define HOT_NAME_SHARE 0.20          /* the most sampled Python function, named alone in a fix only above this share */
#define CHECKPOINT_SHARE 0.25        /* the main thread's gap samples in torch.save/torch.load */
#define SATURATED 0.90
/* subprocesses alive for this share of the main thread's blocked gap time:
 * what it waited for, where it waited on a pipe or a child's exit */
#define CHILDREN_WAITED 0.50
/* subprocesses on-CPU or waiting for one for this share of its blocked gap
 * time, where it waited on a pipe or a queue: they produce what it reads
 * (a producer starved of CPUs still wants to run) */
#define PRODUCER_BUSY 0.50
#define MAX_COMP 5                   /* competitor names shown */

/* What every gaps_* cause reads, computed once. */
struct gap_view {
	const struct ia_analysis *a;
	const struct ia_gaps *g;
	double share, on, blk, rq, sat;
	int workers, cpus, nw;
	int at_once;     /* the most workers alive at one time (per_process.h) */
	const struct ia_gap_line *end;   /* the line whose call ends the most gap time, or NULL */
	int end_py;                      /* it is a Python line */
	char stk_main[600], stk_workers[600], stk_sib[600], sib_name[96];
	struct ia_comp_group comp[MAX_COMP];
	size_t ncomp;
	uint64_t comp_ns;                /* untraced competitors' CPU time in the gaps */
	struct ia_comp_group behind[MAX_COMP];   /* whom the main thread waited behind for a CPU in the
						    gaps (ia_cpu_takers; schema 9, else none) */
	size_t nbehind;
	uint64_t behind_ns;
	char blocked_in[200];            /* what the main thread blocked in (blocked_in_text), or "" */
	enum ia_wait wait;               /* the kind of wait most of its blocked time was, if one was */
	uint64_t wait_ns;                /* its time */
	const char *wait_sys;            /* the system call most of that wait's time was in */
	char children[160];              /* its subprocesses alive in the gaps (ia_gap_children_text), or "" */
	int child_wait;                  /* it waited for them (CHILDREN_WAITED, a wait they explain) */
	int producer;                    /* a subprocess beside the loop fills what it waits on (PRODUCER_BUSY) */
	char stk_other[600];             /* other processes' samples in the gaps (ia_top_stacks) */
	char child_name[96];             /* the busiest subprocess: pid 630 "python3" */
	const struct ia_gap_line *blocked_at;   /* the line it blocked at, from its block stacks, or NULL */
	uint64_t wload;                  /* the workers' blocked time loading in the gaps (ia_gap_workers_loading_ns) */
	int wio;                         /* they were blocked loading longer than on CPUs: I/O-bound loading */
	enum ia_wait wwait;              /* what most of their loading blocks waited in (IA_WAIT_UNKNOWN: not one) */
	const char *wwait_sys;           /* its system call */
	int wstorage;                    /* most of their loading blocks in D state: storage */
	const struct ia_gap_line *wblocked_at;  /* the line they blocked at while loading, or NULL */
	char where[240];                 /* "at <that line>", or "before <end line>" / "before the next CUDA call" */
	struct ia_gap_bursts bursts;     /* the idle in a few long waits (gap_bursts.h) */
	int bursty;                      /* they are the story (ia_gap_bursts_dominant) */
};

/* The gaps chain's kind from the main thread's shares of the gap time (on
 * a CPU, blocked, waiting for one) and whether the DataLoader workers were
 * busy loading meanwhile (WORKERS_BUSY). */
enum ia_kind ia_gaps_kind(double on, double blk, double rq, int workers_loading);

/* Where a thread (or process) ended most of the main thread's waits (wakers.h,
 * version 7): the whole path to its end cause in the root cause, the fixes
 * for that end cause, its line as the Source (chain_gaps_wait.c); 0 when
 * the trace does not say who woke it, or no one thread ended most waits. */
int ia_gap_wait_for_cause(struct ia_chain *c, const struct gap_view *v);
/* "waiting for thread tid N "x", which waited for a CPU" for the verdict; "" without. */
const char *ia_gap_wait_for_brief(const struct gap_view *v, char *buf, size_t n);

/* The mechanism most of the main thread's samples in the gaps are in (page
 * faults of fresh memory, the garbage collector, unpickling: mechanisms.h),
 * said in the root cause with its fix, added now (first), and its share of
 * the samples in *share; 0 when none holds a quarter of them
 * (chain_gaps_mech.c). */
int ia_gap_mech_cause(struct ia_chain *c, const struct gap_view *v, double *share);
/* The same for the DataLoader workers' samples in the gaps: said in the
 * root cause; the mechanism (its fix is the caller's to place), or
 * IA_MECH_NONE. */
int ia_gap_mech_workers(struct ia_chain *c, const struct gap_view *v);

/* The workers' loading, from their block stacks (chain_gaps_workers.c). */
void ia_gap_view_workers(struct gap_view *v);
/* The timeline's lines on the workers' blocked time, when loading was. */
void ia_gap_workers_lines(struct ia_chain *c, const struct gap_view *v);
/* The gaps_host_busy kind's cause and fixes (chain_gaps_busy.c). */
void ia_gap_cause_host_busy(struct ia_chain *c, const struct gap_view *v);
/* The gaps_waiting_workers kind's cause and fixes: CPU-bound or I/O-bound loading. */
void ia_gap_cause_workers(struct ia_chain *c, const struct gap_view *v);

#endif
