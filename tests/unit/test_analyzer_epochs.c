/*
 * test_analyzer_epochs.c — epoch boundaries on a hand-built report.db: a
 * loop of steps (a launch, then a sync that waits for it) paused at each
 * epoch boundary, where the main thread's samples show the sampler
 * permuting under the DataLoader iterator's _reset.  With two boundaries
 * they are a phase and a finding of their own (counted, timed, the
 * permutation named, the steady state's gaps without them); with one, the
 * iterator's start is the loop's start-up and no epoch finding is made;
 * two stretches with no step between them are one boundary; whether the
 * workers outlive an epoch (no fork at a restart: persistent) or not (a
 * fork at every start), which the workers' fix then says.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/analysis.h"
#include "../../analyzer/rules/chains.h"
#include "../../analyzer/load/db.h"
#include "../../analyzer/load/trace.h"

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000L
#define SP "/opt/venv/lib/python3.12/site-packages/torch/utils/data/"
#define STEP (5 * MS)            /* a launch, then a sync that waits until 50 us before the next step */
#define END (3000 * MS)
#define BOUNDARY (200 * MS)      /* an epoch boundary: no CUDA call, the sampler on the main thread */

static char path[64];

static int in_boundary(const long *b, int nb, long t)
{
	for (int i = 0; i < nb; i++)
		if (t >= b[i] && t < b[i] + BOUNDARY)
			return 1;
	return 0;
}

/* 50 ms with no CUDA call from quiet (-1: none): the main thread's samples there show a step's stack */
static int in_quiet(long quiet, long t)
{
	return quiet >= 0 && t >= quiet && t < quiet + 50 * MS;
}

/* Stack 1: a step (the user's line under torch.nn); stack 2: RandomSampler
 * permuting under _reset, under DataLoader.__iter__ (innermost first). */
static void stacks(sqlite3 *db)
{
	rf_exec(db, "INSERT INTO stacks(id, pid) VALUES(1, 100), (2, 100)");
	rf_exec(db, "INSERT INTO stack_frames(stack_id, depth, kind, symbol, file, line) VALUES"
		 "(1, 0, 'python', 'Linear.forward', '/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py', 134),"
		 "(1, 1, 'python', '<module>', 'train.py', 20),"
		 "(1, 0, 'native', 'cudaLaunchKernel', NULL, NULL),"
		 "(2, 0, 'python', 'RandomSampler.__iter__', '" SP "sampler.py', 182),"
		 "(2, 1, 'python', 'BatchSampler.__iter__', '" SP "sampler.py', 341),"
		 "(2, 2, 'python', '_MultiProcessingDataLoaderIter._reset', '" SP "dataloader.py', 1295),"
		 "(2, 3, 'python', 'DataLoader.__iter__', '" SP "dataloader.py', 497),"
		 "(2, 4, 'python', '<module>', 'train.py', 19),"
		 "(2, 0, 'native', 'at::native::randperm_out_cpu(long, at::Tensor&)', NULL, NULL),"
		 "(2, 1, 'native', '_PyEval_EvalFrameDefault', NULL, NULL)");
	/* stack 3: a worker forked by a new iterator (persistent_workers off) */
	rf_exec(db, "INSERT INTO stacks(id, pid) VALUES(3, 100)");
	rf_exec(db, "INSERT INTO stack_frames(stack_id, depth, kind, symbol, file, line) VALUES"
		 "(3, 0, 'python', 'Popen._launch', '/usr/lib/python3.12/multiprocessing/popen_fork.py', 66),"
		 "(3, 1, 'python', '_MultiProcessingDataLoaderIter.__init__', '" SP "dataloader.py', 1101),"
		 "(3, 2, 'python', 'DataLoader._get_iterator', '" SP "dataloader.py', 424),"
		 "(3, 3, 'python', 'DataLoader.__iter__', '" SP "dataloader.py', 497),"
		 "(3, 4, 'python', '<module>', 'train.py', 19),"
		 "(3, 0, 'native', '_Fork', NULL, NULL)");
}

