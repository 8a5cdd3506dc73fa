/*
 * starve.c — the starvation workload: a C stand-in for the design's
 * PyTorch loop (pytorch/pytorch#154318) on the fake CUDA libraries.
 *
 * The parent is the training loop: per batch, copy it to the device
 * (cudaMemcpyAsync, pinned or pageable), run the "model" (launches of every
 * kind, see kernels.c), cudaStreamSynchronize.  Where batches come from is
 * the mode:
 *   workers  forked workers gather random rows into fresh memory and hand
 *            batches over through shared memory (DataLoader with workers,
 *            shuffle=True); the parent blocks on a pipe meanwhile.  The
 *            workers are forked after the parent's first CUDA calls.
 *   inline   the parent gathers each batch itself, on-CPU between its CUDA
 *            calls (num_workers=0).
 *   direct   the parent slices the array contiguously: no gather, no fresh
 *            memory — the healthy baseline.
 * Each process appends its ground truth (truth.c) to --truth at its end.
 */
#include "starve.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct options opt;

static const char usage[] =
	"usage: starve [--mode workers|inline|direct] [options]\n"
	"Reproduces a GPU starved by its input pipeline, on the fake CUDA libraries.\n"
	"  --mode M            workers (default): forked workers build shuffled batches;\n"
	"                      inline: the main process builds them; direct: contiguous slices\n"
	"  --workers N         worker processes (default: online CPUs + 1)\n"
	"  --batches B         batches to consume (default 20)\n"
	"  --rows R            rows per batch (default 65536)\n"
	"  --row-bytes K       bytes per row (default 400)\n"
	"  --array-mb M        size of the random array in MiB (default 256)\n"
	"  --prefetch P        batch slots per worker (default 2)\n"
	"  --pin               copy batches through a pinned buffer (cudaHostAlloc)\n"
	"  --ptsz              use the per-thread default stream (_ptsz/_ptds) entry points\n"
	"  --worker-calls C    cudaStreamSynchronize+cudaMemcpyAsync pairs per batch in each worker\n"
	"                      (default 1; 0: workers make no CUDA calls)\n"
	"  --stub-launches N   launches per batch through __cudaLaunchKernel, as nvcc code (default 3)\n"
	"  --rt-launches N     cudaLaunchKernel calls per batch (default 1)\n"
	"  --exc-launches N    cudaLaunchKernelExC calls per batch (default 0)\n"
	"  --drv-launches N    cuLaunchKernel calls per batch through cudaGetDriverEntryPoint (default 1)\n"
	"  --seed S            random seed (default 1)\n"
	"  --truth FILE        append one ground-truth line per process to FILE\n"
	"  --help              this text\n"
	"Exit status: 0 success, 1 failure, 2 bad usage.\n";

static void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "starve: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	exit(2);
}

