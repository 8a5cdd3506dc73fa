/*
 * main.c — ingero-collector: wires the parts together and runs the loop.
 *
 *   store (writer thread) ← intake (receiver thread) ← preload library
 *                         ← tracer (this thread: ring buffer, aggregates) ← kernel
 *
 * Lifecycle: claim the output file (a lock; nothing is written yet) and
 * listen, so that a second collector on the same file or endpoint stops
 * before it changes anything; open the store, load BPF (or fall back to
 * CUDA-only), enrol the targets (-p, or fork CMD held at a gate, enrol,
 * release), then poll the ring until CMD exits, a signal or --duration.
 * Stopping drains: the socket until it has been quiet for QUIET_MS (the
 * preload library's last flush arrives a few ms after its process exits),
 * or sooner once every sender's connection has closed and the queue was
 * then found empty (intake.h),
 * all of it bounded by DRAIN_MAX_MS whatever senders do, the ring, the
 * in-kernel aggregates, then the writer commits everything before the file
 * is closed.
 *
 * A write that fails (disk full) stops recording (store_fail.c): without
 * CMD the collector stops as on a signal; with CMD it waits for CMD, what
 * arrives meanwhile counted, not stored.  Either way it exits 4.
 *
 * Signals: with CMD, a SIGINT/SIGTERM sent to the collector alone (kill) is
 * forwarded to CMD and the collector waits for it; one from the terminal
 * already reached CMD.  A second signal stops at once (still draining).
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ingero/config.h>
#include <ingero/exit.h>
#include <ingero/sched_batch.h>

#include "cli.h"
#include "intake.h"
#include "main_metrics.h"
#include "metrics.h"
#include "launch.h"
#include "output.h"
#include "procs.h"
#include "session.h"
#include "store.h"
#include "tracer.h"

#define QUIET_MS     250
/* ... or this long, once every sender closed: a connection accepted just
 * before its program exited is counted by nng's callback a moment later */
#define CLOSED_MS    100
#define DRAIN_MAX_MS 3000
#define POLL_MS      50
/* while draining, the stop conditions are looked at this often: at POLL_MS
 * a traced program's end waited up to 50 ms more than they ask */
#define DRAIN_POLL_MS 10
/* The in-kernel aggregates (memory, competitors) are drained this often, at
 * least once a bucket: a walk of a sparse BPF hash visits every empty
 * bucket (tens of thousands), which at every 100 ms bucket was ~9 % of the
 * collector's CPU; their closed buckets wait in the map meanwhile. */
#define DRAIN_MS     1000

static volatile sig_atomic_t signals_seen, last_signal, last_signal_from_user;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	signals_seen++;
	last_signal = sig;
	last_signal_from_user = si && si->si_code == SI_USER;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* One turn of the loop: consume kernel records, drain aggregates now and then. */
static void turn(struct tracer *t, uint64_t *next_flush, int poll_ms)
{
	if (!t) {
		sleep_ms(poll_ms);
		return;
	}
	tracer_poll(t, poll_ms);
	if (mono_now_ns() >= *next_flush) {
		uint64_t every = (uint64_t)DRAIN_MS * 1000000;

		tracer_flush(t, 0);
		*next_flush = mono_now_ns() + (t->o.bucket_ns > every ? t->o.bucket_ns : every);
	}
}

