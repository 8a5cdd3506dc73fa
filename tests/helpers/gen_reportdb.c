/*
 * gen_reportdb.c — writes synthetic report.db files, one per starvation
 * scenario, for the analyzer's tests and benchmark.
 *
 *   gen_reportdb SCENARIO OUT.db [--seed N] [--steps N] [--calls N --offcpu N]
 *
 * Scenarios (each mirrors a case of design.md "What the evidence looks like"):
 *   contention  4 DataLoader workers on 4 CPUs fight the main process: slow
 *               syncs/copies/launches while main sits on a run queue, CPU 100%,
 *               heavy page allocation in the workers
 *   assembly    num_workers=0: the main thread is on-CPU between CUDA calls,
 *               collating the batch (samples in at::native::stack,
 *               _PyEval_EvalFrameDefault, gather_rows)
 *   blocked     4 workers on 16 CPUs: the main thread is blocked (voluntary)
 *               between CUDA calls while the workers are on-CPU
 *   pageable    batches copied from pageable memory at ~7.5 GB/s (a few
 *               pinned copies at ~52 GB/s for comparison)
 *   syncstep    loss.item() every step from train.py:57: DtoH 4-byte copy +
 *               cudaStreamSynchronize, then a host gap before the next launch
 *   healthy     direct mode: copy → launches → sync, GPU busy, tiny gaps
 *   hostbound   a launch-bound loop (a small model trained with Adam): 31 short
 *               launches + a memset per step, ~40 us of Python between them,
 *               no sync inside the loop; the sync after it waits 15 us (the
 *               GPU kept up), like examples/train_overhead.py on the H200
 *   big         --calls N CUDA calls and --offcpu N off-CPU intervals, for
 *               the benchmark (default 10M + 10M)
 *
 * The database is built from INGERO_SCHEMA_SQL, so it is exactly what the
 * collector writes (stack frames written as rows through frame_rows.h's
 * trigger, stored once as the collector stores them).  Everything is derived from a seeded PRNG: the same
 * arguments give the same file content.  Rows are inserted in time order,
 * CUDA calls in call blocks as the collector writes them (the analyzer's
 * tests shuffle copies themselves to check that output does not depend on
 * row order).
 */
#include <ingero/api.h>
#include <ingero/call_block.h>
#include <ingero/event.h>
#include <ingero/schema.h>

#include "frame_rows.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define US 1000ull
#define SEC 1000000000ull

static sqlite3 *db;
static sqlite3_stmt *ins_call, *ins_off, *ins_sample;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t T0 = 1000 * SEC;   /* monotonic time the trace starts at */
static int cpus = 16;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static double frand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
/* value around m with +-j relative jitter */
static uint64_t jit(uint64_t m, double j) { return (uint64_t)((double)m * (1.0 + j * (2 * frand() - 1))); }

static void die(const char *what)
{
	fprintf(stderr, "gen_reportdb: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void exec(const char *sql)
{
	char *e = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &e) != SQLITE_OK) {
		fprintf(stderr, "gen_reportdb: %s: %s\n", sql, e);
		exit(1);
	}
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	return st;
}

static void step_reset(sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		die("insert");
	sqlite3_reset(st);
}

/* ---- CPU demand, page allocations: aggregated into buckets at the end ---- */
#define BUSY_BUCKET (10 * MS)
#define PA_BUCKET (100 * MS)
#define MAXB 200000
static uint64_t *demand;   /* ns of CPU wanted (running or runnable) per 10 ms bucket */
struct pa { int pid; uint64_t pages[MAXB / 10]; uint64_t allocs[MAXB / 10]; uint64_t faults[MAXB / 10]; };
static struct pa *pa_of[8];
static int npa;

static void add_demand(uint64_t a, uint64_t b)
{
	if (!demand || b <= a)
		return;
	for (uint64_t k = (a - T0) / BUSY_BUCKET; k < MAXB; k++) {
		uint64_t b0 = T0 + k * BUSY_BUCKET, b1 = b0 + BUSY_BUCKET;
		if (b0 >= b)
			break;
		uint64_t lo = a > b0 ? a : b0, hi = b < b1 ? b : b1;
		if (hi > lo)
			demand[k] += hi - lo;
	}
}

static struct pa *pa_for(int pid)
{
	for (int i = 0; i < npa; i++)
		if (pa_of[i]->pid == pid)
			return pa_of[i];
	if (npa == 8)
		return NULL;
	pa_of[npa] = calloc(1, sizeof(struct pa));
	pa_of[npa]->pid = pid;
	return pa_of[npa++];
}

/* pages allocated at `rate` per second over [a, b) */
static void add_pages(int pid, uint64_t a, uint64_t b, double rate)
{
	struct pa *p = pa_for(pid);
	if (!p || b <= a)
		return;
	uint64_t k = (a - T0) / PA_BUCKET;
	if (k >= MAXB / 10)
		return;
	uint64_t n = (uint64_t)(rate * (double)(b - a) / 1e9);
	p->pages[k] += n;
	p->allocs[k] += n / 2 + 1;
	p->faults[k] += n / 4;
}

