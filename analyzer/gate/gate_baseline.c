/*
 * gate_baseline.c — the gate's baseline file: JSON in, JSON out, and the
 * merge of several runs into one baseline (see gate_baseline.h and the
 * format in gate_summary.h).
 *
 * A run's figures are read and written through one table (run_fields):
 * the name of each number, the object it sits in ("steady", "phases",
 * "facts") and its place in struct ia_gate_run, so the reader and the
 * writer cannot disagree.  Figures are written at full precision (cJSON's
 * round-trip printing): a baseline judges exactly like the report.db it
 * was saved from.  Every number must be finite and not negative, every
 * per-run array as long as the runs: a hand-edited or truncated file is
 * refused with the field named, never half-read.
 */
#include "gate/gate_baseline.h"
#include "gate/gate_stats.h"
#include "base/json_out.h"
#include "base/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_FIELD(obj, f) { obj, #f, offsetof(struct ia_gate_run, f) }
static const struct run_field {
	const char *obj, *name;
	size_t off;
} run_fields[] = {
	RUN_FIELD("steady", steady_s), RUN_FIELD("steady", step_calls), RUN_FIELD("steady", step_launches),
	RUN_FIELD("steady", step_s), RUN_FIELD("steady", steps), RUN_FIELD("steady", steps_per_s),
	RUN_FIELD("steady", steps_per_s_se), RUN_FIELD("steady", calls_per_s), RUN_FIELD("steady", calls_per_s_se),
	RUN_FIELD("steady", idle_low), RUN_FIELD("steady", idle_high), RUN_FIELD("steady", idle_low_se),
	RUN_FIELD("steady", idle_est), RUN_FIELD("steady", idle_est_se),
	RUN_FIELD("phases", startup_s), RUN_FIELD("phases", compilation_s), RUN_FIELD("phases", autotuning_s),
	RUN_FIELD("phases", epochs_s),
	RUN_FIELD("facts", workers), RUN_FIELD("facts", main_cpu_ms), RUN_FIELD("facts", workers_cpu_ms),
	RUN_FIELD("facts", syncs), RUN_FIELD("facts", h2d_pinned_mb), RUN_FIELD("facts", h2d_pageable_mb),
};
#define NRUN_FIELDS (sizeof run_fields / sizeof run_fields[0])

static double *run_num(struct ia_gate_run *r, size_t i)
{
	return (double *)((char *)r + run_fields[i].off);
}

static int cmp_api_name(const void *a, const void *b)
{
	return strcmp(((const struct ia_gate_api *)a)->name, ((const struct ia_gate_api *)b)->name);
}

static int sev_rank(const char *s)
{
	return !s ? 0 : !strcmp(s, "HIGH") ? 3 : !strcmp(s, "MEDIUM") ? 2 : !strcmp(s, "LOW") ? 1 : 0;
}

/* --- reading -------------------------------------------------------------------------- */

static char *json_strdup(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? strdup(v->valuestring) : NULL;
}

static int json_double(const cJSON *v, double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 1e15)
		return -1;
	*out = v->valuedouble;
	return 0;
}

static int json_u64(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9.2e18))
		return -1;
	*out = (uint64_t)llround(v->valuedouble);
	return 0;
}

/* An array of exactly n numbers (u64 when u, else doubles) into a new array. */
static int json_array(const cJSON *o, const char *key, size_t n, int u, void **out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != n)
		return -1;
	void *p = calloc(n ? n : 1, u ? sizeof(uint64_t) : sizeof(double));
	if (!p)
		return -1;
	size_t i = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, arr) {
		double d;
		if (json_double(v, &d) < 0) {
			free(p);
			return -1;
		}
		if (u)
			((uint64_t *)p)[i++] = (uint64_t)llround(d);
		else
			((double *)p)[i++] = d;
	}
	*out = p;
	return 0;
}

