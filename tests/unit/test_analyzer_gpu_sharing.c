/*
 * test_analyzer_gpu_sharing.c — other processes that queued GPU work all
 * through the main process's steady state: one that launched every 20 ms
 * for the whole second shares the GPU, one that launched only in its first
 * tenth and one that only synced do not; the machine's GPU count comes
 * from the session; seen from the other side, the main process shares too;
 * and an episode cut out of the steady state leaves its time out of the
 * slices.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ingero/api.h>
#include <ingero/schema.h>

#include "report_fixture.h"
#include "../../analyzer/measure/gpu_sharing.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define US 1000ull
#define MS (1000 * US)

static char path[64];

static void build(void)
{
	snprintf(path, sizeof path, "/tmp/ia-sharing-%d.db", (int)getpid());
	sqlite3 *db = rf_create(path, 16, "python3 sweep.py");
	rf_exec(db, "INSERT INTO session VALUES('gpus','1')");
	rf_exec(db, "INSERT INTO processes(pid, ppid, comm) VALUES(100, 1, 'python3'), (200, 1, 'python3'), "
		    "(300, 1, 'python3'), (400, 1, 'python3')");
	rf_exec(db, "INSERT INTO threads VALUES(100, 100, 'python3'), (200, 200, 'python3'), (300, 300, 'python3'), "
		    "(400, 400, 'python3')");
	struct ingero_cuda_call c[400];
	size_t n = 0;
	for (uint64_t t = 0; t < 1000 * MS; t += 10 * MS)   /* the main process, all through */
		c[n++] = tb_call(100, 100, INGERO_API_CU_LAUNCH_KERNEL, t, 5 * US);
	for (uint64_t t = 5 * MS; t < 1000 * MS; t += 20 * MS)   /* another run, all through */
		c[n++] = tb_call(200, 200, INGERO_API_CU_LAUNCH_KERNEL, t, 5 * US);
	for (uint64_t t = 1 * MS; t < 100 * MS; t += 5 * MS)   /* one that stopped early */
		c[n++] = tb_call(300, 300, INGERO_API_CU_LAUNCH_KERNEL, t, 5 * US);
	for (uint64_t t = 2 * MS; t < 1000 * MS; t += 50 * MS)   /* one that only waits: no work queued */
		c[n++] = tb_call(400, 400, INGERO_API_CUDA_STREAM_SYNCHRONIZE, t, 5 * US);
	char err[256];
	if (tb_insert_calls(db, c, n, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
}

static void sharing_of(int main_pid, const struct ia_phases *ph, struct ia_gpu_sharing *s)
{
	struct ia_trace t;
	rf_load(path, 0, &t);
	assert_int_equal(ia_gpu_sharing_compute(&t, main_pid, ph, 0, 1000 * MS, s), 0);
	rf_unload(&t, NULL);
}

static void a_run_all_through_shares(void **state)
{
	(void)state;
	build();
	struct ia_phases ph;
	memset(&ph, 0, sizeof ph);   /* no episode: the steady state is the whole second */
	struct ia_gpu_sharing s;
	sharing_of(100, &ph, &s);
	assert_int_equal(s.gpus, 1);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.pids[0], 200);
	sharing_of(200, &ph, &s);   /* and the other way round */
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.pids[0], 100);
	sharing_of(300, &ph, &s);   /* the early one's view: both runs shared its second */
	assert_int_equal(s.nprocs, 2);
	assert_int_equal(s.pids[0], 100);
	assert_int_equal(s.pids[1], 200);
	sharing_of(999, &ph, &s);   /* no such process: nothing */
	assert_int_equal(s.nprocs, 0);
	unlink(path);
}

/* With the steady state only the first tenth (an episode from 100 ms on),
 * the early process queued work all through it: it shares; the run that
 * launched every 20 ms touched 5 of its 20 slices: it does not. */
static void steady_state_only(void **state)
{
	(void)state;
	build();
	struct ia_phase_episode ep = { .start = 100 * MS, .end = 1000 * MS };
	struct ia_phases ph;
	memset(&ph, 0, sizeof ph);
	ph.ep = &ep;
	ph.nep = 1;
	struct ia_gpu_sharing s;
	sharing_of(100, &ph, &s);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.pids[0], 300);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_run_all_through_shares),
		cmocka_unit_test(steady_state_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