/* ---- rows ---- */
/* CUDA calls are stored as the collector stores them: blocks of up to
 * INGERO_BLOCK_MAX_CALLS calls of one pid (call_block.h), written when full,
 * when the pid changes, and at the end. */
static struct ingero_cuda_call pending[INGERO_BLOCK_MAX_CALLS];
static size_t npending;
static msgpack_sbuffer blob;

static void flush_calls(void)
{
	sqlite3_stmt *s = ins_call;
	int64_t lo, hi;

	if (!npending)
		return;
	ingero_block_span(pending, npending, &lo, &hi);
	if (ingero_block_encode(&blob, pending, npending)) {
		fprintf(stderr, "gen_reportdb: out of memory encoding a call block\n");
		exit(1);
	}
	sqlite3_bind_int(s, 1, (int)pending[0].pid);
	sqlite3_bind_int64(s, 2, lo);
	sqlite3_bind_int64(s, 3, hi);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)npending);
	sqlite3_bind_blob(s, 5, blob.data, (int)blob.size, SQLITE_STATIC);
	step_reset(s);
	npending = 0;
}

/* A CUDA call; kernel = the launched function's address (0: none). */
static void call_k(int pid, int tid, int api, uint64_t start, uint64_t dur, uint64_t bytes, int dir,
		   int flags, uint64_t stack, uint64_t kernel)
{
	if (npending == INGERO_BLOCK_MAX_CALLS || (npending && pending[0].pid != (uint32_t)pid))
		flush_calls();
	pending[npending++] = (struct ingero_cuda_call){
		.pid = (uint32_t)pid, .tid = (uint32_t)tid, .api = (uint16_t)api, .start_ns = start,
		.dur_ns = dur, .stream = 7, .bytes = bytes, .dir = (uint8_t)dir, .flags = (uint8_t)flags,
		.stack_id = stack, .kernel = kernel,
	};
}

static void call(int pid, int tid, int api, uint64_t start, uint64_t dur, uint64_t bytes, int dir,
		 int flags, uint64_t stack)
{
	call_k(pid, tid, api, start, dur, bytes, dir, flags, stack, 0);
}

/* whom the next woken wait off() stores waited behind (schema 9): pid and
 * the share of its run-queue delay that pid's stint held; 0: none said */
static int next_holder;
static double next_holder_share;

static void off(int pid, int tid, uint64_t start, uint64_t end, uint64_t runnable, int preempted, int next_pid)
{
	sqlite3_stmt *s = ins_off;
	if (next_holder && !preempted && end > runnable) {
		sqlite3_bind_int(s, 9, next_holder);
		sqlite3_bind_int64(s, 10, (sqlite3_int64)(next_holder_share * (double)(end - runnable)));
	} else {
		sqlite3_bind_null(s, 9);
		sqlite3_bind_null(s, 10);
	}
	next_holder = 0;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int(s, 2, tid);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)start);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)end);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)runnable);
	sqlite3_bind_int(s, 6, preempted);
	sqlite3_bind_int(s, 7, next_pid);
	sqlite3_bind_int(s, 8, (int)(rnd() % (uint64_t)cpus));
	step_reset(s);
	add_demand(runnable, end);   /* a runnable thread wants a CPU */
}

static void sample(int pid, int tid, uint64_t ts, uint64_t stack)
{
	sqlite3_stmt *s = ins_sample;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int(s, 2, tid);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)ts);
	sqlite3_bind_int(s, 4, (int)(rnd() % (uint64_t)cpus));
	sqlite3_bind_int64(s, 5, (sqlite3_int64)stack);
	step_reset(s);
}

/* ---- stacks: ids and frames (depth 0 = innermost) ---- */
enum {
	ST_COPY_BATCH = 101, ST_LAUNCH_MODEL = 102, ST_SYNC_STEP = 103, ST_ITEM_COPY = 104,
	ST_SYNC_ITEM = 105, ST_WEIGHTS = 106, ST_LAUNCH_OPTIM = 107,
	SM_STACK = 201, SM_EVAL = 202, SM_GATHER = 203, SM_QUEUE = 204, SM_MODEL = 205,
};

static void frame(uint64_t id, int depth, const char *kind, const char *sym, const char *module,
		  const char *file, int line)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "INSERT INTO stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line) "
		 "VALUES(%llu, %d, '%s', %llu, '%s', %s%s%s, 16, %s%s%s, %d)",
		 (unsigned long long)id, depth, kind, (unsigned long long)(0x7f0000001000ull + id * 64 + depth),
		 sym, module ? "'" : "", module ? module : "NULL", module ? "'" : "",
		 file ? "'" : "", file ? file : "NULL", file ? "'" : "", line);
	exec(sql);
}

