/*
 * test_analyzer_verdict.c — the one-line verdict from hand-set figures:
 * busy under 3 % steady idle, starving with a MEDIUM steady finding, slowed
 * when that finding comes with under 10 % idle, unknown for wide host-only
 * bounds without a finding, a slow call with no host cause never named as
 * the cause, the costliest phase finding named apart, nothing without a
 * steady state, a busy GPU's kernels with the streams they ran on, the
 * processes it was shared with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/rules/verdict.h"

#include <string.h>

#define MS 1000000ull

static struct ia_analysis an;
static struct ia_chain ch[4];

/* a steady state of 1 s with steady GPU idle in [lo, hi] ms */
static void steady(uint64_t lo, uint64_t hi, int measured)
{
	memset(&an, 0, sizeof an);
	memset(ch, 0, sizeof ch);
	an.idle.steady_ns = 1000 * MS;
	an.idle.window_ns = 1000 * MS;
	an.idle.steady_low_ns = lo * MS;
	an.idle.steady_high_ns = hi * MS;
	an.idle.measured = measured;
	an.chains = ch;
}

static void add(enum ia_kind k, enum ia_severity sev, double impact, cJSON *evidence)
{
	struct ia_chain *c = &ch[an.nchains++];
	c->kind = k;
	c->sev = sev;
	c->impact = impact;
	c->cost_ns = (uint64_t)(impact * 1000 * MS);
	c->evidence = evidence;
}

static void busy_without_findings(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(0, 20, 1);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_BUSY);
	assert_null(v.cause);
	assert_non_null(strstr(v.text, "not starving"));
}

static void starving_names_the_first_steady_cause(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(400, 600, 1);
	add(IA_KIND_STARTUP, IA_SEV_MEDIUM, 0.5, NULL);   /* costs more, but a phase */
	add(IA_KIND_GAPS_WAITING_WORKERS, IA_SEV_HIGH, 0.4, NULL);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_STARVING);
	assert_ptr_equal(v.cause, &ch[1]);
	assert_ptr_equal(v.one_time, &ch[0]);
	assert_non_null(strstr(v.text, "DataLoader workers"));
	assert_non_null(strstr(v.text, "start-up took 50% of the window"));
	cJSON *j = ia_verdict_json(&v);
	assert_string_equal(cJSON_GetObjectItem(j, "state")->valuestring, "starving");
	assert_string_equal(cJSON_GetObjectItem(j, "cause_kind")->valuestring, "gaps_waiting_workers");
	assert_string_equal(cJSON_GetObjectItem(j, "one_time_kind")->valuestring, "startup");
	cJSON_Delete(j);
}

/* a blocked main thread's cause says what it waited for, where the finding
 * does (evidence blocked_on); without it, the kind's words alone */
static void blocked_says_what_it_waited_for(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(700, 800, 1);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "blocked_on", "waiting for its subprocess nvidia-smi");
	add(IA_KIND_GAPS_HOST_BLOCKED, IA_SEV_HIGH, 0.7, ev);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_STARVING);
	assert_non_null(strstr(v.text, "The cause: the main thread blocked between CUDA calls, waiting for its "
				    "subprocess nvidia-smi (the first finding below)."));
	cJSON_Delete(ev);
	steady(700, 800, 1);
	add(IA_KIND_GAPS_HOST_BLOCKED, IA_SEV_HIGH, 0.7, NULL);
	ia_verdict_compute(&an, &v);
	assert_non_null(strstr(v.text, "The cause: the main thread blocked between CUDA calls (the first finding below)."));
	/* the words belong to the blocked kind only */
	steady(700, 800, 1);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "blocked_on", "asleep in clock_nanosleep");
	add(IA_KIND_GAPS_HOST_BUSY, IA_SEV_HIGH, 0.7, ev);
	ia_verdict_compute(&an, &v);
	assert_null(strstr(v.text, "asleep"));
	cJSON_Delete(ev);
}

static void slowed_when_the_gpu_barely_idles(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(20, 35, 1);
	add(IA_KIND_PAGEABLE_COPIES, IA_SEV_MEDIUM, 0.08, NULL);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_SLOWED);
	assert_non_null(strstr(v.text, "pageable host memory"));
}

static void slow_calls_without_a_host_cause_are_no_cause(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(50, 70, 1);
	cJSON *no = cJSON_CreateObject(), *yes = cJSON_CreateObject();
	cJSON_AddBoolToObject(no, "host_cause", 0);
	cJSON_AddBoolToObject(yes, "host_cause", 1);
	add(IA_KIND_SLOW_CALLS, IA_SEV_MEDIUM, 0.2, no);
	ia_verdict_compute(&an, &v);
	assert_null(v.cause);
	assert_int_equal(v.state, IA_VERDICT_PARTLY);
	add(IA_KIND_SLOW_CALLS, IA_SEV_MEDIUM, 0.1, yes);
	ia_verdict_compute(&an, &v);
	assert_ptr_equal(v.cause, &ch[1]);
	assert_int_equal(v.state, IA_VERDICT_SLOWED);   /* 5-7 % idle: slowed, not starved */
	cJSON_Delete(no);
	cJSON_Delete(yes);
}

static void wide_host_bounds_are_unknown(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(10, 900, 0);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_UNKNOWN);
	assert_non_null(strstr(v.text, "host evidence only"));
	/* the same bounds measured: partly idle, not unknown */
	steady(10, 900, 1);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_PARTLY);
}