static const char *read_run(struct ia_gate_run *r, const cJSON *o)
{
	if (!cJSON_IsObject(o))
		return "an entry of runs";
	r->source = json_strdup(o, "source");
	r->command = json_strdup(o, "command");
	if (!r->source)
		return "source";
	if (json_double(cJSON_GetObjectItemCaseSensitive(o, "window_s"), &r->window_s) < 0)
		return "window_s";
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "steady");
	r->steady = cJSON_IsObject(st);
	if (!r->steady && !cJSON_IsNull(st))
		return "steady";
	for (size_t i = 0; i < NRUN_FIELDS; i++) {
		const cJSON *obj = cJSON_GetObjectItemCaseSensitive(o, run_fields[i].obj);
		if (!strcmp(run_fields[i].obj, "steady") && !r->steady)
			continue;
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, run_fields[i].name);
		if (!strcmp(run_fields[i].name, "idle_est") && cJSON_IsNull(v))
			continue;   /* no estimate in that run */
		if (json_double(v, run_num(r, i)) < 0)
			return run_fields[i].name;
	}
	if (r->steady) {
		const cJSON *est = cJSON_GetObjectItemCaseSensitive(st, "idle_est");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "idle_measured");
		uint64_t b;
		r->idle_has_est = cJSON_IsNumber(est);
		if (!cJSON_IsBool(m))
			return "idle_measured";
		r->idle_measured = cJSON_IsTrue(m);
		if (json_u64(st, "blocks", &b) < 0 || b > 1000000)
			return "blocks";
		r->blocks = (unsigned)b;
	}
	return NULL;
}

static const char *read_api(struct ia_gate_api *g, const cJSON *a, size_t nruns, size_t max_samples)
{
	g->name = json_strdup(a, "api");
	if (!g->name || json_u64(a, "count", &g->count) < 0 || json_u64(a, "p50_ns", &g->p50_ns) < 0 ||
	    json_u64(a, "p99_ns", &g->p99_ns) < 0 || json_u64(a, "max_ns", &g->max_ns) < 0)
		return "an entry of apis";
	if (json_array(a, "runs_p50_ns", nruns, 1, (void **)&g->run_p50) < 0)
		return "runs_p50_ns";
	if (json_array(a, "runs_p99_ns", nruns, 1, (void **)&g->run_p99) < 0)
		return "runs_p99_ns";
	const cJSON *smp = cJSON_GetObjectItemCaseSensitive(a, "samples_ns");
	if (!cJSON_IsArray(smp))
		return "samples_ns";
	size_t n = (size_t)cJSON_GetArraySize(smp);
	g->samples = malloc((n ? n : 1) * sizeof *g->samples);
	if (!g->samples)
		return "samples_ns (out of memory)";
	const cJSON *v;
	cJSON_ArrayForEach(v, smp) {
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9.2e18))
			return "samples_ns";
		g->samples[g->nsamples++] = (uint64_t)llround(v->valuedouble);
	}
	/* A hand-edited file may be unsorted; the statistics need order. */
	qsort(g->samples, g->nsamples, sizeof *g->samples, ia_cmp_u64);
	g->nsamples = ia_gate_decimate(g->samples, g->nsamples, max_samples);
	return NULL;
}

static const char *read_chain(struct ia_gate_chain *g, const cJSON *c, size_t nruns)
{
	g->severity = json_strdup(c, "severity");
	g->key = json_strdup(c, "key");
	g->label = json_strdup(c, "label");   /* optional: the key names it otherwise */
	g->api = json_strdup(c, "api");
	g->summary = json_strdup(c, "summary");
	g->cause = json_strdup(c, "cause");
	if (!g->severity || !g->key)
		return "an entry of chains";
	const cJSON *ph = cJSON_GetObjectItemCaseSensitive(c, "phase");
	uint64_t h;
	if (!cJSON_IsBool(ph))
		return "phase";
	g->phase = cJSON_IsTrue(ph);
	if (json_u64(c, "high_runs", &h) < 0 || h > nruns)
		return "high_runs";
	g->high_runs = (unsigned)h;
	if (json_array(c, "costs_pct", nruns, 0, (void **)&g->cost_pct) < 0)
		return "costs_pct";
	return NULL;
}

