/*
 * chain_straggler.c — the rank the others wait for, and why it is late
 * (chain_straggler.h).
 *
 * The figures come from measure/collectives.c (when each rank arrived at
 * each collective); the straggler's cause from the one analysis every
 * trace gets, run on the straggler's subtree alone: its process and its
 * children (DataLoader workers) loaded as `-p PID` loads them, and
 * ia_analyze over that — the rule that names its DataLoader workers, its
 * contention or its host-bound loop is the same as for a job of one rank.
 */
#include "rules/chain_straggler.h"

#include "base/json_out.h"
#include "base/util.h"
#include "rules/chain_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

static uint64_t span_of(const struct ia_coll_rank *r)
{
	return r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

const char *ia_job_others(const struct ia_job *j, int skip, char *buf, size_t n)
{
	/* in rank order, runs of three or more consecutive ranks as a range: "ranks 0-2, 4" */
	int v[64];
	size_t m = 0, o = 0;
	for (size_t k = 0; k < j->coll.nranks && m < 64; k++)
		if ((int)k != skip)
			v[m++] = j->coll.r[k].rank;
	o += (size_t)snprintf(buf, n, "%s", m == 1 ? "rank " : "ranks ");
	for (size_t i = 0; i < m && o < n;) {
		size_t e = i;
		while (e + 1 < m && v[e + 1] == v[e] + 1)
			e++;
		const char *sep = i ? ", " : "";
		if (e == i)
			o += (size_t)snprintf(buf + o, n - o, "%s%d", sep, v[i]);
		else if (e == i + 1)
			o += (size_t)snprintf(buf + o, n - o, "%s%d, %d", sep, v[i], v[e]);
		else
			o += (size_t)snprintf(buf + o, n - o, "%s%d-%d", sep, v[i], v[e]);
		i = e + 1;
	}
	return buf;
}

/* The straggler's program against the others': per collective, host-to-device bytes and launches. */
static void data_ratio(struct ia_job *j)
{
	const struct ia_collectives *c = &j->coll;
	double b[64], l[64];
	size_t n = 0;
	for (size_t k = 0; k < c->nranks && n < 64; k++) {
		if ((int)k == j->straggler)
			continue;
		b[n] = (double)c->r[k].h2d_bytes;
		l[n++] = (double)c->r[k].launches;
	}
	if (!n)
		return;
	qsort(b, n, sizeof *b, cmp_double);
	qsort(l, n, sizeof *l, cmp_double);
	const struct ia_coll_rank *s = &c->r[j->straggler];
	j->bytes_ratio = b[n / 2] > 0 ? (double)s->h2d_bytes / b[n / 2] : 0;
	j->launch_ratio = l[n / 2] > 0 ? (double)s->launches / l[n / 2] : 0;
	j->data_imbalance = j->bytes_ratio > IA_STRAGGLER_DATA_RATIO || j->launch_ratio > IA_STRAGGLER_DATA_RATIO;
}

void ia_job_find_straggler(struct ia_job *j)
{
	const struct ia_collectives *c = &j->coll;
	j->straggler = j->suspect = -1;
	if (!c->n)
		return;
	/* the rank the others wait for most (by count when nobody imposed any) */
	size_t best = 0;
	for (size_t k = 1; k < c->nranks; k++)
		if (c->r[k].imposed_ns > c->r[best].imposed_ns ||
		    (c->r[k].imposed_ns == c->r[best].imposed_ns && c->r[k].last_count > c->r[best].last_count))
			best = k;
	uint64_t wait = 0, others = 0;
	double sh = 0;
	for (size_t k = 0; k < c->nranks; k++) {
		if (k == best)
			continue;
		sh += share(c->r[k].wait_ns, span_of(&c->r[k]));
		wait += c->r[k].wait_ns;
		others++;
	}
	j->others_wait_share = others ? sh / (double)others : 0;
	j->others_wait_ns = others ? wait / others : 0;
	j->last_share = share(c->r[best].last_count, c->n);
	j->imposed_share = share(c->r[best].imposed_ns, c->imposed_ns);
	j->late_mean_ns = c->r[best].last_count ? c->r[best].late_ns / c->r[best].last_count : 0;
	/* Beyond chance, either way (chain_straggler.h): last at more of the
	 * collectives than 1/N each allows, binomially, by three standard
	 * deviations; or the cause of more of the others' waiting than 1/N of
	 * it allows — the same test weighted by each collective's wait, on its
	 * effective count (Σx)²/Σx², so that one long wait proves little while
	 * many late arrivals still prove it when a loaded machine makes another
	 * rank last, by a hair, at some collectives. */
	double p = 1.0 / (double)c->nranks, n = (double)c->n;
	double z_count = ((double)c->r[best].last_count - n * p) / sqrt(n * p * (1 - p));
	double sd_w = c->imposed_ns ? sqrt(p * (1 - p) * c->imposed_sq) / (double)c->imposed_ns : 0;
	double z_wait = sd_w > 0 ? (j->imposed_share - p) / sd_w : 0;
	int count_ok = j->last_share >= IA_STRAGGLER_LAST_SHARE, wait_ok = j->imposed_share >= IA_STRAGGLER_LAST_SHARE;
	if (c->r[best].last_count < IA_STRAGGLER_MIN_LAST || j->others_wait_share < IA_STRAGGLER_WAIT_LOW)
		return;
	if ((count_ok && z_count >= 3) || (wait_ok && z_wait >= 3)) {
		j->straggler = (int)best;
		data_ratio(j);
	} else if (wait_ok && (z_count >= 2 || z_wait >= 2)) {
		j->suspect = (int)best;   /* suggestive (two standard deviations), not proven */
	}
}

void ia_job_balance_sentence(const struct ia_job *j, char *buf, size_t n)
{
	const struct ia_collectives *c = &j->coll;
	if (j->suspect >= 0) {
		const struct ia_coll_rank *s = &c->r[j->suspect];
		snprintf(buf, n,
			 "No rank is the straggler beyond chance over these %zu %s, but rank %d came last at %llu of them and "
			 "caused %.0f%% of the others' waiting there (they waited %.0f%% of their time): trace more steps "
			 "to tell.",
			 c->n, c->op, s->rank, (unsigned long long)s->last_count, 100 * j->imposed_share,
			 100 * j->others_wait_share);
		return;
	}
	size_t most = 0;
	for (size_t k = 1; k < c->nranks; k++)
		if (c->r[k].last_count > c->r[most].last_count)
			most = k;
	snprintf(buf, n,
		 "The ranks are balanced: no rank arrives last at the %s more often than chance would make it, nor causes "
		 "more of the others' waiting (most often last: rank %d, at %.0f%% of %zu); the others waited %.0f%% of "
		 "their time for it.",
		 c->op, c->r[most].rank, 100 * share(c->r[most].last_count, c->n), c->n, 100 * j->others_wait_share);
}

/* Its cause in its own analysis (chain_straggler.h, struct ia_job). */
static void own_cause(struct ia_job *j)
{
	const struct ia_analysis *a = &j->sub_a;
	const struct ia_chain *any = NULL;
	for (size_t i = 0; i < a->nchains; i++) {
		const struct ia_chain *c = &a->chains[i];
		if (c->kind == IA_KIND_STARTUP || c->kind == IA_KIND_COMPILATION || c->kind == IA_KIND_AUTOTUNING ||
		    c->kind == IA_KIND_AFTER_GPU_WORK)
			continue;   /* paid once, not why it comes last at every collective */
		if (c->sev >= IA_SEV_MEDIUM) {
			j->cause = c;
			return;
		}
		if (!any)
			any = c;
	}
	if (a->step_parts.n && !strcmp(a->step_parts.cls, "device-bound"))   /* (the breakdown's class: step_breakdown.c) */
		j->cause_device = 1;
	else
		j->cause = any;
}

const char *ia_job_cause_summary(const struct ia_job *j, char *buf, size_t n)
{
	if (j->cause)
		snprintf(buf, n, "%s", j->cause->summary);
	else if (j->cause_device) {
		char d1[32], d2[32];
		const struct ia_analysis *a = &j->sub_a;
		snprintf(buf, n, "its steps are device-bound: its GPU had work %.0f%% of each step (median %s of a %s "
			 "step)", a->step_parts.share_pct[IA_STEP_DEVICE],
			 ia_fmt_dur(d1, sizeof d1, a->step_parts.p50_ns[IA_STEP_DEVICE]),
			 ia_fmt_dur(d2, sizeof d2, a->step_times.p50));
	} else
		snprintf(buf, n, "no finding passed its threshold");
	return buf;
}

/* The straggler's subtree, loaded as -p loads it, and its own analysis. */
static int analyze_alone(const struct ia_trace *t, struct ia_job *j, ia_analyze_fn analyze, char *err, size_t errlen)
{
	const struct ia_coll_rank *s = &j->coll.r[j->straggler];
	struct ia_filter f = t->filter;   /* (its node's trace: t for one node) */
	f.pid = s->trace->procs[s->proc].pid;
	if (ia_trace_load(&j->sub, s->trace->db, &f, IA_LOAD_ALL, err, errlen) < 0) {
		ia_trace_free(&j->sub);
		return -1;
	}
	j->has_sub = 1;
	if (analyze(&j->sub, &j->sub_a, err, errlen) < 0)
		return -1;
	/* the other ranks on its GPU are outside its subtree: in its node's trace */
	const struct ia_analysis *sa = &j->sub_a;
	if (ia_gpu_sharing_compute(s->trace, f.pid, &sa->ph, sa->gaps.win_start, sa->gaps.win_end, &j->sub_a.sharing) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	own_cause(j);
	return 0;
}

static void build_chain(const struct ia_trace *t, struct ia_job *j)
{
	const struct ia_collectives *c = &j->coll;
	const struct ia_coll_rank *s = &c->r[j->straggler];
	int pid = s->trace->procs[s->proc].pid;
	(void)t;
	struct ia_chain *ch = &j->chain;
	char others[160], d1[32], d2[32];
	memset(ch, 0, sizeof *ch);
	ch->kind = IA_KIND_RANK_STRAGGLER;
	ch->impact = j->others_wait_share;
	ch->cost_ns = j->others_wait_ns;
	ch->sev = j->others_wait_share >= IA_STRAGGLER_WAIT_HIGH     ? IA_SEV_HIGH
		  : j->others_wait_share >= IA_STRAGGLER_WAIT_MEDIUM ? IA_SEV_MEDIUM
								     : IA_SEV_LOW;
	ia_job_others(j, j->straggler, others, sizeof others);
	snprintf(ch->summary, sizeof ch->summary,
		 "rank %d arrives last at %.0f%% of %zu %s calls (%s after the others' median, on average); %s wait%s "
		 "%.0f%% of %s time for it",
		 s->rank, 100 * j->last_share, c->n, c->op, ia_fmt_dur(d1, sizeof d1, j->late_mean_ns), others,
		 c->nranks == 2 ? "s" : "", 100 * j->others_wait_share, c->nranks == 2 ? "its" : "their");
	const struct ia_chain *cause = j->cause;
	char why[400];
	ia_job_cause_summary(j, why, sizeof why);
	ia_addf(ch->root_cause, sizeof ch->root_cause,
		"The ranks meet at every %s, so the job runs at the pace of its slowest rank: rank %d (pid %d) reaches them "
		"last and the others wait for it there.",
		c->op, s->rank, pid);
	if (c->source == IA_COLL_GLOO)
		ia_addf(ch->root_cause, sizeof ch->root_cause,
			" (gloo: each all-reduce timed by the thread that runs it, ProcessGroupGloo's, from the sync on its "
			"copy to the host until its copy back.)");
	if (cause)
		ia_addf(ch->root_cause, sizeof ch->root_cause, " Rank %d on its own (ingero-analyze explain -p %d): [%s] %s.",
			s->rank, pid, ia_severity_name(cause->sev), why);
	else if (j->cause_device)
		ia_addf(ch->root_cause, sizeof ch->root_cause,
			" Rank %d on its own (ingero-analyze explain -p %d): %s: it has more GPU work a step than the others, "
			"or its GPU runs it slower.", s->rank, pid, why);
	else
		ia_addf(ch->root_cause, sizeof ch->root_cause, " Rank %d on its own (ingero-analyze explain -p %d): %s.",
			s->rank, pid, why);
	if (j->data_imbalance)
		ia_addf(ch->root_cause, sizeof ch->root_cause,
			" Its program also queues more work per collective than the others' (%.1fx their host-to-device bytes, "
			"%.1fx their kernel launches): the imbalance is in the data (uneven batches or sequence lengths).",
			j->bytes_ratio, j->launch_ratio);
	ia_chain_line(ch,
		      "[RANKS] %zu ranks, %zu %s calls matched across all of them (%s); rank %d came last at %llu of them "
		      "and caused %.0f%% of the others' waiting there",
		      c->nranks, c->n, c->op, ia_coll_source_name(c->source), s->rank, (unsigned long long)s->last_count,
		      100 * j->imposed_share);
	if (j->ranks.inferred)
		ia_chain_line(ch, "[RANKS] no RANK variables (as under torch.multiprocessing.spawn): the ranks are the processes "
			      "that drive the GPU and meet at the collectives, numbered by %s", j->ranks.inferred);
	char w[400] = "[WAIT] ";
	for (size_t k = 0; k < c->nranks; k++)
		ia_addf(w, sizeof w, "%srank %d %s (%.0f%%)", k ? ", " : "", c->r[k].rank,
			ia_fmt_dur(d2, sizeof d2, c->r[k].wait_ns), 100 * share(c->r[k].wait_ns, span_of(&c->r[k])));
	ia_chain_line(ch, "%s", w);
	if (cause)
		ia_chain_line(ch, "[CAUSE] rank %d: %s — %s", s->rank, ia_kind_name(cause->kind), why);
	else if (j->cause_device)
		ia_chain_line(ch, "[CAUSE] rank %d: %s", s->rank, why);
	for (int i = 0; cause && i < cause->nfixes && ch->nfixes < IA_CHAIN_MAX_LINES - 2; i++)
		ia_chain_fix(ch, "Rank %d: %s", s->rank, cause->fixes[i]);
	if (j->data_imbalance)
		ia_chain_fix(ch, "Give every rank the same work a step: shard by size (bucket or sort by sequence length, "
				 "equal-sized shards, drop_last=True)");
	else if (j->cause_device)
		ia_chain_fix(ch, "Rank %d: its GPU takes longer a step for the same work: check that GPU (clocks and "
			     "throttling: nvidia-smi -q -d PERFORMANCE; another process on it) and whether its batches hold "
			     "more work than their size shows (longer sequences, more objects)", s->rank);
	ia_chain_fix(ch, "Rank %d alone: ingero-analyze explain -p %d", s->rank, pid);
	if (cause && cause->source[0])
		snprintf(ch->source, sizeof ch->source, "%s", cause->source);
	ch->evidence = cJSON_CreateObject();
	cJSON_AddNumberToObject(ch->evidence, "straggler_rank", s->rank);
	cJSON_AddNumberToObject(ch->evidence, "straggler_pid", pid);
	ia_json_round(ch->evidence, "last_share", j->last_share, 4);
	ia_json_u64(ch->evidence, "late_mean_ns", j->late_mean_ns);
	ia_json_round(ch->evidence, "others_wait_share", j->others_wait_share, 4);
	ia_json_u64(ch->evidence, "collectives", c->n);
	cJSON_AddStringToObject(ch->evidence, "source", ia_coll_source_name(c->source));
	if (cause || j->cause_device)
		cJSON_AddStringToObject(ch->evidence, "cause_kind", cause ? ia_kind_name(cause->kind) : "device_bound");
	j->has_chain = 1;
}

int ia_job_analyze(const struct ia_trace *t, struct ia_analysis *a, ia_analyze_fn analyze, ia_analysis_free_fn release,
		   char *err, size_t errlen)
{
	if (t->filter.pid)   /* a process's own view (and the straggler's analysis itself) */
		return 0;
	struct ia_job *j = calloc(1, sizeof *j);
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	j->straggler = -1;
	j->free_sub = release;
	j->nnodes = 1;
	if (ia_ranks_compute(t, &j->ranks, err, errlen) < 0) {
		free(j);
		return -1;
	}
	if (j->ranks.nranks < 2) {
		ia_ranks_free(&j->ranks);
		free(j);
		return 0;
	}
	a->job = j;
	if (ia_collectives_compute(t, &j->ranks, &j->coll, err, errlen) < 0)
		return -1;
	ia_job_find_straggler(j);
	if (j->straggler < 0)
		return 0;
	if (analyze_alone(t, j, analyze, err, errlen) < 0)
		return -1;
	build_chain(t, j);
	return 0;
}

int ia_job_analyze_nodes(const struct ia_coll_node *nodes, size_t nn, ia_analyze_fn analyze, ia_analysis_free_fn release,
			 struct ia_job **out, char *err, size_t errlen)
{
	struct ia_job *j = calloc(1, sizeof *j);
	*out = j;
	if (!j || !(j->fit = calloc(nn, sizeof *j->fit))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	j->straggler = -1;
	j->free_sub = release;
	j->nnodes = nn;
	/* the job's header (world size, run id, agent) as node 0 has it */
	if (ia_ranks_compute(nodes[0].t, &j->ranks, err, errlen) < 0 ||
	    ia_collectives_compute_nodes(nodes, nn, &j->coll, j->fit, err, errlen) < 0)
		return -1;
	ia_job_find_straggler(j);
	if (j->straggler < 0 || !analyze)
		return 0;
	if (analyze_alone(nodes[0].t, j, analyze, err, errlen) < 0)
		return -1;
	build_chain(nodes[0].t, j);
	return 0;
}

void ia_job_free(struct ia_job *j)
{
	if (!j)
		return;
	free(j->fit);
	if (j->has_sub) {
		j->free_sub(&j->sub_a);
		ia_trace_free(&j->sub);
	}
	cJSON_Delete(j->chain.evidence);
	ia_collectives_free(&j->coll);
	ia_ranks_free(&j->ranks);
	free(j);
}

cJSON *ia_job_json(const struct ia_trace *t, const struct ia_job *j)
{
	const struct ia_collectives *c = &j->coll;
	cJSON *o = ia_ranks_json(t, &j->ranks);
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "collectives_source", ia_coll_source_name(c->source));
	ia_json_str(o, "collective", c->n ? c->op : NULL);
	ia_json_u64(o, "collectives", c->n);
	ia_json_u64(o, "ties", c->ntied);
	cJSON *arr = cJSON_AddArrayToObject(o, "arrivals");
	for (size_t k = 0; k < c->nranks; k++) {
		const struct ia_coll_rank *r = &c->r[k];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "rank", r->rank);
		cJSON_AddNumberToObject(x, "pid", r->trace->procs[r->proc].pid);
		if (j->nnodes > 1)
			cJSON_AddNumberToObject(x, "node", r->node);
		ia_json_u64(x, "last", r->last_count);
		ia_json_round(x, "last_share", share(r->last_count, c->n), 4);
		ia_json_u64(x, "late_mean_ns", r->last_count ? r->late_ns / r->last_count : 0);
		ia_json_u64(x, "imposed_wait_ns", r->imposed_ns);
		ia_json_u64(x, "wait_ns", r->wait_ns);
		ia_json_round(x, "wait_share", share(r->wait_ns, span_of(r)), 4);
		ia_json_u64(x, "span_ns", span_of(r));
		ia_json_u64(x, "h2d_bytes", r->h2d_bytes);
		ia_json_u64(x, "launches", r->launches);
		cJSON_AddItemToArray(arr, x);
	}
	if (c->comm_nranks)
		cJSON_AddNumberToObject(o, "communicator_ranks", c->comm_nranks);
	/* (not balanced when ranks of the communicator are missing from the traces) */
	cJSON_AddBoolToObject(o, "balanced",
			      c->n && j->straggler < 0 && j->suspect < 0 && c->comm_nranks <= (int)c->nranks);
	if (j->suspect >= 0)
		cJSON_AddNumberToObject(o, "suspect", c->r[j->suspect].rank);
	else
		cJSON_AddNullToObject(o, "suspect");
	if (j->straggler < 0) {
		cJSON_AddNullToObject(o, "straggler");
		return o;
	}
	const struct ia_coll_rank *s = &c->r[j->straggler];
	cJSON *st = cJSON_AddObjectToObject(o, "straggler");
	cJSON_AddNumberToObject(st, "rank", s->rank);
	cJSON_AddNumberToObject(st, "pid", s->trace->procs[s->proc].pid);
	if (j->nnodes > 1)
		cJSON_AddNumberToObject(st, "node", s->node);
	ia_json_round(st, "last_share", j->last_share, 4);
	ia_json_u64(st, "late_mean_ns", j->late_mean_ns);
	ia_json_u64(st, "others_wait_ns", j->others_wait_ns);
	ia_json_round(st, "others_wait_share", j->others_wait_share, 4);
	cJSON_AddBoolToObject(st, "data_imbalance", j->data_imbalance);
	ia_json_round(st, "bytes_ratio", j->bytes_ratio, 3);
	ia_json_round(st, "launch_ratio", j->launch_ratio, 3);
	const struct ia_chain *cause = j->cause;
	if (cause) {
		cJSON *cj = cJSON_AddObjectToObject(st, "cause");
		cJSON_AddStringToObject(cj, "kind", ia_kind_name(cause->kind));
		cJSON_AddStringToObject(cj, "severity", ia_severity_name(cause->sev));
		cJSON_AddStringToObject(cj, "summary", cause->summary);
		ia_json_str(cj, "source", cause->source[0] ? cause->source : NULL);
	} else if (j->cause_device) {   /* no finding: its steps (step_breakdown) */
		char why[400];
		cJSON *cj = cJSON_AddObjectToObject(st, "cause");
		cJSON_AddStringToObject(cj, "kind", "device_bound");
		cJSON_AddNullToObject(cj, "severity");
		cJSON_AddStringToObject(cj, "summary", ia_job_cause_summary(j, why, sizeof why));
		cJSON_AddNullToObject(cj, "source");
	} else {
		cJSON_AddNullToObject(st, "cause");
	}
	return o;
}
