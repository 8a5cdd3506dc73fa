/*
 * procfs.c — /proc readers shared by the preload library and the collector
 * (include/ingero/procfs.h).
 */
#include <ingero/procfs.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ingero_read_cmdline(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = 0;
	if (size < 2)
		return;
	snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return;
	/* the arguments are NUL-separated; the last NUL ends them */
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
}

int ingero_read_stat(uint32_t pid, char *state, uint64_t *start_ticks)
{
	char path[64], buf[1024];
	unsigned long long ticks;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) S ppid ...": comm may hold spaces and parentheses */
	const char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c", state) != 1)
		return -1;
	for (int field = 2; field < 22 && p; field++)   /* p ends field 2; starttime is field 22 */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	*start_ticks = ticks;
	return 0;
}
