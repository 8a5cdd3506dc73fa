/*
 * chain_build.h — what every rule file uses to write a chain: a new chain
 * in the analysis, its timeline lines and fixes (printf-style, cut to the
 * fixed sizes of struct ia_chain), severity by share, and the machine's
 * figures the fixes quote (CPUs, a num_workers value).  Internal to the
 * rule files (chain_*.c) and the verdict that reads their chains with the
 * same thresholds (verdict.c); callers of the analysis use chains.h.
 */
#ifndef IA_CHAIN_BUILD_H
#define IA_CHAIN_BUILD_H

#include "load/mechanisms.h"
#include "rules/chains.h"

#include <stddef.h>

/* Severity by the share of the window a chain explains: the gaps' shares. */
#define SHARE_HIGH 0.30
#define SHARE_MEDIUM 0.10
#define SHARE_LOW 0.03

enum ia_severity ia_by_share(double s, double hi, double med, double low);
/* Appends to a string buffer, cut at len. */
void ia_addf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ia_chain_fix(struct ia_chain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Moves fix `from` to position `to`, the fixes between shifted by one. */
void ia_chain_fix_move(struct ia_chain *c, int from, int to);
void ia_chain_line(struct ia_chain *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A zeroed chain of that kind appended to a->chains (evidence: an empty
 * object), NULL when out of memory. */
struct ia_chain *ia_chain_new(struct ia_analysis *a, size_t *cap, enum ia_kind kind);
/* Removes a->chains[k] (its evidence freed), the later ones moved down. */
void ia_chain_drop(struct ia_analysis *a, size_t k);
/* One cause, one finding: the slow_calls findings whose slow calls this
 * finding (a->chains[self]) explains — their tail_cause (chain_slow.c) is
 * `tail_cause`, and their API passes api_ok where given — had told its cause
 * again with the same fix.  Each becomes a line of it ("[CUDA] <its
 * percentiles>: most of them <these>") and an entry of its evidence's
 * slow_calls, and is dropped; the finding keeps the higher severity. */
void ia_chain_fold_slow(struct ia_analysis *a, size_t self, const char *tail_cause, int (*api_ok)(unsigned api),
			const char *these);
double ia_pct(uint64_t part, uint64_t whole);
/* A sync line whose sync is an explicit synchronize of torch.cuda
 * (torch.cuda.synchronize(), a stream's or an event's): nothing is read,
 * the wait is the point — most often code timing itself. */
int ia_sync_line_explicit(const struct ia_gap_line *l);
/* The steady state's steps, to count a rule's events per step: those
 * step_times.h counted, else the steady state over the step's period,
 * else its gaps (nothing repeats: each sync or free ends one). */
double ia_steady_steps(const struct ia_analysis *a);
/* Whether ia_steady_steps counted steps (else it counted gaps). */
int ia_steps_found(const struct ia_analysis *a);
/* A sync or free line's least count to be a pattern of the loop. */
#define IA_SYNC_MIN_COUNT 10
/* The machine's CPUs, from the session, else from cpu_busy. */
int ia_machine_cpus(const struct ia_analysis *a);
/* The CPUs the job may use: the machine's, or fewer where its cgroup's
 * quota allows fewer (rounded up) — what workers and threads are sized by. */
int ia_cpus_of(const struct ia_analysis *a);
/* "[SYSTEM] CPU limit: …" timeline line when the job ran under a cgroup
 * CPU quota; "" otherwise. */
const char *ia_cpu_limit_text(const struct ia_analysis *a, char *buf, size_t n);
/* Whether such a quota throttled the job while traced. */
int ia_cpu_quota_throttled(const struct ia_analysis *a);
/* Whether it, rather than other tasks, held a runnable thread back for
 * runq_ns: it throttled the job, and where untraced tasks took CPUs from
 * it (others) the quota's throttled time is at least half of runq_ns. */
int ia_cpu_quota_held_back(const struct ia_analysis *a, int others, uint64_t runq_ns);
/* " The job ran under a CPU quota of 0.30 CPUs (its cgroup's), which
 * throttled it in N of M periods" onto the root cause (the caller ends it). */
void ia_cpu_quota_cause(struct ia_chain *c, const struct ia_analysis *a);
/* The fix of raising that limit. */
void ia_cpu_quota_fix(struct ia_chain *c);
/* The fix for pageable copies: pinned memory, through the DataLoader when
 * there are DataLoader workers. */
void ia_pin_fix(struct ia_chain *c, const struct ia_analysis *a);
/* A num_workers value for this machine: every CPU but one for the main process. */
int ia_good_workers(const struct ia_analysis *a);
/* The workers alive at once (per_process.h) are more than the CPUs less the
 * main process's one: they fight the main process for CPUs. */
int ia_workers_crowd_cpus(const struct ia_analysis *a);

/* ---- the samples in the gaps (chain_stacks.c) ---- */
/* collation code: torch.stack / cat / the default collate, gather_rows */
int ia_is_collation(const char *sym);
/* the CPython interpreter itself (evaluating bytecode, allocating objects) */
/* Indexes of up to max stacks most sampled by a role, most first; how many. */
int ia_role_top(const struct ia_gaps *g, enum ia_gap_role role, size_t *pick, int max);
/* The user's own line under the most of a role's samples, summed over the
 * stacks under it (a torch op on the CPU samples as many native stacks,
 * under one line of the user's), and its share of the role's samples;
 * NULL when no sample has a user's line. */
const char *ia_role_user_line(const struct ia_gaps *g, enum ia_gap_role role, double *share);
/* "at::native::stack 55% (collate.py:141), _PyEval_EvalFrameDefault 30%" for a role. */
void ia_top_stacks(const struct ia_gaps *g, enum ia_gap_role role, char *buf, size_t len);
/* Share of a role's samples in gaps that ran Python code. */
/* "build_batch at data.py:24, called from train.py:50" */
const char *ia_python_where(const struct ia_gap_stack *s, char *buf, size_t len);
/* The most sampled stack of a role that ran Python code, or NULL. */
const struct ia_gap_stack *ia_stacks_python_top(const struct ia_gaps *g, enum ia_gap_role role);
/* At least a fifth of a role's samples in collation code. */
int ia_stacks_show_collation(const struct ia_gaps *g, enum ia_gap_role role);
/* [{symbol, python_code, python, user_line, samples, share}] of a role, as ev[key]. */
void ia_stacks_json(cJSON *ev, const struct ia_gaps *g, enum ia_gap_role role, const char *key);
/* The fix for per-item work: index a pre-shuffled permutation, or __getitems__. */
void ia_batch_level_fix(struct ia_chain *c);

/* ---- what every phase finding shares (chain_phases.c) ---- */
/* The chain of phase p costing ns of the window: severity by its share of
 * the window (at most MEDIUM when once), cost, source, the reasons and
 * lines of its samples.  *out: the chain, NULL when the phase costs less
 * than LOW; -1 when out of memory. */
int ia_phase_chain(struct ia_analysis *a, size_t *cap, enum ia_kind kind, enum ia_phase p, uint64_t ns, int once,
		   struct ia_chain **out);
/* "importing Python modules 96%, loading CUDA libraries' kernels 3%": a phase's top three reasons. */
void ia_phase_reasons(char *buf, size_t len, const struct ia_phase_detail *d);
/* The evidence figures every phase finding has (window, phase time, episodes, reasons, lines). */
void ia_phase_evidence(struct ia_chain *c, const struct ia_analysis *a, enum ia_phase p, uint64_t ns,
		       size_t episodes, size_t repeats);

/* ---- the rules: each appends its chains (0, or -1 out of memory) ---- */
int ia_rule_gaps(struct ia_analysis *a, size_t *cap);                                  /* chain_gaps.c */
int ia_rule_slow_calls(struct ia_analysis *a, size_t *cap, const struct ia_slow_api *s); /* chain_slow.c */
int ia_rule_pageable(struct ia_analysis *a, size_t *cap);                              /* chain_pageable.c */
int ia_rule_sync_per_step(struct ia_analysis *a, size_t *cap);                         /* chain_syncs.c */
int ia_rule_sync_frees(struct ia_analysis *a, size_t *cap);                            /* chain_frees.c */
int ia_rule_hostbound(struct ia_analysis *a, size_t *cap);                             /* chain_hostbound.c */
int ia_rule_phases(struct ia_analysis *a, size_t *cap);                                /* chain_phases.c */
int ia_rule_layout(struct ia_analysis *a, size_t *cap);                                /* chain_layout.c */
int ia_rule_epochs(struct ia_analysis *a, size_t *cap);
int ia_rule_after(struct ia_analysis *a, size_t *cap);                                 /* chain_after.c */
/* After the chains are ordered: a debugging instrument left on, told in
 * the first finding about the host's time (chain_instruments.c). */
void ia_instruments_lead(struct ia_analysis *a);
/* Where the loop is Hugging Face's Trainer: one fix more per finding, its
 * TrainingArguments for what the fixes say (chain_knobs.c). */
void ia_knobs_translate(struct ia_analysis *a);
/* Before the rules: whether Hugging Face's Trainer runs the loop and
 * whether it accumulates gradients (a->knobs; chain_knobs.c). */
void ia_knobs_read(struct ia_analysis *a);
/* The main thread's own samples in [from, to) (steady: only the steady
 * state's), and the debugging instrument most of them are inside (*top,
 * IA_INSTR_NONE when none) with its count: chain_instruments.c. */
uint64_t ia_instruments_in(const struct ia_analysis *a, uint64_t from, uint64_t to, int steady,
			   enum ia_instrument *top, uint64_t *top_n);                                /* chain_epochs.c */
int ia_rule_cpu_contention(struct ia_analysis *a, size_t *cap);                        /* chain_contention.c */

#endif
