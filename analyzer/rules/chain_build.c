/*
 * chain_build.c — helpers every rule file writes chains with (see
 * chain_build.h).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum ia_severity ia_by_share(double s, double hi, double med, double low)
{
	return s >= hi ? IA_SEV_HIGH : s >= med ? IA_SEV_MEDIUM : s >= low ? IA_SEV_LOW : IA_SEV_NONE;
}

void ia_addf(char *buf, size_t len, const char *fmt, ...)
{
	size_t l = strlen(buf);
	if (l + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, len - l, fmt, ap);
	va_end(ap);
}

void ia_chain_fix(struct ia_chain *c, const char *fmt, ...)
{
	if (c->nfixes == IA_CHAIN_MAX_LINES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->fixes[c->nfixes++], sizeof c->fixes[0], fmt, ap);
	va_end(ap);
}

void ia_chain_fix_move(struct ia_chain *c, int from, int to)
{
	if (from < 0 || to < 0 || from >= c->nfixes || to >= c->nfixes || from == to)
		return;
	char moved[sizeof c->fixes[0]];
	memcpy(moved, c->fixes[from], sizeof moved);
	if (from > to)
		memmove(c->fixes[to + 1], c->fixes[to], (size_t)(from - to) * sizeof c->fixes[0]);
	else
		memmove(c->fixes[from], c->fixes[from + 1], (size_t)(to - from) * sizeof c->fixes[0]);
	memcpy(c->fixes[to], moved, sizeof moved);
}

void ia_chain_line(struct ia_chain *c, const char *fmt, ...)
{
	if (c->ntimeline == IA_CHAIN_MAX_TIMELINE)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->timeline[c->ntimeline++], sizeof c->timeline[0], fmt, ap);
	va_end(ap);
}

struct ia_chain *ia_chain_new(struct ia_analysis *a, size_t *cap, enum ia_kind kind)
{
	if (ia_grow((void **)&a->chains, cap, a->nchains + 1, sizeof *a->chains) < 0)
		return NULL;
	struct ia_chain *c = &a->chains[a->nchains++];
	memset(c, 0, sizeof *c);
	c->kind = kind;
	c->evidence = cJSON_CreateObject();
	return c;
}

double ia_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

int ia_sync_line_explicit(const struct ia_gap_line *l)
{
	return strstr(l->inner, "synchronize (") && strstr(l->inner, "torch/cuda/");
}

int ia_steps_found(const struct ia_analysis *a)
{
	return a->step_times.n || a->ph.steps.ns;
}

double ia_steady_steps(const struct ia_analysis *a)
{
	if (a->step_times.n)
		return (double)a->step_times.n;
	if (a->ph.steps.ns)
		return (double)a->idle.steady_ns / (double)a->ph.steps.ns;
	return (double)a->gaps.n;
}

int ia_machine_cpus(const struct ia_analysis *a)
{
	return a->t->cpus > 0 ? a->t->cpus : a->ev.ncpus;
}

int ia_cpus_of(const struct ia_analysis *a)
{
	int m = ia_machine_cpus(a);
	int lim = a->t->cpu_limit > 0 ? (int)ceil(a->t->cpu_limit) : 0;
	return lim > 0 && (lim < m || m <= 0) ? lim : m;
}

void ia_pin_fix(struct ia_chain *c, const struct ia_analysis *a)
{
	/* the DataLoader is named only where there is one (its workers) */
	if (a->pp.nworkers)
		ia_chain_fix(c, "pin_memory=True in the DataLoader (or tensor.pin_memory()) and .to('cuda', non_blocking=True)");
	else
		ia_chain_fix(c, "Copy from pinned host memory (tensor.pin_memory(), or allocate with pin_memory=True once "
				"and reuse it) with .to('cuda', non_blocking=True)");
}

/* The CPUs a rank may count on: its share where ranks share the machine. */
static int rank_cpus(const struct ia_analysis *a)
{
	int c = ia_cpus_of(a);
	return a->local_ranks > 1 && c > 0 ? (c + a->local_ranks - 1) / a->local_ranks : c;
}

int ia_good_workers(const struct ia_analysis *a)
{
	int c = rank_cpus(a);
	return c > 1 ? c - 1 : 1;
}

int ia_workers_crowd_cpus(const struct ia_analysis *a)
{
	int c = rank_cpus(a);
	return c > 0 && (int)a->pp.workers_at_once > c - 1;
}