static void nothing_without_a_steady_state(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(0, 0, 1);
	an.idle.steady_ns = 0;
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_NONE);
	assert_string_equal(v.text, "");
	cJSON *j = ia_verdict_json(&v);
	assert_string_equal(cJSON_GetObjectItem(j, "state")->valuestring, "none");
	assert_null(cJSON_GetObjectItem(j, "text"));
	cJSON_Delete(j);
}

/* a busy GPU's list says which entries ran on another stream than the
 * most work, and that the shares add the streams' times */
static void busy_list_says_the_streams(void **state)
{
	(void)state;
	struct ia_verdict v;
	struct ia_kernel_time kt[3] = {
		{ .name = "gemm", .short_name = "gemm", .ns = 500 * MS, .timed = 5, .where = IA_ON_MAIN },
		{ .name = "copies host to device (pinned)", .short_name = "copies host to device (pinned)",
		  .kind = IA_WORK_COPY, .ns = 300 * MS, .timed = 5, .where = IA_ON_OTHER },
		{ .name = "relu", .short_name = "relu", .ns = 200 * MS, .timed = 5, .where = IA_ON_MAIN | IA_ON_OTHER },
	};
	steady(0, 10, 1);
	an.gaps.gpu = (struct ia_gpu_time){ .measured = 1, .kernels = kt, .nkernels = 3, .work_ns = 1000 * MS,
					    .several_streams = 1 };
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_BUSY);
	assert_non_null(strstr(v.text, "gemm 50%,"));
	assert_non_null(strstr(v.text, "(pinned) 30% (on another stream)"));
	assert_non_null(strstr(v.text, "relu 20% (on several streams)"));
	assert_non_null(strstr(v.text, "each share is of the streams' summed time"));
	cJSON *j = ia_verdict_json(&v);
	cJSON *ks = cJSON_GetObjectItem(j, "kernels");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ks, 0), "stream")->valuestring, "main");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ks, 1), "stream")->valuestring, "other");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ks, 2), "stream")->valuestring, "several");
	cJSON_Delete(j);
	/* one stream a process: nothing said */
	an.gaps.gpu.several_streams = 0;
	ia_verdict_compute(&an, &v);
	assert_null(strstr(v.text, "stream"));
}

/* other processes that queued work all through the steady state: on one
 * GPU the verdict says they took turns with this one (busy: each slower
 * than alone; starving: the idle is this process's own), with several
 * GPUs nothing, with the count unknown a hedged line */
static struct ia_proc one_proc[1] = { { .pid = 100 } };
static struct ia_trace one_trace = { .procs = one_proc, .nprocs = 1 };
static struct ia_proc_stats one_stats[1] = { { .proc = 0 } };

/* the main process pid 100, and others pids 101, 102, ... (n of them)
 * queuing work all through, on a machine of `gpus` GPUs */
static void shared_with(uint32_t n, int gpus)
{
	an.t = &one_trace;
	an.pp.p = one_stats;
	an.pp.n = 1;
	an.sharing.nprocs = n;
	for (uint32_t k = 0; k < n; k++)
		an.sharing.pids[k] = 101 + (int)k;
	an.sharing.gpus = gpus;
}

static void shared_gpu_said(void **state)
{
	(void)state;
	struct ia_verdict v;
	steady(0, 20, 1);
	shared_with(2, 1);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_BUSY);
	assert_non_null(strstr(v.text, "3 processes queued work on the one GPU all through the steady state (this one, "
				       "pid 100, and pids 101, 102)"));
	assert_non_null(strstr(v.text, "one after another"));
	cJSON *j = ia_verdict_json(&v);
	const cJSON *sh = cJSON_GetObjectItem(j, "gpu_shared");
	assert_non_null(sh);
	assert_int_equal(cJSON_GetObjectItem(sh, "processes")->valueint, 3);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sh, "pids")), 3);
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(sh, "pids"), 0)->valueint, 100);
	assert_int_equal(cJSON_GetObjectItem(sh, "gpus")->valueint, 1);
	cJSON_Delete(j);

	an.sharing.gpus = 2;   /* which GPU each used is not in the trace */
	ia_verdict_compute(&an, &v);
	assert_null(strstr(v.text, "processes"));
	assert_null(v.sharing);

	an.sharing.gpus = 0;
	ia_verdict_compute(&an, &v);
	assert_non_null(strstr(v.text, "does not say how many"));

	steady(400, 600, 1);
	shared_with(1, 1);
	add(IA_KIND_GAPS_WAITING_WORKERS, IA_SEV_HIGH, 0.4, NULL);
	ia_verdict_compute(&an, &v);
	assert_int_equal(v.state, IA_VERDICT_STARVING);
	assert_non_null(strstr(v.text, "2 processes queued work on the one GPU"));
	assert_non_null(strstr(v.text, "(this one, pid 100, and pid 101)"));
	assert_non_null(strstr(v.text, "the idle above is its own work's"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared_gpu_said),
		cmocka_unit_test(busy_without_findings),
		cmocka_unit_test(starving_names_the_first_steady_cause),
		cmocka_unit_test(blocked_says_what_it_waited_for),
		cmocka_unit_test(slowed_when_the_gpu_barely_idles),
		cmocka_unit_test(slow_calls_without_a_host_cause_are_no_cause),
		cmocka_unit_test(wide_host_bounds_are_unknown),
		cmocka_unit_test(nothing_without_a_steady_state),
		cmocka_unit_test(busy_list_says_the_streams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
