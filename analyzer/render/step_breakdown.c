/*
 * step_breakdown.c — the per-step breakdown as text and JSON
 * (step_breakdown.h).
 */
#include "render/step_breakdown.h"

#include "base/json_out.h"
#include "base/util.h"

/* The rows in the order a step's story is told: what the host waited
 * for, what it did, then the GPU. */
static const enum ia_step_part rows[IA_STEP_NPARTS] = {
	IA_STEP_INPUT, IA_STEP_OTHER_WAIT, IA_STEP_CPU_WAIT, IA_STEP_HOST, IA_STEP_LAUNCH, IA_STEP_SYNC,
	IA_STEP_COLLECTIVES, IA_STEP_DEVICE,
};

#define STEPS_COVER_SAID 0.90   /* of the steady state: less, the table says how much it covers */

#define OVERLAP "each instant goes to one part, the GPU's state first: GPU had work: device compute" \
	" (collectives first); GPU idle: inside a collective, collectives; else by the main thread, sync >" \
	" launch > blocked (input wait; other waits where it wrote or synced files or waited for a child" \
	" process) > waiting for a CPU (CPU wait) > on a CPU (host compute); without GPU marks, host-bound stretches" \
	" (the GPU kept up with the host) are the host's: launch inside launches, else host compute"

void ia_step_breakdown_print(FILE *f, const struct ia_analysis *a)
{
	const struct ia_step_breakdown *b = &a->step_parts;
	char d1[32], d2[32];
	if (!b->n)
		return;
	fprintf(f, "\nSteps: where each step's time went, %zu steady steps (median %s)\n", b->n,
		ia_fmt_dur(d1, sizeof d1, a->step_times.p50));
	if (b->host_ahead) {
		char d3[32];
		fprintf(f, "  The host ran ahead of the GPU: it issued a step in %s (the median) and waited for the GPU "
			   "in its CUDA calls now and then (a full queue, a sync), so a step took %s on average, the "
			   "GPU's pace; the steps' medians are the host's, their shares the GPU's.\n", ia_fmt_dur(d2, sizeof d2, a->step_times.p50),
			ia_fmt_dur(d3, sizeof d3, (uint64_t)a->step_times.mean));
	}
	/* where the steps leave much of the steady state out, the table's
	 * shares are not the headline's (c09: 13 steps, 110 ms of 216) */
	uint64_t steady = a->idle.steady_ns;
	if (steady && (double)b->total_ns < STEPS_COVER_SAID * (double)steady) {
		char d3[32];
		fprintf(f, "  The steps cover %s of the %s steady state (%.0f%%): the rest is where no whole step was "
			   "found (before the first, after the last, around a one-time phase, or where the calls did not "
			   "follow the step's pattern); the shares below are of the steps alone.\n", ia_fmt_dur(d2, sizeof d2, b->total_ns), ia_fmt_dur(d3, sizeof d3, steady),
			100.0 * (double)b->total_ns / (double)steady);
	}
	fprintf(f, "  %-16s %9s %9s %7s\n", "part", "median", "p90", "share");
	for (int r = 0; r < IA_STEP_NPARTS; r++) {
		enum ia_step_part p = rows[r];
		if ((p == IA_STEP_COLLECTIVES || p == IA_STEP_OTHER_WAIT || p == IA_STEP_CPU_WAIT) && !b->sum_ns[p])
			continue;   /* none in the trace */
		fprintf(f, "  %-16s %9s %9s %6.0f%%\n", ia_step_part_name(p), ia_fmt_dur(d1, sizeof d1, b->p50_ns[p]),
			ia_fmt_dur(d2, sizeof d2, b->p90_ns[p]), b->share_pct[p]);
	}
	fprintf(f, "  Class: %s. Input-bound: input wait >= 20%% of the step (5%%: somewhat); %ssync, host, "
		   "launch >= 20%% (10%%); collectives >= 40%% (10%%); else device-bound when device compute "
		   ">= 50%% (XProf's tiers; shares of the steps' summed time).\n", b->cls,
		b->sum_ns[IA_STEP_OTHER_WAIT] && b->sum_ns[IA_STEP_CPU_WAIT] ? "other waits (wait-bound), CPU wait "
		"(CPU-starved), " : b->sum_ns[IA_STEP_OTHER_WAIT] ? "other waits (wait-bound), "
		: b->sum_ns[IA_STEP_CPU_WAIT] ? "CPU wait (CPU-starved), " : "");
	fprintf(f, "  Parts: where the GPU had work, device compute (collectives while one of the process's ran); "
		   "where it idled, collectives while one ran on the host (gloo), else what the main thread did: in a "
		   "sync, in a launch, blocked (input wait: workers, a producer, reading%s; in backward() while "
		   "autograd's thread queued the work, or on the GIL, host compute), waiting for a CPU (CPU wait), "
		   "else host compute%s.\n",
		b->sum_ns[IA_STEP_OTHER_WAIT] ? "; other waits: writing or syncing files, a child process" : "",
		a->gaps.gpu.measured ? "" : "; without GPU marks, stretches where the GPU kept up with the host "
		"count as the host's (launches, host compute)");
}

cJSON *ia_step_breakdown_json(const struct ia_analysis *a)
{
	const struct ia_step_breakdown *b = &a->step_parts;
	cJSON *o = cJSON_CreateObject();
	ia_json_u64(o, "steps", b->n);
	if (!b->n)
		return o;
	ia_json_u64(o, "total_ns", b->total_ns);
	if (a->idle.steady_ns) {   /* how much of the steady state the steps cover */
		ia_json_u64(o, "steady_ns", a->idle.steady_ns);
		double cover = 100.0 * (double)b->total_ns / (double)a->idle.steady_ns;   /* (a step may reach past it) */
		ia_json_round(o, "covers_pct", cover < 100 ? cover : 100, 1);
	}
	cJSON_AddBoolToObject(o, "host_ahead", b->host_ahead);   /* the median step the host's issuing, the mean the GPU's pace */
	ia_json_str(o, "class", b->cls);
	if (b->cls_part >= 0)
		ia_json_str(o, "class_part", ia_step_part_key((enum ia_step_part)b->cls_part));
	else
		cJSON_AddNullToObject(o, "class_part");
	cJSON *parts = cJSON_AddObjectToObject(o, "parts");
	cJSON *th = cJSON_AddObjectToObject(o, "thresholds");
	for (int r = 0; r < IA_STEP_NPARTS; r++) {
		enum ia_step_part p = rows[r];
		cJSON *x = cJSON_AddObjectToObject(parts, ia_step_part_key(p));
		ia_json_u64(x, "p50_ns", b->p50_ns[p]);
		ia_json_u64(x, "p90_ns", b->p90_ns[p]);
		ia_json_u64(x, "total_ns", b->sum_ns[p]);
		ia_json_round(x, "share_pct", b->share_pct[p], 1);
		if (p == IA_STEP_DEVICE)
			continue;
		cJSON *y = cJSON_AddObjectToObject(th, ia_step_part_key(p));
		ia_json_round(y, "high_pct", ia_step_threshold(p)->high_pct, 0);
		ia_json_round(y, "moderate_pct", ia_step_threshold(p)->moderate_pct, 0);
	}
	cJSON *ord = cJSON_AddArrayToObject(o, "class_order");
	for (size_t i = 0; i < ia_step_class_order_n; i++)
		cJSON_AddItemToArray(ord, cJSON_CreateString(ia_step_part_key(ia_step_class_order[i])));
	ia_json_str(o, "overlap", OVERLAP);
	return o;
}
