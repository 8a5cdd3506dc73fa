/*
 * chain_gaps_wait.c — the main thread blocked in the gaps, followed to the
 * end of its wait (see chain_gaps.h; the hops are measured in wakers.c).
 *
 * "Find the producer" is the tool's job: where one thread ended most of
 * the main thread's waits, the finding names it and says what it did
 * meanwhile — ran (its line is the Source: make it faster, start it
 * earlier, run more of them), waited for a CPU (who held them: CPUs of its
 * own, or the quota), waited on storage, or blocked in turn — with the fix
 * for that end, not for the first wait.
 */
#include "rules/chain_gaps.h"

#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <string.h>

int ia_gap_wait_for_cause(struct ia_chain *c, const struct gap_view *v)
{
	const struct ia_analysis *a = v->a;
	const struct ia_wakers *w = &a->wakers;
	if (!w->nhops)
		return 0;
	const struct ia_wait_hop *last = &w->hop[w->nhops - 1];
	char path[1200], who[96];
	ia_wakers_text(a->t, w, path, sizeof path);
	ia_wait_hop_name(a->t, last, who, sizeof who);
	ia_addf(c->root_cause, sizeof c->root_cause, ": %s.", path);
	switch (w->end) {
	case IA_WAITEND_RUNQ:
		if (ia_cpu_quota_held_back(a, w->ntakers != 0, last->runq_ns)) {
			ia_cpu_quota_cause(c, a);
			ia_cpu_quota_fix(c);
		} else {
			ia_addf(c->root_cause, sizeof c->root_cause, " The wait ends in CPU contention: the %s the loop "
				"depends on was runnable but not running.", who);
		}
		ia_chain_fix(c, "Give the %s CPUs of its own: fewer competing processes, or taskset/cgroups to keep "
				"them off the training job's CPUs — while it waits for a CPU, the training loop waits for it",
			     who);
		break;
	case IA_WAITEND_ONCPU:
		if (last->line[0])
			snprintf(c->source, sizeof c->source, "%s", last->line);
		{
			/* the native function and the user's line both: the line says where, the
			 * function what is expensive there (a hash, a copy, a decode) */
			char where[400] = "";
			if (last->label[0] && last->line[0])
				snprintf(where, sizeof where, " (its time goes to %s at %s)", last->label, last->line);
			else if (last->label[0] || last->line[0])
				snprintf(where, sizeof where, " (its time goes to %s)",
					 last->line[0] ? last->line : last->label);
			ia_chain_fix(c, "Make the work of the %s cheaper or start it earlier%s: the loop waits for its "
					"result each step", who, where);
		}
		ia_chain_fix(c, "Run more of it in parallel (several producer threads or processes, or DataLoader "
				"workers), so the next step's input is ready when the GPU finishes");
		break;
	case IA_WAITEND_IO:
		ia_chain_fix(c, "Take storage off the %s's path: keep the data in RAM or on local NVMe, read ahead, "
				"or overlap the reads with GPU work", who);
		break;
	case IA_WAITEND_SLEEP:
		ia_chain_fix(c, "The %s sleeps between the items it hands over (time.sleep, a timer): if the sleep "
				"paces it or polls for work, remove it or wait on the work itself", who);
		break;
	default:
		ia_chain_fix(c, "Find what the %s itself waits for (it blocked most of the time the loop waited for "
				"it): the loop's wait ends there", who);
	}
	return 1;
}

const char *ia_gap_wait_for_brief(const struct gap_view *v, char *buf, size_t n)
{
	const struct ia_wakers *w = &v->a->wakers;
	char who[96];
	buf[0] = 0;
	if (!w->nhops)
		return buf;
	ia_wait_hop_name(v->a->t, &w->hop[0], who, sizeof who);
	static const char *end[] = { "", ", which ran", ", which waited for a CPU", ", which waited on storage",
				     ", which slept", ", which blocked in turn" };
	snprintf(buf, n, "waiting for its %s%s", who, w->nhops > 1 ? " (through others)" : end[w->end]);
	return buf;
}
