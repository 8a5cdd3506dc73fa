/*
 * workers.c — forked batch builders, the DataLoader workers of the workload.
 *
 * Worker w builds batches w, w+N, w+2N, … in order.  Each batch: a fresh
 * mapping, random rows gathered into it, copied into one of the worker's
 * `prefetch` slots of a shared mapping, and announced on the results pipe
 * (8-byte messages, atomic below PIPE_BUF).  A slot is reused only after the
 * parent hands it back with a byte on the worker's own "free" pipe, which
 * bounds how far a worker runs ahead, like prefetch_factor.  The parent
 * blocks in read() on the results pipe while the workers work: the
 * design's "main thread blocked on the data queue".
 *
 * Workers also make a few CUDA calls per batch (opt.worker_calls pairs of
 * cudaStreamSynchronize + a 4 KiB cudaMemcpyAsync) so a tracer's fork
 * handling is exercised, and end like Python's multiprocessing does:
 * their truth line, then _exit().
 */
#include "starve.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct msg { uint32_t batch; uint16_t worker, slot; };

struct pool {
	const struct dataset *d;
	size_t batch_bytes;
	void *dev;
	unsigned n;
	char *slots;           /* n * prefetch * batch_bytes, MAP_SHARED */
	int results[2];        /* workers → parent */
	int (*free_pipe)[2];   /* parent → worker w */
	pid_t *pids;
	int *status;           /* exit status once reaped, -1 before */
	unsigned char *ready;  /* per batch */
	uint16_t *slot_of;     /* per batch */
};

static char *slot_ptr(struct pool *p, unsigned w, unsigned slot)
{
	return p->slots + ((size_t)w * opt.prefetch + slot) * p->batch_bytes;
}

static void write_full(int fd, const void *buf, size_t n)
{
	const char *c = buf;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			die("pipe write: %s", strerror(errno));
		c += k;
		n -= (size_t)k;
	}
}

/* 1: got n bytes; 0: end of file before any byte */
static int read_full(int fd, void *buf, size_t n)
{
	char *c = buf;
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, c + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("pipe read: %s", strerror(errno));
		if (k == 0) {
			if (got)
				die("short message on a pipe");
			return 0;
		}
		got += (size_t)k;
	}
	return 1;
}

static void worker_calls(struct pool *p, const char *batch)
{
	size_t small = p->batch_bytes < 4096 ? p->batch_bytes : 4096;
	for (unsigned i = 0; i < opt.worker_calls; i++) {
		CUDA_CALL(CUDA_STREAM_SYNCHRONIZE, cudaStreamSynchronize(0));
		CUDA_CALL(CUDA_MEMCPY_ASYNC, cudaMemcpyAsync(p->dev, batch, small, cudaMemcpyHostToDevice, 0));
	}
}

/* A CPU-heavy transform of the batch (an augmentation): it runs until the
 * thread has had us of CPU time, so that a worker that waits for a CPU
 * takes longer, as real per-sample work does. */
static __attribute__((noinline)) void transform(char *buf, size_t n, unsigned us)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	uint64_t end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + us * 1000ull;
	for (size_t i = 0;; i = (i + 4097) % n) {
		buf[i] = (char)(buf[i] * 31 + 7);
		if ((i & 0xfff) == 0) {
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
			if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec >= end)
				return;
		}
	}
}

static __attribute__((noreturn)) void worker_main(struct pool *p, unsigned w)
{
	unsigned done = 0, k = 0;
	truth_reset();   /* the parent's counts came along with fork() */
	for (unsigned b = w; b < opt.batches; b += p->n, k++) {
		char token;
		unsigned slot = k % opt.prefetch;
		if (!read_full(p->free_pipe[w][0], &token, 1))
			break;   /* parent gone */
		char *buf = fresh_buffer(p->batch_bytes);
		gather_rows(buf, p->d, opt.rows, opt.seed + b);
		if (opt.transform_us)
			transform(buf, p->batch_bytes, opt.transform_us);
		memcpy(slot_ptr(p, w, slot), buf, p->batch_bytes);
		worker_calls(p, buf);
		fresh_buffer_free(buf, p->batch_bytes);
		struct msg m = { b, (uint16_t)w, (uint16_t)slot };
		write_full(p->results[1], &m, sizeof m);
		done++;
	}
	truth_write("worker", done);
	_exit(0);
}

