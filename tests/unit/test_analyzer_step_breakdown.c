/*
 * test_analyzer_step_breakdown.c — each steady step split into where its
 * time went (analyzer/measure/step_breakdown.c), on synthetic steps: the
 * steps, the gaps (with the main thread's blocked / on-CPU split) and the
 * main process's calls built by hand, no report.db.  Every step's parts
 * sum to the step; a job whose main thread waits half of each step for its
 * loader comes out input-bound, one that computes on the host a third of
 * each step host-bound, one with no gap device-bound; syncs and launches
 * inside a gap take their time out of it, and a gap two steps share is
 * split between them; without GPU marks a host-bound stretch is the host's,
 * with them what the GPU estimate does not hold busy outside the gaps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/load/syscalls.h"
#include "../../analyzer/measure/step_breakdown.h"

#include <ingero/api.h>

#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS (1000 * US)
#define STEPS 20
#define STEP (10 * MS)

struct fixture {
	struct ia_trace t;
	struct ia_gaps g;
	struct ia_step_times st;
	struct ia_call calls[48 * STEPS];
	uint32_t ix[48 * STEPS];
	struct ia_gap gaps[2 * STEPS];
	uint64_t start[STEPS], ns[STEPS];
};

static void add_call(struct fixture *f, unsigned api, uint64_t start, uint64_t dur)
{
	size_t n = f->t.ncalls++;
	f->calls[n] = (struct ia_call){ .start = start, .dur = dur, .api = (uint16_t)api };
	f->ix[n] = (uint32_t)n;
	f->g.nmain_calls = f->t.ncalls;
}

static void add_gap(struct fixture *f, uint64_t a, uint64_t b, uint64_t off, uint64_t runq)
{
	f->gaps[f->g.n++] = (struct ia_gap){ .start = a, .end = b, .main_off_ns = off, .main_runq_ns = runq };
}

static struct fixture *new_fixture(void)
{
	struct fixture *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->t.calls = f->calls;
	f->g.main_calls = f->ix;
	f->g.g = f->gaps;
	f->st.start = f->start;
	f->st.ns = f->ns;
	f->st.n = STEPS;
	for (size_t i = 0; i < STEPS; i++) {
		f->start[i] = 100 * MS + i * STEP;
		f->ns[i] = STEP;
	}
	return f;
}

static void assert_sums(const struct ia_step_breakdown *b, const struct fixture *f)
{
	assert_int_equal(b->n, f->st.n);
	for (size_t i = 0; i < b->n; i++) {
		uint64_t sum = 0;
		for (int p = 0; p < IA_STEP_NPARTS; p++)
			sum += b->part_ns[p][i];
		assert_int_equal(sum, f->ns[i]);
	}
	double share = 0;
	for (int p = 0; p < IA_STEP_NPARTS; p++)
		share += b->share_pct[p];
	assert_true(share > 99.99 && share < 100.01);
}

/* Each step: 5 ms with the main thread blocked and the GPU idle (waiting
 * for the DataLoader), then launches and a sync while the GPU works. */
static void input_bound(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		add_gap(f, s, s + 5 * MS, 5 * MS, 0);
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS, 20 * US);
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS + 50 * US, 20 * US);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 6 * MS, 4 * MS);
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_INPUT], 5 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_DEVICE], 5 * MS);
	assert_int_equal(b.sum_ns[IA_STEP_SYNC], 0);   /* the sync waited for a busy GPU: device compute */
	assert_int_equal(b.cls_part, IA_STEP_INPUT);
	assert_int_equal(b.cls_moderate, 0);
	assert_string_equal(b.cls, "input-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* The same 5 ms blocked a step, 4 ms of it writing or syncing a file (a
 * checkpoint's fsync) or while a subprocess it waited for lived (gaps.c and
 * gap_children.c fold both in): other waits, not input; wait-bound. */
