/*
 * phases.h — the one-time phases of a run (start-up, compilation,
 * autotuning) told apart from its steady state.
 *
 * The timeline is cut into slices of IA_PHASE_SLICE_NS.  Each on-CPU
 * sample of the main thread votes for the phase its stack names
 * (phase_rules.h; a stack that names none votes "steady"); samples of the
 * main process's other threads vote only when they name a phase, and every
 * sample of a compiler process (per_process.h) votes "compilation".  When
 * the main thread has samples in a slice it decides: the slice is steady
 * unless more of its samples name a phase than not.  When it has none (it
 * waits: for ptxas, for a compile pool, for the GPU), the others' votes
 * decide, and a slice with no vote at all between two slices of the same
 * phase (at most IA_PHASE_FILL slices) takes that phase.
 *
 * cuDNN builds execution plans for every new input shape; with
 * torch.backends.cudnn.benchmark it builds every candidate and times each,
 * which is autotuning.  Plan building counts as autotuning only when some
 * sample of the trace shows the timing loop (IA_WHY_CUDNN_BENCHMARK),
 * else as start-up (a new shape's set-up, done once).
 *
 * The steady run with the most launches gives the loop's step (steps.h:
 * the period of its call pattern).  Runs of slices of one phase are
 * *episodes*.  A compilation or autotuning episode that starts after at
 * least two steps' launches (IA_PHASE_AGAIN_STEPS; IA_PHASE_AGAIN_LAUNCHES
 * when no step was found, and never fewer) of the main process since the
 * previous one of its kind, and triggered from the same place as an
 * earlier one (its *site*: the user's line most of its samples come from,
 * or none for a framework thread's), is a *repeat*: steps ran in between,
 * then the same code had to be compiled (recompilation) or tuned (a new
 * input shape) again.  A backward pass compiled or tuned after the first
 * forward is not a repeat: another site, and less than a step between.
 *
 * An *epoch boundary* is a stretch whose main-thread samples show the
 * DataLoader's iterator (re)starting or a sampler permuting the dataset
 * (phase_rules.h): a cost paid once per epoch, not per step.  It is told
 * apart only when the trace holds at least IA_EPOCH_MIN such stretches
 * (ph->epochs): a lone iterator start is the loop's start-up.  Epoch
 * episodes are never repeats (that is for compiling and autotuning).
 *
 * Everything else is the steady state, where the starvation rules
 * (chains.h) look.  The slices are 50 ms: a phase is located to that
 * precision, which is fine for costs of seconds and means a phase shorter
 * than a slice may go unseen.
 */
#ifndef IA_PHASES_H
#define IA_PHASES_H

#include "measure/lines.h"
#include "measure/per_process.h"
#include "load/phase_rules.h"
#include "load/stacks.h"
#include "measure/steps.h"
#include "load/trace.h"

#include <cjson/cJSON.h>

#define IA_PHASE_SLICE_NS 50000000ull   /* 50 ms: about 5 samples of an on-CPU thread at 99 Hz */
#define IA_PHASE_FILL 10                /* empty slices bridged between two of one phase (0.5 s) */
#define IA_PHASE_AGAIN_LAUNCHES 100     /* launches between two episodes that make the second a repeat, */
#define IA_PHASE_AGAIN_STEPS 2          /* ... or this many steps' launches when more */
#define IA_EPOCH_MIN 2                  /* stretches of epoch boundaries before they are told apart */

struct ia_phase_episode {
	enum ia_phase phase;
	uint64_t start, end;
	uint64_t launches_before;   /* main-process launches since the previous episode of its phase ended */
	int repeat;                 /* compile/autotune again after steps ran, from an earlier site */
	char site[200];             /* the user's line of most of its samples, "" when none */
	uint32_t whys;              /* bit w: a sample of reason w made it (enum ia_phase_why) */
	unsigned hints;             /* the hints of those samples' stacks (enum ia_frame_hint), OR-ed */
};

/* What the samples of one phase show (in slices of that phase, inside the
 * window ia_phases_focus was given). */
struct ia_phase_detail {
	uint64_t samples;
	uint64_t why[IA_WHY_N];                     /* samples by reason */
	struct ia_gap_line *lines; size_t nlines;   /* the user's lines in those samples, most first */
	struct ia_gap_line *frames; size_t nframes; /* innermost Python function (or native symbol) of
						       the samples that name the phase, most first */
	struct ia_gap_line *modules; size_t nmodules;   /* start-up: modules imported, most first */
	struct ia_gap_line *import_lines; size_t nimport_lines;   /* the user's lines that imported them */
};

