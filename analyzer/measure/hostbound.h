/*
 * hostbound.h — stretches where the host, not the GPU, set the pace.
 *
 * Walking the main process's CUDA calls in time order, a *stretch* runs
 * from its first call that queues work (launch, copy, memset) after a
 * completing call (sync, synchronous copy) to the end of the next
 * completing call, which *closes* it.  When that closing call waited no
 * more than IA_SYNC_FLOOR_NS (what a sync with nothing to wait for costs),
 * the GPU had already finished everything queued in the stretch before the
 * host asked: it kept up with the host.  Such a stretch whose launch rate
 * is at least IA_HOSTBOUND_MIN_RATE is *host-bound*: the host's issue rate,
 * not the GPU, bounded how fast the work went.
 *
 * Only the steady state counts (phases.h): a stretch mostly in start-up,
 * compilation or autotuning is left out.  A stretch in which the host spent
 * at least half the time inside CUDA calls other than launches (a pageable
 * copy or a sync that waited for the device) is not host-bound either: the
 * host waited for the GPU there, whatever the closing call says.
 *
 * Stretches never contain a gap (gaps.h): a gap ends at the first queued
 * work, which is where a stretch begins, so the two never count the same
 * time.  For the host-bound stretches: launches, the main thread's time
 * inside CUDA calls and between them, its off-CPU split, the mean interval
 * between launches, the Python lines of the (stack-sampled) launches, and
 * the period of the call sequence in the longest stretch (one training
 * step, when steps are recognisable).
 *
 * Nothing here says how busy the GPU was inside a stretch: without GPU
 * timestamps only its end is known (idle when the host asked).  With them
 * (the estimate from work timed alone, gpu_time.h) the closing call's wait
 * is no longer the proof: a stretch whose closing sync waited is kept too
 * (counted in busy_close_n), and the rule reads the GPU's estimated idle
 * inside the stretches (chain_hostbound.c) — a step whose GPU ran dry
 * while the host issued it, then still had its last kernels queued when
 * the per-step sync came (c21: .item() every step, ~24 % idle estimated,
 * none of it closed by an idle sync).
 */
#ifndef IA_HOSTBOUND_H
#define IA_HOSTBOUND_H

#include "measure/gaps.h"
#include "measure/per_process.h"
#include "load/stacks.h"
#include "load/trace.h"

#define IA_HOSTBOUND_MIN_RATE 2000.0    /* launches per second inside a stretch */
#define IA_HOSTBOUND_PERIOD_MAX 512     /* longest call-sequence period looked for */

#define IA_TOP_LINE_KINDS 64

struct ia_hostbound {
	size_t n;                       /* host-bound stretches */
	uint64_t ns;                    /* their total time */
	uint64_t steady_ns;             /* of it, in the steady state (a stretch counts by its majority) */
	uint64_t launches, calls;       /* calls of the main process in them */
	uint64_t copies, copy_bytes;    /* of those calls, copies, and what they moved */
	uint64_t in_calls_ns;           /* inside CUDA calls (union across threads) */
	uint64_t in_launch_ns;          /* ... of which inside launches */
	uint64_t launch_gap_ns, launch_gaps;   /* start-to-start of consecutive launches */
	uint64_t main_off_ns, main_runq_ns;    /* main thread in the stretches */
	uint64_t main_launches;         /* launches the main thread issued in them */
	int has_offcpu;                 /* the main thread has off-CPU evidence at all */
	/* the threads of a relay (gaps.h): each stretch is read on the one whose
	 * call closes it (main_off_ns, main_runq_ns), and main_launches are theirs */
	size_t relay_threads;
	/* other threads of the main process that launched in the stretches (a
	 * framework's own threads: PyTorch runs backward on pt_autograd_N while
	 * the main thread blocks): their count, CPU time in the stretches, and
	 * the one that launched most */
	uint32_t nothers, top_other;    /* top_other: index into trace.threads */
	uint64_t others_oncpu_ns, top_other_launches;
	uint64_t close_max_ns;          /* longest wait of a closing call */
	/* the longest stretch */
	uint64_t long_start, long_end, long_launches, long_calls;
	uint32_t long_close;            /* its closing call: index into trace.calls */
	/* the call sequence (API, kernel) of the longest stretch repeats every
	 * period_calls calls, period_launches of them launches; 0 = no period */
	uint32_t period_calls, period_launches;
	/* Python lines of the stack-sampled launches, most samples first
	 * (count = samples); launch_samples = launches with a stack */
	struct ia_gap_line *lines; size_t nlines;
	struct ia_gap_line *user_lines; size_t nuser_lines;   /* the same launches by the user's own line */
	uint64_t launch_samples;
	/* the sampled launches of lines[0] (all the main process's, in or out of
	 * the stretches): how many kernels, and how many kernel-and-geometry
	 * pairs — a loop over tensors of different sizes (a model's
	 * parameters) runs each of its few kernels at several sizes, a loop over
	 * a batch's items at one (each counted to IA_TOP_LINE_KINDS) */
	uint32_t top_funcs, top_works;
	uint64_t generate_samples;      /* of them, under Transformers' generate (stacks.h ia_stack_hf_generate) */
	/* of them, in torch.optim's step: its per-parameter form (a function
	 * _single_tensor_*: foreach=False) and its fused one (_fused_*) */
	uint64_t optim_single_samples, optim_fused_samples;
	uint64_t *w;                    /* the stretches as (start, end) pairs, n of them */
	size_t waited_n;                /* stretches left out: the host waited in calls (see above) */
	size_t busy_close_n;            /* stretches kept whose closing call waited (GPU estimate only) */
	/* inside the stretches, the main process's calls that queue no work and
	 * took longer than IA_SYNC_FLOOR_NS (an allocation, a free, a host
	 * sync), merged, as (start, end) pairs: the GPU's idle during them is
	 * theirs, not the issue rate's (c13: each step's cudaMalloc again after
	 * empty_cache) */
	uint64_t *calls_w; size_t ncalls_w;
	/* per stretch (as w), how long the completing call before it waited
	 * beyond IA_SYNC_FLOOR_NS: it drained the queue, so the stretch began
	 * with an empty GPU, and up to that wait of the idle inside is the
	 * refill — that sync's cost, not the issue rate's (chain_syncs.c) */
	uint64_t *drain_wait;
};

struct ia_phases;
struct ia_gaps;
/* g: the gaps measured (gaps.h): the main process's calls in time order
 * (main_calls), its relay, and whether the GPU's busy time is estimated
 * (then stretches are kept whatever their closing call waited, above);
 * ph: the run's phases (NULL: every stretch is steady). */
int ia_hostbound_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			 const struct ia_phases *ph, const struct ia_gaps *g, struct ia_hostbound *h, char *err,
			 size_t errlen);
void ia_hostbound_free(struct ia_hostbound *h);

#endif