static void other_waits(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		add_gap(f, s, s + 5 * MS, 5 * MS, 0);
		f->gaps[f->g.n - 1].main_other_wait_ns = 4 * MS;
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS, 20 * US);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 6 * MS, 4 * MS);
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_OTHER_WAIT], 4 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_INPUT], MS);
	assert_int_equal(b.sum_ns[IA_STEP_HOST], 0);
	assert_int_equal(b.cls_part, IA_STEP_OTHER_WAIT);
	assert_string_equal(b.cls, "wait-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* 5 ms with the GPU idle a step, the main thread off its CPU 4 ms of it
 * and runnable 3 ms of those (other tasks, or a CPU quota, held the CPUs:
 * c10, c05 under a quota): 3 ms CPU wait, 1 ms input wait, 1 ms on a CPU
 * (host compute); CPU-starved. */
static void cpu_wait(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		add_gap(f, s, s + 5 * MS, 4 * MS, 3 * MS);
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS, 20 * US);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 6 * MS, 4 * MS);
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_CPU_WAIT], 3 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_INPUT], MS);
	assert_int_equal(b.p50_ns[IA_STEP_HOST], MS);
	assert_int_equal(b.cls_part, IA_STEP_CPU_WAIT);
	assert_string_equal(b.cls, "CPU-starved");
	ia_step_breakdown_free(&b);
	free(f);
}

/* The same 5 ms blocked a step, but the gap ended by autograd's engine
 * thread queueing the next work: the main thread waited in backward()
 * while that thread did the host's work — host compute, not input. */
static void blocked_in_backward(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	struct ia_thread th[2] = { { .tid = 1 }, { .tid = 2 } };
	snprintf(th[1].comm, sizeof th[1].comm, "pt_autograd_0");
	f->t.threads = th;
	f->t.nthreads = 2;
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		add_gap(f, s, s + 5 * MS, 5 * MS, 0);
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS, 20 * US);
		f->calls[f->t.ncalls - 1].th = 1;
		f->gaps[f->g.n - 1].end_call = (uint32_t)(f->t.ncalls - 1);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 6 * MS, 4 * MS);
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.sum_ns[IA_STEP_INPUT], 0);
	assert_int_equal(b.p50_ns[IA_STEP_HOST], 5 * MS);
	assert_string_equal(b.cls, "host-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* The same 5 ms blocked a step, on a lock (futex), while another thread of
 * the process ran Python code for longer (the GIL: gaps.h ia_gaps_gil):
 * host compute, not input — and not where DataLoader workers were busy
 * (then it waits for a batch through the pin-memory thread). */
static void blocked_on_the_gil(void **state)
{
	(void)state;
	for (int workers = 0; workers < 2; workers++) {
		struct fixture *f = new_fixture();
		for (size_t i = 0; i < STEPS; i++) {
			uint64_t s = f->start[i];
			add_gap(f, s, s + 5 * MS, 5 * MS, 0);
			add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 5 * MS, 20 * US);
			add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 6 * MS, 4 * MS);
		}
		struct ia_gap_stack py = { .python_code = 1, .siblings = 20 };
		f->g.stacks = &py;
		f->g.nstacks = 1;
		f->g.samples_siblings = 20;
		f->g.sibling_top = 0;
		f->g.main_blocked_ns = STEPS * 5 * MS;
		f->g.siblings_oncpu_ns = STEPS * 5 * MS;
		f->g.workers_oncpu_ns = workers ? STEPS * 5 * MS : 0;
		f->g.main_sys_ns[ia_syscall_code(202, 1)] = STEPS * 5 * MS;   /* futex (x86_64) */
		struct ia_step_breakdown b;
		assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
		assert_sums(&b, f);
		assert_int_equal(b.sum_ns[IA_STEP_INPUT], workers ? STEPS * 5 * MS : 0);
		assert_string_equal(b.cls, workers ? "input-bound" : "host-bound");
		ia_step_breakdown_free(&b);
		free(f);
	}
}

