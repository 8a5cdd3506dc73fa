/*
 * collector_pingpong.c — context-switch ping-pong for the collector's
 * bpf_ns_per_switch benchmark: a parent and a forked child, both pinned to
 * one CPU, hand one byte back and forth over two pipes, so every hand-off
 * is one context switch.  Prints ns_per_switch=N (wall time / switches).
 *
 *   collector_pingpong [ROUNDS] [CPU]     (default 200000 rounds, CPU 0)
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		perror("sched_setaffinity");
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	int ab[2], ba[2];
	char c = 0;
	struct timespec t0, t1;
	pid_t child;

	if (pipe(ab) || pipe(ba))
		return 1;
	pin(cpu);
	child = fork();
	if (child == 0) {
		for (long i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waitpid(child, NULL, 0);
	printf("ns_per_switch=%.0f\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * rounds));
	return 0;
}