/* What a slice's samples say of the main thread's input: the DataLoader's
 * workers loading (a sample under their Dataset's code), the main thread
 * on a CPU (any sample of its own). */
enum ia_slice_input { IA_SLICE_WORKERS_LOAD = 1, IA_SLICE_MAIN_ONCPU = 2 };

struct ia_phases {
	uint64_t t0;                /* slices cover [t0, t0 + nslices * IA_PHASE_SLICE_NS) */
	uint8_t *slice;             /* enum ia_phase per slice */
	uint32_t *launches;         /* main-process launches starting in each slice */
	uint8_t *input;             /* per slice, enum ia_slice_input bits */
	size_t nslices;
	struct ia_phase_episode *ep; size_t nep;
	struct ia_phase_detail d[IA_PHASE_N];
	/* compiling's samples in its repeats (episodes compiled again after
	 * steps ran): apart from d[IA_PHASE_COMPILE], the first compiles' —
	 * the recompilation finding's own evidence (c72's had been the first
	 * compiles' timeline word for word) */
	struct ia_phase_detail recompile;
	uint64_t compiler_cpu_ns;   /* compiler processes' CPU time (per_process.h), all of it */
	size_t ncompilers;
	struct ia_steps steps;      /* the loop's step, from the steady run with the most launches */
	struct ia_phase_vote *votes; size_t nvotes;   /* the samples that voted (internal) */
	int cudnn_benchmark;        /* a sample shows cuDNN timing candidates: plan building is autotuning */
	int epochs;                 /* epoch boundaries are told apart (>= IA_EPOCH_MIN of them), else start-up */
	uint64_t again_launches;    /* launches that make a later episode a repeat */
};

int ia_phases_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		      struct ia_phases *ph, char *err, size_t errlen);
void ia_phases_free(struct ia_phases *ph);
/* Fills ph->d from the samples inside [a, b) only (the analysis window:
 * what happened before the first GPU work is not what the run paid in it). */
int ia_phases_focus(struct ia_phases *ph, struct ia_stack_names *names, uint64_t a, uint64_t b);

/* The phase a reason stands for in this trace (ia_why_phase, but cuDNN's
 * plan building is start-up unless the trace shows cudnn.benchmark, and an
 * epoch boundary's reasons are start-up unless ph->epochs). */
enum ia_phase ia_phases_of_why(const struct ia_phases *ph, enum ia_phase_why w);
/* Whether the DataLoader's workers outlive an epoch (persistent_workers),
 * from the epoch boundaries' samples: 1 when an iterator restart forked
 * none, 0 when every restart forked new ones, -1 when the trace cannot say
 * (fewer than two iterator starts told apart). */
int ia_phases_workers_persist(const struct ia_phases *ph);
/* The phase at time ts (steady outside the slices). */
enum ia_phase ia_phase_at(const struct ia_phases *ph, uint64_t ts);
/* Time of [a, b) in slices of phase p; p = IA_PHASE_N: of any phase but steady. */
uint64_t ia_phases_time_in(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b);
/* The phase of a gap [a, b): the main thread's own samples in it when most
 * of them name one phase, else ia_phases_majority. */
enum ia_phase ia_phases_gap(const struct ia_phases *ph, uint64_t a, uint64_t b);
/* The phase of most of [a, b), steady on a tie. */
enum ia_phase ia_phases_majority(const struct ia_phases *ph, uint64_t a, uint64_t b);
/* The steady state inside [a, b) as (start, end) pairs: a malloc'd array
 * of 2 * *n values (NULL with *n = 0 when out of memory or none). */
uint64_t *ia_phases_steady_windows(const struct ia_phases *ph, uint64_t a, uint64_t b, size_t *n);
/* The episodes of phase p cut to [a, b), as windows (pairs, sorted; *n of
 * them; NULL with *n 0 when none or out of memory; the caller frees). */
uint64_t *ia_phases_windows(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b, size_t *n);
/* The main thread's own samples inside [a, b) — with steady, only those in
 * the steady state: fn is called with each one's stack id (may be NULL).
 * Their count. */
uint64_t ia_phases_main_samples(const struct ia_phases *ph, uint64_t a, uint64_t b, int steady,
				void (*fn)(uint64_t stack, void *arg), void *arg);
/* Episodes of phase p overlapping [a, b), and of those the repeats. */
size_t ia_phases_episodes(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b, size_t *repeats);

/* {"startup_ns":…, "compilation_ns":…, "autotuning_ns":…, "epoch_boundary_ns":…, "steady_ns":…,
 *  "episodes":[…]} over [a, b). */
cJSON *ia_phases_json(const struct ia_phases *ph, const struct ia_trace *t, uint64_t a, uint64_t b);

#endif
