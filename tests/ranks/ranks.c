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
 * Ground truth: each process appends its line (truth.c) with role=rank<R>,
 * role=worker or role=agent; the ranks' lines carry their ncclAllReduce
 * count as nccl=<n>.
 */
#include "../workload/starve.h"

#include <errno.h>
#include <getopt.h>
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
	"  --nnodes N          the job spans N nodes (agents), each running --nproc ranks (default 1)\n"
	"  --node-rank K       this agent's node: its ranks are K x nproc .. (K+1) x nproc - 1; the\n"
	"                      communicator's id comes from $FAKENCCL_UNIQUE_ID (made by one agent)\n"
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
	       O_GRAD, O_TRUTH, O_HELP };
	static const struct option longopts[] = {
		{ "nproc", required_argument, 0, O_NPROC }, { "slow-rank", required_argument, 0, O_SLOW },
		{ "slow-workers", required_argument, 0, O_SLOW_W }, { "slow-rows", required_argument, 0, O_SLOW_R },
		{ "slow-transform-ms", required_argument, 0, O_SLOW_T },
		{ "nnodes", required_argument, 0, O_NNODES }, { "node-rank", required_argument, 0, O_NODE_RANK },
		{ "workers", required_argument, 0, O_WORKERS }, { "batches", required_argument, 0, O_BATCHES },
		{ "rows", required_argument, 0, O_ROWS }, { "row-bytes", required_argument, 0, O_ROW_BYTES },
		{ "array-mb", required_argument, 0, O_ARRAY }, { "grad-mb", required_argument, 0, O_GRAD },
		{ "truth", required_argument, 0, O_TRUTH }, { "help", no_argument, 0, O_HELP }, { 0, 0, 0, 0 },
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
	snprintf(ws, sizeof ws, "%u", nproc * nnodes);
	setenv("WORLD_SIZE", ws, 1);
	snprintf(ws, sizeof ws, "%u", nproc);
	setenv("LOCAL_WORLD_SIZE", ws, 1);
	snprintf(ws, sizeof ws, "%u", node_rank);
	setenv("GROUP_RANK", ws, 1);
	setenv("MASTER_ADDR", "127.0.0.1", 1);
	setenv("MASTER_PORT", "29500", 1);
	setenv("TORCHELASTIC_RUN_ID", "ranks-test", 1);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	for (unsigned r = 0; r < nproc; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			die("fork: %s", strerror(errno));
		if (pids[r] == 0) {
			char v[16];
			snprintf(v, sizeof v, "%u", node_rank * nproc + r);
			setenv("RANK", v, 1);
			snprintf(v, sizeof v, "%u", r);
			setenv("LOCAL_RANK", v, 1);
			execv(self, argv);
			_exit(127);
		}
	}
	for (unsigned r = 0; r < nproc; r++) {
		int st;
		while (waitpid(pids[r], &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	if (made)
		shm_unlink(id.internal);   /* the communicator's mapping (the fake NCCL's) */
	truth_write("agent", 0);
	return rc;
}

static int rank_main(int rank)
{
	struct dataset d;
	void *dev = NULL, *grad = NULL;
	cudaStream_t stream = NULL;
	struct ncclComm *comm = NULL;
	ncclUniqueId id;
	const char *idv = getenv("FAKENCCL_UNIQUE_ID");
	char role[16];

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
	if (ncclCommInitRank(&comm, (int)(nproc * nnodes), id, rank) != 0)
		die("rank %d: ncclCommInitRank failed", rank);
	struct pool *pool = pool_start(&d, bytes, dev);
	unsigned allreduces = 0;
	for (unsigned b = 0; b < opt.batches; b++) {
		const char *batch = pool_get(pool, b);
		CUDA_CALL(CUDA_MEMCPY_ASYNC, cudaMemcpyAsync(dev, batch, bytes, cudaMemcpyHostToDevice, stream));
		model_forward(dev, stream);
		/* DDP: the gradients averaged over the ranks, on the training stream */
		if (ncclAllReduce(grad, grad, grad_bytes / 4, ncclFloat32, ncclSum, comm, stream) != 0)
			die("rank %d: ncclAllReduce failed", rank);
		allreduces++;
		CUDA_CALL(CUDA_STREAM_SYNCHRONIZE, cudaStreamSynchronize(stream));
		pool_release(pool, b);
	}
	int rc = pool_finish(pool);
	ncclCommDestroy(comm);
	CUDA_CALL(CUDA_FREE, cudaFree(grad));
	CUDA_CALL(CUDA_FREE, cudaFree(dev));
	snprintf(role, sizeof role, "rank%d nccl=%u", rank, allreduces);
	truth_write(role, opt.batches);
	return rc;
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	const char *r = getenv("RANK");
	if (!r)
		return agent(argv);
	return rank_main((int)number("RANK", r, 0, 127));
}
