/*
 * chains.h — causal chains: from the evidence (stats, per-call alignment,
 * gaps, per-process, bucketed kernel evidence) to "what starved the GPU,
 * why, and what to change", each with a severity.
 *
 * Kinds (docs/chains.md has every threshold).  In the steady state:
 *   gaps_host_busy        main thread on-CPU while no GPU work was queued
 *   gaps_waiting_workers  main thread blocked while DataLoader workers ran
 *   gaps_host_blocked     main thread blocked, not on workers
 *   gaps_host_preempted   main thread runnable but not running in the gaps
 *   slow_calls            an API's slow tail, with its host cause
 *   pageable_copies       copies at pageable-memory bandwidth
 *   sync_per_step         a Python line that syncs every step
 *   sync_frees            cudaFree between launches: the GPU drains at each
 *   host_bound_launches   the GPU kept up with the host: the launch rate bounds throughput
 *   cpu_contention        the GPU kept up with the host, whose loop thread waited for a CPU
 * One-time phases of the run (phases.h), ranked by what they cost it:
 *   startup               imports, CUDA context, library loading, memory pools, worker start
 *   compilation           compiling once (torch.compile, Triton, XLA, compiler processes)
 *   recompilation         compiling again after steps ran (new shapes, failed guards)
 *   autotuning            cuDNN benchmark, Inductor/Triton autotuning (again for each new shape)
 * Paid once per epoch (phases.h), ranked the same way:
 *   epoch_boundaries      the DataLoader's iterator (re)started, the sampler's permutation, workers forked
 *   after_gpu_work        the process ran on after its last CUDA call (outside the window), the GPU idle
 * The GPU's own work (measured GPU time), not a cause of idling:
 *   layout_conversions    kernels that only convert tensors between NCHW and NHWC
 * Across the ranks of a job (chain_straggler.c):
 *   rank_straggler        one rank arrives last at the collectives; the others wait for it
 * A chain states only what its evidence shows: a cause is named when its
 * measured share passes the documented threshold, never by default.
 */
#ifndef IA_CHAINS_H
#define IA_CHAINS_H

#include "measure/align.h"
#include "measure/figures.h"
#include "measure/step_times.h"
#include "measure/step_breakdown.h"
#include "measure/gaps.h"
#include "measure/gpu_sharing.h"
#include "measure/hostbound.h"
#include "measure/collectives.h"
#include "measure/idle.h"
#include "measure/nvtx.h"
#include "measure/per_process.h"
#include "measure/phases.h"
#include "load/series.h"
#include "load/stacks.h"
#include "measure/stats.h"
#include "measure/wakers.h"
#include "load/trace.h"

#include <cjson/cJSON.h>

enum ia_severity { IA_SEV_NONE = 0, IA_SEV_LOW, IA_SEV_MEDIUM, IA_SEV_HIGH };
const char *ia_severity_name(enum ia_severity s);

/* What a chain is about; its name is the "kind" of explain --json. */
enum ia_kind {
	IA_KIND_GAPS_HOST_BUSY,
	IA_KIND_GAPS_WAITING_WORKERS,
	IA_KIND_GAPS_HOST_BLOCKED,
	IA_KIND_GAPS_HOST_PREEMPTED,
	IA_KIND_SLOW_CALLS,
	IA_KIND_PAGEABLE_COPIES,
	IA_KIND_SYNC_PER_STEP,
	IA_KIND_SYNC_FREES,
	IA_KIND_HOST_BOUND_LAUNCHES,
	IA_KIND_CPU_CONTENTION,
	IA_KIND_STARTUP,
	IA_KIND_COMPILATION,
	IA_KIND_RECOMPILATION,
	IA_KIND_AUTOTUNING,
	IA_KIND_EPOCH_BOUNDARIES,
	IA_KIND_LAYOUT_CONVERSIONS,
	IA_KIND_RANK_STRAGGLER,
	IA_KIND_AFTER_GPU_WORK,
	IA_KIND_N
};
const char *ia_kind_name(enum ia_kind k);
/* 1 for the kinds of a phase of the run, not its steady state: one-time (start-up, compilation,
 * recompilation, autotuning) or once per epoch (epoch boundaries). */
