/*
 * gate_summary.c — one run as the gate sees it, from a report.db or from a
 * saved baseline.  See gate_summary.h for the baseline format.
 *
 * From a report.db everything comes through the analyzer's own modules:
 * ia_db_open() validates the file, ia_trace_load() reads the calls (the
 * same filtered, sorted arrays `stats` and `explain` use), ia_analyze()
 * runs explain's whole analysis once: the chains are read from its
 * explain --json document (gate_analysis.c), the steady state's figures
 * from its phases, steps and GPU idle (gate_steady.c).  The only thing
 * built here is the per-API latency sample the statistical tests need:
 * the duration of every call in the steady state (every call when the run
 * has none), sorted, then reduced to at most max_samples order statistics.
 *
 * The two kinds of input are told apart by content: an SQLite header means
 * a report.db, anything else must parse as a baseline of a known version
 * (gate_baseline.c).
 */
#include "gate/gate_summary.h"

#include "base/json_out.h"
#include "base/progress.h"
#include "base/util.h"
#include "gate/gate_analysis.h"
#include "gate/gate_baseline.h"
#include "gate/gate_stats.h"
#include "gate/gate_steady.h"
#include "load/db.h"
#include "load/trace.h"
#include "measure/stats.h"
#include "rules/analysis.h"
#include "rules/chains.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ia_gate_summary_free(struct ia_gate_summary *s)
{
	for (size_t i = 0; i < s->napis; i++) {
		free(s->apis[i].name);
		free(s->apis[i].samples);
		free(s->apis[i].run_p50);
		free(s->apis[i].run_p99);
	}
	for (size_t i = 0; i < s->nchains; i++) {
		free(s->chains[i].severity);
		free(s->chains[i].key);
		free(s->chains[i].label);
		free(s->chains[i].api);
		free(s->chains[i].summary);
		free(s->chains[i].cause);
		free(s->chains[i].cost_pct);
	}
	for (size_t i = 0; i < s->nruns; i++) {
		free(s->runs[i].source);
		free(s->runs[i].command);
	}
	free(s->runs);
	free(s->apis);
	free(s->chains);
	free(s->source);
	free(s->command);
	memset(s, 0, sizeof *s);
}

static int cmp_api_name(const void *a, const void *b)
{
	return strcmp(((const struct ia_gate_api *)a)->name, ((const struct ia_gate_api *)b)->name);
}

/* --- from a report.db -------------------------------------------------------------- */

