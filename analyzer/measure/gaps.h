/*
 * gaps.h — stretches with no CUDA work queued, and what the host did in them.
 *
 * Walking the main process's CUDA calls in time order: a launch, copy or
 * memset queues work; a sync (or a synchronous copy: cudaMemcpy, cuMemcpy*
 * without Async) returns only when the queued work is done.  From the end
 * of such a call until the next launch/copy/memset, nothing of this process
 * is queued: the GPU idles unless someone else feeds it.  That stretch is a
 * gap.  For each gap: the main thread's on-CPU / runnable / blocked time,
 * the workers' CPU time, the sampled on-CPU stacks, and the Python line of
 * the call that ends it.
 *
 * Gaps that fall mostly in a one-time phase of the run (start-up,
 * compilation, autotuning: phases.h) are counted apart, per phase, and
 * left out of everything else here: the attribution below is the steady
 * state's.
 *
 * With GPU marks (schema 3) the gaps are the measured idle stretches and
 * the bounds are measured (gpu_time.h).  Without them, GPU idle is
 * estimated from host evidence only, as bounds over the window
 * from the first queued work to the end of the last call:
 *   low  = the gaps (no work queued: idle for sure, unless another process
 *          used the GPU)
 *   high = window - time the GPU was known busy (the host waited in a sync
 *          longer than IA_SYNC_FLOOR_NS, or in a copy that blocks the host)
 */
#ifndef IA_GAPS_H
#define IA_GAPS_H

#include "load/syscalls.h"
#include "measure/gpu_time.h"
#include "measure/per_process.h"
#include "load/phase_rules.h"
#include "load/stacks.h"
#include "load/mechanisms.h"
#include "load/trace.h"
#include "measure/calls.h"
#include "measure/lines.h"

#include <cjson/cJSON.h>

#define IA_MEASURED_GAP_MIN_NS 50000ull   /* shorter measured idle is launch latency, not a gap */

struct ia_gap {
	uint64_t start, end;
	uint64_t main_off_ns, main_runq_ns;   /* main thread during the gap */
	uint64_t main_iowait_ns;              /* of its blocked time: in D state (disk, page-fault I/O) */
	uint64_t main_other_wait_ns;          /* of its blocked time: writing or syncing files, or waiting
					       * for a child process (syscalls.h ia_wait_not_input), or
					       * while a subprocess it waited for lived (gap_children.c) */
	uint32_t open_call, end_call;         /* indexes into trace.calls */
	uint32_t th;                          /* the thread read as the main thread here (trace.threads): the
					       * main thread, or in a relay the one driving the GPU then */
	uint8_t cut;                          /* enum ia_gap_cut: a capture window's edge, not a call, opened or ended it */
};

/* A gap around the time between capture windows is cut to its recorded
 * parts (gaps.c): the part before the stop was not ended by end_call, the
 * part after the start not opened by open_call. */
enum ia_gap_cut { IA_GAP_CUT_END = 1, IA_GAP_CUT_START = 2 };

struct ia_gap_stack {
	char label[160];        /* innermost native symbol, or the Python function running */
	char python[160];       /* innermost Python frame of the most frequent stack, or "" */
	char user_python[160];  /* that stack's innermost frame in the user's own code, or "" */
	int python_code;        /* label is a Python function: the samples ran Python code */
	uint64_t main, workers, other;   /* samples in gaps */
	uint64_t siblings;      /* samples of the main process's other threads (not in `other`) */
};

/* Subprocesses of one name the main process waited for: how many, and the
 * sum of their time in the gaps. */
#define IA_GAP_CHILD_NAMES 3
struct ia_gap_child {
	char comm[32];
	uint32_t count;
	uint64_t alive_ns;
	uint32_t proc;     /* the first of them: index into trace.procs (its command line) */
};

/* Sampled blocks by Python line (gap_blocks.c), the main thread's or the
 * workers': each block's blocked time in the gaps over the chance it had
 * of a stack, an unbiased estimate of the time by line. */
struct ia_gap_inner;   /* gap_blocks.c: a line's weight by the library code it blocked in */
struct ia_gap_blocks {
	struct ia_gap_line *lines; size_t n;   /* most weight first */
	struct ia_gap_inner *inners; size_t ninners, cinners;   /* (while the blocks are read) */
	uint64_t sampled;
	double weight;
	/* the workers': of weight, blocks while loading (under the Dataset's
	 * code: a frame of the user's own or DataLoader's fetch), not waiting
	 * for their next index; lines holds only those */
	double loading_weight;
	uint64_t loading_sampled;
	/* of loading_weight: in D state, and by system call (syscalls.h code) */
	double loading_iowait, loading_sys[256];
};