static void stacks(int pid)
{
	char sql[256];
	static const int ids[] = { ST_COPY_BATCH, ST_LAUNCH_MODEL, ST_SYNC_STEP, ST_ITEM_COPY, ST_SYNC_ITEM,
				   ST_WEIGHTS, ST_LAUNCH_OPTIM, SM_STACK, SM_EVAL, SM_GATHER, SM_QUEUE, SM_MODEL };
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO stacks(id, pid) VALUES(%d, %d)", ids[i], pid);
		exec(sql);
	}
	const char *cudart = "libcudart.so.13", *torch = "libtorch_cuda.so", *tcpu = "libtorch_cpu.so",
		   *py = "python3.11";
	frame(ST_COPY_BATCH, 0, "native", "cudaMemcpyAsync", cudart, NULL, 0);
	frame(ST_COPY_BATCH, 1, "native", "at::native::copy_kernel_cuda", torch, NULL, 0);
	frame(ST_COPY_BATCH, 2, "native", "_PyEval_EvalFrameDefault", py, NULL, 0);
	frame(ST_COPY_BATCH, 0, "python", "train_loop", NULL, "train.py", 48);
	frame(ST_COPY_BATCH, 1, "python", "<module>", NULL, "train.py", 70);
	frame(ST_LAUNCH_MODEL, 0, "native", "__cudaLaunchKernel", cudart, NULL, 0);
	frame(ST_LAUNCH_MODEL, 1, "native", "at::native::addmm_out_cuda", torch, NULL, 0);
	frame(ST_LAUNCH_MODEL, 0, "python", "forward", NULL, "model.py", 21);
	frame(ST_LAUNCH_MODEL, 1, "python", "train_loop", NULL, "train.py", 50);
	frame(ST_LAUNCH_OPTIM, 0, "native", "__cudaLaunchKernel", cudart, NULL, 0);
	frame(ST_LAUNCH_OPTIM, 1, "native", "at::native::_foreach_add_cuda_", torch, NULL, 0);
	frame(ST_LAUNCH_OPTIM, 0, "python", "_multi_tensor_adam", NULL, "torch/optim/adam.py", 705);
	frame(ST_LAUNCH_OPTIM, 1, "python", "train_loop", NULL, "train.py", 53);
	frame(ST_SYNC_STEP, 0, "native", "cudaStreamSynchronize", cudart, NULL, 0);
	frame(ST_SYNC_STEP, 1, "native", "c10::cuda::stream_synchronize", torch, NULL, 0);
	frame(ST_SYNC_STEP, 0, "python", "train_loop", NULL, "train.py", 52);
	frame(ST_ITEM_COPY, 0, "native", "cudaMemcpyAsync", cudart, NULL, 0);
	frame(ST_ITEM_COPY, 1, "native", "at::native::_local_scalar_dense_cuda", torch, NULL, 0);
	frame(ST_ITEM_COPY, 0, "python", "train_loop", NULL, "train.py", 57);
	frame(ST_SYNC_ITEM, 0, "native", "cudaStreamSynchronize", cudart, NULL, 0);
	frame(ST_SYNC_ITEM, 1, "native", "at::native::_local_scalar_dense_cuda", torch, NULL, 0);
	frame(ST_SYNC_ITEM, 2, "native", "at::Tensor::item", tcpu, NULL, 0);
	frame(ST_SYNC_ITEM, 0, "python", "train_loop", NULL, "train.py", 57);
	frame(ST_SYNC_ITEM, 1, "python", "<module>", NULL, "train.py", 70);
	frame(ST_WEIGHTS, 0, "native", "cudaMemcpyAsync", cudart, NULL, 0);
	frame(ST_WEIGHTS, 0, "python", "load_weights", NULL, "model.py", 9);
	frame(SM_STACK, 0, "native", "at::native::stack", tcpu, NULL, 0);
	frame(SM_STACK, 1, "native", "at::_ops::stack::call", tcpu, NULL, 0);
	frame(SM_STACK, 2, "native", "_PyEval_EvalFrameDefault", py, NULL, 0);
	frame(SM_STACK, 0, "python", "default_collate", NULL, "torch/utils/data/_utils/collate.py", 141);
	frame(SM_EVAL, 0, "native", "_PyEval_EvalFrameDefault", py, NULL, 0);
	frame(SM_EVAL, 1, "native", "PyObject_Vectorcall", py, NULL, 0);
	frame(SM_EVAL, 0, "python", "__getitem__", NULL, "torch/utils/data/dataset.py", 211);
	frame(SM_GATHER, 0, "native", "__memmove_avx_unaligned_erms", "libc.so.6", NULL, 0);
	frame(SM_GATHER, 1, "native", "gather_rows", "starve", NULL, 0);
	frame(SM_QUEUE, 0, "native", "__futex_abstimed_wait_common", "libc.so.6", NULL, 0);
	frame(SM_QUEUE, 1, "native", "_PyEval_EvalFrameDefault", py, NULL, 0);
	frame(SM_MODEL, 0, "native", "at::native::addmm_out_cuda", torch, NULL, 0);
	frame(SM_MODEL, 1, "native", "_PyEval_EvalFrameDefault", py, NULL, 0);
}