/* 0.6 ms blocked a step: 6 %, somewhat input-bound (XProf's 5 % tier). */
static void somewhat_input_bound(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++)
		add_gap(f, f->start[i] + MS, f->start[i] + MS + 600 * US, 600 * US, 0);
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_string_equal(b.cls, "somewhat input-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* The main thread on a CPU 3 ms of each 10 ms step, GPU idle. */
static void host_bound(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++)
		add_gap(f, f->start[i] + 7 * MS, f->start[i] + 10 * MS, 100 * US, 100 * US);   /* preempted 0.1 ms */
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_HOST], 3 * MS - 100 * US);
	assert_int_equal(b.p50_ns[IA_STEP_CPU_WAIT], 100 * US);   /* waiting for a CPU: its own part */
	assert_int_equal(b.sum_ns[IA_STEP_INPUT], 0);
	assert_string_equal(b.cls, "host-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* No gap at all: the GPU had work the whole step. */
static void device_bound(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i < STEPS; i++)
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, f->start[i] + MS, 8 * MS);
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.sum_ns[IA_STEP_DEVICE], STEPS * STEP);
	assert_int_equal(b.cls_part, -1);
	assert_string_equal(b.cls, "device-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

/* A gap of 4 ms from 8 ms into a step to 2 ms into the next (1 ms blocked,
 * 3 ms on a CPU, spread evenly: half to each step), with a 0.5 ms sync and
 * a 0.2 ms launch inside its first half: the sync comes out of the blocked
 * time, the launch out of the on-CPU time. */
static void cut_gap_and_calls_inside(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	for (size_t i = 0; i + 1 < STEPS; i += 2) {
		uint64_t s = f->start[i];
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 8 * MS + 100 * US, 300 * US);   /* 0.2 ms before */
		add_gap(f, s + 8 * MS, s + 12 * MS, 1 * MS, 0);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 8 * MS + 200 * US, 500 * US);
		add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + 9 * MS, 200 * US);
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	/* the first step of each pair: 2 ms of the gap, 0.5 ms blocked of it */
	assert_int_equal(b.part_ns[IA_STEP_SYNC][0], 600 * US);   /* the union: 8.1 .. 8.7 ms, all in the gap */
	assert_int_equal(b.part_ns[IA_STEP_LAUNCH][0], 200 * US);
	assert_int_equal(b.part_ns[IA_STEP_INPUT][0], 0);          /* 0.5 blocked - 0.6 sync: none left */
	assert_int_equal(b.part_ns[IA_STEP_HOST][0], 1200 * US);   /* 2 - 0.6 - 0.2 */
	assert_int_equal(b.part_ns[IA_STEP_DEVICE][0], 8 * MS);
	/* the second: 2 ms of the gap, 0.5 ms of it blocked, no call */
	assert_int_equal(b.part_ns[IA_STEP_INPUT][1], 500 * US);
	assert_int_equal(b.part_ns[IA_STEP_HOST][1], 1500 * US);
	assert_int_equal(b.part_ns[IA_STEP_DEVICE][1], 8 * MS);
	ia_step_breakdown_free(&b);
	free(f);
}

/* Without GPU marks, a host-bound stretch (hostbound.h: the GPU kept up
 * with the host) is the host's time: its launches launch overhead, the rest
 * host compute, not device compute. */
