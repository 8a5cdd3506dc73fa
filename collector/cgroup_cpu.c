/*
 * cgroup_cpu.c — the CPU limit the traced program runs under (a container's
 * or a systemd unit's CPU quota) and how often it was throttled.
 *
 * A quota stops every thread of the cgroup once it has spent its share of
 * a period, CPUs idle or not: to the scheduler tracepoints the threads
 * look preempted (still runnable, off a CPU), with nobody else on the
 * CPUs.  Without the quota in the trace, explain would blame other tasks
 * and count the machine's CPUs where the job may use two.  The binding
 * limit is the tightest of the cgroup's and its ancestors' (a Kubernetes
 * pod's and its container's); its cpu.stat says how many periods
 * throttled the job and for how long.  cgroup v2 (cpu.max) and v1's cpu
 * controller (cpu.cfs_quota_us, cpu.cfs_period_us) are both read.
 */
#include "cgroup_cpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The cgroup path of pid under the hierarchy holding the cpu controller,
 * and whether that hierarchy is v2 ("0::/path"). */
static int cgroup_path(pid_t pid, char *path, size_t n, int *v2)
{
	char file[64], line[1024];
	snprintf(file, sizeof file, "/proc/%d/cgroup", (int)pid);
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	int found = 0;
	char unified[1024] = "";
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = 0;
		const char *ctrls = c1 + 1, *p = c2 + 1;
		if (!*ctrls) {   /* v2: the cpu controller is there when v1 does not hold it */
			snprintf(unified, sizeof unified, "%s", p);
			continue;
		}
		/* v1: a comma-separated list naming "cpu" (not only "cpuacct", "cpuset") */
		char list[256];
		snprintf(list, sizeof list, ",%s,", ctrls);
		if (strstr(list, ",cpu,")) {
			snprintf(path, n, "%s", p);
			*v2 = 0;
			found = 1;
		}
	}
	fclose(f);
	if (!found && unified[0]) {
		snprintf(path, n, "%s", unified);
		*v2 = 1;
		found = 1;
	}
	return found ? 0 : -1;
}

/* Where the hierarchy is mounted: the usual places (a container sees its
 * own cgroup as the root there). */
static const char *mount_of(int v2)
{
	static const char *const v1[] = { "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct,cpu" };
	static const char *const v2m[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	const char *const *m = v2 ? v2m : v1;
	size_t nm = v2 ? 2 : 3;
	for (size_t i = 0; i < nm; i++) {
		char probe[128];
		snprintf(probe, sizeof probe, "%s/%s", m[i], v2 ? "cgroup.controllers" : "cpu.cfs_period_us");
		if (access(probe, R_OK) == 0)
			return m[i];
	}
	return NULL;
}

static int read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char file[1200];
	snprintf(file, sizeof file, "%s/%s", dir, name);
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	return ok ? 0 : -1;
}

/* The limit set on one directory: 1 with quota and period, 0 when none. */
static int limit_of(const char *dir, int v2, uint64_t *quota, uint64_t *period)
{
	char a[128], b[128];
	if (v2) {
		char q[64];
		if (read_line(dir, "cpu.max", a, sizeof a) < 0 || sscanf(a, "%63s %" SCNu64, q, period) != 2)
			return 0;
		if (!strcmp(q, "max"))
			return 0;
		*quota = strtoull(q, NULL, 10);
	} else {
		long long q;
		if (read_line(dir, "cpu.cfs_quota_us", a, sizeof a) < 0 || read_line(dir, "cpu.cfs_period_us", b, sizeof b) < 0 ||
		    sscanf(a, "%lld", &q) != 1 || sscanf(b, "%" SCNu64, period) != 1 || q <= 0)
			return 0;
		*quota = (uint64_t)q;
	}
	return *quota > 0 && *period > 0;
}

int cgroup_cpu_find(pid_t pid, struct cgroup_cpu *cg)
{
	char path[1024];
	memset(cg, 0, sizeof *cg);
	if (cgroup_path(pid, path, sizeof path, &cg->v2) < 0)
		return 0;
	const char *mnt = mount_of(cg->v2);
	if (!mnt)
		return 0;
	char dir[sizeof cg->dir];
	snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(path, "/") ? path : "");
	size_t root = strlen(mnt);
	for (;;) {
		uint64_t q, p;
		/* the tightest share of a CPU wins: q / p < best_q / best_p */
		if (limit_of(dir, cg->v2, &q, &p) && (!cg->quota_us || q * cg->period_us < cg->quota_us * p)) {
			cg->quota_us = q;
			cg->period_us = p;
			snprintf(cg->dir, sizeof cg->dir, "%s", dir);
		}
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < root)
			break;
		*slash = 0;
	}
	if (!cg->quota_us)
		return 0;
	cgroup_cpu_stat(cg);
	return 1;
}

int cgroup_cpu_stat(struct cgroup_cpu *cg)
{
	char file[sizeof cg->dir + 16], key[64];
	uint64_t v;
	snprintf(file, sizeof file, "%s/cpu.stat", cg->dir);
	FILE *f = fopen(file, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %" SCNu64, key, &v) == 2) {
		if (!strcmp(key, "nr_periods"))
			cg->periods = v;
		else if (!strcmp(key, "nr_throttled"))
			cg->throttled = v;
		else if (!strcmp(key, "throttled_usec"))   /* v2 */
			cg->throttled_ns = v * 1000;
		else if (!strcmp(key, "throttled_time"))   /* v1, in ns */
			cg->throttled_ns = v;
	}
	fclose(f);
	return 0;
}