struct pool *pool_start(const struct dataset *d, size_t batch_bytes, void *dev)
{
	struct pool *p = calloc(1, sizeof *p);
	unsigned n = opt.workers;
	if (!p || !(p->free_pipe = calloc(n, sizeof *p->free_pipe)) || !(p->pids = calloc(n, sizeof *p->pids)) ||
	    !(p->status = calloc(n, sizeof *p->status)) || !(p->ready = calloc(opt.batches, 1)) ||
	    !(p->slot_of = calloc(opt.batches, sizeof *p->slot_of)))
		die("out of memory");
	p->d = d;
	p->batch_bytes = batch_bytes;
	p->dev = dev;
	p->n = n;
	size_t slots_bytes = (size_t)n * opt.prefetch * batch_bytes;
	p->slots = mmap(NULL, slots_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->slots == MAP_FAILED)
		die("cannot map %zu bytes of batch slots", slots_bytes);
	if (pipe(p->results))
		die("pipe: %s", strerror(errno));
	for (unsigned w = 0; w < n; w++) {
		if (pipe(p->free_pipe[w]))
			die("pipe: %s", strerror(errno));
		for (unsigned s = 0; s < opt.prefetch; s++)
			write_full(p->free_pipe[w][1], "", 1);
	}
	fflush(NULL);   /* nothing buffered may be written twice */
	for (unsigned w = 0; w < n; w++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			/* keep only this worker's ends: EOF must mean what it says */
			close(p->results[0]);
			for (unsigned o = 0; o < n; o++) {
				close(p->free_pipe[o][1]);
				if (o != w)
					close(p->free_pipe[o][0]);
			}
			worker_main(p, w);
		}
		p->pids[w] = pid;
		p->status[w] = -1;
	}
	close(p->results[1]);
	for (unsigned w = 0; w < n; w++)
		close(p->free_pipe[w][0]);
	return p;
}

/* A worker that died abnormally would leave the parent waiting forever. */
static void check_workers(struct pool *p)
{
	int st;
	for (unsigned w = 0; w < p->n; w++) {
		if (p->status[w] != -1 || waitpid(p->pids[w], &st, WNOHANG) != p->pids[w])
			continue;
		p->status[w] = st;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			for (unsigned o = 0; o < p->n; o++)
				if (p->status[o] == -1)
					kill(p->pids[o], SIGTERM);
			die("worker %d (pid %d) failed: %s %d", w, (int)p->pids[w],
			    WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
	}
}

const char *pool_get(struct pool *p, unsigned b)
{
	while (!p->ready[b]) {
		struct pollfd pfd = { p->results[0], POLLIN, 0 };
		int r = poll(&pfd, 1, 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("poll: %s", strerror(errno));
		if (r == 0) {
			check_workers(p);
			continue;
		}
		struct msg m;
		if (!read_full(p->results[0], &m, sizeof m)) {
			check_workers(p);
			die("workers ended before batch %u", b);
		}
		if (m.batch >= opt.batches || m.worker >= p->n || m.slot >= opt.prefetch)
			die("bad message from a worker");
		p->ready[m.batch] = 1;
		p->slot_of[m.batch] = m.slot;
	}
	return slot_ptr(p, b % p->n, p->slot_of[b]);
}

void pool_release(struct pool *p, unsigned b)
{
	/* a worker that has built all its batches has closed its end: ignore EPIPE */
	char token = 0;
	if (write(p->free_pipe[b % p->n][1], &token, 1) < 0 && errno != EPIPE)
		die("pipe write: %s", strerror(errno));
}

int pool_finish(struct pool *p)
{
	int rc = 0;
	for (unsigned w = 0; w < p->n; w++)
		close(p->free_pipe[w][1]);
	close(p->results[0]);
	for (unsigned w = 0; w < p->n; w++) {
		int st = p->status[w];
		if (st == -1 && waitpid(p->pids[w], &st, 0) != p->pids[w])
			st = -1;
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			rc = 1;
	}
	return rc;
}
