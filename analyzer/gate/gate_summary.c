/*
 * gate_summary.c — one run as the gate sees it, from a report.db or from a
 * saved baseline.  See gate_summary.h for the baseline format.
 *
 * From a report.db everything comes through the analyzer's own modules:
 * ia_db_open() validates the file, ia_trace_load() reads the calls (the
 * same filtered, sorted arrays `stats` and `explain` use), ia_analyze()
 * runs explain's whole analysis once: the per-API count, p50, p99 and max
 * are its stats, and the chains and the GPU-idle estimate are read from
 * its explain --json document (gate_analysis.c).  The only thing built here is the per-API
 * latency sample the statistical tests need: every call's duration,
 * sorted, then reduced to at most max_samples order statistics.
 *
 * The two kinds of input are told apart by content: an SQLite header means
 * a report.db, anything else must parse as a baseline of a known version.
 */
#include "rules/analysis.h"
#include "gate/gate_summary.h"
#include "gate/gate_analysis.h"
#include "gate/gate_stats.h"
#include "load/db.h"
#include "base/json_out.h"
#include "base/progress.h"
#include "rules/chains.h"
#include "measure/stats.h"
#include "load/trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ia_gate_summary_free(struct ia_gate_summary *s)
{
	for (size_t i = 0; i < s->napis; i++) {
		free(s->apis[i].name);
		free(s->apis[i].samples);
	}
	for (size_t i = 0; i < s->nchains; i++) {
		free(s->chains[i].severity);
		free(s->chains[i].key);
		free(s->chains[i].label);
		free(s->chains[i].api);
		free(s->chains[i].summary);
	}
	free(s->apis);
	free(s->chains);
	free(s->source);
	free(s->command);
	memset(s, 0, sizeof *s);
}

const struct ia_gate_api *ia_gate_summary_api(const struct ia_gate_summary *s, const char *name)
{
	for (size_t i = 0; i < s->napis; i++)
		if (!strcmp(s->apis[i].name, name))
			return &s->apis[i];
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_api_name(const void *a, const void *b)
{
	return strcmp(((const struct ia_gate_api *)a)->name, ((const struct ia_gate_api *)b)->name);
}

/* --- from a report.db -------------------------------------------------------------- */

static int summarise_calls(struct ia_gate_summary *s, const struct ia_trace *t, const struct ia_stats *st,
			   size_t max_samples, char *err, size_t errlen)
{
	size_t *count = calloc(INGERO_API_MAX, sizeof *count);
	uint64_t **dur = calloc(INGERO_API_MAX, sizeof *dur);
	size_t kinds = 0;
	int rc = -1;
	if (!count || !dur)
		goto oom;

	uint64_t first = UINT64_MAX, last = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (c->api >= INGERO_API_MAX)
			continue;
		if (!count[c->api]++)
			kinds++;
		if (c->start < first)
			first = c->start;
		if (c->start + c->dur > last)
			last = c->start + c->dur;
	}
	s->calls = t->ncalls;
	/* Calls per second over the span of CUDA activity, not the whole trace:
	 * interpreter start-up and teardown vary run to run and are not what a
	 * throughput gate is about. */
	s->duration_s = last > first ? (double)(last - first) / 1e9 : 0;

	s->apis = calloc(kinds ? kinds : 1, sizeof *s->apis);
	if (!s->apis)
		goto oom;
	for (unsigned a = 0; a < INGERO_API_MAX; a++) {
		if (!count[a])
			continue;
		dur[a] = malloc(count[a] * sizeof **dur);
		if (!dur[a])
			goto oom;
		count[a] = 0;
	}
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (c->api < INGERO_API_MAX)
			dur[c->api][count[c->api]++] = c->dur;
	}
	for (unsigned a = 0; a < INGERO_API_MAX; a++) {
		if (!count[a])
			continue;
		struct ia_gate_api *g = &s->apis[s->napis++];
		size_t n = count[a];
		qsort(dur[a], n, sizeof *dur[a], cmp_u64);
		g->name = strdup(ia_api_name(t, a));
		/* the figures the gate prints are exactly those `stats` prints */
		const struct ia_api_stats *as = st->by_id[a];
		g->count = as ? as->count : n;
		g->p50_ns = as ? as->p50_ns : ia_gate_quantile_sorted(dur[a], n, 0.50);
		g->p99_ns = as ? as->p99_ns : ia_gate_quantile_sorted(dur[a], n, 0.99);
		g->max_ns = as ? as->max_ns : dur[a][n - 1];
		g->nsamples = ia_gate_decimate(dur[a], n, max_samples);
		g->samples = realloc(dur[a], g->nsamples * sizeof *g->samples);
		if (!g->samples)
			g->samples = dur[a];
		dur[a] = NULL;
		if (!g->name)
			goto oom;
	}
	qsort(s->apis, s->napis, sizeof *s->apis, cmp_api_name);
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory summarising %s", s->source);
out:
	if (dur)
		for (unsigned a = 0; a < INGERO_API_MAX; a++)
			free(dur[a]);
	free(dur);
	free(count);
	return rc;
}