struct ia_gaps {
	uint64_t win_start, win_end;          /* CUDA activity window of the main process */
	uint64_t paused_ns;                   /* of it, between capture windows (capture.h): left out */
	const struct ia_capture *capture;     /* the trace's, for those stretches */
	uint32_t *main_calls; size_t nmain_calls;   /* its calls in time order (ia_proc_calls), for the
						       chains and hostbound.c to walk again */
	struct ia_gap *g; size_t n;
	/* A relay: the main process's threads that drove the GPU one after
	 * another (a thread per request, Thread(target=model.generate)), by
	 * start; each gap is read on the one driving then.  NULL, 0: one main
	 * thread. */
	uint32_t *relay; size_t nrelay;
	uint64_t total_ns;
	uint64_t main_oncpu_ns, main_runq_ns, main_blocked_ns;
	uint64_t main_iowait_ns;              /* of main_blocked_ns: uninterruptible sleep (I/O) */
	/* of main_blocked_ns: by what it blocked in, a syscalls.h code (files
	 * of version 5 on; 0 = not known) */
	uint64_t main_sys_ns[256];
	uint64_t workers_oncpu_ns;            /* sum over worker processes */
	/* their main threads off-CPU in the gaps (gap_workers.c): blocked (not
	 * waiting for a CPU), of it in D state, and by system call (syscalls.h
	 * codes, version 5 on) — an idle worker waiting for its next index is
	 * blocked too: block stacks tell loading from waiting */
	uint64_t workers_blocked_ns, workers_iowait_ns;
	uint64_t workers_sys_ns[256];
	uint64_t *worker_oncpu_ns;            /* per per_process index */
	uint64_t samples_main, samples_workers, samples_other;   /* in gaps */
	uint64_t samples_main_loader;   /* of the main thread's: under torch.utils.data (a DataLoader's fetch in
	                                 * the main process, num_workers=0) */
	/* the main thread's and the workers' samples in gaps by mechanism
	 * (enum ia_mech, mechanisms.h: the garbage collector, the allocator,
	 * filling new memory, pickling, ...) */
	uint64_t mech_main[IA_MECH_N], mech_workers[IA_MECH_N];
	uint64_t mech_main_model[IA_MECH_N];   /* of mech_main, under PyTorch's model code (autograd, an
	                                        * optimizer, torch.nn: ia_is_torch_model_file) */
	uint64_t samples_siblings;   /* the main process's other threads */
	/* the main process's other threads on-CPU in the gaps (in CPython they
	 * hold the GIL the main thread may wait for), and the busiest of them */
	uint64_t siblings_oncpu_ns, sibling_top_ns;
	/* their time waiting for a CPU in the gaps: a GIL holder preempted
	 * still holds it; the busiest is by both (sibling_top_ns: on-CPU) */
	uint64_t siblings_runq_ns;
	uint32_t sibling_top;   /* index into trace.threads; UINT32_MAX: none */
	/* gaps in one-time phases (phases.h), left out of the rest: their
	 * count and time per phase, and the known-busy time inside phases */
	size_t nphase_gaps[IA_PHASE_N];
	uint64_t phase_gap_ns[IA_PHASE_N];
	uint64_t known_busy_phase_ns;
	/* the main process's subprocesses (per_process role child) it waited
	 * for, making no call while they lived (gap_children.c): the gap time
	 * with one alive, and by name */
	uint64_t children_alive_ns;
	struct ia_gap_child children[IA_GAP_CHILD_NAMES]; size_t nchildren;
	/* the same subprocesses' threads on-CPU in the gaps (a producer the
	 * main thread waits for), and the busiest process: index into
	 * trace.procs, -1 when none */
	uint64_t children_oncpu_ns, child_top_ns;
	uint64_t children_runq_ns;   /* their time waiting for a CPU in the gaps */
	int child_top;
	struct ia_gap_stack *stacks; size_t nstacks;             /* most samples first */
	struct ia_gap_line *end_lines; size_t nend_lines;        /* by gap time, most first */
	struct ia_gap_line *sync_lines; size_t nsync_lines;      /* syncs by Python line */
	/* the user's line that ran the backward pass (backward_line.h): the
	 * autograd threads' syncs are its; "" when none was sought or found */
	char backward_line[200];
	/* where the main thread and the workers blocked in the gaps
	 * (gap_blocks.c); blocks_known: the trace has such stacks (version 6) */
	int blocks_known;
	struct ia_gap_blocks main_blocks, worker_blocks;
	uint64_t nsyncs;
	/* GPU idle bounds and where the main process's time went in the window;
	 * with gpu.measured, the bounds and the gaps come from GPU marks */
	struct ia_gpu_time gpu;
	uint64_t idle_low_ns, idle_high_ns, known_busy_ns;
	uint64_t in_sync_ns, in_copy_ns, in_launch_ns, in_other_ns, queued_host_ns;
};

