/*
 * check_cache.c — the list of files found sound (check_cache.h).
 *
 * One line a file, "1 DEV INO SIZE MTIME CTIME", the newest last.  A new
 * list is written whole beside the old one and renamed over it, so a
 * reader never sees half a list; two commands adding at once keep one of
 * their lines (the other file is checked again next time).
 */
#include "load/check_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Seconds a file must have been left alone before its check counts: the
 * kernel stamps files from a coarse clock, and a write within the same
 * tick as the one before would leave both times as they were. */
#define QUIET_S 2
#define LIST_MAX_BYTES (IA_CHECK_CACHE_MAX * sizeof(((struct ia_check_key *)0)->line))

/* The list's path: 0, or -1 when there is none (off, or no home). */
static int list_path(char *out, size_t n)
{
	const char *e = getenv("INGERO_CHECK_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int w;
	if (e)
		w = *e && strcmp(e, "off") ? snprintf(out, n, "%s", e) : -1;
	else if (x && *x == '/')
		w = snprintf(out, n, "%s/ingero/checked", x);
	else if (h && *h == '/')
		w = snprintf(out, n, "%s/.cache/ingero/checked", h);
	else
		w = -1;
	return w > 0 && (size_t)w < n ? 0 : -1;
}

void ia_check_key_of(const char *path, struct ia_check_key *k)
{
	struct stat st, wal;
	char w[PATH_MAX + 8];
	struct timespec now;

	k->line[0] = 0;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	if ((size_t)snprintf(w, sizeof w, "%s-wal", path) < sizeof w && stat(w, &wal) == 0 && wal.st_size > 0)
		return;
	/* (the file times are wall-clock times: compared with the wall clock) */
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec - st.st_ctim.tv_sec < QUIET_S || now.tv_sec - st.st_mtim.tv_sec < QUIET_S)
		return;
	snprintf(k->line, sizeof k->line, "1 %llu %llu %lld %lld.%09ld %lld.%09ld\n", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The list into buf (NUL-terminated, at most LIST_MAX_BYTES): its length,
 * 0 when there is none. */
static size_t read_list(const char *path, char *buf)
{
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, LIST_MAX_BYTES, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	return n;
}

/* Whether line (with its newline) is one of the list's lines. */
static int listed(const char *list, const char *line)
{
	size_t len = strlen(line);
	for (const char *p = list; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (l == len && !memcmp(p, line, len))
			return 1;
		p += l;
	}
	return 0;
}

int ia_check_cache_has(const struct ia_check_key *k)
{
	char path[PATH_MAX], *list;
	if (!k->line[0] || list_path(path, sizeof path) < 0 || !(list = malloc(LIST_MAX_BYTES + 1)))
		return 0;
	read_list(path, list);
	int yes = listed(list, k->line);
	free(list);
	return yes;
}

/* The list's folder, made if missing (and the one above it: ~/.cache). */
static void make_folder(const char *path)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s", path);
	char *s = strrchr(d, '/');
	if (!s || s == d)
		return;
	*s = 0;
	if (mkdir(d, 0700) == 0 || errno == EEXIST)
		return;
	char *up = strrchr(d, '/');
	if (up && up != d) {
		*up = 0;
		mkdir(d, 0700);
		*up = '/';
	}
	mkdir(d, 0700);
}

void ia_check_cache_add(const char *path, const struct ia_check_key *k)
{
	struct ia_check_key now;
	char lp[PATH_MAX], tmp[PATH_MAX + 16], *list;
	ia_check_key_of(path, &now);
	/* a file written while it was checked: not what was checked */
	if (!k->line[0] || strcmp(now.line, k->line) || list_path(lp, sizeof lp) < 0 ||
	    (size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", lp) >= sizeof tmp || !(list = malloc(LIST_MAX_BYTES + 1)))
		return;
	size_t n = read_list(lp, list);
	while (n && list[n - 1] != '\n')   /* a line cut short (a list too long): left out */
		list[--n] = 0;
	if (listed(list, k->line)) {
		free(list);
		return;
	}
	/* the newest IA_CHECK_CACHE_MAX - 1 lines, then this one */
	size_t lines = 0, from = 0;
	for (size_t i = 0; i < n; i++)
		lines += list[i] == '\n';
	for (; lines >= IA_CHECK_CACHE_MAX && from < n; from++)
		if (list[from] == '\n')
			lines--;
	make_folder(lp);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		free(list);
		return;
	}
	size_t len = strlen(k->line);
	int ok = write(fd, list + from, n - from) == (ssize_t)(n - from) && write(fd, k->line, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, lp) < 0)
		unlink(tmp);
	free(list);
}
