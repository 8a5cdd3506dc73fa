/*
 * collector_faults.c — user page faults for the collector's
 * bpf_ns_per_fault benchmark: pinned to one CPU, it maps 64 MiB of fresh
 * anonymous memory (no huge pages), writes one byte to each page and
 * unmaps it, ROUNDS times: one user page fault and one page allocation
 * per page, the two events mem.bpf.c counts.  Prints ns_per_fault=N (wall
 * time / pages touched).
 *
 *   collector_faults [ROUNDS] [CPU] [SPIN_S] [SLEEP_S]     (default 20 rounds, CPU 0)
 *
 * SPIN_S: then stay on the CPU that long, never blocking (a thread whose
 * faults are still unsent when a tracer stops).  SLEEP_S: first sleep that
 * long (a thread asleep when a tracer attaches).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define REGION (64ul << 20)

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	long page = sysconf(_SC_PAGESIZE), touched = 0;
	struct timespec a, b;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		perror("sched_setaffinity");
	if (argc > 4 && atof(argv[4]) > 0) {
		double s = atof(argv[4]);
		struct timespec nap = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

		nanosleep(&nap, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long r = 0; r < rounds; r++) {
		char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		madvise(p, REGION, MADV_NOHUGEPAGE);   /* one fault a page, whatever THP's setting */
		for (unsigned long o = 0; o < REGION; o += (unsigned long)page, touched++)
			p[o] = 1;
		munmap(p, REGION);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_fault=%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)touched);
	fflush(stdout);
	for (double spin = argc > 3 ? atof(argv[3]) : 0; spin > 0;) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		if ((a.tv_sec - b.tv_sec) + (a.tv_nsec - b.tv_nsec) / 1e9 >= spin)
			break;
	}
	return 0;
}