const char *ia_cpu_limit_text(const struct ia_analysis *a, char *buf, size_t n)
{
	const struct ia_trace *t = a->t;
	char d[32], n1[32], n2[32];
	buf[0] = 0;
	if (!(t->cpu_limit > 0))
		return buf;
	snprintf(buf, n, "its cgroup's CPU quota allows the job %.2f of the %d CPUs (%s)", t->cpu_limit,
		 ia_machine_cpus(a), ia_session(t, "cpu_limit_source") ? ia_session(t, "cpu_limit_source") : "cgroup");
	if (t->cpu_limit_periods) {
		size_t l = strlen(buf);
		snprintf(buf + l, n - l, "; throttled in %s of %s periods while traced (%s of its threads' time held back, over all CPUs)",
			 ia_fmt_count(n1, sizeof n1, t->cpu_limit_throttled_periods),
			 ia_fmt_count(n2, sizeof n2, t->cpu_limit_periods), ia_fmt_dur(d, sizeof d, t->cpu_limit_throttled_ns));
	}
	return buf;
}

int ia_cpu_quota_throttled(const struct ia_analysis *a)
{
	return a->t->cpu_limit > 0 && a->t->cpu_limit_throttled_periods > 0;
}

int ia_cpu_quota_held_back(const struct ia_analysis *a, int others, uint64_t runq_ns)
{
	return ia_cpu_quota_throttled(a) && (!others || a->t->cpu_limit_throttled_ns * 2 >= runq_ns);
}

void ia_cpu_quota_cause(struct ia_chain *c, const struct ia_analysis *a)
{
	char n1[32], n2[32];
	ia_addf(c->root_cause, sizeof c->root_cause, " The job ran under a CPU quota of %.2f CPUs (its cgroup's), which "
		"throttled it in %s of %s periods", a->t->cpu_limit, ia_fmt_count(n1, sizeof n1, a->t->cpu_limit_throttled_periods),
		ia_fmt_count(n2, sizeof n2, a->t->cpu_limit_periods));
}

void ia_cpu_quota_fix(struct ia_chain *c)
{
	ia_chain_fix(c, "Raise the job's CPU limit to what it uses (the cgroup's cpu.max; Kubernetes resources.limits.cpu, "
			"docker --cpus), or use fewer threads at once (num_workers, torch.set_num_threads): every thread's "
			"CPU time counts against the quota, and when a period's share is spent the training loop stops with "
			"the rest");
}

void ia_chain_drop(struct ia_analysis *a, size_t k)
{
	cJSON_Delete(a->chains[k].evidence);
	memmove(&a->chains[k], &a->chains[k + 1], (a->nchains - k - 1) * sizeof *a->chains);
	a->nchains--;
}

void ia_chain_fold_slow(struct ia_analysis *a, size_t self, const char *tail_cause, int (*api_ok)(unsigned api),
			const char *these)
{
	static const char *const keep[] = { "count", "p50_ns", "p99_ns", "max_ns", "slow_threshold_ns", "slow_calls",
					    "slow_ns", "excess_ns" };
	for (size_t k = 0; k < a->nchains;) {
		struct ia_chain *q = &a->chains[k];
		const cJSON *tc = cJSON_GetObjectItemCaseSensitive(q->evidence, "tail_cause");
		if (q->kind != IA_KIND_SLOW_CALLS || !cJSON_IsString(tc) || strcmp(tc->valuestring, tail_cause) ||
		    (api_ok && !api_ok(q->api))) {
			k++;
			continue;
		}
		struct ia_chain *c = &a->chains[self];
		for (int i = 0; i < q->ntimeline; i++)
			if (!strncmp(q->timeline[i], "[CUDA] ", 7))
				ia_chain_line(c, "%s: most of them %s", q->timeline[i], these);
		if (q->sev > c->sev)
			c->sev = q->sev;
		cJSON *tails = cJSON_GetObjectItemCaseSensitive(c->evidence, "slow_calls");
		if (!tails)
			tails = cJSON_AddArrayToObject(c->evidence, "slow_calls");
		cJSON *o = cJSON_CreateObject();
		ia_json_str(o, "api", ia_api_name(a->t, q->api));
		for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
			cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(q->evidence, keep[i]);
			if (v)
				cJSON_AddItemToObject(o, keep[i], v);
		}
		cJSON_AddItemToArray(tails, o);
		ia_chain_drop(a, k);
		if (k < self)
			self--;
	}
}