/* ---- thread behaviours ---- */
/* Host-side work on a CPU over [a, b): 99 Hz samples from `mix` (stack ids
 * with weights), short preemptions when `contended`. */
struct mix { uint64_t id[3]; double w[3]; };

static uint64_t pick(const struct mix *m)
{
	double r = frand();
	for (int i = 0; i < 3; i++) {
		if (r < m->w[i])
			return m->id[i];
		r -= m->w[i];
	}
	return m->id[0];
}

static uint64_t sample_phase[64];   /* per tid slot: next sample time */

static void oncpu(int pid, int tid, int slot, uint64_t a, uint64_t b, const struct mix *m,
		  double preempt_per_s, uint64_t preempt_len, int next_pid, double pages_per_s)
{
	uint64_t t = a;
	add_pages(pid, a, b, pages_per_s);
	while (t < b) {
		uint64_t run_end = b;
		if (preempt_per_s > 0) {
			uint64_t gap = (uint64_t)(-1e9 / preempt_per_s * __builtin_log(1 - frand() * 0.999));
			if (t + gap < b)
				run_end = t + gap;
		}
		add_demand(t, run_end);
		if (m)
			for (; sample_phase[slot] < run_end; sample_phase[slot] += 10101010)
				if (sample_phase[slot] >= t)
					sample(pid, tid, sample_phase[slot], pick(m));
		if (run_end >= b)
			break;
		uint64_t len = jit(preempt_len, 0.6);
		if (run_end + len > b)
			len = b - run_end;
		off(pid, tid, run_end, run_end + len, run_end, 1, next_pid);
		if (sample_phase[slot] < run_end + len)
			sample_phase[slot] = run_end + len;
		t = run_end + len;
	}
}

/* Blocked over [a, b), woken `wake` before b (then waits on a run queue). */
static void blocked(int pid, int tid, uint64_t a, uint64_t b, uint64_t wake)
{
	if (b <= a)
		return;
	if (wake > b - a)
		wake = (b - a) / 2;
	off(pid, tid, a, b, b - wake, 0, 0);
}

/* ---- the model of one training process ---- */
struct world {
	int main_pid, main_tid;
	int nworkers, worker_pid[8];
	uint64_t t;   /* main thread's clock */
};

static void session(const char *command, const char *mode, uint64_t end)
{
	char sql[2048];
	snprintf(sql, sizeof sql,
		 "INSERT INTO session VALUES('command','%s'),('start_wall_ns','1796000000000000000'),"
		 "('start_mono_ns','%llu'),('end_mono_ns','%llu'),('host','gen'),('kernel','6.18.0-gen'),"
		 "('cpus','%d'),('cpu_model','Synthetic CPU'),('mem_bytes','137438953472'),"
		 "('gpu','NVIDIA H200 (synthetic)'),('driver_version','580.00'),('cuda_version','13.0'),"
		 "('mode','%s'),('collector_version','gen_reportdb')",
		 command, (unsigned long long)T0, (unsigned long long)end, cpus, mode);
	exec(sql);
}

static void processes(struct world *w, const char *comm, uint64_t end)
{
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "INSERT INTO processes VALUES(%d, 1000, '%s', '/usr/bin/python3.11', 'python3 train.py', %llu, %llu, 0, 1, 1, 0)",
		 w->main_pid, comm, (unsigned long long)T0, (unsigned long long)end);
	exec(sql);
	snprintf(sql, sizeof sql, "INSERT INTO threads VALUES(%d, %d, '%s')", w->main_tid, w->main_pid, comm);
	exec(sql);
	/* a CUDA helper thread that never calls: must not confuse roles */
	snprintf(sql, sizeof sql, "INSERT INTO threads VALUES(%d, %d, 'cuda-EvtHandlr')", w->main_pid + 1, w->main_pid);
	exec(sql);
	for (int i = 0; i < w->nworkers; i++) {
		snprintf(sql, sizeof sql,
			 "INSERT INTO processes VALUES(%d, %d, 'pt_data_worker', '/usr/bin/python3.11', 'python3 train.py', %llu, %llu, 0, 0, 0, 0)",
			 w->worker_pid[i], w->main_pid, (unsigned long long)(T0 + 5 * MS), (unsigned long long)end);
		exec(sql);
		snprintf(sql, sizeof sql, "INSERT INTO threads VALUES(%d, %d, 'pt_data_worker')", w->worker_pid[i],
			 w->worker_pid[i]);
		exec(sql);
	}
}

