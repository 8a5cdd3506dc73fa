/*
 * bpf_cost.c — what the tracer's own BPF programs cost: the kernel's
 * run-time statistics (BPF_ENABLE_STATS, held on from load to the end),
 * summed over every program we loaded and stored in the session table as
 * bpf_run_ns and bpf_runs, beside the run's wall time.  Only when asked
 * (INGERO_BPF_STATS=1): the statistics are the kernel's, for every BPF
 * program on the machine, and add two clock reads to each run of each —
 * other tools' programs too.  Without them (not asked, a kernel before
 * 5.8) the keys are absent and `stats` says nothing of it.
 *
 * Where the program pauses and resumes its capture (the overhead bench's
 * toggle: one process against itself), the programs' time is also split
 * by mode from its first start on — bpf_run_ns.recording and .paused beside
 * bpf_mode_ns.recording and .paused, per program too — since the toggle's
 * figure holds only what recording adds: a switch's record, a sample's
 * stack walk.
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

#define MODE_PROGS 32
static const char *const mode_name[2] = { "paused", "recording" };

struct bpf_modes {
	int mode;                     /* 0 paused, 1 recording; -1 before the first change */
	uint64_t since_ns;            /* when it began */
	uint64_t mode_ns[2];
	unsigned n;                   /* programs, in the order each_program gives them */
	const char *name[MODE_PROGS];
	uint64_t last_ns[MODE_PROGS], last_runs[MODE_PROGS];
	uint64_t run_ns[2][MODE_PROGS], runs[2][MODE_PROGS];
};

/* Every program we loaded with its figures so far, in a fixed order. */
static unsigned each_program(struct tracer *t, const char **name, uint64_t *ns, uint64_t *runs)
{
	const struct bpf_object *objs[] = { t->sched ? t->sched->obj : NULL, t->proc ? t->proc->obj : NULL,
					    t->mem ? t->mem->obj : NULL, t->samples ? t->samples->obj : NULL };
	unsigned n = 0;

	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
		struct bpf_program *p;

		if (!objs[i])
			continue;
		bpf_object__for_each_program(p, objs[i]) {
			struct bpf_prog_info info;
			uint32_t len = sizeof info;
			int fd = bpf_program__fd(p);

			if (n == MODE_PROGS)
				return n;
			memset(&info, 0, sizeof info);
			if (fd >= 0)
				bpf_obj_get_info_by_fd(fd, &info, &len);
			name[n] = bpf_program__name(p);
			ns[n] = info.run_time_ns;
			runs[n] = info.run_cnt;
			n++;
		}
	}
	return n;
}

void bpf_cost_mode(struct tracer *t, int recording)
{
	const char *name[MODE_PROGS];
	uint64_t ns[MODE_PROGS], runs[MODE_PROGS];

	if (t->stats_fd < 0)
		return;
	/* from the first start on: a program launched paused spends its
	 * start-up (imports, forks, page faults) before it, which no paused
	 * chunk of its loop has */
	if (!t->modes && !recording)
		return;
	if (!t->modes) {
		t->modes = calloc(1, sizeof *t->modes);
		if (!t->modes)
			return;
		t->modes->mode = -1;
	}
	struct bpf_modes *m = t->modes;
	unsigned n = each_program(t, name, ns, runs);
	uint64_t now = mono_now_ns();
	if (m->mode >= 0 && n == m->n) {
		m->mode_ns[m->mode] += now - m->since_ns;
		for (unsigned i = 0; i < n; i++) {
			m->run_ns[m->mode][i] += ns[i] - m->last_ns[i];
			m->runs[m->mode][i] += runs[i] - m->last_runs[i];
		}
	}
	m->n = n;
	memcpy(m->name, name, n * sizeof name[0]);
	memcpy(m->last_ns, ns, n * sizeof ns[0]);
	memcpy(m->last_runs, runs, n * sizeof runs[0]);
	m->mode = recording ? 1 : 0;
	m->since_ns = now;
}

/* bpf_run_ns<what> and bpf_runs<what> ("", ".on_switch", ".on_switch.paused") */
static void store_figures(struct tracer *t, const char *what, uint64_t ns, uint64_t runs)
{
	char key[160];

	snprintf(key, sizeof key, "bpf_run_ns%s", what);
	session_set_u64(t->store, key, ns);
	snprintf(key, sizeof key, "bpf_runs%s", what);
	session_set_u64(t->store, key, runs);
}

static void store_modes(struct tracer *t)
{
	struct bpf_modes *m = t->modes;
	char what[128];

	if (!m || m->mode < 0)
		return;
	bpf_cost_mode(t, m->mode);   /* the mode going on, up to now */
	for (int k = 0; k < 2; k++) {
		uint64_t ns = 0, runs = 0;

		for (unsigned i = 0; i < m->n; i++) {
			ns += m->run_ns[k][i];
			runs += m->runs[k][i];
			if (!m->runs[k][i])
				continue;
			snprintf(what, sizeof what, ".%s.%s", m->name[i], mode_name[k]);
			store_figures(t, what, m->run_ns[k][i], m->runs[k][i]);
		}
		snprintf(what, sizeof what, "bpf_mode_ns.%s", mode_name[k]);
		session_set_u64(t->store, what, m->mode_ns[k]);
		snprintf(what, sizeof what, ".%s", mode_name[k]);
		store_figures(t, what, ns, runs);
	}
}

/* Per program too ("bpf_run_ns.on_switch"): which of them a workload
 * pays for (a context switch, a sample, a page fault). */
void bpf_cost_store(struct tracer *t)
{
	const char *name[MODE_PROGS];
	uint64_t ns[MODE_PROGS], runs[MODE_PROGS], all_ns = 0, all_runs = 0;
	char what[128];

	if (t->stats_fd < 0)
		return;
	store_modes(t);
	unsigned n = each_program(t, name, ns, runs);
	for (unsigned i = 0; i < n; i++) {
		all_ns += ns[i];
		all_runs += runs[i];
		if (!runs[i])
			continue;
		snprintf(what, sizeof what, ".%s", name[i]);
		store_figures(t, what, ns[i], runs[i]);
	}
	store_figures(t, "", all_ns, all_runs);
}

void bpf_cost_disable(struct tracer *t)
{
	if (t->stats_fd >= 0)
		close(t->stats_fd);
	t->stats_fd = -1;
	free(t->modes);
	t->modes = NULL;
}
