/*
 * collector_send.c — a stand-in for the preload library's sender, for the
 * collector's tests and benchmark.  It speaks wire.h over nng push to
 * $INGERO_ENDPOINT (or --endpoint) and prints what it sent as key=value.
 *
 *   collector_send valid [--calls N] [--batch B] [--interval-ms I]
 *       HELLO, N cudaMemcpyAsync calls of its own in batches of B, COUNTS.
 *   collector_send spoof [--claim PID]
 *       10 own calls, then a message claiming PID (default 1) for every
 *       record type, then a message mixing both: own=20 spoofed=N.
 *   collector_send unknown [--calls N]
 *       one message of N (default 200) call records, each claiming a
 *       different pid that does not exist (counted down from pid_max):
 *       unknown=N.
 *   collector_send rawclose
 *       connects to the ipc:// endpoint's socket with connect(2) and
 *       closes it before nng's handshake (no nng): rawclose=1.
 *   collector_send garbage
 *       every kind of malformed message, then 5 good calls: bad=K good=5.
 *   collector_send oversize
 *       one message over the wire limit (the decoder refuses it), then 5
 *       good calls: oversize=1 good=5.
 *   collector_send bench [--calls N] [--batch B]
 *       one pre-encoded message of B calls sent N/B times as fast as the
 *       collector takes them (blocking: nothing is dropped).
 *   collector_send seeds DIR
 *       writes the fuzz seed corpus (valid messages of every shape) to DIR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pipeline0/push.h>

#include "ingero/api.h"
#include "ingero/config.h"
#include "ingero/wire.h"
#include "collector_wire.h"

static nng_socket sock;
static const char *endpoint;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned self_tid(void)
{
	return (unsigned)syscall(SYS_gettid);
}

static void connect_or_die(void)
{
	int rv;

	if ((rv = nng_push0_open(&sock))) {
		fprintf(stderr, "collector_send: %s\n", nng_strerror(rv));
		exit(1);
	}
	nng_socket_set_int(sock, NNG_OPT_SENDBUF, 2);
	/* A push send waits for a peer: once the collector under test has been
	 * stopped, give up (exit 1) instead of hanging the test that waits for us. */
	nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, 3000);
	for (int tries = 0; tries < 100; tries++) {
		if ((rv = nng_dial(sock, endpoint, NULL, 0)) == 0)
			return;
		usleep(50000);
	}
	fprintf(stderr, "collector_send: cannot reach %s: %s\n", endpoint, nng_strerror(rv));
	exit(1);
}

static void send_raw(const void *p, size_t n)
{
	int rv = nng_send(sock, (void *)p, n, 0);

	if (rv) {
		fprintf(stderr, "collector_send: send: %s\n", nng_strerror(rv));
		exit(1);
	}
}

static void send_tw(struct tw *w)
{
	send_raw(w->sb.data, w->sb.size);
	tw_free(w);
}

/* let the last messages leave the socket before we close it */
static void finish(void)
{
	usleep(500000);
	nng_close(sock);
}

static void send_calls(unsigned pid, unsigned tid, unsigned n, uint64_t *t)
{
	struct tw w;

	tw_begin(&w, getpid(), n);
	for (unsigned i = 0; i < n; i++) {
		struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, pid, tid, (*t)++);

		tw_call(&w, &c);
	}
	send_tw(&w);
}

static void mode_valid(unsigned calls, unsigned batch, unsigned interval_ms)
{
	unsigned pid = getpid(), tid = self_tid(), sent = 0;
	uint64_t t = now_ns();
	struct tw w;

	tw_begin(&w, pid, 1);
	tw_hello(&w, pid, getppid(), t, "collector_send", "/proc/self/exe", "collector_send valid");
	send_tw(&w);
	while (sent < calls) {
		unsigned n = calls - sent < batch ? calls - sent : batch;

		send_calls(pid, tid, n, &t);
		sent += n;
		printf("sent_calls=%u\n", sent);
		fflush(stdout);
		if (interval_ms)
			usleep(interval_ms * 1000);
	}
	tw_begin(&w, pid, 1);
	tw_counts(&w, pid, sent, 0);
	send_tw(&w);
	finish();
}