static void flush_buckets(uint64_t end)
{
	sqlite3_stmt *s = prep("INSERT INTO cpu_busy VALUES(?1, ?2, ?3)");
	uint64_t nb = (end - T0) / BUSY_BUCKET + 1;
	for (uint64_t k = 0; k < nb && k < MAXB; k++) {
		/* demand is spread over the CPUs; 1-3 % background from other tasks */
		uint64_t per = demand[k] / (uint64_t)cpus;
		for (int c = 0; c < cpus; c++) {
			uint64_t busy = per + jit(BUSY_BUCKET / 50, 0.5);
			if (busy > BUSY_BUCKET)
				busy = BUSY_BUCKET;
			sqlite3_bind_int(s, 1, c);
			sqlite3_bind_int64(s, 2, (sqlite3_int64)(T0 + k * BUSY_BUCKET));
			sqlite3_bind_int64(s, 3, (sqlite3_int64)busy);
			step_reset(s);
		}
	}
	sqlite3_finalize(s);
	s = prep("INSERT INTO page_allocs VALUES(?1, ?2, ?3, ?4, ?5)");
	for (int i = 0; i < npa; i++)
		for (uint64_t k = 0; k < MAXB / 10; k++) {
			if (!pa_of[i]->pages[k])
				continue;
			sqlite3_bind_int(s, 1, pa_of[i]->pid);
			sqlite3_bind_int64(s, 2, (sqlite3_int64)(T0 + k * PA_BUCKET));
			sqlite3_bind_int64(s, 3, (sqlite3_int64)pa_of[i]->pages[k]);
			sqlite3_bind_int64(s, 4, (sqlite3_int64)pa_of[i]->allocs[k]);
			sqlite3_bind_int64(s, 5, (sqlite3_int64)pa_of[i]->faults[k]);
			step_reset(s);
		}
	sqlite3_finalize(s);
	/* a background competitor: small and steady */
	s = prep("INSERT INTO competitors(pid, comm, bucket_ns, cpu_ns, preemptions) VALUES(?1, ?2, ?3, ?4, ?5)");
	for (uint64_t k = 0; k * PA_BUCKET < end - T0; k++) {
		sqlite3_bind_int(s, 1, 777);
		sqlite3_bind_text(s, 2, "kworker/3:1", -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)(T0 + k * PA_BUCKET));
		sqlite3_bind_int64(s, 4, (sqlite3_int64)jit(MS, 0.5));
		sqlite3_bind_int64(s, 5, 1);
		step_reset(s);
	}
	sqlite3_finalize(s);
}

static const struct mix collate_mix = { { SM_STACK, SM_EVAL, SM_GATHER }, { 0.55, 0.30, 0.15 } };
static const struct mix model_mix = { { SM_MODEL, SM_EVAL, SM_STACK }, { 0.8, 0.15, 0.05 } };

/* One training step's CUDA work on the main thread, starting at w->t.
 * slow: probability a call is stretched by preemption (contention). */
static void cuda_step(struct world *w, uint64_t copy_bytes, double gbps, int copy_flags, int nlaunch,
		      uint64_t gpu_ns, int item_sync, double slow, int preempter)
{
	int pid = w->main_pid, tid = w->main_tid;
	/* H2D copy of the batch */
	uint64_t d = (uint64_t)((double)copy_bytes / gbps);
	if (copy_flags & INGERO_FLAG_HOST_PINNED)
		d = jit(12 * US, 0.3);   /* async pinned: returns at once; the DMA runs on */
	d = jit(d, 0.05);
	if (frand() < slow) {    /* preempted inside the call */
		uint64_t extra = jit(30 * MS, 0.8);
		uint64_t at = w->t + d / 2;
		off(pid, tid, at, at + extra, at, 1, preempter);
		d += extra;
	}
	call(pid, tid, INGERO_API_CUDA_MEMCPY_ASYNC, w->t, d, copy_bytes, INGERO_DIR_HTOD,
	     copy_flags | INGERO_FLAG_ASYNC, ST_COPY_BATCH);
	add_demand(w->t, w->t + d);
	w->t += d + jit(20 * US, 0.5);
	uint64_t gpu_free = w->t + gpu_ns;
	for (int i = 0; i < nlaunch; i++) {
		uint64_t ld = jit(70 * US, 0.3);
		if (frand() < slow / 2) {
			uint64_t extra = jit(20 * MS, 0.8);
			off(pid, tid, w->t + ld / 2, w->t + ld / 2 + extra, w->t + ld / 2, 1, preempter);
			ld += extra;
		}
		call(pid, tid, i % 3 == 2 ? INGERO_API_CU_LAUNCH_KERNEL : INGERO_API_CUDA_LAUNCH_KERNEL_STUB,
		     w->t, ld, 0, 0, 0, i % 8 == 0 ? ST_LAUNCH_MODEL : 0);
		add_demand(w->t, w->t + ld);
		w->t += ld + jit(15 * US, 0.5);
	}
	if (item_sync) {
		uint64_t cd = jit(15 * US, 0.3);
		call(pid, tid, INGERO_API_CUDA_MEMCPY_ASYNC, w->t, cd, 4, INGERO_DIR_DTOH,
		     INGERO_FLAG_ASYNC | INGERO_FLAG_HOST_PAGEABLE, ST_ITEM_COPY);
		w->t += cd + 2 * US;
	}
	/* sync: waits until the GPU is done (spinning, on-CPU), at least ~25 us */
	uint64_t sd = gpu_free > w->t ? gpu_free - w->t : 0;
	sd += jit(25 * US, 0.3);
	if (frand() < slow) {
		uint64_t extra = jit(40 * MS, 0.7);
		uint64_t at = w->t + sd / 3;
		off(pid, tid, at, at + extra, at, 1, preempter);
		sd += extra;
	}
	call(pid, tid, INGERO_API_CUDA_STREAM_SYNCHRONIZE, w->t, sd, 0, 0, 0,
	     item_sync ? ST_SYNC_ITEM : ST_SYNC_STEP);
	add_demand(w->t, w->t + sd);
	w->t += sd;
}

