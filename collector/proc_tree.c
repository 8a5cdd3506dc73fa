/*
 * proc_tree.c — pid → parent and tid → owner maps, with /proc fallbacks.
 *
 * Two open-addressing hash tables under one mutex.  Entries are never
 * removed while the collector runs (a process's records may arrive after it
 * exited); a pid reused by a new fork simply overwrites its entry, which is
 * what the kernel's own view would say.  Lookups that miss fall back to
 * /proc/PID/status (PPid, Tgid) for processes started before the collector.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_tree.h"

struct slot {
	uint32_t key;     /* pid or tid; 0 = empty */
	uint32_t val;     /* ppid or owning pid */
	uint32_t traced;
};

struct table {
	struct slot *s;
	size_t cap, n;
};

static struct table procs, threads;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t epoch;
static int epochs_on;

static size_t hash(uint32_t k, size_t cap)
{
	return (k * 2654435761u) & (cap - 1);
}

static struct slot *find(struct table *t, uint32_t key, int create)
{
	if (!t->s) {
		if (!create)
			return NULL;
		t->cap = 4096;
		t->s = calloc(t->cap, sizeof(*t->s));
		if (!t->s)
			abort();
	}
	if (create && (t->n + 1) * 2 > t->cap) {
		struct table bigger = { calloc(t->cap * 2, sizeof(struct slot)), t->cap * 2, 0 };

		if (!bigger.s)
			abort();
		for (size_t i = 0; i < t->cap; i++) {
			if (t->s[i].key) {
				size_t j = hash(t->s[i].key, bigger.cap);

				while (bigger.s[j].key)
					j = (j + 1) & (bigger.cap - 1);
				bigger.s[j] = t->s[i];
				bigger.n++;
			}
		}
		free(t->s);
		*t = bigger;
	}
	for (size_t i = hash(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->s[i].key == key)
			return &t->s[i];
		if (!t->s[i].key) {
			if (!create)
				return NULL;
			t->s[i].key = key;
			t->n++;
			return &t->s[i];
		}
	}
}

void proc_tree_fork(uint32_t pid, uint32_t ppid, int traced)
{
	pthread_mutex_lock(&lock);
	struct slot *s = find(&procs, pid, 1);
	/* the launcher enrols its child before the kernel's fork record (which
	 * says "untraced": the collector is not traced) is consumed: keep it */
	if (!(s->traced && s->val == ppid))
		s->traced = traced;
	s->val = ppid;
	pthread_mutex_unlock(&lock);
}

void proc_tree_exit(uint32_t pid)
{
	(void)pid;   /* kept: records of a dead process may still be in flight */
}

void proc_tree_thread(uint32_t tid, uint32_t pid)
{
	pthread_mutex_lock(&lock);
	find(&threads, tid, 1)->val = pid;
	pthread_mutex_unlock(&lock);
}

void proc_tree_set_traced(uint32_t pid)
{
	uint32_t ppid = 0;
	struct slot *s;

	pthread_mutex_lock(&lock);
	s = find(&procs, pid, 0);
	pthread_mutex_unlock(&lock);
	if (!s)
		proc_read_status_u32(pid, "PPid", &ppid);
	pthread_mutex_lock(&lock);
	s = find(&procs, pid, 1);
	if (!s->val)
		s->val = ppid;
	s->traced = 1;
	pthread_mutex_unlock(&lock);
}

int proc_tree_is_traced(uint32_t pid)
{
	int t;

	pthread_mutex_lock(&lock);
	struct slot *s = find(&procs, pid, 0);
	t = s && s->traced;
	pthread_mutex_unlock(&lock);
	return t;
}

int proc_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while (total < (ssize_t)size - 1 && (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return (int)total;
}

int proc_read_status_u32(uint32_t pid, const char *field, uint32_t *out)
{
	char path[64], buf[4096], *p;
	size_t flen = strlen(field);

	snprintf(path, sizeof path, "/proc/%u/status", pid);
	if (proc_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			*out = (uint32_t)strtoul(p + flen + 1, NULL, 10);
			return 0;
		}
	}
	return -1;
}

uint32_t proc_tree_ppid(uint32_t pid)
{
	uint32_t ppid = 0;

	pthread_mutex_lock(&lock);
	struct slot *s = find(&procs, pid, 0);
	if (s)
		ppid = s->val;
	pthread_mutex_unlock(&lock);
	if (!s && proc_read_status_u32(pid, "PPid", &ppid) == 0 && ppid) {
		pthread_mutex_lock(&lock);
		find(&procs, pid, 1)->val = ppid;
		pthread_mutex_unlock(&lock);
	}
	return ppid;
}

int proc_tree_is_descendant(uint32_t pid, uint32_t ancestor)
{
	for (int depth = 0; depth < 256 && pid > 1; depth++) {
		if (pid == ancestor)
			return 1;
		pid = proc_tree_ppid(pid);
	}
	return pid == ancestor;
}

int proc_tree_thread_of(uint32_t tid, uint32_t pid)
{
	uint32_t owner = 0;
	char path[64];

	if (tid == pid)
		return 1;
	pthread_mutex_lock(&lock);
	struct slot *s = find(&threads, tid, 0);
	if (s)
		owner = s->val;
	pthread_mutex_unlock(&lock);
	if (s)
		return owner == pid;
	snprintf(path, sizeof path, "/proc/%u/task/%u", pid, tid);
	if (access(path, F_OK) == 0) {
		proc_tree_thread(tid, pid);
		return 1;
	}
	return 0;
}

void proc_tree_enable_epochs(void)
{
	pthread_mutex_lock(&lock);
	epochs_on = 1;
	pthread_mutex_unlock(&lock);
}

void proc_tree_epoch_advance(void)
{
	pthread_mutex_lock(&lock);
	epoch++;
	pthread_mutex_unlock(&lock);
}

int proc_tree_epoch(uint64_t *now)
{
	int on;

	pthread_mutex_lock(&lock);
	on = epochs_on;
	*now = epoch;
	pthread_mutex_unlock(&lock);
	return on;
}

int proc_tree_in_traced_tree(uint32_t pid)
{
	uint32_t p = pid;

	for (int depth = 0; depth < 256 && p > 1; depth++) {
		if (proc_tree_is_traced(p)) {
			if (p != pid)
				proc_tree_set_traced(pid);
			return 1;
		}
		p = proc_tree_ppid(p);
	}
	return 0;
}