static unsigned long long number(const char *flag, const char *s, unsigned long long min, unsigned long long max)
{
	char *end;
	if (!s || !*s || *s == '-')
		bad_usage("%s needs a non-negative integer", flag);
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v < min || v > max) {
		fprintf(stderr, "starve: %s must be an integer in [%llu, %llu], not '%s'\n", flag, min, max, s);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	enum { O_MODE = 256, O_WORKERS, O_BATCHES, O_ROWS, O_ROW_BYTES, O_ARRAY_MB, O_PREFETCH, O_PIN, O_PTSZ,
	       O_WORKER_CALLS, O_STUB, O_RT, O_EXC, O_DRV, O_SEED, O_TRUTH, O_HELP };
	static const struct option longopts[] = {
		{ "mode", required_argument, 0, O_MODE },
		{ "workers", required_argument, 0, O_WORKERS },
		{ "batches", required_argument, 0, O_BATCHES },
		{ "rows", required_argument, 0, O_ROWS },
		{ "row-bytes", required_argument, 0, O_ROW_BYTES },
		{ "array-mb", required_argument, 0, O_ARRAY_MB },
		{ "prefetch", required_argument, 0, O_PREFETCH },
		{ "pin", no_argument, 0, O_PIN },
		{ "ptsz", no_argument, 0, O_PTSZ },
		{ "worker-calls", required_argument, 0, O_WORKER_CALLS },
		{ "stub-launches", required_argument, 0, O_STUB },
		{ "rt-launches", required_argument, 0, O_RT },
		{ "exc-launches", required_argument, 0, O_EXC },
		{ "drv-launches", required_argument, 0, O_DRV },
		{ "seed", required_argument, 0, O_SEED },
		{ "truth", required_argument, 0, O_TRUTH },
		{ "help", no_argument, 0, O_HELP },
		{ 0, 0, 0, 0 },
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	opt = (struct options){
		.mode = MODE_WORKERS, .workers = (unsigned)(ncpu > 0 ? ncpu : 1) + 1, .batches = 20,
		.rows = 65536, .row_bytes = 400, .array_mb = 256, .prefetch = 2, .worker_calls = 1,
		.stub_launches = 3, .rt_launches = 1, .exc_launches = 0, .drv_launches = 1, .seed = 1,
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case O_MODE:
			if (strcmp(optarg, "workers") == 0) opt.mode = MODE_WORKERS;
			else if (strcmp(optarg, "inline") == 0) opt.mode = MODE_INLINE;
			else if (strcmp(optarg, "direct") == 0) opt.mode = MODE_DIRECT;
			else bad_usage("unknown mode '%s'", optarg);
			break;
		case O_WORKERS: opt.workers = (unsigned)number("--workers", optarg, 1, 1024); break;
		case O_BATCHES: opt.batches = (unsigned)number("--batches", optarg, 1, 100000000); break;
		case O_ROWS: opt.rows = number("--rows", optarg, 1, 1ull << 32); break;
		case O_ROW_BYTES: opt.row_bytes = number("--row-bytes", optarg, 1, 1ull << 30); break;
		case O_ARRAY_MB: opt.array_mb = number("--array-mb", optarg, 1, 1ull << 20); break;
		case O_PREFETCH: opt.prefetch = (unsigned)number("--prefetch", optarg, 1, 64); break;
		case O_PIN: opt.pin = 1; break;
		case O_PTSZ: opt.ptsz = 1; break;
		case O_WORKER_CALLS: opt.worker_calls = (unsigned)number("--worker-calls", optarg, 0, 1000); break;
		case O_STUB: opt.stub_launches = (unsigned)number("--stub-launches", optarg, 0, 1000); break;
		case O_RT: opt.rt_launches = (unsigned)number("--rt-launches", optarg, 0, 1000); break;
		case O_EXC: opt.exc_launches = (unsigned)number("--exc-launches", optarg, 0, 1000); break;
		case O_DRV: opt.drv_launches = (unsigned)number("--drv-launches", optarg, 0, 1000); break;
		case O_SEED: opt.seed = number("--seed", optarg, 0, ~0ull); break;
		case O_TRUTH: opt.truth = optarg; break;
		case O_HELP: fputs(usage, stdout); exit(0);
		case ':': bad_usage("%s needs a value", argv[optind - 1]); break;
		default: bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (opt.rows > SIZE_MAX / opt.row_bytes || opt.rows * opt.row_bytes > (64ull << 30))
		bad_usage("%s", "--rows x --row-bytes is too large");
	if (opt.row_bytes > opt.array_mb << 20)
		bad_usage("%s", "--row-bytes is larger than the array");
	if (opt.mode == MODE_DIRECT && opt.rows * opt.row_bytes > opt.array_mb << 20)
		bad_usage("%s", "--mode direct needs a batch no larger than the array");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The training step: batch to the device, forward pass, wait for it. */
static void step(const char *batch, size_t bytes, void *dev, void *pinned, cudaStream_t stream)
{
	if (pinned) {   /* pin_memory: the host copies into page-locked memory first */
		memcpy(pinned, batch, bytes);
		batch = pinned;
	}
	CUDA_CALL_PT(CUDA_MEMCPY_ASYNC, cudaMemcpyAsync(dev, batch, bytes, cudaMemcpyHostToDevice, stream),
		     cudaMemcpyAsync_ptsz(dev, batch, bytes, cudaMemcpyHostToDevice, stream));
	model_forward(dev, stream);
	CUDA_CALL_PT(CUDA_STREAM_SYNCHRONIZE, cudaStreamSynchronize(stream), cudaStreamSynchronize_ptsz(stream));
}

/* CPU time of this process: on-CPU in the gaps (inline) vs blocked (workers) */
static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static const char *mode_name(enum mode m)
{
	return m == MODE_WORKERS ? "workers" : m == MODE_INLINE ? "inline" : "direct";
}

int main(int argc, char **argv)
{
	struct dataset d;
	void *dev = NULL, *pinned = NULL;
	cudaStream_t stream = NULL;
	struct pool *pool = NULL;
	int rc = 0;

	parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);   /* a finished worker's closed pipe is not an error */
	double t0 = now_s();
	size_t bytes = opt.rows * opt.row_bytes;
	dataset_make(&d, opt.array_mb << 20, opt.row_bytes, opt.seed);

	/* first CUDA calls, before any fork: context, buffers, a first copy (model.to(device)) */
	cuda_check(cudaSetDevice(0), "cudaSetDevice");
	if (!opt.ptsz)   /* --ptsz runs on the per-thread default stream instead */
		cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
	CUDA_CALL(CUDA_MALLOC, cudaMalloc(&dev, bytes));
	if (opt.pin)
		CUDA_CALL(CUDA_HOST_ALLOC, cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
	if (opt.ptsz)
		CUDA_CALL(CUDA_MEMCPY_PTDS, cudaMemcpy_ptds(dev, d.data, opt.row_bytes, cudaMemcpyHostToDevice));
	else
		CUDA_CALL(CUDA_MEMCPY, cudaMemcpy(dev, d.data, opt.row_bytes, cudaMemcpyHostToDevice));
	model_init(stream);

	if (opt.mode == MODE_WORKERS)
		pool = pool_start(&d, bytes, dev);
	double t1 = now_s(), c1 = cpu_s();
	size_t per_array = d.bytes / bytes;
	for (unsigned b = 0; b < opt.batches; b++) {
		if (opt.mode == MODE_WORKERS) {
			step(pool_get(pool, b), bytes, dev, pinned, stream);
			pool_release(pool, b);
		} else if (opt.mode == MODE_INLINE) {
			char *buf = fresh_buffer(bytes);
			gather_rows(buf, &d, opt.rows, opt.seed + b);
			step(buf, bytes, dev, pinned, stream);
			fresh_buffer_free(buf, bytes);
		} else {
			step(d.data + (b % per_array) * bytes, bytes, dev, pinned, stream);
		}
	}
	double t2 = now_s(), c2 = cpu_s();
	if (pool)
		rc = pool_finish(pool);
	if (pinned)
		CUDA_CALL(CUDA_FREE_HOST, cudaFreeHost(pinned));
	CUDA_CALL(CUDA_FREE, cudaFree(dev));
	truth_write("main", opt.batches);
	printf("starve: mode=%s workers=%u batches=%u batch=%.1f MiB pinned=%s: loop %.3f s (%.2f ms/batch), "
	       "setup %.3f s, main cpu in loop %.3f s%s\n",
	       mode_name(opt.mode), opt.mode == MODE_WORKERS ? opt.workers : 0, opt.batches,
	       (double)bytes / (1 << 20), opt.pin ? "yes" : "no", t2 - t1, (t2 - t1) * 1e3 / opt.batches,
	       t1 - t0, c2 - c1, rc ? " (a worker failed)" : "");
	return rc;
}