/* One step of a launch-bound loop on the main thread: 31 launches of a few
 * us (forward, backward, optimizer: runtime, cuBLAS driver and Ex launches,
 * each its own kernel) and a memset, ~40 us of on-CPU Python before each;
 * 1 launch in 8 carries a stack, as the preload samples them.  No sync:
 * the GPU finishes each small kernel long before the next is queued. */
static void launch_bound_step(struct world *w, int step)
{
	int pid = w->main_pid, tid = w->main_tid;
	for (int i = 0; i < 32; i++) {
		uint64_t py = jit(38 * US, 0.3);
		oncpu(pid, tid, 0, w->t, w->t + py, &model_mix, 0, 0, 0, 0);
		w->t += py;
		uint64_t d = jit(6 * US, 0.3);
		int api = i == 0 ? INGERO_API_CU_MEMSET_D8_ASYNC : i % 5 == 1 ? INGERO_API_CU_LAUNCH_KERNEL
			: i % 7 == 2 ? INGERO_API_CU_LAUNCH_KERNEL_EX : INGERO_API_CUDA_LAUNCH_KERNEL_STUB;
		uint64_t stack = (step * 32 + i) % 8 ? 0 : i >= 20 ? ST_LAUNCH_OPTIM : ST_LAUNCH_MODEL;
		call_k(pid, tid, api, w->t, d, 0, 0, 0, stack, i ? 0x7f0000100000ull + 256 * (uint64_t)i : 0);
		add_demand(w->t, w->t + d);
		w->t += d;
	}
	if (step % 20 == 19) {   /* the allocator's occasional short wait */
		blocked(pid, tid, w->t, w->t + 30 * US, 5 * US);
		w->t += 30 * US;
	}
}

/* Workers busy over [a, b) (collating), with preemptions when CPUs are short. */
static void workers_busy(struct world *w, uint64_t a, uint64_t b, double preempt_per_s, double pages_per_s,
			 int slot0)
{
	for (int i = 0; i < w->nworkers; i++)
		oncpu(w->worker_pid[i], w->worker_pid[i], slot0 + i, a, b, &collate_mix, preempt_per_s,
		      3 * MS, w->worker_pid[(i + 1) % w->nworkers], pages_per_s);
}

