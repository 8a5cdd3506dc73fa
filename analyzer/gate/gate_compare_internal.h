/*
 * gate_compare_internal.h — what the gate's check files share (gate_compare.c: the
 * latencies and the order of it all; gate_compare_steady.c: the steady
 * state, GPU idle, throughput and phases; gate_compare_chains.c: the chains
 * and what changed).  Internal to those three.
 *
 * A figure's noise.  From one run, a steady figure carries its standard
 * error within the run (gate_steady.h: the steady state in blocks).  From a
 * baseline of several runs it is the median of the runs, and its noise the
 * larger of the runs' spread and their median standard error: the spread
 * between runs holds what changes from one run to the next (caches,
 * imports, the machine), and is never less than one run's own.  The spread
 * is the standard deviation of two runs, the median absolute deviation
 * (x 1.4826) of three or more: one run slowed by a busy machine does not
 * widen the limits (on the 2-CPU dev VM one of two identical runs took
 * 20.6 ms a step, the other 11.0).
 * A change is beyond the noise when it exceeds noise_multiple times the
 * two sides' noises added in quadrature.
 */
#ifndef IA_GATE_COMPARE_INTERNAL_H
#define IA_GATE_COMPARE_INTERNAL_H

#include "gate/gate_compare.h"

#include <stddef.h>

struct ia_gate_fig {
	double v, noise;
	size_t n;              /* runs it came from (0: none had it) */
};

#define IA_GATE_NO_SE ((size_t)-1)

/* The double at offset off of struct ia_gate_run, with its standard error at
 * se_off (IA_GATE_NO_SE: none), over s's runs; steady_only: only runs with
 * a steady state count. */
struct ia_gate_fig ia_gate_fig_of(const struct ia_gate_summary *s, size_t off, size_t se_off, int steady_only);
/* The noise of a change between two figures (quadrature sum). */
double ia_gate_noise2(struct ia_gate_fig b, struct ia_gate_fig c);
/* The noise of the steady state's GPU idle (points) and throughput (per
 * second, of the baseline's value bv) between the two sides: both runs'
 * noises added, and at least the config's one-run floor where the baseline
 * is a single run (its spread between runs is not known). */
double ia_gate_idle_noise(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			  struct ia_gate_fig b, struct ia_gate_fig c);
double ia_gate_throughput_noise(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
				struct ia_gate_fig b, struct ia_gate_fig c);
/* " (one-run baseline: at least +-7 pts between runs)" or " (spread of runs)" */
const char *ia_gate_noise_source(const struct ia_gate_config *cfg, const struct ia_gate_summary *base, int idle,
				 char *buf, size_t n);
/* Median and spread of n values (see above; v is sorted in place). */
struct ia_gate_fig ia_gate_fig_values(double *v, size_t n);

struct ia_gate_check *ia_gate_add(struct ia_gate_result *r, const char *group, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ia_gate_set(struct ia_gate_result *r, struct ia_gate_check *c, enum ia_gate_verdict v);
void ia_gate_fmt_change(char *buf, size_t len, double ratio);
/* Appends to a check's reason the changes behind it: those explaining a
 * steady figure (steady), or those about api. */
void ia_gate_why_causes(const struct ia_gate_result *r, struct ia_gate_check *k, int steady, const char *api);

/* Whether both steady states are long enough to judge: a check row, and 1/0. */
int ia_gate_check_steady_state(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			       const struct ia_gate_summary *cur, struct ia_gate_result *r, int *enough);
int ia_gate_check_idle(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		       const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r);
int ia_gate_check_throughput(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			     const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r);
/* Whether the steady state's throughput held (did not fall beyond its
 * noise): 1, 0, or -1 when a side has none. */
int ia_gate_steps_held(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		       const struct ia_gate_summary *cur);
int ia_gate_check_phases(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			 const struct ia_gate_summary *cur, struct ia_gate_result *r);
/* The GPU idle figure both sides have (the estimate where both have it, else
 * the low bound), for the chains' noise. */
void ia_gate_idle_figs(const struct ia_gate_summary *base, const struct ia_gate_summary *cur,
		       struct ia_gate_fig *b, struct ia_gate_fig *c, int *est);

/* What changed (r->changes), before the checks that cite it. */
int ia_gate_diff(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
		 const struct ia_gate_summary *cur, struct ia_gate_result *r);
int ia_gate_check_chains(const struct ia_gate_config *cfg, const struct ia_gate_summary *base,
			 const struct ia_gate_summary *cur, int enough, struct ia_gate_result *r);

#endif