/* 1: at each boundary some samples show a worker forked (stack 3) */
static int forks;

/* Steps from 10 ms to END, paused at each of the nb boundaries and in the
 * quiet stretch; the main thread sampled every 10 ms; one DataLoader worker. */
static void build(const long *b, int nb, long quiet)
{
	const int L = INGERO_API_CUDA_LAUNCH_KERNEL_STUB, S = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
	snprintf(path, sizeof path, "/tmp/ia-epochs-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 4, "python3 train.py");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3'), (200, 100, 'python3')");
	rf_exec(db, "INSERT INTO threads VALUES(100, 100, 'python3'), (200, 200, 'pt_data_worker')");
	stacks(db);
	size_t cap = 2 * (size_t)(END / STEP) + 2, n = 0;
	struct ingero_cuda_call *c = calloc(cap, sizeof *c);
	assert_non_null(c);
	for (long t = 10 * MS; t + STEP <= END; t += STEP) {
		if (in_boundary(b, nb, t) || in_quiet(quiet, t))
			continue;
		c[n++] = tb_call(100, 100, (uint16_t)L, (uint64_t)t, 10000);
		c[n++] = tb_call(100, 100, (uint16_t)S, (uint64_t)t + 20000, (uint64_t)(STEP - 70000));
	}
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	free(c);
	rf_exec(db, "BEGIN");
	for (long t = 10 * MS; t < END; t += 10 * MS) {
		char sql[160];
		int k = in_boundary(b, nb, t) ? (forks && (t / (10 * MS)) % 4 == 0 ? 3 : 2) : 1;
		snprintf(sql, sizeof sql, "INSERT INTO cpu_samples VALUES(100, 100, %ld, 0, %d)", t, k);
		rf_exec(db, sql);
	}
	rf_exec(db, "COMMIT");
	sqlite3_close(db);
}

static void analyze(struct ia_trace *t, struct ia_analysis *a)
{
	char err[256];
	rf_load(path, 0, t);
	if (ia_analyze(t, a, err, sizeof err) < 0)
		fail_msg("%s", err);
}

static void done(struct ia_trace *t, struct ia_analysis *a)
{
	ia_analysis_free(a);
	rf_unload(t, path);
}

static const struct ia_chain *chain_of(const struct ia_analysis *a, enum ia_kind k)
{
	for (size_t i = 0; i < a->nchains; i++)
		if (a->chains[i].kind == k)
			return &a->chains[i];
	return NULL;
}

static uint64_t ev_u64(const struct ia_chain *c, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(c->evidence, key);
	assert_non_null(x);
	return (uint64_t)x->valuedouble;
}

