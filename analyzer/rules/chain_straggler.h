/*
 * chain_straggler.h — a job of several ranks, across them: which rank the
 * others wait for at their collectives (measure/collectives.h), and that
 * rank's own cause, found by the single-rank analysis of that rank alone
 * (its process and its children: ia_analyze on the trace loaded with -p
 * its pid, every rule and measure as for one process, none copied here).
 *
 * The candidate is the rank the others wait for most.  It is the straggler
 * when it arrives last, by more than a tie, at 3 or more collectives, the
 * others wait for the last rank at least 5 % of their time between their
 * first collective and their last, and it is so beyond chance in either of
 * two ways: last at half of the matched collectives or more and more often
 * than 1/N of them each allows (binomially: beyond the mean by three
 * standard deviations — 11 of 16 with 3 ranks, 14 of 16 with 2); or the
 * cause of half of the others' waiting or more and of more than 1/N of it
 * allows, the same test weighted by each collective's wait (effective
 * count (Σx)²/Σx²: many moderate waits prove it, one long one does not).
 * The second holds where a loaded machine makes another rank last, by a
 * hair, at a third of the collectives (a 3-rank job, rank 1 last at 9 of
 * 15 but the cause of most of the waiting).  The finding (kind
 * rank_straggler) is HIGH from 25 % of that time, MEDIUM from 10 %, LOW
 * below.  A rank that caused half of the others' waiting or more, beyond
 * chance by two standard deviations in either way but not three, is a
 * suspect: no finding, the job not called balanced, and explain asks for
 * more steps.  Otherwise the job is balanced: no finding, and explain
 * says so.  When the straggler's
 * program also queues more work a step than the others' (host-to-device
 * bytes or kernel launches over 1.25 times their median), the imbalance is
 * the data (uneven batches, sequence lengths): said, with its fix.
 */
#ifndef IA_CHAIN_STRAGGLER_H
#define IA_CHAIN_STRAGGLER_H

#include "measure/collectives.h"
#include "measure/ranks.h"
#include "rules/chains.h"

#include <cjson/cJSON.h>

#define IA_STRAGGLER_LAST_SHARE 0.5
#define IA_STRAGGLER_MIN_LAST 3
#define IA_STRAGGLER_WAIT_LOW 0.05
#define IA_STRAGGLER_WAIT_MEDIUM 0.10
#define IA_STRAGGLER_WAIT_HIGH 0.25
#define IA_STRAGGLER_DATA_RATIO 1.25

/* The analysis of one trace, and its release (rules/analysis.h: ia_analyze
 * and ia_analysis_free, handed in by it — this file runs inside it). */
typedef int (*ia_analyze_fn)(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen);
typedef void (*ia_analysis_free_fn)(struct ia_analysis *a);

struct ia_job {
	struct ia_ranks ranks;
	struct ia_collectives coll;
	size_t nnodes;             /* traces (nodes) the job was read from: 1, or ia_job_analyze_nodes' */
	struct ia_clock_fit *fit;  /* [nnodes]: how each node's clock was put on node 0's */
	int straggler;             /* index into coll.r, -1 none (balanced, or nothing matched) */
	int suspect;               /* no straggler, but this rank (index) came last at 3 or more and caused most
	                            * of the others' waiting, 5 % of their time or more: not balanced, not proven
	                            * over so few collectives (-1 none) */
	double last_share;         /* the straggler's: collectives it came last at / matched */
	double imposed_share;      /* the straggler's: the others' waits for it / all their waits for a last rank */
	uint64_t late_mean_ns;     /* where last, its mean lateness after the others' median */
	double others_wait_share;  /* the other ranks' mean wait / their span */
	uint64_t others_wait_ns;   /* ... and their mean wait */
	double bytes_ratio, launch_ratio;   /* the straggler's per collective over the others' median */
	int data_imbalance;
	/* the straggler on its own: its subtree's trace and analysis, and its
	 * cause there — its first steady finding of MEDIUM or more; else, when
	 * its steps are device-bound, its GPU work (cause_device, no finding);
	 * else its first steady finding at all.  Never what it did once
	 * (start-up, compiling, autotuning): a rank last at its collectives
	 * step after step is late in its steps. */
	int has_sub;
	struct ia_trace sub;
	struct ia_analysis sub_a;
	const struct ia_chain *cause;   /* in sub_a; NULL: none, or cause_device */
	int cause_device;
	ia_analysis_free_fn free_sub;
	struct ia_chain chain;     /* the rank_straggler finding, when has_chain */
	int has_chain;
};

/* From j->coll: j->straggler, j->suspect and the figures beside them (the
 * rule above); nothing else of j is read. */
void ia_job_find_straggler(struct ia_job *j);

/* When the job has no straggler: one sentence saying whether its ranks are
 * balanced or one of them is suspect (explain's text and MCP get_ranks). */
void ia_job_balance_sentence(const struct ia_job *j, char *buf, size_t n);

/* For an unfiltered trace of a job of 2 or more ranks: a->job set (else
 * left NULL).  0, or -1 with a reason. */
int ia_job_analyze(const struct ia_trace *t, struct ia_analysis *a, ia_analyze_fn analyze, ia_analysis_free_fn release,
		   char *err, size_t errlen);
/* A job read from several traces, one a node (explain A.db B.db ...):
 * *out set (free it with ia_job_free, even on failure).  nodes[n].offset_ns
 * puts node n's monotonic times on the job's timeline (from its clock
 * anchor); the collectives refine it (collectives.h).  analyze NULL: the
 * clocks and the straggler only, not the straggler's own cause (what an
 * export needs, which analyses every node itself).  0, or -1. */
int ia_job_analyze_nodes(const struct ia_coll_node *nodes, size_t nn, ia_analyze_fn analyze, ia_analysis_free_fn release,
			 struct ia_job **out, char *err, size_t errlen);
void ia_job_free(struct ia_job *j);
/* The straggler's own cause in a sentence: its finding's summary, its
 * device-bound steps, or "no finding passed its threshold". */
const char *ia_job_cause_summary(const struct ia_job *j, char *buf, size_t n);
/* explain --json's "ranks" object (also MCP's get_ranks). */
cJSON *ia_job_json(const struct ia_trace *t, const struct ia_job *j);
/* "ranks 0-2, 4" into buf: the ranks of coll.r other than index skip. */
const char *ia_job_others(const struct ia_job *j, int skip, char *buf, size_t n);

#endif