int ia_gate_baseline_read(struct ia_gate_summary *s, const char *path, const char *text, size_t len,
			  size_t max_samples, char *err, size_t errlen)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const cJSON *ver = root ? cJSON_GetObjectItemCaseSensitive(root, "ingero_gate_baseline") : NULL;
	if (!root || !cJSON_IsObject(root) || !ver) {
		snprintf(err, errlen, "%s: neither a report.db nor a baseline saved by ingero-gate", path);
		cJSON_Delete(root);
		return -1;
	}
	if (!cJSON_IsNumber(ver) || ver->valuedouble != IA_GATE_BASELINE_VERSION) {
		snprintf(err, errlen, "%s: baseline format version %g, this gate reads %d (save it again with this gate)",
			 path, cJSON_IsNumber(ver) ? ver->valuedouble : -1.0, IA_GATE_BASELINE_VERSION);
		cJSON_Delete(root);
		return -1;
	}
	const char *what = NULL;
	s->from_baseline = 1;
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
	const cJSON *apis = cJSON_GetObjectItemCaseSensitive(root, "apis");
	const cJSON *chains = cJSON_GetObjectItemCaseSensitive(root, "chains");
	int nr = cJSON_GetArraySize(runs), na = cJSON_GetArraySize(apis), nc = cJSON_GetArraySize(chains);
	if (!cJSON_IsArray(runs) || nr < 1 || nr > 10000) {
		what = "runs";
		goto bad;
	}
	if (!cJSON_IsArray(apis) || !cJSON_IsArray(chains)) {
		what = !cJSON_IsArray(apis) ? "apis" : "chains";
		goto bad;
	}
	s->runs = calloc((size_t)nr, sizeof *s->runs);
	s->apis = calloc(na > 0 ? (size_t)na : 1, sizeof *s->apis);
	s->chains = calloc(nc > 0 ? (size_t)nc : 1, sizeof *s->chains);
	if (!s->runs || !s->apis || !s->chains) {
		what = "(out of memory)";
		goto bad;
	}
	const cJSON *o;
	cJSON_ArrayForEach(o, runs) {
		if ((what = read_run(&s->runs[s->nruns++], o)))
			goto bad;
	}
	free(s->command);
	s->command = s->runs[0].command ? strdup(s->runs[0].command) : NULL;
	cJSON_ArrayForEach(o, apis) {
		if ((what = read_api(&s->apis[s->napis++], o, s->nruns, max_samples)))
			goto bad;
	}
	qsort(s->apis, s->napis, sizeof *s->apis, cmp_api_name);
	cJSON_ArrayForEach(o, chains) {
		if ((what = read_chain(&s->chains[s->nchains++], o, s->nruns)))
			goto bad;
	}
	cJSON_Delete(root);
	return 0;
bad:
	snprintf(err, errlen, "%s: baseline: missing or invalid \"%s\"", path, what);
	cJSON_Delete(root);
	return -1;
}

int ia_gate_summary_parse(struct ia_gate_summary *s, const char *name, const char *text, size_t len,
			  size_t max_samples, char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	if (!(s->source = strdup(name))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return ia_gate_baseline_read(s, name, text, len, max_samples, err, errlen);
}

/* --- writing -------------------------------------------------------------------------- */

static cJSON *run_json(const struct ia_gate_run *r)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	ia_json_str(o, "source", r->source);
	ia_json_str(o, "command", r->command);
	ia_json_num(o, "window_s", r->window_s);
	cJSON *st = r->steady ? cJSON_AddObjectToObject(o, "steady") : NULL;
	if (!r->steady)
		cJSON_AddNullToObject(o, "steady");
	cJSON *ph = cJSON_AddObjectToObject(o, "phases");
	cJSON *facts = cJSON_AddObjectToObject(o, "facts");
	for (size_t i = 0; i < NRUN_FIELDS; i++) {
		cJSON *obj = !strcmp(run_fields[i].obj, "steady") ? st : !strcmp(run_fields[i].obj, "phases") ? ph : facts;
		if (!obj)
			continue;
		if (!strcmp(run_fields[i].name, "idle_est") && !r->idle_has_est)
			cJSON_AddNullToObject(obj, "idle_est");
		else
			ia_json_num(obj, run_fields[i].name, *run_num((struct ia_gate_run *)r, i));
	}
	if (st) {
		cJSON_AddBoolToObject(st, "idle_measured", r->idle_measured);
		ia_json_u64(st, "blocks", r->blocks);
	}
	return o;
}

