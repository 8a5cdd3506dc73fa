/*
 * analysis.c — the whole analysis of a loaded trace, once (analysis.h):
 * the measures (stats, per-process, evidence, phases, slow calls, gaps,
 * host-bound stretches, GPU idle), then every rule over them, the chains
 * ordered most severe first.  Every view renders this one result.
 */
#include "rules/analysis.h"

#include "base/progress.h"
#include "base/util.h"
#include "measure/accumulation.h"
#include "rules/chain_build.h"
#include "rules/chain_straggler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The analysis runs in two parallel phases on the two threads a small
 * machine has: (stats || per-process + evidence), then (slow calls || gaps).
 * Each side reads the trace and writes only its own part; the database
 * connection they share is FULLMUTEX (db.c), and each uses its own
 * statements. */
struct job {
	const struct ia_trace *t;
	struct ia_analysis *a;
	int rc;
	char err[256];
};

static void *do_stats(void *arg)
{
	struct job *j = arg;
	if (ia_stats_compute(j->t, &j->a->stats) < 0) {
		snprintf(j->err, sizeof j->err, "out of memory");
		j->rc = -1;
	}
	return NULL;
}

static void *do_slow(void *arg)
{
	struct job *j = arg;
	struct ia_analysis *a = j->a;
	j->rc = ia_slow_apis(j->t, &a->ev, &a->stats, &a->pp, &a->slow, &a->nslow, j->err, sizeof j->err);
	return NULL;
}

/* Runs fn on a second thread while here(t, a, err) runs on this one (fn
 * alone first when no thread can be made); -1 when either failed. */
static int run_beside(void *(*fn)(void *), struct job *j,
		      int (*here)(const struct ia_trace *, struct ia_analysis *, char *, size_t),
		      char *err, size_t errlen)
{
	pthread_t th;
	int started = pthread_create(&th, NULL, fn, j) == 0;
	if (!started)
		fn(j);
	int rc = here(j->t, j->a, err, errlen);
	if (started)
		pthread_join(th, NULL);
	if (rc < 0)
		return -1;
	if (j->rc < 0) {
		snprintf(err, errlen, "%s", j->err);
		return -1;
	}
	return 0;
}

static int per_process_and_evidence(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen)
{
	int rc = ia_per_process_compute(t, &a->pp, err, errlen);
	return rc ? rc : ia_evidence_load(t, &a->ev, err, errlen);
}

/* Gaps, then the host-bound stretches between them: both walk the main
 * process's calls and name stacks through the one (unlocked) names cache,
 * so they run on the same thread. */
static int gaps(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen)
{
	int rc = ia_gaps_compute(t, &a->pp, a->names, &a->ph, &a->coll.gloo, &a->gaps, err, errlen);
	return rc ? rc : ia_hostbound_compute(t, &a->pp, a->names, &a->ph, &a->gaps, &a->hb, err, errlen);
}

static void hold_phases(struct ia_analysis *a)
{
	for (size_t i = 0; i < a->nchains; i++) {
		struct ia_chain *p = &a->chains[i];
		if (!ia_kind_is_phase(p->kind))
			continue;
		for (size_t j = 0; j < a->nchains; j++) {
			const struct ia_chain *s = &a->chains[j];
			if (!ia_kind_is_phase(s->kind) && !ia_kind_is_gpu_work(s->kind) && s->impact >= p->impact &&
			    p->sev > s->sev)
				p->sev = s->sev;
		}
	}
}

/* A Source is the program's own line (issue 39).  Where a finding's calls
 * have none on their stack — a library's loop on a thread the program
 * started, Thread(target=model.generate) with a streamer, no frame of the
 * program's file under it — the line the rule found is a library's: it is
 * said in the timeline, and the Source left empty. */
static void library_sources(struct ia_analysis *a)
{
	for (size_t i = 0; i < a->nchains; i++) {
		struct ia_chain *c = &a->chains[i];
		if (!c->source[0] || !ia_is_library_file(c->source))
			continue;
		ia_chain_line(c, "[HOST] no line of the program's own code is on these calls' stacks (the loop is a "
			      "library's, or runs on a thread started on one): the line is the library's, %s", c->source);
		cJSON_AddStringToObject(c->evidence, "library_line", c->source);
		c->source[0] = 0;
	}
}

