/*
 * gate_analysis.c — chains and GPU idle for the gate, read from the
 * explain --json document of an analysis (see gate_analysis.h).
 *
 * A chain's identity across runs (its key) is its kind, plus what the
 * chain is about when that is part of its identity: the API of a slow
 * tail ("slow_calls:cudaStreamSynchronize"), the Python line of a sync per
 * step ("sync_per_step:train.py:57").  The API that happens to end a gap,
 * or the copy API of pageable copies, is incidental and left out, so it
 * cannot make an old chain look new.  The gaps_* kinds share one identity,
 * "gaps": they are one problem (no GPU work queued) split by what the main
 * thread did meanwhile, and a program that moves from collating batches
 * itself (gaps_host_busy) to waiting on workers (gaps_waiting_workers) has
 * changed the cause, not gained a problem; how much the GPU idles is the
 * GPU-idle check's to judge.  The label (kind, + API or line) names the
 * chain in tables.  Summaries carry figures that change run to run:
 * shown, never compared; what is compared is a chain's cost, as a share of
 * the steady state (of the window for a phase), and its severity.  Its
 * cause in words is the verdict's (verdict.h).
 */
#include "gate/gate_analysis.h"

#include "render/explain_json.h"
#include "rules/verdict.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) && v->valuestring ? strdup(v->valuestring) : NULL;
}

int ia_gate_from_explain(struct ia_gate_summary *s, const struct ia_analysis *a, char *err, size_t errlen)
{
	cJSON *doc = ia_explain_json(a);
	if (!doc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	const cJSON *chains = cJSON_GetObjectItemCaseSensitive(doc, "chains");
	int n = cJSON_GetArraySize(chains);
	s->chains = calloc(n > 0 ? (size_t)n : 1, sizeof *s->chains);
	if (!s->chains)
		goto oom;
	const cJSON *c;
	cJSON_ArrayForEach(c, chains) {
		/* the document lists a->chains in their order */
		const struct ia_chain *ac = s->nchains < a->nchains ? &a->chains[s->nchains] : NULL;
		struct ia_gate_chain *g = &s->chains[s->nchains];
		char *kind = dup_str(c, "kind");
		char *source = dup_str(c, "source");
		g->severity = dup_str(c, "severity");
		g->api = dup_str(c, "api");
		g->summary = dup_str(c, "summary");
		const char *part = NULL;
		if (kind && !strcmp(kind, "slow_calls"))
			part = g->api;
		else if (kind && !strcmp(kind, "sync_per_step"))
			part = source ? source : g->api;
		if (kind && part) {
			size_t l = strlen(kind) + strlen(part) + 2;
			if ((g->label = malloc(l)))
				snprintf(g->label, l, "%s:%s", kind, part);
		} else if (kind) {
			g->label = strdup(kind);
		}
		/* every gaps_* kind is one problem (the GPU idle between calls) told
		 * apart by what the main thread did meanwhile: one identity */
		g->key = kind && !strncmp(kind, "gaps_", 5) ? strdup("gaps") : g->label ? strdup(g->label) : NULL;
		free(kind);
		free(source);
		s->nchains++;
		g->cost_pct = calloc(1, sizeof *g->cost_pct);
		if (!g->severity || !g->key || !g->label || !g->cost_pct)
			goto oom;
		g->high_runs = !strcmp(g->severity, "HIGH");
		if (ac) {
			char words[512];
			g->phase = ia_kind_is_phase(ac->kind);
			uint64_t whole = g->phase ? a->idle.window_ns : a->idle.steady_ns;
			g->cost_pct[0] = whole ? 100.0 * (double)ac->cost_ns / (double)whole : 0;
			if (!g->phase && !ia_kind_is_gpu_work(ac->kind) &&
			    !(g->cause = strdup(ia_verdict_cause(ac, words, sizeof words))))
				goto oom;
		}
	}
	cJSON_Delete(doc);
	return 0;
oom:
	cJSON_Delete(doc);
	snprintf(err, errlen, "out of memory reading the chains");
	return -1;
}