static void mode_spoof(unsigned claim)
{
	unsigned pid = getpid(), tid = self_tid();
	uint64_t t = now_ns();
	struct tw w;
	struct ingero_cuda_call c;
	unsigned spoofed = 0;

	send_calls(pid, tid, 10, &t);
	/* every record type, for someone else */
	tw_begin(&w, pid, 7);
	tw_hello(&w, claim, 0, t, "init", "/sbin/init", "init");
	c = tw_sample_call(INGERO_API_CUDA_STREAM_SYNCHRONIZE, claim, claim, t++);
	tw_call(&w, &c);
	c = tw_sample_call(INGERO_API_CUDA_STREAM_SYNCHRONIZE, pid, claim, t++);   /* our pid, not our thread */
	tw_call(&w, &c);
	tw_counts(&w, claim, 100, 100);
	tw_stack(&w, claim, 1, 2, "libc.so.6", 0);
	tw_kernel(&w, claim, 0x1000, "evil");
	tw_bye(&w, claim, t);
	spoofed += 7;
	send_tw(&w);
	/* mixed: the good half is kept, the bad half counted */
	tw_begin(&w, pid, 20);
	for (int i = 0; i < 20; i++) {
		c = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, i % 2 ? claim : pid, i % 2 ? claim : tid, t++);
		tw_call(&w, &c);
	}
	spoofed += 10;
	send_tw(&w);
	printf("own=20 spoofed=%u\n", spoofed);
	fflush(stdout);
	finish();
}

/* A connection closed before its handshake (what any local user can do). */
static int mode_rawclose(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (strncmp(endpoint, "ipc://", 6) != 0 || strlen(endpoint + 6) >= sizeof sa.sun_path || fd < 0)
		return 2;
	strcpy(sa.sun_path, endpoint + 6);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		perror("collector_send: connect");
		return 1;
	}
	close(fd);
	printf("rawclose=1\n");
	return 0;
}

/* Calls for pids nobody has: each one unknown to the collector, whose
 * decision must cost it no wait (issue 40). */
static void mode_unknown(unsigned n)
{
	unsigned pid_max = 4194304, sent = 0;
	uint64_t t = now_ns();
	char path[64];
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	struct tw w;

	if (f) {
		if (fscanf(f, "%u", &pid_max) != 1)
			pid_max = 4194304;
		fclose(f);
	}
	tw_begin(&w, getpid(), n);
	for (unsigned p = pid_max - 1; sent < n && p > 1000; p--) {
		snprintf(path, sizeof path, "/proc/%u", p);
		if (access(path, F_OK) == 0)
			continue;
		struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_STREAM_SYNCHRONIZE, p, p, t++);

		tw_call(&w, &c);
		sent++;
	}
	send_tw(&w);
	printf("unknown=%u\n", sent);
	fflush(stdout);
	finish();
}

/* Malformed messages of every kind; returns how many were sent. */
static unsigned send_garbage(void)
{
	static const unsigned char bombs[][12] = {
		{ 0xdd, 0xff, 0xff, 0xff, 0xff },                               /* 4G-element array */
		{ 0x93, 0x01, 0x05, 0xdd, 0x7f, 0xff, 0xff, 0xff },
		{ 0x81, 0x01, 0x02 },                                           /* a map */
		{ 0xc1 },                                                       /* never used */
		{ 0x93, 0x02, 0x05, 0x90 },                                     /* version 2 */
		{ 0x92, 0x01, 0x05 },                                           /* two elements */
		{ 0x93, 0x01, 0x05, 0x91, 0x92, 0x02, 0x03 },                   /* short CALL */
	};
	static const size_t lens[] = { 5, 8, 3, 1, 4, 3, 7 };
	unsigned n = 0, pid = getpid();
	unsigned char junk[4096];
	uint64_t t = now_ns();
	struct tw w;

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++, n++)
		send_raw(bombs[i], lens[i]);
	srand(1);
	for (int i = 0; i < 50; i++, n++) {   /* random bytes, starting with an array tag */
		size_t len = 1 + rand() % sizeof junk;

		for (size_t j = 0; j < len; j++)
			junk[j] = (unsigned char)rand();
		junk[0] = 0x93;
		send_raw(junk, len);
	}
	for (int cut = 1; cut < 40; cut += 3, n++) {   /* truncated valid messages */
		struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY, pid, pid, t++);

		tw_begin(&w, pid, 2);
		tw_hello(&w, pid, 1, t, "x", "y", "z");
		tw_call(&w, &c);
		send_raw(w.sb.data, w.sb.size - cut);
		tw_free(&w);
	}
	{   /* an over-long string */
		char *big = malloc(INGERO_WIRE_MAX_STR + 100);

		memset(big, 'k', INGERO_WIRE_MAX_STR + 99);
		big[INGERO_WIRE_MAX_STR + 99] = 0;
		tw_begin(&w, pid, 1);
		tw_kernel(&w, pid, 1, big);
		send_tw(&w);
		free(big);
		n++;
	}
	return n;
}

