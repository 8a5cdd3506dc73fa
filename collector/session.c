/*
 * session.c — the session table's keys (schema.h INGERO_SESSION_KEYS and a
 * few of the collector's settings): the command, clocks, host, kernel,
 * CPUs, memory, GPU/driver/CUDA from nvidia-smi when it exists, the mode
 * ("full" or "cuda-only") and the collector's version.  nvidia-smi can take
 * a second, so it runs on a side thread that session_end() joins.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock_anchor.h"
#include "cgroup_cpu.h"
#include "cli.h"
#include "proc_tree.h"
#include "session.h"
#include "store.h"
#include "tracer.h"
#include "version.h"

static pthread_t gpu_thread;
static int gpu_started;

void session_set_u64(struct store *st, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	store_session(st, key, buf);
}

static void join_args(char **argv, int argc, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < argc && argv[i] && n + 1 < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? " " : "", argv[i]);
}

static void cpu_model(char *buf, size_t size)
{
	char info[65536], *p, *eol;

	buf[0] = 0;
	if (proc_read_file("/proc/cpuinfo", info, sizeof info) <= 0 || !(p = strstr(info, "model name")))
		return;
	p = strchr(p, ':');
	if (!p)
		return;
	p += 2;
	eol = strchr(p, '\n');
	if (eol)
		*eol = 0;
	snprintf(buf, size, "%s", p);
}

static uint64_t mem_bytes(void)
{
	char info[4096], *p;

	if (proc_read_file("/proc/meminfo", info, sizeof info) <= 0 || !(p = strstr(info, "MemTotal:")))
		return 0;
	return strtoull(p + 9, NULL, 10) * 1024;
}

/* First line of a command's output, or "" */
static void first_line(const char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\r\n")] = 0;
	else
		buf[0] = 0;
	pclose(f);
}

/* A PATH search without a shell: system() would ignore SIGINT/SIGQUIT in the
 * whole collector while it runs, and a command forked in that window would
 * inherit them ignored (Ctrl-C would then not stop it). */
static int in_path(const char *name)
{
	const char *path = getenv("PATH");
	char dir[4096];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n > 0 && n < sizeof dir - strlen(name) - 2) {
			snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, name);
			if (access(dir, X_OK) == 0)
				return 1;
		}
		path += n + (path[n] == ':');
	}
	return 0;
}

static void *gpu_facts(void *arg)
{
	struct store *st = arg;
	char line[512], *comma, *p;

	if (!in_path("nvidia-smi"))
		return NULL;
	first_line("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null",
		   line, sizeof line);
	if (line[0] && (comma = strchr(line, ','))) {
		*comma = 0;
		store_session(st, "gpu", line);
		store_session(st, "driver_version", comma + 1 + (comma[1] == ' '));
	}
	/* how many GPUs the machine shows: with one, processes that all ran GPU
	 * work at once shared it (the analyzer's verdict says so).  Only index
	 * lines count (a failing nvidia-smi prints its error to stdout), and
	 * none is stored under MIG: its instances do not take turns */
	first_line("nvidia-smi --query-gpu=index,mig.mode.current --format=csv,noheader 2>/dev/null | "
		   "awk '/^[0-9]/ { n++ } /Enabled/ { mig = 1 } END { if (n && !mig) print n }'", line, sizeof line);
	if (line[0] >= '1' && line[0] <= '9')
		store_session(st, "gpus", line);
	first_line("nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*'", line, sizeof line);
	if ((p = strchr(line, ':'))) {
		p++;
		while (*p == ' ')
			p++;
		store_session(st, "cuda_version", p);
	}
	return NULL;
}

/* The CPU quota the traced program runs under: CMD's is the collector's
 * own (it inherits it), -p PID's its own. */
static struct cgroup_cpu limit;
static int limited;

static void cpu_limit_start(struct store *st, const struct cli *c)
{
	char buf[1200];
	limited = cgroup_cpu_find(c->cmd || !c->npids ? getpid() : (pid_t)c->pids[0], &limit);
	if (!limited)
		return;
	snprintf(buf, sizeof buf, "%.2f", (double)limit.quota_us / (double)limit.period_us);
	store_session(st, "cpu_limit", buf);
	snprintf(buf, sizeof buf, "%s %llu %llu (%s)", limit.v2 ? "cpu.max" : "cpu.cfs_quota_us/cfs_period_us",
		 (unsigned long long)limit.quota_us, (unsigned long long)limit.period_us, limit.dir);
	store_session(st, "cpu_limit_source", buf);
}

/* The quota's throttling while the collector ran. */
static void cpu_limit_end(struct store *st)
{
	struct cgroup_cpu now = limit;
	if (!limited || cgroup_cpu_stat(&now) < 0)
		return;
	session_set_u64(st, "cpu_limit_periods", now.periods - limit.periods);
	session_set_u64(st, "cpu_limit_throttled_periods", now.throttled - limit.throttled);
	session_set_u64(st, "cpu_limit_throttled_ns", now.throttled_ns - limit.throttled_ns);
}

void session_start(struct store *st, const struct cli *c, int argc, char **argv, const char *mode)
{
	char buf[8192];
	struct utsname u;
	struct timespec wall;

	if (c->cmd) {
		int n = 0;

		while (c->cmd[n])
			n++;
		join_args(c->cmd, n, buf, sizeof buf);
	} else {
		join_args(argv, argc, buf, sizeof buf);
	}
	store_session(st, "command", buf);
	clock_gettime(CLOCK_REALTIME, &wall);
	session_set_u64(st, "start_wall_ns", (uint64_t)wall.tv_sec * 1000000000ull + wall.tv_nsec);
	session_set_u64(st, "start_mono_ns", mono_now_ns());
	clock_anchor_record(st);
	if (uname(&u) == 0) {
		store_session(st, "host", u.nodename);
		snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
		store_session(st, "kernel", buf);
	}
	session_set_u64(st, "cpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	cpu_limit_start(st, c);
	cpu_model(buf, sizeof buf);
	store_session(st, "cpu_model", buf);
	session_set_u64(st, "mem_bytes", mem_bytes());
	store_session(st, "mode", mode);
	store_session(st, "collector_version", INGERO_COLLECTOR_VERSION);
	session_set_u64(st, "bucket_ns", c->bucket_ns);
	session_set_u64(st, "sample_hz", c->sample_hz);
	store_session(st, "endpoint", c->endpoint);
	gpu_started = pthread_create(&gpu_thread, NULL, gpu_facts, st) == 0;
}

void session_end(struct store *st)
{
	if (gpu_started)
		pthread_join(gpu_thread, NULL);
	gpu_started = 0;
	cpu_limit_end(st);
	session_set_u64(st, "end_mono_ns", mono_now_ns());
}