/* --stats: figures for tests and benchmarks, one key=value per line. */
static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void write_stats(const char *path, const struct intake_stats *is, struct store *st,
			uint64_t finished_at, const struct tracer *t, uint64_t started,
			double cpu_at_start, const char *mode)
{
	FILE *f = fopen(path, "w");
	uint64_t committed_at = store_calls_committed_at(st);
	double cpu = cpu_seconds();

	if (!f) {
		fprintf(stderr, "ingero-collector: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	/* run_*: from the end of set-up (BPF loaded, targets enrolled) to the end */
	fprintf(f, "mode=%s\ncpu_s=%.3f\nrun_wall_s=%.3f\nrun_cpu_s=%.3f\n", mode, cpu,
		(mono_now_ns() - started) / 1e9, cpu - cpu_at_start);
	fprintf(f, "messages=%llu\nmalformed=%llu\ncalls=%llu\nspoofed=%llu\nuntraced=%llu\n"
		"listener_restarts=%llu\n",
		(unsigned long long)is->messages, (unsigned long long)is->malformed,
		(unsigned long long)is->calls, (unsigned long long)is->spoofed,
		(unsigned long long)is->untraced, (unsigned long long)is->listener_restarts);
	/* calls: accepted from senders; _committed: stored in the file; _not_stored:
	 * accepted but lost to a failed write (losses not_stored_calls) */
	fprintf(f, "calls_committed=%llu\ncalls_not_stored=%llu\nstore_failed=%d\n",
		(unsigned long long)store_committed_calls(st), (unsigned long long)store_not_stored_calls(st),
		store_broken(st, NULL, 0));
	/* ingest_s: first message until the calls are committed and folded into
	 * the file (the checkpoint is part of the work); _commit_s: until the
	 * last commit alone (the figure before checkpoints left the writer) */
	if (is->first_msg_ns && finished_at > is->first_msg_ns)
		fprintf(f, "ingest_s=%.6f\n", (finished_at - is->first_msg_ns) / 1e9);
	if (is->first_msg_ns && committed_at > is->first_msg_ns)
		fprintf(f, "ingest_commit_s=%.6f\n", (committed_at - is->first_msg_ns) / 1e9);
	fprintf(f, "kernel_records=%llu\n", (unsigned long long)(t ? t->events : 0));
	fclose(f);
}

/* The eBPF side, or NULL (CUDA-only: --no-bpf, or it could not load, said
 * why), and the session's first rows. */
static struct tracer *open_tracer(struct store *st, const struct cli *c, int batched, int argc, char **argv)
{
	struct tracer_opts to;
	struct tracer *t = NULL;
	char why[256] = "";
	to.bucket_ns = c->bucket_ns;
	to.sample_hz = c->sample_hz;
	to.python_frames = !c->no_python_frames;
	to.block_stacks = !c->no_block_stacks;
	to.split = (enum tracer_split)c->split_bpf;
	if (c->no_bpf)
		snprintf(why, sizeof why, "--no-bpf");
	else
		t = tracer_open(st, &to, why, sizeof why);
	if (!t)
		fprintf(stderr, "ingero-collector: CUDA-only mode (%s): no kernel-side evidence\n", why);
	session_start(st, c, argc, argv, t ? "full" : "cuda-only");
	if (!t)
		store_session(st, "cuda_only_reason", why);
	store_session(st, "collector_sched", batched ? "batch" : "unchanged");
	if (t && to.split)
		store_session(st, "split_bpf", tracer_split_name(to.split));
	return t;
}

/* Recording stopped on a failed write: said once, at the moment it happens. */
static int say_broken(struct store *st, const char *path)
{
	char why[256];

	if (!store_broken(st, why, sizeof why))
		return 0;
	fprintf(stderr, "ingero-collector: %s: a write failed (%s): recording stopped\n", path, why);
	return 1;
}

/* The processes to trace: each -p PID, and CMD, launched (it runs once
 * enrolled).  0, or the exit status to leave with. */
static int enroll(const struct cli *c, struct tracer *t, struct store *st, int batched, struct launch *l)
{
	for (size_t i = 0; i < c->npids; i++) {
		if (procs_enroll(t, st, c->pids[i], 1)) {
			fprintf(stderr, "ingero-collector: -p %u: no such process\n", c->pids[i]);
			return INGERO_EXIT_USAGE;
		}
	}
	if (!c->cmd)
		return 0;
	if (launch_prepare(c->cmd, c->endpoint, batched, l))
		return INGERO_EXIT_RUNTIME;
	procs_enroll(t, st, (uint32_t)l->pid, 0);
	/* a program that will record only between cudaProfilerStart and Stop
	 * (the library reads the same variable) starts paused here too: its
	 * first start, not its launch, begins the evidence */
	if (ingero_capture_profiler(getenv(INGERO_ENV_CAPTURE)) &&
	    !ingero_env_flag_value(getenv(INGERO_ENV_DISABLE), 0))   /* (a disabled library never starts it) */
		tracer_capture(t, (uint32_t)l->pid, 0);
	launch_release(l);
	return 0;
}

/* Turns the tracer until CMD ends, a signal stops us (the first is passed
 * on to CMD, which we then wait for; one more stops us), or the duration
 * is up (CMD is sent SIGTERM, and waited for).  Sets *child_done and
 * *exit_code when CMD's status was collected. */
static void run(struct tracer *t, struct store *st, const char *path, const struct launch *l,
		double duration_s, uint64_t *next_flush, int *child_done, int *exit_code)
{
	int status = 0, broken = 0;
	uint64_t deadline = duration_s > 0 ? mono_now_ns() + (uint64_t)(duration_s * 1e9) : 0;
	for (;;) {
		turn(t, next_flush, POLL_MS);
		/* a failed write: without CMD, stop now; with CMD, wait for it */
		if (!broken && (broken = say_broken(st, path)) && l->pid == 0)
			return;
		if (l->pid > 0 && waitpid(l->pid, &status, WNOHANG) == l->pid) {
			*child_done = 1;
			*exit_code = launch_exit_code(status);
			return;
		}
		if (signals_seen) {
			if (l->pid > 0 && signals_seen == 1) {
				if (last_signal_from_user)
					kill(l->pid, last_signal);
				signals_seen = 2;   /* waiting for CMD; one more signal stops us */
				last_signal_from_user = 0;
				continue;
			}
			if (l->pid == 0 || signals_seen > 2)
				return;
		}
		if (deadline && mono_now_ns() >= deadline) {
			if (l->pid > 0) {
				kill(l->pid, SIGTERM);
				deadline = 0;
				continue;
			}
			return;
		}
	}
}

/* Drains the socket until quiet, keeping the ring moving meanwhile, then
 * stops the intake (what waits for the ring's fork events is decided with
 * the ring still turning); all of it within DRAIN_MAX_MS. */
static void drain(struct intake *in, struct tracer *t, uint64_t *next_flush, struct intake_stats *is)
{
	uint64_t drain_start = mono_now_ns(), limit = drain_start + DRAIN_MAX_MS * 1000000ull;

	for (;;) {
		uint64_t now = mono_now_ns();

		intake_stats(in, is);
		if (now >= limit)
			break;
		if (now - drain_start >= QUIET_MS * 1000000ull &&
		    (!is->last_msg_ns || now - is->last_msg_ns >= QUIET_MS * 1000000ull))
			break;
		/* every sender closed and its last messages taken: nothing more
		 * can come from them (a closed connection was read to its end
		 * before nng closed it, so what it sent was queued by then) */
		if (now - drain_start >= CLOSED_MS * 1000000ull && is->open_pipes <= 0 && is->empty_ns > drain_start &&
		    is->empty_ns > is->last_close_ns)
			break;
		turn(t, next_flush, DRAIN_POLL_MS);
	}
	intake_request_stop(in, limit);
	while (!intake_stopped(in))
		turn(t, next_flush, DRAIN_POLL_MS);
}

/* The last line on stderr: what was stored (not what was sent). */
static void summary(const struct cli *c, struct store *st, const struct intake_stats *is,
		    const struct tracer *t, int broken)
{
	char why[256] = "";
	uint64_t stored = store_committed_calls(st), lost = store_not_stored_calls(st);

	if (broken)
		store_broken(st, why, sizeof why);
	fprintf(stderr, "ingero-collector: %s: %llu CUDA calls from %llu messages "
		"(%llu malformed, %llu spoofed records), %llu kernel records (%s mode)",
		c->output, (unsigned long long)stored, (unsigned long long)is->messages,
		(unsigned long long)is->malformed, (unsigned long long)is->spoofed,
		(unsigned long long)(t ? t->events : 0), t ? "full" : "cuda-only");
	if (broken)
		fprintf(stderr, "; recording stopped (%s): %llu CUDA calls not stored, counted in losses",
			why, (unsigned long long)lost);
	fprintf(stderr, "\n");
}

/* --metrics: the page rebuilt every INGERO_METRICS_REFRESH_MS (default 10 s) while tracing */
static struct metrics *start_metrics(const struct cli *c, struct metrics_ctx *mc)
{
	char err[320];
	const char *r = getenv("INGERO_METRICS_REFRESH_MS");
	unsigned refresh = r && *r ? (unsigned)strtoul(r, NULL, 10) : 10000;
	struct metrics *m = metrics_start(c->metrics, refresh, metrics_page, mc, err, sizeof err);
	if (!m)
		fprintf(stderr, "ingero-collector: %s\n", err);
	else if (!c->quiet)   /* (the port it got, for ":0") */
		fprintf(stderr, "ingero-collector: metrics on port %u: http://%s/metrics\n", metrics_port(m), c->metrics);
	return m;
}

int main(int argc, char **argv)
{
	struct cli c;
	struct output out;
	struct store *st;
	struct store_opts so = { 0 };
	struct tracer *t;
	struct intake *in;
	struct intake_opts io;
	struct intake_stats is;
	struct launch l = { .pid = 0 };
	int rc, exit_code = 0, child_done = 0, status = 0, batched = 0, broken;
	uint64_t started, next_flush = 0, finished_at;
	double cpu_at_start;

	/* Each message's decoding allocates and frees a few MB (msgpack's object
	 * tree): left to glibc's defaults, that memory goes back to the kernel
	 * and faults in again, zeroed, message after message — a third of the
	 * collector's CPU at full rate.  Keep it in the heap instead. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);

	launch_note_inherited_fds();
	rc = cli_parse(argc, argv, &c);
	if (rc)
		return rc > 0 ? INGERO_EXIT_OK : INGERO_EXIT_USAGE;
	install_signals();
	/* before any thread exists: all of ours inherit it (nng's too) */
	if (ingero_env_flag_value(getenv(INGERO_ENV_TRACER_BATCH), 1))
		batched = ingero_sched_batch();

	/* the file and the endpoint are ours before either is changed */
	rc = output_claim(&out, c.output, c.force);
	if (rc)
		return rc;
	in = intake_listen(c.endpoint, &rc);
	if (!in || output_prepare(&out)) {
		intake_stop(in, NULL);
		output_abandon(&out);
		return in ? INGERO_EXIT_RUNTIME : rc;
	}
	so.max_bytes = c.max_bytes;
	st = store_open(c.output, &so);
	if (!st) {
		intake_stop(in, NULL);
		output_abandon(&out);
		return INGERO_EXIT_RUNTIME;
	}
	t = open_tracer(st, &c, batched, argc, argv);

	io.open_mode = !c.cmd && !c.npids;
	io.tracer = t;
	io.store = st;
	struct metrics_ctx mc = { .path = c.output, .lock = PTHREAD_MUTEX_INITIALIZER, .in = in };
	struct metrics *m = NULL;
	rc = intake_start(in, &io) ? INGERO_EXIT_RUNTIME : 0;
	if (!rc && c.metrics && !(m = start_metrics(&c, &mc)))
		rc = INGERO_EXIT_RUNTIME;
	if (!rc)
		rc = enroll(&c, t, st, batched, &l);
	if (rc) {   /* no trace began: no file is left to be read as an empty one */
		metrics_ctx_final(&mc, NULL);
		metrics_finish(m, 0, NULL);
		intake_stop(in, NULL);
		tracer_close(t);
		store_close(st);
		output_abandon(&out);
		return rc;
	}

	started = mono_now_ns();
	cpu_at_start = cpu_seconds();
	run(t, st, c.output, &l, c.duration_s, &next_flush, &child_done, &exit_code);
	drain(in, t, &next_flush, &is);
	metrics_ctx_final(&mc, NULL);   /* no more live counters from the intake */
	intake_stop(in, &is);
	metrics_ctx_final(&mc, &is);
	tracer_flush(t, 1);
	session_end(st);
	store_sync(st);
	finished_at = store_finish(st);
	broken = store_broken(st, NULL, 0);
	if (c.stats)
		write_stats(c.stats, &is, st, finished_at, t, started, cpu_at_start,
			    t ? "full" : "cuda-only");
	if (!c.quiet)
		summary(&c, st, &is, t, broken);
	store_close(st);
	output_release(&out);
	tracer_close(t);
	/* the final file's figures, served --metrics-linger seconds for a last scrape */
	metrics_finish(m, c.metrics_linger_s, (volatile int *)&signals_seen);
	if (l.pid > 0 && !child_done) {
		/* stopped before CMD ended: report what it did, do not leave a zombie */
		if (waitpid(l.pid, &status, WNOHANG) == l.pid)
			exit_code = launch_exit_code(status);
		else
			exit_code = 128 + (last_signal ? last_signal : SIGTERM);
	}
	if (broken) {
		if (l.pid > 0)
			fprintf(stderr, "ingero-collector: CMD's exit status was %d\n", exit_code);
		return INGERO_EXIT_RUNTIME;
	}
	return exit_code;
}
