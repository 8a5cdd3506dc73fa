/*
 * ranks.c — a data-parallel job on the fake CUDA and NCCL libraries (tests
 * only), started as torchrun starts one: the launcher ("agent") runs N rank
 * processes with RANK, LOCAL_RANK, WORLD_SIZE, ... in their environment and
 * waits for them; each rank trains as tests/workload/starve.c's loop does —
 * its batches built by forked DataLoader-style workers (workers.c), copied
 * to the device, the "model" launched — and all-reduces its gradients
 * (ncclAllReduce on its stream) before it waits for its stream, every step.
 *
 * One rank can be made the straggler for a known cause: --slow-rank R gives
 * rank R --slow-workers workers (default 1) whose every batch goes through a
 * CPU-heavy transform (--slow-transform-ms of CPU time, default 30: an
 * augmentation): its loop waits for its DataLoader worker, on a CPU in
 * transform(), while the others' input keeps up; its batches are the same
 * size as theirs (--slow-rows changes that: uneven data).  Every rank then
 * waits for rank R at every all-reduce.  Without --slow-rank the ranks are
 * balanced.
 *
 * --backend gloo: the collectives are host calls, as PyTorch's
 * ProcessGroupGloo makes them of CUDA tensors (what the H200's DDP-over-gloo
 * traces showed, docs/gpu-runs.md 29): the training thread queues the
 * gradients' copy to the host on a side stream of a pool (after an event
 * of its stream) and hands the collective to one of two "pt_gloo_runloop"
 * threads, which waits for that stream (cudaStreamSynchronize), meets the
 * other ranks (a shared mapping; off-CPU while it polls, as gloo in its
 * socket wait) and queues the copy back (cudaMemcpyAsync host-to-device,
 * as many bytes, same stream); the training thread waits for the work
 * (a futex) and makes its stream wait for the copy back.  Before the loop,
 * rank 0 broadcasts the "model" (DDP's module states): the root's part
 * only is a copy out, a sync and a copy back, so rank 0 has one
 * collective more of that shape than the others.  No NCCL call is made.
 *
 * Ground truth: each process appends its line (truth.c) with role=rank<R>,
 * role=worker or role=agent; the ranks' lines carry their all-reduce
 * count as nccl=<n> (or gloo=<n>).
 */
#include "../workload/starve.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../fakecuda/nccl_fake.h"

struct options opt;

static unsigned nproc = 2, slow_workers = 1, slow_transform_us = 30000, nnodes = 1, node_rank = 0;
static int slow_rank = -1;
static size_t slow_rows, grad_bytes = 4u << 20;
static int gloo;
static int spawn;   /* --spawn: no launcher variables (torch.multiprocessing.spawn) */
static int parent_rank;   /* --parent-rank: the launcher is rank 0 (Lightning's DDP) */

static const char usage[] =
	"usage: ranks --nproc N [options]\n"
	"A data-parallel job of N ranks on the fake CUDA and NCCL libraries, launched as torchrun does.\n"
	"  --nproc N           ranks (default 2, at most 16)\n"
	"  --slow-rank R       rank R's input is slow: --slow-workers workers, each batch transformed on a CPU\n"
	"  --slow-workers W    (default 1)\n"
	"  --slow-transform-ms T  CPU time of the slow rank's transform per batch (default 30)\n"
	"  --slow-rows K       rows per batch of the slow rank (default: --rows)\n"
	"  --workers W         DataLoader workers of every other rank (default 2)\n"
	"  --batches B         steps (default 20)\n"
	"  --rows R            rows per batch (default 4096)\n"
	"  --row-bytes K       bytes per row (default 400)\n"
	"  --array-mb M        each rank's random array in MiB (default 64)\n"
	"  --grad-mb G         gradient bytes all-reduced each step, MiB (default 4)\n"
	"  --backend B         nccl (default) or gloo: host collectives on gloo-like threads\n"
	"  --nnodes N          the job spans N nodes (agents), each running --nproc ranks (default 1)\n"
	"  --node-rank K       this agent's node: its ranks are K x nproc .. (K+1) x nproc - 1; the\n"
	"                      communicator's id comes from $FAKENCCL_UNIQUE_ID (made by one agent)\n"
	"  --spawn             started as torch.multiprocessing.spawn starts ranks: no RANK, LOCAL_RANK,\n"
	"                      WORLD_SIZE, ... in their environment (each learns its rank privately)\n"
	"  --parent-rank       as --spawn, the launcher rank 0 itself (Lightning's DDP: the script is\n"
	"                      rank 0 and starts the others as its children)\n"
	"  --truth FILE        append one ground-truth line per process to FILE\n"
	"Exit status: 0 success, 1 failure, 2 bad usage.\n";