static void setup(const char *path)
{
	remove(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		die("open");
	exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-200000;");
	exec(INGERO_SCHEMA_SQL);
	exec(TEST_FRAME_ROWS_SQL);   /* frame() writes rows (frame_rows.h) */
	char sql[128];
	snprintf(sql, sizeof sql, "PRAGMA user_version=%d", INGERO_SCHEMA_VERSION);
	exec(sql);
	sqlite3_stmt *s = prep("INSERT INTO apis VALUES(?1, ?2, ?3)");
#define API_ROW(id, e, name, cls) \
	sqlite3_bind_int(s, 1, id); \
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC); \
	sqlite3_bind_text(s, 3, ingero_api_class_name(INGERO_CLASS_##cls), -1, SQLITE_STATIC); \
	step_reset(s);
	INGERO_API_LIST(API_ROW)
#undef API_ROW
	sqlite3_finalize(s);
	exec("BEGIN");
	ins_call = prep("INSERT INTO call_blocks(pid, first_ns, last_ns, calls, data) VALUES(?1,?2,?3,?4,?5)");
	msgpack_sbuffer_init(&blob);
	ins_off = prep("INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu,holder_pid,holder_ns) "
		       "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
	ins_sample = prep("INSERT INTO cpu_samples VALUES(?1,?2,?3,?4,?5)");
	demand = calloc(MAXB, sizeof *demand);
}

static void finish(uint64_t end)
{
	flush_buckets(end);
	exec("INSERT INTO losses VALUES('preload_dropped', 0, 0)");
	flush_calls();
	sqlite3_finalize(ins_call);
	sqlite3_finalize(ins_off);
	sqlite3_finalize(ins_sample);
	exec("COMMIT");
	if (sqlite3_close(db) != SQLITE_OK)
		die("close");
}

static void warmup(struct world *w)
{
	/* model weights: a few pinned copies at ~52 GB/s, so pinned bandwidth is measured */
	for (int i = 0; i < 6; i++) {
		uint64_t bytes = 64ull << 20;
		uint64_t d = jit((uint64_t)((double)bytes / 52.0), 0.03);
		call(w->main_pid, w->main_tid, INGERO_API_CUDA_MEMCPY, w->t, d, bytes, INGERO_DIR_HTOD,
		     INGERO_FLAG_HOST_PINNED, ST_WEIGHTS);
		w->t += d + 50 * US;
	}
	call(w->main_pid, w->main_tid, INGERO_API_CUDA_DEVICE_SYNCHRONIZE, w->t, 30 * US, 0, 0, 0, 0);
	w->t += 30 * US;
}

static void scenario(const char *name, int steps)
{
	struct world w = { .main_pid = 4242, .main_tid = 4242, .t = T0 + 2 * MS };
	const char *cmd = "python3 train.py";
	const char *mode = "full";
	if (!strcmp(name, "contention")) {
		/* seed case: 4 workers + main on 4 CPUs, pinned batches */
		cpus = 4;
		w.nworkers = 4;
		for (int i = 0; i < 4; i++)
			w.worker_pid[i] = 4300 + i;
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			/* main waits for the next batch (blocked), workers run; woken,
			 * it waits for a CPU behind the worker on it (most of that wait) */
			uint64_t g = jit(25 * MS, 0.4);
			next_holder = w.worker_pid[(s + 1) % 4];
			next_holder_share = 0.8;
			blocked(w.main_pid, w.main_tid, w.t, w.t + g, jit(2 * MS, 0.5));
			w.t += g;
			uint64_t a = w.t;
			cuda_step(&w, 64ull << 20, 20.0, INGERO_FLAG_HOST_PINNED, 6, jit(4 * MS, 0.2), 0, 0.06,
				  w.worker_pid[s % 4]);
			workers_busy(&w, a - g, w.t, 300, 150000, 1);
		}
	} else if (!strcmp(name, "assembly")) {
		/* num_workers=0: main collates each batch itself, on-CPU */
		cpus = 16;
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			uint64_t g = jit(120 * MS, 0.1);
			oncpu(w.main_pid, w.main_tid, 0, w.t, w.t + g, &collate_mix, 4, 200 * US, 777, 20000);
			w.t += g;
			cuda_step(&w, 8ull << 20, 7.5, INGERO_FLAG_HOST_PAGEABLE, 6, jit(2 * MS, 0.2), 0, 0, 0);
		}
	} else if (!strcmp(name, "blocked")) {
		cpus = 16;
		w.nworkers = 4;
		for (int i = 0; i < 4; i++)
			w.worker_pid[i] = 4300 + i;
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			uint64_t g = jit(60 * MS, 0.1);
			/* a few wakeups: the queue's poll loop */
			uint64_t a = w.t;
			blocked(w.main_pid, w.main_tid, a, a + g / 2, 30 * US);
			oncpu(w.main_pid, w.main_tid, 0, a + g / 2, a + g / 2 + 150 * US, &model_mix, 0, 0, 0, 0);
			blocked(w.main_pid, w.main_tid, a + g / 2 + 150 * US, a + g, 40 * US);
			w.t += g;
			cuda_step(&w, 8ull << 20, 20.0, INGERO_FLAG_HOST_PINNED, 6, jit(2 * MS, 0.2), 0, 0, 0);
			workers_busy(&w, a, w.t, 2, 120000, 1);
		}
	} else if (!strcmp(name, "pageable")) {
		cpus = 16;
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			uint64_t g = jit(1 * MS, 0.2);
			oncpu(w.main_pid, w.main_tid, 0, w.t, w.t + g, &model_mix, 0, 0, 0, 5000);
			w.t += g;
			cuda_step(&w, 256ull << 20, 7.5, INGERO_FLAG_HOST_PAGEABLE, 6, jit(10 * MS, 0.2), 0, 0, 0);
		}
	} else if (!strcmp(name, "syncstep")) {
		cpus = 16;
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			uint64_t g = jit(1500 * US, 0.2);
			oncpu(w.main_pid, w.main_tid, 0, w.t, w.t + g, &model_mix, 0, 0, 0, 2000);
			w.t += g;
			cuda_step(&w, 4ull << 20, 20.0, INGERO_FLAG_HOST_PINNED, 24, jit(9 * MS, 0.1), 1, 0, 0);
		}
	} else if (!strcmp(name, "healthy")) {
		cpus = 16;
		mode = "full";
		cmd = "starve --mode direct";
		warmup(&w);
		for (int s = 0; s < steps; s++) {
			uint64_t g = jit(60 * US, 0.3);
			oncpu(w.main_pid, w.main_tid, 0, w.t, w.t + g, &model_mix, 0, 0, 0, 1000);
			w.t += g;
			cuda_step(&w, 4ull << 20, 20.0, INGERO_FLAG_HOST_PINNED, 6, jit(10 * MS, 0.1), 0, 0, 0);
		}
	} else if (!strcmp(name, "hostbound")) {
		cpus = 16;
		cmd = "python3 train_overhead.py";
		warmup(&w);
		for (int s = 0; s < steps; s++)
			launch_bound_step(&w, s);
		/* torch.cuda.synchronize() after the loop: the GPU is already done */
		call(w.main_pid, w.main_tid, INGERO_API_CUDA_DEVICE_SYNCHRONIZE, w.t, jit(15 * US, 0.1), 0, 0, 0,
		     ST_SYNC_STEP);
		w.t += 20 * US;
	} else {
		fprintf(stderr, "gen_reportdb: unknown scenario %s\n", name);
		exit(2);
	}
	uint64_t end = w.t + 5 * MS;
	session(cmd, mode, end);
	processes(&w, "python3", end);
	stacks(w.main_pid);
	finish(end);
}