static cJSON *to_json(const struct ia_gate_summary *s)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	ia_json_u64(root, "ingero_gate_baseline", IA_GATE_BASELINE_VERSION);
	cJSON *runs = cJSON_AddArrayToObject(root, "runs");
	for (size_t i = 0; runs && i < s->nruns; i++)
		cJSON_AddItemToArray(runs, run_json(&s->runs[i]));
	cJSON *apis = cJSON_AddArrayToObject(root, "apis");
	for (size_t i = 0; apis && i < s->napis; i++) {
		const struct ia_gate_api *g = &s->apis[i];
		cJSON *a = cJSON_CreateObject();
		if (!a || !cJSON_AddItemToArray(apis, a))
			break;
		ia_json_str(a, "api", g->name);
		ia_json_u64(a, "count", g->count);
		ia_json_u64(a, "p50_ns", g->p50_ns);
		ia_json_u64(a, "p99_ns", g->p99_ns);
		ia_json_u64(a, "max_ns", g->max_ns);
		cJSON *p50 = cJSON_AddArrayToObject(a, "runs_p50_ns"), *p99 = cJSON_AddArrayToObject(a, "runs_p99_ns");
		for (size_t r = 0; p50 && p99 && r < s->nruns; r++) {
			cJSON_AddItemToArray(p50, cJSON_CreateNumber((double)(g->run_p50 ? g->run_p50[r] : 0)));
			cJSON_AddItemToArray(p99, cJSON_CreateNumber((double)(g->run_p99 ? g->run_p99[r] : 0)));
		}
		cJSON *smp = cJSON_AddArrayToObject(a, "samples_ns");
		for (size_t k = 0; smp && k < g->nsamples; k++)
			cJSON_AddItemToArray(smp, cJSON_CreateNumber((double)g->samples[k]));
	}
	cJSON *chains = cJSON_AddArrayToObject(root, "chains");
	for (size_t i = 0; chains && i < s->nchains; i++) {
		const struct ia_gate_chain *g = &s->chains[i];
		cJSON *c = cJSON_CreateObject();
		if (!c || !cJSON_AddItemToArray(chains, c))
			break;
		ia_json_str(c, "severity", g->severity);
		ia_json_str(c, "key", g->key);
		ia_json_str(c, "label", g->label);
		ia_json_str(c, "api", g->api);
		ia_json_str(c, "summary", g->summary);
		ia_json_str(c, "cause", g->cause);
		cJSON_AddBoolToObject(c, "phase", g->phase);
		ia_json_u64(c, "high_runs", g->high_runs);
		cJSON *costs = cJSON_AddArrayToObject(c, "costs_pct");
		for (size_t r = 0; costs && r < s->nruns; r++)
			cJSON_AddItemToArray(costs, cJSON_CreateNumber(g->cost_pct ? g->cost_pct[r] : 0));
	}
	return root;
}

int ia_gate_summary_save(const struct ia_gate_summary *s, const char *path, char *err, size_t errlen)
{
	cJSON *root = to_json(s);
	char tmp[4096];
	if (!root) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		cJSON_Delete(root);
		return -1;
	}
	int rc = ia_json_print(root, f, 0);
	cJSON_Delete(root);
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

/* --- several runs into one baseline ----------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The API named `name` of the merged runs: per-run quantiles (0 where a run
 * lacks it), the pooled sample, the smallest count of the runs with it. */
static int merge_api(struct ia_gate_api *g, const char *name, struct ia_gate_summary *in, size_t n,
		     size_t nruns, size_t max_samples)
{
	size_t total = 0, r0 = 0;
	g->name = strdup(name);
	g->run_p50 = calloc(nruns, sizeof *g->run_p50);
	g->run_p99 = calloc(nruns, sizeof *g->run_p99);
	if (!g->name || !g->run_p50 || !g->run_p99)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct ia_gate_api *x = ia_gate_summary_api(&in[i], name);
		total += x ? x->nsamples : 0;
	}
	g->samples = malloc((total ? total : 1) * sizeof *g->samples);
	double *p50 = calloc(nruns, sizeof *p50), *p99 = calloc(nruns, sizeof *p99);
	size_t present = 0;
	if (!g->samples || !p50 || !p99) {
		free(p50);
		free(p99);
		return -1;
	}
	for (size_t i = 0; i < n; r0 += in[i].nruns, i++) {
		const struct ia_gate_api *x = ia_gate_summary_api(&in[i], name);
		if (!x)
			continue;
		memcpy(g->samples + g->nsamples, x->samples, x->nsamples * sizeof *g->samples);
		g->nsamples += x->nsamples;
		if (!g->count || x->count < g->count)
			g->count = x->count;
		if (x->max_ns > g->max_ns)
			g->max_ns = x->max_ns;
		for (size_t r = 0; r < in[i].nruns; r++) {
			g->run_p50[r0 + r] = x->run_p50 ? x->run_p50[r] : x->p50_ns;
			g->run_p99[r0 + r] = x->run_p99 ? x->run_p99[r] : x->p99_ns;
			if (g->run_p50[r0 + r]) {
				p50[present] = (double)g->run_p50[r0 + r];
				p99[present++] = (double)g->run_p99[r0 + r];
			}
		}
	}
	qsort(g->samples, g->nsamples, sizeof *g->samples, ia_cmp_u64);
	g->nsamples = ia_gate_decimate(g->samples, g->nsamples, max_samples);
	g->p50_ns = (uint64_t)llround(ia_gate_median(p50, present));
	g->p99_ns = (uint64_t)llround(ia_gate_median(p99, present));
	free(p50);
	free(p99);
	return 0;
}

