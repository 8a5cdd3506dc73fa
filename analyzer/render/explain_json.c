/*
 * explain_json.c — the explain --json document of an analysis, the
 * contract of issue 5:
 *   {"chains":[{"severity","kind","api","summary","root_cause","fixes",
 *               "timeline","evidence","source"}],
 *    "gpu_idle_pct":{"low","high","estimate":true,"basis"}, "verdict":{…} (verdict.h),
 *    "where_time_went":{…}, "gaps":{…}, "processes":[…], "trace":{…}}
 */
#include "load/trace_status.h"
#include "render/explain_json.h"

#include "base/json_out.h"
#include "base/util.h"
#include "render/finding.h"
#include "render/headline.h"
#include "render/step_times.h"
#include "render/step_breakdown.h"
#include "rules/verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *ia_explain_json(const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	cJSON *root = cJSON_CreateObject();
	cJSON *ch = cJSON_AddArrayToObject(root, "chains");
	for (size_t i = 0; i < a->nchains; i++)
		cJSON_AddItemToArray(ch, ia_finding_json(a, &a->chains[i]));

	uint64_t win = a->idle.window_ns;
	cJSON_AddItemToObject(root, "figures", ia_figures_json(a));
	cJSON_AddItemToObject(root, "step_times", ia_step_times_json(a));
	cJSON_AddItemToObject(root, "step_breakdown", ia_step_breakdown_json(a));
	cJSON_AddItemToObject(root, "gpu_idle_pct", ia_idle_json(&a->idle));
	if (a->nvtx.present)
		cJSON_AddItemToObject(root, "nvtx_ranges", ia_nvtx_json(&a->nvtx));
	struct ia_verdict v;
	ia_verdict_compute(a, &v);
	cJSON_AddItemToObject(root, "verdict", ia_verdict_json(&v));
	cJSON_AddItemToObject(root, "phases", ia_phases_json(&a->ph, t, g->win_start, g->win_end));

	cJSON *w = cJSON_AddObjectToObject(root, "where_time_went");
	ia_json_u64(w, "window_ns", win);
	ia_json_u64(w, "host_busy_ns", g->main_oncpu_ns);
	ia_json_u64(w, a->pp.nworkers ? "host_waiting_on_workers_ns" : "host_blocked_ns", g->main_blocked_ns);
	ia_json_u64(w, "host_preempted_ns", g->main_runq_ns);
	ia_json_u64(w, "sync_ns", g->in_sync_ns);
	ia_json_u64(w, "copy_ns", g->in_copy_ns);
	ia_json_u64(w, "launch_ns", g->in_launch_ns);
	ia_json_u64(w, "other_cuda_ns", g->in_other_ns);
	ia_json_u64(w, "host_with_gpu_work_queued_ns", g->queued_host_ns);

	cJSON *gj = cJSON_AddObjectToObject(root, "gaps");
	ia_json_u64(gj, "count", g->n);
	ia_json_u64(gj, "total_ns", g->total_ns);
	ia_json_u64(gj, "main_oncpu_ns", g->main_oncpu_ns);
	ia_json_u64(gj, "main_blocked_ns", g->main_blocked_ns);
	ia_json_u64(gj, "main_runq_ns", g->main_runq_ns);
	ia_json_u64(gj, "workers_oncpu_ns", g->workers_oncpu_ns);
	ia_json_u64(gj, "samples_main", g->samples_main);
	ia_json_u64(gj, "samples_main_loader", g->samples_main_loader);
	ia_json_u64(gj, "samples_workers", g->samples_workers);
	ia_json_u64(gj, "samples_siblings", g->samples_siblings);
	ia_json_u64(gj, "main_iowait_ns", g->main_iowait_ns);
	ia_gaps_blocked_in_json(gj, "main_blocked_in", g->main_sys_ns, g->main_blocked_ns);
	ia_gap_blocks_json(gj, "main", g, &g->main_blocks, 5);
	if (a->pp.nworkers)
		ia_gap_workers_json(gj, g);
	ia_gap_children_json(gj, a->t, g);
	cJSON *ts = cJSON_AddArrayToObject(gj, "top_stacks");
	for (size_t i = 0; i < g->nstacks && i < 8; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "symbol", g->stacks[i].label);
		ia_json_str(o, "python", g->stacks[i].python[0] ? g->stacks[i].python : NULL);
		ia_json_u64(o, "main", g->stacks[i].main);
		ia_json_u64(o, "workers", g->stacks[i].workers);
		ia_json_u64(o, "other", g->stacks[i].other);
		ia_json_u64(o, "siblings", g->stacks[i].siblings);
		cJSON_AddItemToArray(ts, o);
	}
	ia_gap_end_lines_json(gj, "ending_lines", t, g, 5);

	cJSON *procs = ia_per_process_json(t, &a->pp);
	for (size_t i = 0; i < a->pp.n; i++)
		if (a->pp.p[i].role == IA_ROLE_WORKER)
			ia_json_u64(cJSON_GetArrayItem(procs, (int)i), "oncpu_in_gaps_ns", g->worker_oncpu_ns[i]);
	cJSON_AddItemToObject(root, "processes", procs);

	cJSON *tr = cJSON_AddObjectToObject(root, "trace");
	ia_json_str(tr, "command", t->command);
	ia_json_str(tr, "gpu", t->gpu);
	cJSON_AddNumberToObject(tr, "cpus", t->cpus);
	if (t->cpu_limit > 0) {
		cJSON_AddNumberToObject(tr, "cpu_limit", t->cpu_limit);
		ia_json_u64(tr, "cpu_limit_periods", t->cpu_limit_periods);
		ia_json_u64(tr, "cpu_limit_throttled_periods", t->cpu_limit_throttled_periods);
		ia_json_u64(tr, "cpu_limit_throttled_ns", t->cpu_limit_throttled_ns);
	}
	ia_json_u64(tr, "window_start_rel_ns", g->win_start - t->t0);
	ia_json_u64(tr, "window_end_rel_ns", g->win_end - t->t0);
	ia_json_u64(tr, "cuda_calls", t->ncalls);
	ia_json_u64(tr, "off_cpu_intervals", t->noffs);
	ia_capture_json(tr, &t->capture, t->t0);
	ia_trace_status_json(tr, t);
	cJSON *lost = cJSON_AddObjectToObject(tr, "losses");   /* by source, non-zero only */
	for (size_t i = 0; i < t->nlosses; i++)
		ia_json_u64(lost, t->losses[i].source, t->losses[i].count);
	cJSON *sev = cJSON_AddObjectToObject(root, "severity_counts");
	ia_json_u64(sev, "HIGH", ia_chains_count(a, IA_SEV_HIGH));
	ia_json_u64(sev, "MEDIUM", ia_chains_count(a, IA_SEV_MEDIUM));
	ia_json_u64(sev, "LOW", ia_chains_count(a, IA_SEV_LOW));
	return root;
}
