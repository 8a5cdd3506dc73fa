/*
 * truth.c — the workload's ground truth: per-process counts of the CUDA
 * calls it made, written as one line per process at its end.
 *
 * Line format (one write() on an O_APPEND file, so lines of concurrent
 * processes never interleave):
 *   pid=<pid> ppid=<ppid> role=<main|worker> batches=<n> <api>=<count> ...
 * Only APIs called at least once are listed; names are those of
 * include/ingero/api.h.  Calls nested inside the runtime (the driver calls
 * libcudart makes on the program's behalf) are not the program's calls and
 * are not counted.
 */
#include "starve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned long truth_calls[INGERO_API_MAX];

void truth_reset(void)
{
	memset(truth_calls, 0, sizeof truth_calls);
}

void truth_write(const char *role, unsigned batches)
{
	char line[8192];
	size_t n = 0;
	if (!opt.truth)
		return;
	n += (size_t)snprintf(line, sizeof line, "pid=%d ppid=%d role=%s batches=%u", (int)getpid(),
			      (int)getppid(), role, batches);
	for (unsigned id = 1; id < INGERO_API_MAX && n < sizeof line; id++) {
		const char *name = ingero_api_name(id);
		if (name && truth_calls[id])
			n += (size_t)snprintf(line + n, sizeof line - n, " %s=%lu", name, truth_calls[id]);
	}
	if (n >= sizeof line - 1)
		n = sizeof line - 2;
	line[n++] = '\n';
	int fd = open(opt.truth, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, n) != (ssize_t)n)
		fprintf(stderr, "starve: cannot write %s: %s\n", opt.truth, strerror(errno));
	if (fd >= 0)
		close(fd);
}

cudaError_t cuda_check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess)
		die("%s failed: %s (%d)", what, cudaGetErrorName(e), e);
	return e;
}

void die(const char *fmt, ...)
{
	va_list ap;
	char msg[512];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "starve: %s\n", msg);
	_exit(1);
}