static void mode_oversize(void)
{
	size_t n = INGERO_WIRE_MAX_MSG_BYTES + 1024;
	unsigned char *big = calloc(1, n);
	uint64_t t = now_ns();
	if (!big)
		exit(1);
	big[0] = 0x93;
	send_raw(big, n);
	free(big);
	send_calls(getpid(), self_tid(), 5, &t);
	printf("oversize=1 good=5\n");
	fflush(stdout);
	finish();
}

static void mode_garbage(void)
{
	unsigned bad = send_garbage(), pid = getpid();
	uint64_t t = now_ns();

	send_calls(pid, self_tid(), 5, &t);
	printf("bad=%u good=5\n", bad);
	fflush(stdout);
	finish();
}

/* Where start_ns (0xcf + 8 bytes, big-endian) sits in the record just packed. */
static size_t find_u64(const char *p, size_t from, size_t to, uint64_t v)
{
	for (size_t i = from; i + 9 <= to; i++) {
		int ok = (unsigned char)p[i] == 0xcf;

		for (int b = 0; ok && b < 8; b++)
			ok = (unsigned char)p[i + 1 + b] == (unsigned char)(v >> (56 - 8 * b));
		if (ok)
			return i + 1;
	}
	return 0;
}

/* Call i of a training step as the H200 runs showed them: of every 32 calls,
 * 28 launches (driver and runtime entry points, 12 kernels, their grids),
 * two copies, a memset and a sync with a stack; durations and gaps vary.
 * A uniform stream of one API would flatter the block encoding (a constant
 * column costs one integer). */
static struct ingero_cuda_call bench_call(unsigned i, unsigned pid, unsigned tid, uint64_t t)
{
	static const unsigned api[4] = { INGERO_API_CU_LAUNCH_KERNEL, INGERO_API_CUDA_LAUNCH_KERNEL_STUB,
					 INGERO_API_CUDA_LAUNCH_KERNEL_STUB, INGERO_API_CU_LAUNCH_KERNEL };
	unsigned k = i % 32, h = i * 2654435761u;
	struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, pid, tid, t);

	c.dur_ns = 2000 + h % 9000;
	if (k < 28) {
		c.api = (uint16_t)api[k % 4];
		c.bytes = 0;
		c.dir = INGERO_DIR_NONE;
		c.kernel = 0x7f3a12000000ull + (k % 12) * 0x1840;
		c.grid[0] = 1u << (k % 12);
		c.grid[1] = c.grid[2] = 1;
		c.block[0] = k % 3 ? 256 : 128;
		c.block[1] = c.block[2] = 1;
	} else if (k == 28 || k == 29) {
		c.bytes = k == 28 ? 4096u * 1024 : 4;
		c.dir = k == 28 ? INGERO_DIR_HTOD : INGERO_DIR_DTOH;
		c.stack_id = 0x9e3779b97f4a7c15ull * (i / 32 % 50 + 1);
	} else if (k == 30) {
		c.api = INGERO_API_CU_MEMSET_D8_ASYNC;
		c.bytes = 1u << 16;
		c.dir = INGERO_DIR_NONE;
	} else {
		c.api = INGERO_API_CUDA_STREAM_SYNCHRONIZE;
		c.bytes = 0;
		c.dir = INGERO_DIR_NONE;
		c.flags = 0;
		c.dur_ns = 40000 + h % 400000;
		c.stack_id = 0x51ed270b27c4f2a5ull * (i / 32 % 7 + 1);
	}
	return c;
}

/* One message encoded once; each send patches the timestamps forward in place
 * (so the collector sees time moving, as from a real program) and sends a copy. */
