/*
 * procfs.c — /proc readers shared by the preload library and the collector
 * (include/ingero/procfs.h).
 */
#include <ingero/procfs.h>

#include <fcntl.h>
#include <stdio.h>
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
