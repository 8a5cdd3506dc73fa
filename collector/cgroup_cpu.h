/*
 * cgroup_cpu.h — the CPU quota of the traced program's cgroup and its
 * throttling (cgroup_cpu.c says why the trace needs them).
 */
#ifndef INGERO_COLLECTOR_CGROUP_CPU_H
#define INGERO_COLLECTOR_CGROUP_CPU_H

#include <stdint.h>
#include <sys/types.h>

struct cgroup_cpu {
	char dir[1100];                /* the cgroup directory whose limit binds */
	int v2;                        /* cgroup v2 (cpu.max) rather than v1's cpu controller */
	uint64_t quota_us, period_us;  /* its limit: quota_us of CPU time each period_us */
	/* its cpu.stat at the last read: periods, those throttled, and the
	 * time its threads were held back in them */
	uint64_t periods, throttled, throttled_ns;
};

/* The tightest CPU limit on pid's cgroup and its ancestors, with its
 * cpu.stat read: 1 when one is set, 0 when none is (or no cgroup is found). */
int cgroup_cpu_find(pid_t pid, struct cgroup_cpu *cg);
/* Its cpu.stat again: 0, or -1 when it cannot be read. */
int cgroup_cpu_stat(struct cgroup_cpu *cg);

#endif