/* How the GPU idle figures were obtained, for every report to say. */
static inline const char *ia_idle_basis(const struct ia_gaps *g)
{
	return g->gpu.measured ? "measured: CUDA event marks timed on the GPU"
			       : "estimate from host evidence, no GPU timestamps";
}

/* Whose samples: the main thread, workers, other processes, the main
 * process's other threads. */
enum ia_gap_role { IA_GAP_MAIN, IA_GAP_WORKERS, IA_GAP_OTHER, IA_GAP_SIBLINGS };

static inline uint64_t ia_gap_stack_n(const struct ia_gap_stack *s, enum ia_gap_role r)
{
	return r == IA_GAP_MAIN ? s->main : r == IA_GAP_WORKERS ? s->workers : r == IA_GAP_OTHER ? s->other : s->siblings;
}

static inline uint64_t ia_gap_samples(const struct ia_gaps *g, enum ia_gap_role r)
{
	return r == IA_GAP_MAIN ? g->samples_main : r == IA_GAP_WORKERS ? g->samples_workers
		: r == IA_GAP_OTHER ? g->samples_other : g->samples_siblings;
}

struct ia_phases;
struct ia_coll_tids;
/* ph: the run's phases, or NULL to count every gap as steady; gloo: the
 * threads that ran the process's gloo collectives (their syncs are the
 * collectives', not the program's: collectives.h), or NULL. */
int ia_gaps_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		    const struct ia_phases *ph, const struct ia_coll_tids *gloo, struct ia_gaps *g, char *err,
		    size_t errlen);
void ia_gaps_free(struct ia_gaps *g);
/* Index into g->main_calls of the first call starting at or after ts
 * (g->nmain_calls when none). */
size_t ia_gaps_first_call_at(const struct ia_trace *t, const struct ia_gaps *g, uint64_t ts);
/* The gaps as [start, end) pairs (2 * g->n values) for the *_windows
 * functions; malloc'd, NULL out of memory. */
uint64_t *ia_gap_windows(const struct ia_gaps *g);
/* The first gap ending after ts (g->n when none): the gaps are sorted and apart. */
size_t ia_gap_ending_after(const struct ia_gaps *g, uint64_t ts);
/* blocks_known, main_blocks and worker_blocks (gap_blocks.c): 0, or -1
 * with err set. */
int ia_gap_blocks_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			  struct ia_gaps *g, char *err, size_t errlen);
void ia_gap_blocks_free(struct ia_gap_blocks *b);
/* The line where they blocked, when the stacks say so: at least
 * IA_BLOCK_LINE_MIN_STACKS of them, the line a Python one holding
 * IA_BLOCK_LINE_SHARE of their time (the workers': of their loading
 * time); else NULL. */
#define IA_BLOCK_LINE_MIN_STACKS 3
#define IA_BLOCK_LINE_SHARE 0.5
const struct ia_gap_line *ia_gap_block_line(const struct ia_gap_blocks *b);
/* "train.py:12 80% (in read (io.py:3)), ..." into buf: up to three lines
 * by their share of the weight (the workers': of their loading weight). */
const char *ia_gap_blocks_text(const struct ia_gap_blocks *b, char *buf, size_t n);
/* {prefix}_blocks_sampled and {prefix}_blocked_at [{line, inner, blocks,
 * share}] (at most max) under parent, when the trace has such stacks. */
void ia_gap_blocks_json(cJSON *parent, const char *prefix, const struct ia_gaps *g, const struct ia_gap_blocks *b,
			size_t max);
/* Whether thread th is a DataLoader worker's main thread (where its
 * Dataset's code runs). */
int ia_worker_main_thread(const struct ia_trace *t, const struct ia_per_process *pp, uint32_t th);
/* What interval o was blocked (not waiting for a CPU) inside the gaps,
 * over every gap it spans (a worker's read can begin while the main
 * thread still has work). */
uint64_t ia_gaps_blocked_over(const struct ia_gaps *g, const struct ia_off *o);
/* The same for intervals taken in start order: *k (0 for the first) is
 * where the gaps' walk stands, so that a thread's intervals walk them once
 * instead of a binary search each. */
uint64_t ia_gaps_blocked_over_next(const struct ia_gaps *g, const struct ia_off *o, size_t *k);
/* The workers_blocked/iowait/sys figures (gap_workers.c): the workers'
 * main threads'. */