static void host_bound_stretch(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	uint64_t w[2 * STEPS];
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		for (int k = 0; k < 40; k++)
			add_call(f, INGERO_API_CUDA_LAUNCH_KERNEL, s + MS + (uint64_t)k * 200 * US, 50 * US);
		w[2 * i] = s + MS;
		w[2 * i + 1] = s + 9 * MS;
	}
	struct ia_hostbound hb = { .n = STEPS, .w = w };
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, &hb, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_LAUNCH], 40 * 50 * US);
	assert_int_equal(b.p50_ns[IA_STEP_HOST], 8 * MS - 40 * 50 * US);
	assert_int_equal(b.p50_ns[IA_STEP_DEVICE], 2 * MS);
	assert_string_equal(b.cls, "host-bound");
	ia_step_breakdown_free(&b);
	/* with GPU marks the measured gaps say it: the stretch is not used */
	f->g.gpu.measured = 1;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, &hb, &f->st, NULL, 0, &b), 0);
	assert_int_equal(b.sum_ns[IA_STEP_DEVICE], STEPS * STEP);
	ia_step_breakdown_free(&b);
	/* with marks and an estimate: each kernel busy 100 us from its launch's
	 * end, no gap (every idle under 50 us) — device compute is the
	 * estimate's 4 ms a step, the rest the host's: launches 2 ms, 4 ms else */
	static struct ia_span est[40 * STEPS];
	for (size_t i = 0; i < STEPS; i++)
		for (int k = 0; k < 40; k++) {
			uint64_t end = f->start[i] + MS + (uint64_t)k * 200 * US + 50 * US;
			est[i * 40 + (size_t)k] = (struct ia_span){ end, end + 100 * US };
		}
	f->g.gpu.est[1] = est;
	f->g.gpu.nest[1] = 40 * STEPS;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, &hb, &f->st, NULL, 0, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_DEVICE], 4 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_LAUNCH], 2 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_HOST], 4 * MS);
	assert_string_equal(b.cls, "host-bound");
	ia_step_breakdown_free(&b);
	free(f);
}

static void no_steps(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	f->st.n = 0;
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_int_equal(b.n, 0);
	ia_step_breakdown_free(&b);
	free(f);
}

/* DDP over gloo: after each step's backward the GPU idles 4 ms while the
 * all-reduce runs on the host (the main thread blocked, then in a sync
 * waiting for its result: both the collective's); and NCCL's all-reduce
 * running 2 ms on the GPU inside its busy time. */
static void collectives(void **state)
{
	(void)state;
	struct fixture *f = new_fixture();
	struct ia_span cw[2 * STEPS];   /* sorted: step i's NCCL span, then its gloo one */
	for (size_t i = 0; i < STEPS; i++) {
		uint64_t s = f->start[i];
		add_gap(f, s + 6 * MS, s + 10 * MS, 4 * MS, 0);
		add_call(f, INGERO_API_CUDA_STREAM_SYNCHRONIZE, s + 8 * MS, 2 * MS);
		cw[2 * i] = (struct ia_span){ s + 1 * MS, s + 3 * MS };    /* NCCL: on the GPU */
		cw[2 * i + 1] = (struct ia_span){ s + 6 * MS, s + 10 * MS };   /* gloo: in the gap */
	}
	struct ia_step_breakdown b;
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, cw, 2 * STEPS, &b), 0);
	assert_sums(&b, f);
	assert_int_equal(b.p50_ns[IA_STEP_COLLECTIVES], 6 * MS);
	assert_int_equal(b.sum_ns[IA_STEP_SYNC], 0);    /* the sync waited for the collective */
	assert_int_equal(b.sum_ns[IA_STEP_INPUT], 0);   /* blocked for it: not the loader */
	assert_int_equal(b.p50_ns[IA_STEP_DEVICE], 4 * MS);
	assert_string_equal(b.cls, "collective-bound");
	/* without the windows the same steps read as waiting in the sync and for input */
	ia_step_breakdown_free(&b);
	assert_int_equal(ia_step_breakdown_compute(&f->t, &f->g, NULL, &f->st, NULL, 0, &b), 0);
	assert_int_equal(b.sum_ns[IA_STEP_COLLECTIVES], 0);
	assert_int_equal(b.p50_ns[IA_STEP_SYNC], 2 * MS);
	assert_int_equal(b.p50_ns[IA_STEP_INPUT], 2 * MS);
	ia_step_breakdown_free(&b);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(collectives),
		cmocka_unit_test(input_bound),
		cmocka_unit_test(other_waits),
		cmocka_unit_test(cpu_wait),
		cmocka_unit_test(blocked_in_backward),
		cmocka_unit_test(blocked_on_the_gil),
		cmocka_unit_test(somewhat_input_bound),
		cmocka_unit_test(host_bound),
		cmocka_unit_test(device_bound),
		cmocka_unit_test(cut_gap_and_calls_inside),
		cmocka_unit_test(host_bound_stretch),
		cmocka_unit_test(no_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