/* Whether ts lies in one of the windows w[0..n) (sorted pairs); n == 0: everywhere. */
static int in_windows(const uint64_t *w, size_t n, uint64_t ts)
{
	if (!n)
		return 1;
	size_t lo = 0, hi = n;
	while (lo < hi) {   /* first window ending after ts */
		size_t mid = (lo + hi) / 2;
		if (w[2 * mid + 1] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && w[2 * lo] <= ts;
}

/* Per API, the latencies of the calls inside windows w (all calls when nw == 0). */
static int summarise_calls(struct ia_gate_summary *s, const struct ia_trace *t, const uint64_t *w, size_t nw,
			   size_t max_samples, char *err, size_t errlen)
{
	size_t *count = calloc(INGERO_API_MAX, sizeof *count);
	uint64_t **dur = calloc(INGERO_API_MAX, sizeof *dur);
	size_t kinds = 0;
	int rc = -1;
	if (!count || !dur)
		goto oom;

	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (c->api >= INGERO_API_MAX || !in_windows(w, nw, c->start))
			continue;
		if (!count[c->api]++)
			kinds++;
	}
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
		if (c->api < INGERO_API_MAX && dur[c->api] && in_windows(w, nw, c->start))
			dur[c->api][count[c->api]++] = c->dur;
	}
	for (unsigned a = 0; a < INGERO_API_MAX; a++) {
		if (!count[a])
			continue;
		struct ia_gate_api *g = &s->apis[s->napis++];
		size_t n = count[a];
		qsort(dur[a], n, sizeof *dur[a], ia_cmp_u64);
		g->name = strdup(ia_api_name(t, a));
		/* nearest-rank quantiles, as `stats` takes them, of the steady state's calls */
		g->count = n;
		g->p50_ns = ia_gate_quantile_sorted(dur[a], n, 0.50);
		g->p99_ns = ia_gate_quantile_sorted(dur[a], n, 0.99);
		g->max_ns = dur[a][n - 1];
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

/* The run's figures and latencies from one analysis. */
static int summarise(struct ia_gate_summary *s, const struct ia_trace *t, const struct ia_analysis *a,
		     size_t max_samples, char *err, size_t errlen)
{
	s->runs = calloc(1, sizeof *s->runs);
	if (!s->runs || !(s->runs[0].source = strdup(s->source)) ||
	    (s->command && !(s->runs[0].command = strdup(s->command)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->nruns = 1;
	if (ia_gate_steady_compute(a, &s->runs[0]) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t nw = 0;
	uint64_t *w = NULL;
	if (s->runs[0].steady) {
		w = ia_phases_steady_windows(&a->ph, a->gaps.win_start, a->gaps.win_end, &nw);
		if (!w)
			nw = 0;
	}
	int rc = summarise_calls(s, t, w, nw, max_samples, err, errlen);
	free(w);
	for (size_t i = 0; rc == 0 && i < s->napis; i++) {
		struct ia_gate_api *g = &s->apis[i];
		g->run_p50 = malloc(sizeof *g->run_p50);
		g->run_p99 = malloc(sizeof *g->run_p99);
		if (!g->run_p50 || !g->run_p99) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		g->run_p50[0] = g->p50_ns;
		g->run_p99[0] = g->p99_ns;
	}
	return rc;
}

int ia_gate_summary_of(struct ia_gate_summary *s, const char *path, const struct ia_analysis *a,
		       size_t max_samples, char *err, size_t errlen)
{
	int rc = 0;
	if (!s->source && !(s->source = strdup(path)))
		rc = -1;
	if (rc == 0 && a->t->command && !(s->command = strdup(a->t->command)))
		rc = -1;
	if (rc == 0)
		rc = summarise(s, a->t, a, max_samples, err, errlen);
	if (rc == 0)
		rc = ia_gate_from_explain(s, a, err, errlen);
	if (rc < 0 && !err[0])
		snprintf(err, errlen, "%s: out of memory", path);
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
	int rc = ia_trace_load(&t, db, &f, IA_LOAD_ALL | IA_LOAD_CHECK_LATE, err, errlen);
	/* one analysis, exactly explain's: its stats, its chains, its GPU idle */
	snprintf(label, sizeof label, "gate: analysing %s", base ? base + 1 : path);
	ia_progress_phase(label);
	if (rc == 0)
		rc = ia_analyze(&t, &a, err, errlen);
	if (rc == 0)
		rc = ia_gate_summary_of(s, path, &a, max_samples, err, errlen);
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

/* --- either kind of file -------------------------------------------------------------- */

/* whether path begins with SQLite's header ("SQLite format 3" and its NUL) */
static int is_sqlite(const char *path)
{
	char head[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;   /* (slurp says why) */
	int yes = fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, "SQLite format 3", 16);
	fclose(f);
	return yes;
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

int ia_gate_summary_load(struct ia_gate_summary *s, const char *path, size_t max_samples,
			 char *err, size_t errlen)
{
	memset(s, 0, sizeof *s);
	s->source = strdup(path);
	if (!s->source) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* A report.db is told by its header and read by SQLite: only a baseline
	 * is read whole (a trace can be gigabytes: copying it in cost the gate
	 * more than its analysis) */
	if (is_sqlite(path))
		return load_db(s, path, max_samples, err, errlen);
	size_t len = 0;
	char *text = slurp(path, &len, err, errlen);
	if (!text)
		return -1;
	int rc;
	if (len == 0) {
		free(text);
		snprintf(err, errlen, "%s: empty file, neither a report.db nor a baseline", path);
		rc = -1;
	} else {
		rc = ia_gate_baseline_read(s, path, text, len, max_samples, err, errlen);
		free(text);
	}
	return rc;
}