static unsigned long long number(const char *flag, const char *s, unsigned long long min, unsigned long long max)
{
	char *end;
	errno = 0;
	unsigned long long v = s && *s != '-' ? strtoull(s, &end, 10) : 0;
	if (!s || *s == '-' || *end || errno || v < min || v > max) {
		fprintf(stderr, "ranks: %s must be an integer in [%llu, %llu]\n", flag, min, max);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	enum { O_NPROC = 256, O_SLOW, O_SLOW_W, O_SLOW_R, O_SLOW_T, O_NNODES, O_NODE_RANK, O_WORKERS, O_BATCHES, O_ROWS, O_ROW_BYTES, O_ARRAY,
	       O_GRAD, O_TRUTH, O_BACKEND, O_SPAWN, O_PARENT, O_HELP };
	static const struct option longopts[] = {
		{ "nproc", required_argument, 0, O_NPROC }, { "slow-rank", required_argument, 0, O_SLOW },
		{ "slow-workers", required_argument, 0, O_SLOW_W }, { "slow-rows", required_argument, 0, O_SLOW_R },
		{ "slow-transform-ms", required_argument, 0, O_SLOW_T },
		{ "nnodes", required_argument, 0, O_NNODES }, { "node-rank", required_argument, 0, O_NODE_RANK },
		{ "workers", required_argument, 0, O_WORKERS }, { "batches", required_argument, 0, O_BATCHES },
		{ "rows", required_argument, 0, O_ROWS }, { "row-bytes", required_argument, 0, O_ROW_BYTES },
		{ "array-mb", required_argument, 0, O_ARRAY }, { "grad-mb", required_argument, 0, O_GRAD },
		{ "truth", required_argument, 0, O_TRUTH }, { "backend", required_argument, 0, O_BACKEND },
		{ "spawn", no_argument, 0, O_SPAWN }, { "parent-rank", no_argument, 0, O_PARENT },
		{ "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 },
	};
	opt = (struct options){ .mode = MODE_WORKERS, .workers = 2, .batches = 20, .rows = 4096, .row_bytes = 400,
				.array_mb = 64, .prefetch = 2, .worker_calls = 0, .stub_launches = 3,
				.rt_launches = 1, .seed = 1 };
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case O_NPROC: nproc = (unsigned)number("--nproc", optarg, 1, 16); break;
		case O_SLOW: slow_rank = (int)number("--slow-rank", optarg, 0, 15); break;
		case O_SLOW_W: slow_workers = (unsigned)number("--slow-workers", optarg, 1, 64); break;
		case O_SLOW_R: slow_rows = number("--slow-rows", optarg, 1, 1u << 24); break;
		case O_NNODES: nnodes = (unsigned)number("--nnodes", optarg, 1, 8); break;
		case O_NODE_RANK: node_rank = (unsigned)number("--node-rank", optarg, 0, 7); break;
		case O_SLOW_T: slow_transform_us = (unsigned)number("--slow-transform-ms", optarg, 0, 10000) * 1000; break;
		case O_WORKERS: opt.workers = (unsigned)number("--workers", optarg, 1, 64); break;
		case O_BATCHES: opt.batches = (unsigned)number("--batches", optarg, 1, 1000000); break;
		case O_ROWS: opt.rows = number("--rows", optarg, 1, 1u << 24); break;
		case O_ROW_BYTES: opt.row_bytes = number("--row-bytes", optarg, 1, 1u << 20); break;
		case O_ARRAY: opt.array_mb = number("--array-mb", optarg, 1, 4096); break;
		case O_GRAD: grad_bytes = number("--grad-mb", optarg, 1, 4096) << 20; break;
		case O_TRUTH: opt.truth = optarg; break;
		case O_SPAWN: spawn = 1; break;
		case O_PARENT: spawn = parent_rank = 1; break;
		case O_BACKEND:
			if (strcmp(optarg, "nccl") && strcmp(optarg, "gloo")) {
				fprintf(stderr, "ranks: --backend is nccl or gloo\n");
				exit(2);
			}
			gloo = !strcmp(optarg, "gloo");
			break;
		case O_HELP: fputs(usage, stdout); exit(0);
		default: fprintf(stderr, "ranks: bad option '%s' (see --help)\n", argv[optind - 1]); exit(2);
		}
	}
	if (optind < argc || node_rank >= nnodes || nproc * nnodes > 16 ||
	    (slow_rank >= 0 && (unsigned)slow_rank >= nproc * nnodes)) {
		fprintf(stderr, "ranks: bad arguments (see --help)\n");
		exit(2);
	}
	if (!slow_rows)
		slow_rows = opt.rows;
}