void ia_gap_workers_off(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g);
/* The workers' blocked time in the gaps spent loading rather than waiting
 * for their next index: the measured blocked time times the loading share
 * of their sampled blocks' weight (0 without block stacks). */
uint64_t ia_gap_workers_loading_ns(const struct ia_gaps *g);
/* workers_blocked_ns, workers_iowait_ns, workers_loading_blocked_ns,
 * workers_blocked_in and the workers' block lines under parent. */
void ia_gap_workers_json(cJSON *parent, const struct ia_gaps *g);
/* The relay, where there is one (gap_relay.c), and each gap's th set to
 * its driver: 0, or -1 out of memory.  The gaps' th are the main thread
 * before. */
int ia_gap_relay_find(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g);
/* The CPython interpreter's own symbols (_PyEval_*, PyObject_*). */
int ia_is_interpreter(const char *sym);
/* Share of a role's samples in gaps that ran Python code: named by their
 * Python frames, or (native stacks only) the interpreter's own symbols. */
double ia_stacks_interpreter_share(const struct ia_gaps *g, enum ia_gap_role role);
#define IA_INTERPRETER_SHARE 0.25   /* gap samples in the CPython interpreter: Python code */
#define IA_SIBLINGS_BUSY 0.50       /* the main process's other threads on-CPU / main's blocked gap time */
/* 1 when the process's other threads were on a CPU (or queued for one: a
 * preempted GIL holder keeps it) for half the main thread's blocked time
 * in the gaps or more. */
int ia_gaps_siblings_busy(const struct ia_gaps *g);
/* 1 when the main thread's blocked time in the gaps is the GIL's: its
 * siblings busy (above), a quarter of their samples Python —
 * and no DataLoader workers busy for half of it (then it waits for a batch
 * through the pin-memory thread: c23). */
int ia_gaps_gil(const struct ia_gaps *g);
/* 1 when thread th (trace.threads) is one of the relay's (gaps.h relay). */
int ia_gaps_in_relay(const struct ia_gaps *g, uint32_t th);
/* The children_* figures (gap_children.c): 0, or -1 out of memory. */
int ia_gap_children_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_gaps *g);
/* "nvidia-smi (60 runs), git (2 runs)" into buf: the names, most alive first. */
char *ia_gap_children_text(const struct ia_gaps *g, char *buf, size_t cap);
/* {children_alive_ns, children_in_gaps: [{comm, count, alive_ns, cmdline}]} under parent, when any. */
void ia_gap_children_json(cJSON *parent, const struct ia_trace *t, const struct ia_gaps *g);

/* With the GPU estimate (g->gpu.est), the refill after the call ix[k]
 * that waited for the device (a sync, a free): its wait beyond
 * IA_SYNC_FLOOR_NS, up to the GPU's idle from its end to the next call that
 * completes work, by the replay that leaves it least idle — the queue it
 * drained refilling while the host issues the next step (docs/chains.md,
 * sync_per_step); 0 without the estimate. */
uint64_t ia_refill_after(const struct ia_trace *t, const struct ia_gaps *g, const uint32_t *ix, size_t n, size_t k);

/* Add the lines whose CUDA call ends the most gap time (at most max) to
 * parent as an array named key: [{line, api, gaps, gap_ns}]. */
void ia_gap_end_lines_json(cJSON *parent, const char *key, const struct ia_trace *t,
			   const struct ia_gaps *g, size_t max);

/* What a thread (or threads) blocked in during the gaps (files of version
 * 5 on), from its blocked time by system call code (syscalls.h) and that
 * time's total: up to n codes by time, most first, each at least 5 % of
 * the total; 0 when the trace does not say. */
size_t ia_gaps_blocked_in(const uint64_t *sys_ns, uint64_t blocked_ns, uint8_t *codes, size_t n);
/* ... and as JSON: parent.key = [{syscall, wait, ns}], when known. */
void ia_gaps_blocked_in_json(cJSON *parent, const char *key, const uint64_t *sys_ns, uint64_t blocked_ns);
/* The blocked time (per system call, as main_sys_ns) in calls of one kind of wait. */
uint64_t ia_gaps_wait_ns(const uint64_t *sys_ns, enum ia_wait kind);
/* The kind of wait (syscalls.h) holding at least share of blocked_ns, its
 * time and the system call most of that time was in; IA_WAIT_UNKNOWN when
 * none does. */
enum ia_wait ia_gaps_wait_kind(const uint64_t *sys_ns, uint64_t blocked_ns, double share, uint64_t *ns,
			       const char **sys);

#endif
