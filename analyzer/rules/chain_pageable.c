/*
 * chain_pageable.c — the pageable_copies rule: copies at pageable-memory
 * bandwidth, against pinned copies measured in the same trace.
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGEABLE_HIGH 0.20
#define PAGEABLE_MEDIUM 0.05
#define PINNED_GAIN 2.0              /* pinned vs pageable GB/s measured, for HIGH */

/* ---- pageable copies ---- */

#define PAGEABLE_MIN_BYTES IA_PAGEABLE_MIN_BYTES   /* (measure/align.h) */
/* A loop's copies recur: fewer pageable copies than this in the steady
 * state are set-up (weights, a constant), not a cost per step. */
#define PAGEABLE_MIN_COUNT 10

int ia_rule_pageable(struct ia_analysis *a, size_t *cap)
{
	const struct ia_trace *t = a->t;
	uint64_t all = t->last_ns - t->first_ns;
	uint64_t win = a->idle.steady_ns ? a->idle.steady_ns : all, whole = a->idle.window_ns ? a->idle.window_ns : all;
	struct ia_copy_part pg = { 0 }, pin_sync = { 0 };
	uint64_t d2h_bytes = 0;
	uint64_t api_ns[INGERO_API_MAX] = { 0 };
	/* One pass: the pageable copies (>= PAGEABLE_MIN_BYTES) by API and by
	 * stack, and the pinned reference: copies whose host time is the
	 * transfer (synchronous API, pinned memory, >= 1 MiB); an async pinned
	 * copy returns at once. */
	struct ia_map lines = { 0 };
	struct { uint64_t id, ns; } *ls = NULL;
	size_t nls = 0, lcap = 0;
	for (size_t i = 0; i < t->ncalls; i++) {
		const struct ia_call *c = &t->calls[i];
		if (ingero_api_class(c->api) != INGERO_CLASS_COPY)
			continue;
		if ((c->flags & INGERO_FLAG_HOST_PINNED) && !(c->flags & INGERO_FLAG_ASYNC) &&
		    ia_api_completes_work(c->api) && c->bytes >= (1u << 20)) {
			pin_sync.count++;
			pin_sync.bytes += c->bytes;
			pin_sync.dur_ns += c->dur;
		}
		if (!(c->flags & INGERO_FLAG_HOST_PAGEABLE) || c->bytes < PAGEABLE_MIN_BYTES ||
		    ia_phase_at(&a->ph, c->start) != IA_PHASE_STEADY)
			continue;   /* small, or in start-up / compiling / autotuning */
		pg.count++;
		pg.bytes += c->bytes;
		pg.dur_ns += c->dur;
		api_ns[c->api] += c->dur;
		if (c->dir == INGERO_DIR_DTOH)
			d2h_bytes += c->bytes;
		uint64_t sid = t->stack_ids[c->stack];
		uint32_t k = ia_map_get(&lines, sid);
		if (k == UINT32_MAX) {
			if (ia_grow((void **)&ls, &lcap, nls + 1, sizeof *ls) < 0 || ia_map_put(&lines, sid, (uint32_t)nls) < 0) {
				free(ls);
				ia_map_free(&lines);
				return -1;
			}
			ls[nls].id = sid;
			ls[nls].ns = 0;
			k = (uint32_t)nls++;
		}
		ls[k].ns += c->dur;
	}
	uint16_t top_api = 0;
	for (unsigned i = 1; i < INGERO_API_MAX; i++)
		if (api_ns[i] > api_ns[top_api])
			top_api = (uint16_t)i;
	double share = win ? (double)pg.dur_ns / (double)win : 0;
	enum ia_severity sev = ia_by_share(share, PAGEABLE_HIGH, PAGEABLE_MEDIUM, SHARE_LOW);
	if (!win || pg.count < PAGEABLE_MIN_COUNT || sev == IA_SEV_NONE) {
		free(ls);
		ia_map_free(&lines);
		return 0;
	}
	uint64_t best_id = 0, best_ns = 0;
	for (size_t i = 0; i < nls; i++)
		if (ls[i].ns > best_ns || (ls[i].ns == best_ns && ls[i].id < best_id)) {
			best_ns = ls[i].ns;
			best_id = ls[i].id;
		}
	free(ls);
	ia_map_free(&lines);
	/* HIGH needs the comparison that shows pinning helps: pinned copies
	 * measured in this trace at least PINNED_GAIN x faster. */
	double gp0 = ia_gbps(pg.bytes, pg.dur_ns), gpin0 = ia_gbps(pin_sync.bytes, pin_sync.dur_ns);
	if (sev == IA_SEV_HIGH && !(pin_sync.count && gpin0 >= PINNED_GAIN * gp0))
		sev = IA_SEV_MEDIUM;
	struct ia_chain *c = ia_chain_new(a, cap, IA_KIND_PAGEABLE_COPIES);
	if (!c)
		return -1;
	c->sev = sev;
	c->api = top_api;
	c->impact = (double)pg.dur_ns / (double)whole;
	c->cost_ns = pg.dur_ns;
	const char *py = ia_stack_source(a->names, best_id);
	if (py)
		snprintf(c->source, sizeof c->source, "%s", py);
	double gp = ia_gbps(pg.bytes, pg.dur_ns), gpin = ia_gbps(pin_sync.bytes, pin_sync.dur_ns);
	char b1[32], d1[32], d2[32], n1[32];
	snprintf(c->summary, sizeof c->summary, "pageable copies: %s in %s calls at %.1f GB/s took %s (%.0f%% of the steady state)",
		 ia_fmt_bytes(b1, sizeof b1, pg.bytes), ia_fmt_count(n1, sizeof n1, pg.count), gp,
		 ia_fmt_dur(d1, sizeof d1, pg.dur_ns), 100 * share);
	if (pin_sync.count)
		ia_addf(c->summary, sizeof c->summary, "; pinned copies here reached %.1f GB/s", gpin);
	ia_chain_line(c, "[HOST] the host waits for each pageable copy: %s blocked in copies", ia_fmt_dur(d1, sizeof d1, pg.dur_ns));
	ia_chain_line(c, "[CUDA] pageable: %s calls, %s, %.2f GB/s achieved", ia_fmt_count(n1, sizeof n1, pg.count),
	     ia_fmt_bytes(b1, sizeof b1, pg.bytes), gp);
	if (pin_sync.count)
		ia_chain_line(c, "[CUDA] pinned (synchronous, >= 1 MiB): %s calls, %.2f GB/s achieved",
		     ia_fmt_count(n1, sizeof n1, pin_sync.count), gpin);
	snprintf(c->root_cause, sizeof c->root_cause,
		 "Copies from pageable host memory are staged by the driver through a pinned bounce buffer and block "
		 "the host for the whole transfer: %.1f GB/s achieved here", gp);
	if (pin_sync.count && gpin > gp)
		ia_addf(c->root_cause, sizeof c->root_cause, ", %.1fx slower than the %.1f GB/s pinned copies reached in this trace.",
		     gpin / gp, gpin);
	else
		ia_addf(c->root_cause, sizeof c->root_cause,
		     " (no pinned copy in this trace to compare against, so how much pinning gains is not measured here).");
	int d2h = d2h_bytes * 2 > pg.bytes;   /* mostly results read back: pinning the destination helps */
	if (d2h)
		ia_chain_fix(c, "Most of these bytes go device-to-host: copy into a pinned buffer allocated once "
				"(torch.empty(shape, dtype=..., pin_memory=True), then buf.copy_(x, non_blocking=True) and an "
				"event or a later sync before reading it), or keep the post-processing on the GPU and copy "
				"back only what is needed");
	else if (pin_sync.count && gpin > gp)
		ia_chain_fix(c, "%s and .to('cuda', non_blocking=True): "
		       "at the %.1f GB/s measured for pinned copies, the same bytes would take ~%s instead of %s, "
		       "and overlap with compute", a->pp.nworkers ? "pin_memory=True in the DataLoader (or tensor.pin_memory())"
							  : "Pinned host memory (tensor.pin_memory(), or allocate with pin_memory=True)", gpin,
		    ia_fmt_dur(d1, sizeof d1, (uint64_t)((double)pg.bytes / gpin)), ia_fmt_dur(d2, sizeof d2, pg.dur_ns));
	else
		ia_pin_fix(c, a);
	if (py)
		ia_chain_fix(c, "The largest pageable copies are issued at %s", py);
	cJSON *ev = c->evidence;
	ia_json_u64(ev, "pageable_calls", pg.count);
	ia_json_u64(ev, "pageable_bytes", pg.bytes);
	ia_json_u64(ev, "pageable_ns", pg.dur_ns);
	ia_json_u64(ev, "device_to_host_bytes", d2h_bytes);
	ia_json_u64(ev, "min_bytes", PAGEABLE_MIN_BYTES);
	ia_json_round(ev, "pageable_gbps", gp, 3);
	ia_json_u64(ev, "pinned_reference_calls", pin_sync.count);
	if (pin_sync.count)
		ia_json_round(ev, "pinned_gbps", gpin, 3);
	ia_json_round(ev, "share_of_window", share, 4);
	ia_json_u64(ev, "window_ns", whole);
	ia_json_u64(ev, "steady_ns", win);
	/* (c76: cudaMemcpyAsync p99 12.8 ms beside 14.9 GiB of pageable copies) */
	ia_chain_fold_slow(a, (size_t)(c - a->chains), "pageable_memory", NULL, "these pageable copies");
	return 0;
}