static int rank_main(int rank);

/* torchrun's agent: a unique id for the job's communicator, then the ranks,
 * each the same program with its variables; it waits for all of them. */
static int agent(char **argv)
{
	ncclUniqueId id;
	pid_t pids[16];
	int rc = 0, made = 0;
	const char *given = getenv("FAKENCCL_UNIQUE_ID");
	memset(&id, 0, sizeof id);
	if (given && strlen(given) < sizeof id.internal) {   /* the job's id, made elsewhere (several nodes) */
		strcpy(id.internal, given);
	} else {
		if (ncclGetUniqueId(&id) != 0)
			die("ncclGetUniqueId failed");
		setenv("FAKENCCL_UNIQUE_ID", id.internal, 1);
		made = 1;
	}
	char ws[16];
	/* (mp.spawn's children: the script's MASTER_ADDR/PORT, nothing of a launcher's) */
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	if (!spawn) {
		snprintf(ws, sizeof ws, "%u", nproc * nnodes);
		setenv("WORLD_SIZE", ws, 1);
		snprintf(ws, sizeof ws, "%u", nproc);
		setenv("LOCAL_WORLD_SIZE", ws, 1);
		snprintf(ws, sizeof ws, "%u", node_rank);
		setenv("GROUP_RANK", ws, 1);
		setenv("TORCHELASTIC_RUN_ID", "ranks-test", 1);
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	for (unsigned r = parent_rank ? 1 : 0; r < nproc; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			die("fork: %s", strerror(errno));
		if (pids[r] == 0) {
			char v[16];
			snprintf(v, sizeof v, "%u", node_rank * nproc + r);
			setenv(spawn ? "FAKERANKS_RANK" : "RANK", v, 1);
			snprintf(v, sizeof v, "%u", r);
			if (!spawn)
				setenv("LOCAL_RANK", v, 1);
			execv(self, argv);
			_exit(127);
		}
	}
	if (parent_rank && rank_main(0))
		rc = 1;
	for (unsigned r = parent_rank ? 1 : 0; r < nproc; r++) {
		int st;
		while (waitpid(pids[r], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	if (made) {
		shm_unlink(id.internal);   /* the communicator's mapping (the fake NCCL's) */
		char g[sizeof id.internal + 8];
		snprintf(g, sizeof g, "%s-gloo", id.internal);
		shm_unlink(g);             /* the gloo ranks' meeting place (below) */
	}
	if (!parent_rank)
		truth_write("agent", 0);
	return rc;
}

/* --- gloo ------------------------------------------------------------------------ */

#define GLOO_POOL 8   /* side streams, used in turn (PyTorch's pool has 32) */

/* Where the ranks meet: collectives begun, per rank. */
struct gloo_shared { _Atomic unsigned long long met[16]; };

struct gloo_work {
	cudaStream_t side;
	cudaEvent_t back;          /* recorded behind the copy back */
	void *dev;
	char *host;
	size_t bytes;
	int sync;                  /* this rank sent its tensor: wait for the copy out first */
	int posted, done;
};

static struct {
	struct gloo_shared *sh;
	int rank;
	unsigned nranks;
	unsigned long long seq;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gloo_work *w[2];    /* each runloop thread's work, NULL: none */
	int stop;
} G = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* A CUDA call of a gloo thread: truth_calls is counted under the lock. */
static void gloo_count(unsigned api)
{
	pthread_mutex_lock(&G.mu);
	truth_calls[api]++;
	pthread_mutex_unlock(&G.mu);
}

/* Collective seq: until every rank has begun it (gloo's wait in its socket). */
static void gloo_meet(unsigned long long seq)
{
	atomic_store(&G.sh->met[G.rank], seq);
	struct timespec nap = { 0, 50000 };
	for (unsigned k = 0; k < G.nranks; k++)
		while (atomic_load(&G.sh->met[k]) < seq)
			nanosleep(&nap, NULL);
}

static void *gloo_runloop(void *arg)
{
	int me = (int)(intptr_t)arg;
	pthread_setname_np(pthread_self(), "pt_gloo_runloop");
	pthread_mutex_lock(&G.mu);
	for (;;) {
		while (!G.stop && (!G.w[me] || G.w[me]->done))
			pthread_cond_wait(&G.cv, &G.mu);
		if (G.stop)
			break;
		struct gloo_work *w = G.w[me];
		unsigned long long seq = ++G.seq;
		pthread_mutex_unlock(&G.mu);
		if (w->sync) {
			gloo_count(INGERO_API_CUDA_STREAM_SYNCHRONIZE);
			cuda_check(cudaStreamSynchronize(w->side), "cudaStreamSynchronize (gloo)");
		}
		gloo_meet(seq);
		gloo_count(INGERO_API_CUDA_MEMCPY_ASYNC);
		cuda_check(cudaMemcpyAsync(w->dev, w->host, w->bytes, cudaMemcpyHostToDevice, w->side),
			   "cudaMemcpyAsync (gloo)");
		cuda_check(cudaEventRecord(w->back, w->side), "cudaEventRecord (gloo)");
		pthread_mutex_lock(&G.mu);
		w->done = 1;
		pthread_cond_broadcast(&G.cv);
	}
	pthread_mutex_unlock(&G.mu);
	return NULL;
}

static pthread_t gloo_th[2];
static cudaStream_t gloo_side[GLOO_POOL];
static cudaEvent_t gloo_ev, gloo_back;
static char *gloo_host;
static unsigned gloo_n;

static void gloo_start(const char *id, int rank, unsigned nranks)
{
	char name[160];
	snprintf(name, sizeof name, "%s-gloo", id);
	int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, sizeof *G.sh) < 0)
		die("rank %d: %s: %s", rank, name, strerror(errno));
	G.sh = mmap(NULL, sizeof *G.sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (G.sh == MAP_FAILED)
		die("rank %d: mmap: %s", rank, strerror(errno));
	G.rank = rank;
	G.nranks = nranks;
	for (unsigned i = 0; i < GLOO_POOL; i++)
		cuda_check(cudaStreamCreate(&gloo_side[i]), "cudaStreamCreate");
	cuda_check(cudaEventCreate(&gloo_ev), "cudaEventCreate");
	cuda_check(cudaEventCreate(&gloo_back), "cudaEventCreate");
	CUDA_CALL(CUDA_HOST_ALLOC, cudaHostAlloc((void **)&gloo_host, grad_bytes, 0));
	for (int i = 0; i < 2; i++)
		if (pthread_create(&gloo_th[i], NULL, gloo_runloop, (void *)(intptr_t)i))
			die("rank %d: pthread_create failed", rank);
}

/* One collective of the tensor dev (bytes) queued behind the stream's work:
 * send: this rank's tensor goes out (an all-reduce; a broadcast's root). */
static void gloo_collective(void *dev, size_t bytes, int send, cudaStream_t stream)
{
	struct gloo_work w = { gloo_side[gloo_n % GLOO_POOL], gloo_back, dev, gloo_host, bytes, send, 1, 0 };
	if (send) {
		cuda_check(cudaEventRecord(gloo_ev, stream), "cudaEventRecord");
		CUDA_CALL(CUDA_STREAM_WAIT_EVENT, cudaStreamWaitEvent(w.side, gloo_ev, 0));
		pthread_mutex_lock(&G.mu);   /* (the truth counted under the lock: the threads count too) */
		truth_calls[INGERO_API_CUDA_MEMCPY_ASYNC]++;
		pthread_mutex_unlock(&G.mu);
		cuda_check(cudaMemcpyAsync(gloo_host, dev, bytes, cudaMemcpyDeviceToHost, w.side), "cudaMemcpyAsync");
	}
	pthread_mutex_lock(&G.mu);
	G.w[gloo_n++ % 2] = &w;
	pthread_cond_broadcast(&G.cv);
	while (!w.done)   /* work.wait(): a futex */
		pthread_cond_wait(&G.cv, &G.mu);
	G.w[(gloo_n - 1) % 2] = NULL;
	truth_calls[INGERO_API_CUDA_STREAM_WAIT_EVENT]++;
	pthread_mutex_unlock(&G.mu);
	cuda_check(cudaStreamWaitEvent(stream, gloo_back, 0), "cudaStreamWaitEvent");
}

static void gloo_stop(void)
{
	pthread_mutex_lock(&G.mu);
	G.stop = 1;
	pthread_cond_broadcast(&G.cv);
	pthread_mutex_unlock(&G.mu);
	for (int i = 0; i < 2; i++)
		pthread_join(gloo_th[i], NULL);
	munmap(G.sh, sizeof *G.sh);
}

static int rank_main(int rank)
{
	struct dataset d;
	void *dev = NULL, *grad = NULL;
	cudaStream_t stream = NULL;
	struct ncclComm *comm = NULL;
	ncclUniqueId id;
	const char *idv = getenv("FAKENCCL_UNIQUE_ID");
	char role[32];

	if (!idv || strlen(idv) >= sizeof id.internal)
		die("rank %d: no FAKENCCL_UNIQUE_ID", rank);
	memset(&id, 0, sizeof id);
	strcpy(id.internal, idv);
	if (rank == slow_rank) {
		opt.workers = slow_workers;
		opt.rows = slow_rows;
		opt.transform_us = slow_transform_us;
	}
	opt.seed += (uint64_t)rank;
	signal(SIGPIPE, SIG_IGN);
	size_t bytes = opt.rows * opt.row_bytes;
	dataset_make(&d, opt.array_mb << 20, opt.row_bytes, opt.seed);
	cuda_check(cudaSetDevice(0), "cudaSetDevice");
	cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
	CUDA_CALL(CUDA_MALLOC, cudaMalloc(&dev, bytes));
	CUDA_CALL(CUDA_MALLOC, cudaMalloc(&grad, grad_bytes));
	model_init(stream);
	if (gloo) {
		gloo_start(id.internal, rank, nproc * nnodes);
		gloo_collective(grad, grad_bytes, rank == 0, stream);   /* DDP's broadcast of the module, from rank 0 */
	} else if (ncclCommInitRank(&comm, (int)(nproc * nnodes), id, rank) != 0) {
		die("rank %d: ncclCommInitRank failed", rank);
	}
	struct pool *pool = pool_start(&d, bytes, dev);
	unsigned allreduces = 0;
	for (unsigned b = 0; b < opt.batches; b++) {
		const char *batch = pool_get(pool, b);
		CUDA_CALL(CUDA_MEMCPY_ASYNC, cudaMemcpyAsync(dev, batch, bytes, cudaMemcpyHostToDevice, stream));
		model_forward(dev, stream);
		/* DDP: the gradients averaged over the ranks, on the training stream */
		if (gloo)
			gloo_collective(grad, grad_bytes, 1, stream);
		else if (ncclAllReduce(grad, grad, grad_bytes / 4, ncclFloat32, ncclSum, comm, stream) != 0)
			die("rank %d: ncclAllReduce failed", rank);
		allreduces++;
		CUDA_CALL(CUDA_STREAM_SYNCHRONIZE, cudaStreamSynchronize(stream));
		pool_release(pool, b);
	}
	int rc = pool_finish(pool);
	if (gloo)
		gloo_stop();
	else
		ncclCommDestroy(comm);
	CUDA_CALL(CUDA_FREE, cudaFree(grad));
	CUDA_CALL(CUDA_FREE, cudaFree(dev));
	snprintf(role, sizeof role, "rank%d %s=%u", rank, gloo ? "gloo" : "nccl", allreduces);
	truth_write(role, opt.batches);
	return rc;
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	const char *r = getenv(spawn ? "FAKERANKS_RANK" : "RANK");
	if (!r)
		return agent(argv);
	return rank_main((int)number("RANK", r, 0, 127));
}
