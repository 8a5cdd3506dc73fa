/*
 * bpf_cost.c — what the tracer's own BPF programs cost: the kernel's
 * run-time statistics (BPF_ENABLE_STATS, held on from load to the end),
 * summed over every program we loaded and stored in the session table as
 * bpf_run_ns and bpf_runs, beside the run's wall time.  Only when asked
 * (INGERO_BPF_STATS=1): the statistics are the kernel's, for every BPF
 * program on the machine, and add two clock reads to each run of each —
 * other tools' programs too.  Without them (not asked, a kernel before
 * 5.8) the keys are absent and `stats` says nothing of it.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/mem.skel.h"
#include "bpf/proc.skel.h"
#include "bpf/samples.skel.h"
#include "bpf/sched.skel.h"
#include "session.h"
#include "tracer.h"

void bpf_cost_enable(struct tracer *t)
{
	const char *want = getenv("INGERO_BPF_STATS");

	t->stats_fd = want && strcmp(want, "1") == 0 ? bpf_enable_stats(BPF_STATS_RUN_TIME) : -1;
}

/* Per program too ("bpf_run_ns.on_switch"): which of them a workload
 * pays for (a context switch, a sample, a page fault). */
static void add_object(struct tracer *t, const struct bpf_object *obj, uint64_t *ns, uint64_t *runs)
{
	struct bpf_program *p;

	if (!obj)
		return;
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof info;
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof info);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*ns += info.run_time_ns;
		*runs += info.run_cnt;
		if (!info.run_cnt)
			continue;
		char key[128];
		snprintf(key, sizeof key, "bpf_run_ns.%s", bpf_program__name(p));
		session_set_u64(t->store, key, info.run_time_ns);
		snprintf(key, sizeof key, "bpf_runs.%s", bpf_program__name(p));
		session_set_u64(t->store, key, info.run_cnt);
	}
}

void bpf_cost_store(struct tracer *t)
{
	uint64_t ns = 0, runs = 0;

	if (t->stats_fd < 0)
		return;
	add_object(t, t->sched ? t->sched->obj : NULL, &ns, &runs);
	add_object(t, t->proc ? t->proc->obj : NULL, &ns, &runs);
	add_object(t, t->mem ? t->mem->obj : NULL, &ns, &runs);
	add_object(t, t->samples ? t->samples->obj : NULL, &ns, &runs);
	session_set_u64(t->store, "bpf_run_ns", ns);
	session_set_u64(t->store, "bpf_runs", runs);
}

void bpf_cost_disable(struct tracer *t)
{
	if (t->stats_fd >= 0)
		close(t->stats_fd);
	t->stats_fd = -1;
}