static int load_db(struct ia_gate_summary *s, const char *path, size_t max_samples,
		   char *err, size_t errlen)
{
	sqlite3 *db = ia_db_open(path, err, errlen);
	if (!db)
		return -1;
	struct ia_filter f;
	memset(&f, 0, sizeof f);
	struct ia_trace t;
	memset(&t, 0, sizeof t);
	struct ia_analysis a;
	memset(&a, 0, sizeof a);
	char label[64];
	const char *base = strrchr(path, '/');
	snprintf(label, sizeof label, "gate: reading %s", base ? base + 1 : path);
	ia_progress_begin(label, 0);   /* only drawn on a terminal, after 0.5 s */
	ia_progress_attach(db);
	int rc = ia_trace_load(&t, db, &f, IA_LOAD_ALL, err, errlen);
	if (rc == 0 && t.command && !(s->command = strdup(t.command)))
		rc = -1;
	/* one analysis, exactly explain's: its stats, its chains, its GPU idle */
	snprintf(label, sizeof label, "gate: analysing %s", base ? base + 1 : path);
	ia_progress_phase(label);
	if (rc == 0)
		rc = ia_analyze(&t, &a, err, errlen);
	if (rc == 0)
		rc = summarise_calls(s, &t, &a.stats, max_samples, err, errlen);
	if (rc == 0)
		rc = ia_gate_from_explain(s, &a, err, errlen);
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "%s: out of memory", path);
	else if (rc < 0 && !strstr(err, path)) {
		char why[512];
		snprintf(why, sizeof why, "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
	}
	ia_progress_end();
	ia_analysis_free(&a);
	ia_trace_free(&t);
	ia_db_close(db);
	return rc;
}

/* --- baseline JSON --------------------------------------------------------------------- */

static char *json_strdup(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? strdup(v->valuestring) : NULL;
}