/* The chain `key` of the merged runs: its cost in every run, its highest
 * severity, the words of the run where it cost the most. */
static int merge_chain(struct ia_gate_chain *g, const char *key, struct ia_gate_summary *in, size_t n,
		       size_t nruns)
{
	const struct ia_gate_chain *best = NULL;
	double best_cost = -1;
	size_t r0 = 0;
	g->cost_pct = calloc(nruns, sizeof *g->cost_pct);
	if (!g->cost_pct)
		return -1;
	for (size_t i = 0; i < n; r0 += in[i].nruns, i++) {
		for (size_t c = 0; c < in[i].nchains; c++) {
			const struct ia_gate_chain *x = &in[i].chains[c];
			if (strcmp(x->key, key))
				continue;
			g->high_runs += x->high_runs;
			for (size_t r = 0; r < in[i].nruns; r++) {
				double v = x->cost_pct ? x->cost_pct[r] : 0;
				g->cost_pct[r0 + r] += v;   /* two chains of one identity in a run add up */
				if (v > best_cost || !best)
					best = x, best_cost = v;
			}
			if (sev_rank(x->severity) > sev_rank(g->severity)) {
				free(g->severity);
				if (!(g->severity = strdup(x->severity)))
					return -1;
			}
		}
	}
	if (g->high_runs > nruns)
		g->high_runs = (unsigned)nruns;
	g->key = strdup(key);
	g->label = dup_or_null(best->label);
	g->api = dup_or_null(best->api);
	g->summary = dup_or_null(best->summary);
	g->cause = dup_or_null(best->cause);
	g->phase = best->phase;
	return g->key && g->severity ? 0 : -1;
}

static int seen_key(const struct ia_gate_chain *c, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(c[i].key, key))
			return 1;
	return 0;
}

int ia_gate_summary_merge(struct ia_gate_summary *out, struct ia_gate_summary *in, size_t n,
			  size_t max_samples, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	size_t nruns = 0, napis = 0, nchains = 0;
	for (size_t i = 0; i < n; i++) {
		nruns += in[i].nruns;
		napis += in[i].napis;
		nchains += in[i].nchains;
	}
	char src[64];
	snprintf(src, sizeof src, "%zu runs", nruns);
	out->source = strdup(src);
	out->command = n && in[0].command ? strdup(in[0].command) : NULL;
	out->runs = calloc(nruns ? nruns : 1, sizeof *out->runs);
	out->apis = calloc(napis ? napis : 1, sizeof *out->apis);
	out->chains = calloc(nchains ? nchains : 1, sizeof *out->chains);
	if (!out->source || !out->runs || !out->apis || !out->chains)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; r < in[i].nruns; r++) {
			struct ia_gate_run *x = &out->runs[out->nruns++];
			*x = in[i].runs[r];
			x->source = dup_or_null(in[i].runs[r].source);
			x->command = dup_or_null(in[i].runs[r].command);
			if (!x->source)
				goto oom;
		}
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t a = 0; a < in[i].napis; a++) {
			const char *name = in[i].apis[a].name;
			if (ia_gate_summary_api(out, name))
				continue;
			if (merge_api(&out->apis[out->napis++], name, in, n, nruns, max_samples) < 0)
				goto oom;
		}
		for (size_t c = 0; c < in[i].nchains; c++) {
			const char *key = in[i].chains[c].key;
			if (seen_key(out->chains, out->nchains, key))
				continue;
			if (merge_chain(&out->chains[out->nchains++], key, in, n, nruns) < 0)
				goto oom;
		}
	}
	qsort(out->apis, out->napis, sizeof *out->apis, cmp_api_name);
	out->from_baseline = 1;
	return 0;
oom:
	snprintf(err, errlen, "out of memory merging the runs");
	return -1;
}