int ia_chains_build(struct ia_analysis *a, char *err, size_t errlen)
{
	size_t cap = 0;
	if (a->pp.main < 0)
		return 0;
	ia_knobs_read(a);
	if (ia_rule_gaps(a, &cap) < 0)
		goto oom;
	for (size_t i = 0; i < a->nslow; i++)
		if (ia_rule_slow_calls(a, &cap, &a->slow[i]) < 0)
			goto oom;
	if (ia_rule_pageable(a, &cap) < 0 || ia_rule_sync_per_step(a, &cap) < 0 || ia_rule_sync_frees(a, &cap) < 0 ||
	    ia_rule_hostbound(a, &cap) < 0 || ia_rule_cpu_contention(a, &cap) < 0 || ia_rule_phases(a, &cap) < 0 ||
	    ia_rule_epochs(a, &cap) < 0 || ia_rule_layout(a, &cap) < 0 || ia_rule_after(a, &cap) < 0)
		goto oom;
	hold_phases(a);
	library_sources(a);
	if (a->nchains)
		qsort(a->chains, a->nchains, sizeof *a->chains, ia_chains_order);
	ia_instruments_lead(a);
	ia_knobs_translate(a);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int analyze(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	a->t = t;
	if (!(a->names = ia_stack_names_new(t->db))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct job j = { t, a, 0, "" };
	if (run_beside(do_stats, &j, per_process_and_evidence, err, errlen) < 0)
		return -1;
	ia_phase("stats|per-process+evidence");
	a->local_ranks = a->pp.main >= 0 ? ia_local_ranks(t, t->procs[a->pp.p[a->pp.main].proc].pid) : 1;
	/* the run's phases (start-up, compiling, autotuning) before the gaps,
	 * which set theirs apart; on this thread, which owns the names cache */
	if (ia_phases_compute(t, &a->pp, a->names, &a->ph, err, errlen) < 0)
		return -1;
	ia_phase("phases");
	/* the main process's collectives, before the gaps: a gloo thread's
	 * syncs are the collective's, not a sync of the program's */
	if (a->pp.main_thread != UINT32_MAX &&
	    ia_collective_windows(t, t->threads[a->pp.main_thread].proc, &a->coll, err, errlen) < 0)
		return -1;
	ia_progress_phase("aligning slow calls, finding gaps");
	/* slow calls need the stats' p50s, gaps the per-process roles: both ready now */
	if (run_beside(do_slow, &j, gaps, err, errlen) < 0)
		return -1;
	ia_phase("slow-calls|gaps");
	if (ia_wakers_compute(t, &a->pp, &a->ev, a->names, &a->gaps, &a->wakers, err, errlen) < 0)
		return -1;
	ia_phase("wakers");
	ia_idle_compute(&a->gaps, &a->ph, &a->idle);
	if (ia_figures_compute(t, &a->pp, &a->gaps, &a->ph, &a->idle, &a->coll.gloo, &a->fig) < 0 ||
	    ia_step_times_compute(t, &a->gaps, &a->ph, &a->step_times) < 0 ||
	    ia_step_breakdown_compute(t, &a->gaps, &a->hb, &a->step_times, a->coll.w, a->coll.n, &a->step_parts) < 0 ||
	    (a->pp.main >= 0 && ia_gpu_sharing_compute(t, t->procs[a->pp.p[a->pp.main].proc].pid, &a->ph, a->gaps.win_start,
						       a->gaps.win_end, &a->sharing) < 0)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (a->pp.main >= 0 &&
	    ia_nvtx_compute(t, t->procs[a->pp.p[a->pp.main].proc].pid, &a->gaps, &a->nvtx, err, errlen) < 0)
		return -1;
	a->backward_passes = ia_backward_passes(t, &a->gaps, a->pp.main_thread, &a->step_times);
	if (ia_phases_focus(&a->ph, a->names, a->gaps.win_start, a->gaps.win_end) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ia_phase("idle|figures|steps");
	ia_progress_phase("causal chains");
	if (ia_chains_build(a, err, errlen) < 0)
		return -1;
	ia_phase("chains");
	/* a job of several ranks: across them, and its straggler alone */
	if (ia_job_analyze(t, a, ia_analyze, ia_analysis_free, err, errlen) < 0)
		return -1;
	return ia_stack_names_error(a->names, err, errlen);
}

int ia_analyze(const struct ia_trace *t, struct ia_analysis *a, char *err, size_t errlen)
{
	int rc = analyze(t, a, err, errlen);
	/* a damaged page the check found (IA_LOAD_CHECK_LATE) is the answer,
	 * whatever was computed from it */
	int bad = ia_trace_checked(t, err, errlen) < 0;
	if (t->check)
		ia_phase("page check (waited for)");
	return bad ? -1 : rc;
}

void ia_analysis_free(struct ia_analysis *a)
{
	for (size_t i = 0; i < a->nchains; i++)
		cJSON_Delete(a->chains[i].evidence);
	free(a->chains);
	ia_slow_apis_free(a->slow, a->nslow);
	ia_coll_windows_free(&a->coll);
	ia_gaps_free(&a->gaps);
	ia_nvtx_free(&a->nvtx);
	ia_step_times_free(&a->step_times);
	ia_step_breakdown_free(&a->step_parts);
	ia_phases_free(&a->ph);
	ia_hostbound_free(&a->hb);
	ia_evidence_free(&a->ev);
	ia_per_process_free(&a->pp);
	ia_stats_free(&a->stats);
	ia_stack_names_free(a->names);
	ia_job_free(a->job);
	memset(a, 0, sizeof *a);
}