/* Two boundaries of 200 ms, on slice edges (slices start at the first call, 10 ms). */
static void two_boundaries(void **state)
{
	(void)state;
	const long b[] = { 1010 * MS, 2010 * MS };
	build(b, 2, -1);
	struct ia_trace t;
	struct ia_analysis a;
	analyze(&t, &a);
	assert_true(a.ph.epochs);
	assert_int_equal(ia_phases_episodes(&a.ph, IA_PHASE_EPOCH, 0, UINT64_MAX, NULL), 2);
	assert_int_equal(a.idle.phase_ns[IA_PHASE_EPOCH], 2 * BOUNDARY);
	/* the two long gaps are the boundaries', set apart: the steady state keeps its 50 us ones */
	assert_int_equal(a.gaps.nphase_gaps[IA_PHASE_EPOCH], 2);
	assert_true(a.idle.steady_low_ns * 50 < a.idle.steady_ns);
	const struct ia_chain *c = chain_of(&a, IA_KIND_EPOCH_BOUNDARIES);
	assert_non_null(c);
	assert_int_equal(c->cost_ns, 2 * BOUNDARY);
	assert_int_equal(c->sev, IA_SEV_MEDIUM);   /* 400 ms of ~3 s: >= 10 % of the window */
	assert_int_equal(ev_u64(c, "episodes"), 2);
	assert_int_equal(ev_u64(c, "iterator_starts"), 2);
	assert_int_equal(ev_u64(c, "permutations"), 2);
	assert_int_equal(ev_u64(c, "permutations_outside_starts"), 0);
	assert_int_equal(ev_u64(c, "worker_starts"), 0);
	assert_int_equal(ev_u64(c, "mean_ns"), BOUNDARY);
	assert_non_null(strstr(c->summary, "2 stretches"));
	assert_non_null(strstr(c->root_cause, "permuting"));
	assert_non_null(strstr(c->fixes[0], "torch.randperm(n)"));
	for (int i = 0; i < c->nfixes; i++)   /* the workers were never forked again */
		assert_null(strstr(c->fixes[i], "persistent_workers"));
	assert_int_equal(ia_phases_workers_persist(&a.ph), 1);   /* two restarts, no fork */
	assert_string_equal(c->source, "train.py:19");
	/* no steady-state chain: the steps keep the GPU busy */
	for (size_t i = 0; i < a.nchains; i++)
		assert_true(ia_kind_is_phase(a.chains[i].kind));
	done(&t, &a);
}

/* One boundary: a lone iterator start is the loop's start-up, not an epoch finding. */
static void one_boundary(void **state)
{
	(void)state;
	const long b[] = { 1010 * MS };
	build(b, 1, -1);
	struct ia_trace t;
	struct ia_analysis a;
	analyze(&t, &a);
	assert_false(a.ph.epochs);
	assert_int_equal(a.idle.phase_ns[IA_PHASE_EPOCH], 0);
	assert_int_equal(a.idle.phase_ns[IA_PHASE_STARTUP], BOUNDARY);
	assert_null(chain_of(&a, IA_KIND_EPOCH_BOUNDARIES));
	assert_int_equal(ia_phases_workers_persist(&a.ph), -1);   /* one start says nothing */
	done(&t, &a);
}

/* Two boundaries, each forking new workers: not persistent. */
static void forked_each_epoch(void **state)
{
	(void)state;
	const long b[] = { 1010 * MS, 2010 * MS };
	forks = 1;
	build(b, 2, -1);
	forks = 0;
	struct ia_trace t;
	struct ia_analysis a;
	analyze(&t, &a);
	const struct ia_chain *c = chain_of(&a, IA_KIND_EPOCH_BOUNDARIES);
	assert_non_null(c);
	assert_int_equal(ev_u64(c, "worker_starts"), 2);
	assert_int_equal(ia_phases_workers_persist(&a.ph), 0);
	done(&t, &a);
}

/* The end of one epoch's sampling and the next one's start, with no step
 * between them (50 ms without a launch): one boundary, not two. */
static void joined_boundary(void **state)
{
	(void)state;
	const long b[] = { 1010 * MS, 1260 * MS, 2010 * MS };
	build(b, 3, 1210 * MS);
	struct ia_trace t;
	struct ia_analysis a;
	analyze(&t, &a);
	assert_int_equal(ia_phases_episodes(&a.ph, IA_PHASE_EPOCH, 0, UINT64_MAX, NULL), 2);
	assert_int_equal(a.idle.phase_ns[IA_PHASE_EPOCH], 3 * BOUNDARY + 50 * MS);
	const struct ia_chain *c = chain_of(&a, IA_KIND_EPOCH_BOUNDARIES);
	assert_non_null(c);
	assert_int_equal(ev_u64(c, "episodes"), 2);
	done(&t, &a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_boundaries),
		cmocka_unit_test(one_boundary),
		cmocka_unit_test(joined_boundary),
		cmocka_unit_test(forked_each_epoch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