/* The benchmark's database: N calls and M off-CPU intervals, written fast
 * (no samples, no per-bucket demand), shaped like the contention case. */
static void big(uint64_t ncalls, uint64_t noff)
{
	struct world w = { .main_pid = 4242, .main_tid = 4242, .t = T0 + MS, .nworkers = 4 };
	free(demand);
	demand = NULL;
	for (int i = 0; i < 4; i++)
		w.worker_pid[i] = 4300 + i;
	cpus = 4;
	uint64_t steps = ncalls / 9;
	uint64_t per_step_off = noff / (steps ? steps : 1);
	uint64_t made_calls = 0, made_off = 0;
	uint64_t wt[4] = { w.t, w.t, w.t, w.t };
	for (uint64_t s = 0; made_calls < ncalls; s++) {
		uint64_t a = w.t;
		uint64_t g = jit(400 * US, 0.5);
		if (made_off < noff) {
			off(w.main_pid, w.main_tid, w.t, w.t + g, w.t + g - 20 * US, 0, 0);
			made_off++;
		}
		w.t += g;
		for (int i = 0; i < 9 && made_calls < ncalls; i++, made_calls++) {
			int api = i == 0 ? INGERO_API_CUDA_MEMCPY_ASYNC : i == 8 ? INGERO_API_CUDA_STREAM_SYNCHRONIZE
				: INGERO_API_CUDA_LAUNCH_KERNEL_STUB;
			uint64_t d = i == 8 ? jit(300 * US, 0.5) : jit(40 * US, 0.5);
			if (rnd() % 1000 < 5) {
				uint64_t x = jit(20 * MS, 0.8);
				if (made_off < noff) {
					off(w.main_pid, w.main_tid, w.t + d / 2, w.t + d / 2 + x, w.t + d / 2, 1, 4300);
					made_off++;
				}
				d += x;
			}
			call(w.main_pid, w.main_tid, api, w.t, d, i == 0 ? 1 << 20 : 0, i == 0 ? INGERO_DIR_HTOD : 0,
			     i == 0 ? INGERO_FLAG_HOST_PINNED | INGERO_FLAG_ASYNC : 0,
			     i == 8 ? ST_SYNC_STEP : i == 0 ? ST_COPY_BATCH : 0);
			w.t += d + 10 * US;
		}
		/* workers: preemptions spread over the step */
		uint64_t k = per_step_off > 1 ? per_step_off - 1 : 1;
		for (uint64_t j = 0; j < k && made_off < noff; j++, made_off++) {
			int wi = (int)(j % 4);
			if (wt[wi] < a)
				wt[wi] = a;
			uint64_t run = jit((w.t - a) / (k / 4 + 1), 0.5);
			uint64_t len = jit(150 * US, 0.5);
			off(w.worker_pid[wi], w.worker_pid[wi], wt[wi] + run, wt[wi] + run + len, wt[wi] + run,
			    (int)(rnd() & 1), w.main_pid);
			wt[wi] += run + len;
		}
	}
	while (made_off < noff) {   /* leftover intervals, after the calls */
		off(w.worker_pid[0], w.worker_pid[0], w.t, w.t + 100 * US, w.t + 50 * US, 0, 0);
		w.t += 200 * US;
		made_off++;
	}
	uint64_t end = w.t + MS;
	session("python3 train.py (generated, big)", "full", end);
	processes(&w, "python3", end);
	stacks(w.main_pid);
	flush_calls();
	sqlite3_finalize(ins_call);
	sqlite3_finalize(ins_off);
	sqlite3_finalize(ins_sample);
	exec("COMMIT");
	sqlite3_close(db);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gen_reportdb contention|assembly|blocked|pageable|syncstep|healthy|hostbound|big OUT.db "
				"[--seed N] [--steps N] [--calls N] [--offcpu N]\n");
		return 2;
	}
	int steps = 120;
	uint64_t ncalls = 10000000, noff = 10000000;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			rng ^= strtoull(argv[i + 1], NULL, 0) * 0x2545F4914F6CDD1Dull;
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--calls"))
			ncalls = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--offcpu"))
			noff = strtoull(argv[i + 1], NULL, 0);
		else {
			fprintf(stderr, "gen_reportdb: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	setup(argv[2]);
	if (!strcmp(argv[1], "big"))
		big(ncalls, noff);
	else
		scenario(argv[1], steps);
	return 0;
}