static int json_u64(const cJSON *o, const char *key, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9.2e18))
		return -1;
	*out = (uint64_t)llround(v->valuedouble);
	return 0;
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		char *nb = realloc(buf, 2 * cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		free(buf);
		snprintf(err, errlen, "%s: %s", path, bad ? "read error" : "out of memory");
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

static int load_json(struct ia_gate_summary *s, const char *path, const char *text, size_t len,
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
		snprintf(err, errlen, "%s: baseline format version %g, this gate reads %d", path,
			 cJSON_IsNumber(ver) ? ver->valuedouble : -1.0, IA_GATE_BASELINE_VERSION);
		cJSON_Delete(root);
		return -1;
	}
	const char *what = NULL;
	s->from_baseline = 1;
	s->command = json_strdup(root, "command");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "duration_s");
	if (!cJSON_IsNumber(d) || d->valuedouble < 0 || !isfinite(d->valuedouble)) {
		what = "duration_s";
		goto bad;
	}
	s->duration_s = d->valuedouble;
	if (json_u64(root, "calls", &s->calls) < 0) {
		what = "calls";
		goto bad;
	}
	const cJSON *idle = cJSON_GetObjectItemCaseSensitive(root, "gpu_idle_pct");
	if (cJSON_IsObject(idle)) {
		const cJSON *lo = cJSON_GetObjectItemCaseSensitive(idle, "low");
		const cJSON *hi = cJSON_GetObjectItemCaseSensitive(idle, "high");
		if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi)) {
			what = "gpu_idle_pct";
			goto bad;
		}
		s->has_idle = 1;
		s->idle_low = lo->valuedouble;
		s->idle_high = hi->valuedouble;
	} else if (idle && !cJSON_IsNull(idle)) {
		what = "gpu_idle_pct";
		goto bad;
	}

	const cJSON *apis = cJSON_GetObjectItemCaseSensitive(root, "apis");
	if (!cJSON_IsArray(apis)) {
		what = "apis";
		goto bad;
	}
	int na = cJSON_GetArraySize(apis);
	s->apis = calloc(na > 0 ? na : 1, sizeof *s->apis);
	if (!s->apis)
		goto oom;
	const cJSON *a;
	cJSON_ArrayForEach(a, apis) {
		struct ia_gate_api *g = &s->apis[s->napis];
		g->name = json_strdup(a, "api");
		if (!g->name || json_u64(a, "count", &g->count) < 0 || json_u64(a, "p50_ns", &g->p50_ns) < 0 ||
		    json_u64(a, "p99_ns", &g->p99_ns) < 0 || json_u64(a, "max_ns", &g->max_ns) < 0) {
			free(g->name);
			g->name = NULL;
			what = "an entry of apis";
			goto bad;
		}
		s->napis++;
		const cJSON *smp = cJSON_GetObjectItemCaseSensitive(a, "samples_ns");
		if (!cJSON_IsArray(smp)) {
			what = "samples_ns";
			goto bad;
		}
		size_t n = (size_t)cJSON_GetArraySize(smp);
		g->samples = malloc((n ? n : 1) * sizeof *g->samples);
		if (!g->samples)
			goto oom;
		const cJSON *v;
		cJSON_ArrayForEach(v, smp) {
			if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < 9.2e18)) {
				what = "samples_ns";
				goto bad;
			}
			g->samples[g->nsamples++] = (uint64_t)llround(v->valuedouble);
		}
		/* A hand-edited file may be unsorted; the statistics need order. */
		qsort(g->samples, g->nsamples, sizeof *g->samples, cmp_u64);
		g->nsamples = ia_gate_decimate(g->samples, g->nsamples, max_samples);
	}
	qsort(s->apis, s->napis, sizeof *s->apis, cmp_api_name);

	const cJSON *chains = cJSON_GetObjectItemCaseSensitive(root, "chains");
	if (!cJSON_IsArray(chains)) {
		what = "chains";
		goto bad;
	}
	int nc = cJSON_GetArraySize(chains);
	s->chains = calloc(nc > 0 ? nc : 1, sizeof *s->chains);
	if (!s->chains)
		goto oom;
	const cJSON *c;
	cJSON_ArrayForEach(c, chains) {
		struct ia_gate_chain *g = &s->chains[s->nchains++];
		g->severity = json_strdup(c, "severity");
		g->key = json_strdup(c, "key");
		g->label = json_strdup(c, "label");   /* optional: the key names it otherwise */
		g->api = json_strdup(c, "api");
		g->summary = json_strdup(c, "summary");
		if (!g->severity || !g->key) {
			what = "an entry of chains";
			goto bad;
		}
	}
	cJSON_Delete(root);
	return 0;
bad:
	snprintf(err, errlen, "%s: baseline: missing or invalid \"%s\"", path, what);
	cJSON_Delete(root);
	return -1;
oom:
	snprintf(err, errlen, "%s: out of memory", path);
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
	return load_json(s, name, text, len, max_samples, err, errlen);
}

int ia_gate_summary_load(struct ia_gate_summary *s, const char *path, size_t max_samples,
			 char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->source = strdup(path);
	if (!s->source) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t len = 0;
	char *text = slurp(path, &len, err, errlen);
	if (!text)
		return -1;
	int rc;
	if (len >= 16 && !memcmp(text, "SQLite format 3", 16)) {
		free(text);   /* the database is read by SQLite, not from this copy */
		rc = load_db(s, path, max_samples, err, errlen);
	} else if (len == 0) {
		free(text);
		snprintf(err, errlen, "%s: empty file, neither a report.db nor a baseline", path);
		rc = -1;
	} else {
		rc = load_json(s, path, text, len, max_samples, err, errlen);
		free(text);
	}
	return rc;
}

static cJSON *to_json(const struct ia_gate_summary *s)
{
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	ia_json_u64(root, "ingero_gate_baseline", IA_GATE_BASELINE_VERSION);
	ia_json_str(root, "source", s->source);
	ia_json_str(root, "command", s->command);
	ia_json_round(root, "duration_s", s->duration_s, 6);
	ia_json_u64(root, "calls", s->calls);
	if (s->has_idle) {
		cJSON *idle = cJSON_AddObjectToObject(root, "gpu_idle_pct");
		ia_json_round(idle, "low", s->idle_low, 2);
		ia_json_round(idle, "high", s->idle_high, 2);
	} else {
		cJSON_AddNullToObject(root, "gpu_idle_pct");
	}
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