int ia_kind_is_phase(enum ia_kind k);
/* 1 for the kinds about the GPU's own work (layout conversions): steady, but never why it waits. */
int ia_kind_is_gpu_work(enum ia_kind k);
/* qsort's order of two struct ia_chain: severity; then a phase paid once
 * that the cap held to MEDIUM after the rest of its severity; then cost; on
 * a tie the steady state first. */
int ia_chains_order(const void *a, const void *b);

#define IA_CHAIN_MAX_LINES 8
/* timeline lines: a gaps chain can have a dozen things to say (the CPUs,
 * the main thread, whom it waited behind, where it blocked, its workers,
 * its other threads, their samples, the CUDA calls); at 8 the last were
 * dropped without a word */
#define IA_CHAIN_MAX_TIMELINE 16

struct ia_chain {
	enum ia_severity sev;
	enum ia_kind kind;
	uint16_t api;                  /* 0 when the chain is not about one API */
	double impact;                 /* what it costs the whole window, as a share (ordering) */
	int amortised;                 /* a phase paid once per process, held to MEDIUM though its share is HIGH */
	uint64_t cost_ns;              /* that time */
	char summary[400];
	char root_cause[1200];
	char fixes[IA_CHAIN_MAX_LINES][400];
	int nfixes;
	char timeline[IA_CHAIN_MAX_TIMELINE][400];   /* "[SYSTEM] …", "[HOST] …", "[CUDA] …" */
	int ntimeline;
	char source[256];              /* file:line, "" when unknown */
	cJSON *evidence;               /* owned */
};

struct ia_job;   /* chain_straggler.h */

/* Everything explain computes, kept together so callers (CLI, HTML report,
 * MCP server) share one analysis. */
struct ia_analysis {
	const struct ia_trace *t;
	struct ia_stats stats;
	struct ia_per_process pp;
	struct ia_evidence ev;
	struct ia_phases ph;           /* start-up, compilation, autotuning vs the steady state */
	struct ia_slow_api *slow; size_t nslow;
	struct ia_coll_windows coll;   /* the main process's collectives, and gloo's threads (collectives.h) */
	struct ia_gaps gaps;
	struct ia_idle idle;           /* GPU idle, whole window and steady state: what rules rank by */
	struct ia_hostbound hb;
	struct ia_wakers wakers;       /* who ended the main thread's waits in the gaps, hop by hop */
	struct ia_figures fig;         /* the headline every view opens with (figures.h) */
	struct ia_step_times step_times;   /* each steady step's time (step_times.h) */
	struct ia_step_breakdown step_parts;   /* where each steady step's time went (step_breakdown.h) */
	uint32_t backward_passes;      /* the median steady step's backward passes (accumulation.h) */
	/* what the loop's library is and does, for the fixes' words (chain_knobs.c) */
	struct {
		int trainer;               /* Hugging Face's Trainer runs the loop */
		char accumulates[96];      /* why the loop is seen to accumulate gradients; "" when it is not */
	} knobs;
	struct ia_nvtx nvtx;           /* the program's NVTX ranges against the GPU's idle time (nvtx.h) */
	struct ia_gpu_sharing sharing; /* other processes queuing GPU work all through the steady state (gpu_sharing.h) */
	struct ia_stack_names *names;
	struct ia_chain *chains; size_t nchains;   /* most severe first */
	struct ia_job *job;            /* a job of several ranks: across them (chain_straggler.h), else NULL */
	int local_ranks;               /* ranks on the main process's machine, 1 alone (ranks.h) */
	/* frees inside cuDNN's convolutions while it autotuned: the tuning's, not
	 * the steps' (told apart by sync_frees, said by the autotuning finding) */
	uint64_t tuning_frees, tuning_free_ns;
};

/* Count of chains at a severity (the CI gate compares HIGH counts). */
size_t ia_chains_count(const struct ia_analysis *a, enum ia_severity s);

#endif