static void mode_bench(unsigned calls, unsigned batch)
{
	unsigned pid = getpid(), tid = self_tid(), sent = 0;
	uint64_t t = now_ns(), t0, base;
	size_t *off = calloc(batch, sizeof(*off));
	struct tw w;

	tw_begin(&w, pid, 1);
	tw_hello(&w, pid, getppid(), t, "collector_send", "/proc/self/exe", "collector_send bench");
	send_tw(&w);
	base = t = now_ns() | (1ull << 40);   /* always 8-byte encoded */
	tw_begin(&w, pid, batch);
	for (unsigned i = 0; i < batch; i++) {
		size_t at = w.sb.size;
		struct ingero_cuda_call c = bench_call(i, pid, tid, t++);

		tw_call(&w, &c);
		off[i] = find_u64(w.sb.data, at, w.sb.size, c.start_ns);
	}
	t0 = now_ns();
	for (uint64_t round = 0; sent < calls; round++) {
		nng_msg *m;

		for (unsigned i = 0; i < batch; i++) {
			/* ~5 µs apart, with jitter, as launches come */
			uint64_t v = base + (round * batch + i) * 5000 + (i * 7919u) % 3000;

			for (int b = 0; off[i] && b < 8; b++)
				w.sb.data[off[i] + b] = (char)(v >> (56 - 8 * b));
		}
		if (nng_msg_alloc(&m, 0) || nng_msg_append(m, w.sb.data, w.sb.size) || nng_sendmsg(sock, m, 0))
			exit(1);
		sent += batch;
	}
	printf("sent_calls=%u\nsend_s=%.3f\nbytes_per_call=%.1f\n", sent, (now_ns() - t0) / 1e9,
	       (double)w.sb.size / batch);
	fflush(stdout);
	tw_free(&w);
	free(off);
	finish();
}

static void write_seed(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n) {
		fprintf(stderr, "collector_send: cannot write %s\n", path);
		exit(1);
	}
	fclose(f);
}

static void mode_seeds(const char *dir)
{
	struct tw w;
	struct ingero_cuda_call c = tw_sample_call(INGERO_API_CUDA_MEMCPY_ASYNC, 100, 101, 5000);
	struct ingero_cuda_call l = tw_sample_call(INGERO_API_CU_LAUNCH_KERNEL, 100, 100, 6000);

	mkdir(dir, 0755);
	l.grid[0] = 64; l.grid[1] = 1; l.grid[2] = 1; l.block[0] = 256; l.block[1] = 1; l.block[2] = 1;
	tw_begin(&w, 100, 7);
	tw_hello(&w, 100, 1, 42, "python3", "/usr/bin/python3", "python3 train.py");
	tw_call(&w, &c);
	tw_call(&w, &l);
	tw_counts(&w, 100, 2, 0);
	tw_stack(&w, 100, 77, 3, "libtorch.so", 2);
	tw_kernel(&w, 100, 0x7000, "gemm_kernel");
	tw_bye(&w, 100, 9999);
	write_seed(dir, "all_records", w.sb.data, w.sb.size);
	tw_free(&w);

	tw_begin(&w, 100, 64);
	for (int i = 0; i < 64; i++) {
		c.start_ns += 1000;
		c.ret = i % 5 ? 0 : -i;
		tw_call(&w, &c);
	}
	write_seed(dir, "calls_64", w.sb.data, w.sb.size);
	tw_free(&w);

	tw_begin(&w, 100, 2);
	tw_unknown(&w);
	tw_stack(&w, 100, 5, INGERO_WIRE_MAX_NATIVE, "m", INGERO_WIRE_MAX_PYTHON);
	write_seed(dir, "unknown_and_deep_stack", w.sb.data, w.sb.size);
	tw_free(&w);

	tw_begin(&w, 100, 0);
	write_seed(dir, "empty", w.sb.data, w.sb.size);
	tw_free(&w);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned calls = 1000, batch = 100, interval = 0, claim = 1;
	const char *env = getenv(INGERO_ENV_ENDPOINT);

	endpoint = env && *env ? env : INGERO_DEFAULT_ENDPOINT;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--interval-ms") && i + 1 < argc)
			interval = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--claim") && i + 1 < argc)
			claim = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--endpoint") && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(mode, "seeds") != 0) {
			fprintf(stderr, "collector_send: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!batch)
		batch = 1;
	if (!strcmp(mode, "seeds")) {
		if (argc < 3)
			return 2;
		mode_seeds(argv[2]);
		return 0;
	}
	if (!strcmp(mode, "rawclose"))
		return mode_rawclose();
	connect_or_die();
	if (!strcmp(mode, "valid"))
		mode_valid(calls, batch, interval);
	else if (!strcmp(mode, "spoof"))
		mode_spoof(claim);
	else if (!strcmp(mode, "unknown"))
		mode_unknown(calls == 1000 ? 200 : calls);
	else if (!strcmp(mode, "garbage"))
		mode_garbage();
	else if (!strcmp(mode, "oversize"))
		mode_oversize();
	else if (!strcmp(mode, "bench"))
		mode_bench(calls, batch);
	else {
		fprintf(stderr, "usage: collector_send valid|spoof|unknown|rawclose|garbage|oversize|bench|seeds ...\n");
		return 2;
	}
	return 0;
}
