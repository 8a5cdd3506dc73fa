/*
 * identity.c — verifying and translating the ids a sender claims.
 *
 * The common case (sender in our pid namespace, a handful of threads) must
 * cost a cache lookup per record: decisions are cached per sender by wire
 * (pid, tid).  A miss walks the process tree (proc_tree.c); if the claimed
 * pid is unknown there, the caller may ask again once the kernel's fork
 * events have caught up (a worker's records can overtake the ring buffer
 * that announces its birth): intake.c parks the message meanwhile rather
 * than wait, so an unknown or spoofed pid never stalls the receiver.
 *
 * Namespaces: when the sender's NSpid has several levels, a claimed pid is
 * looked for among the sender and its known descendants by the innermost
 * NSpid of each, and tids likewise under /proc/PID/task.  That walk of /proc
 * costs a read per process, so a sender has a budget of them a second;
 * past it, its unresolved pids are refused (and counted) without a walk.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "identity.h"
#include "proc_tree.h"

int identity_nspid(uint32_t pid, uint32_t *innermost, int *levels)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof path, "/proc/%u/status", pid);
	if (proc_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return -1;
	p += 7;
	*levels = 0;
	for (;;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		*innermost = (uint32_t)v;
		(*levels)++;
		p = end;
		if (*p == '\n' || !*p)
			break;
	}
	return *levels ? 0 : -1;
}

void identity_init(struct sender *s, uint32_t peer_pid, uint32_t peer_uid)
{
	int levels = 1;

	memset(s, 0, sizeof(*s));
	s->pid = peer_pid;
	s->uid = peer_uid;
	s->ns_pid = peer_pid;
	if (identity_nspid(peer_pid, &s->ns_pid, &levels) == 0 && levels > 1)
		s->in_ns = 1;
	else
		s->ns_pid = peer_pid;
}

/* In a namespaced sender's view, find the root pid of wire pid `w` among
 * the sender's descendants that are alive. */
static uint32_t ns_find_pid(struct sender *s, uint32_t w)
{
	DIR *d;
	struct dirent *e;
	uint32_t found = 0;

	if (w == s->ns_pid)
		return s->pid;
	d = opendir("/proc");
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		uint32_t pid = (uint32_t)strtoul(e->d_name, NULL, 10), inner;
		int levels;

		if (!pid || identity_nspid(pid, &inner, &levels) || levels < 2 || inner != w)
			continue;
		if (proc_tree_is_descendant(pid, s->pid))
			found = pid;
	}
	closedir(d);
	return found;
}

static uint32_t ns_find_tid(uint32_t root_pid, uint32_t w)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	uint32_t found = 0;

	snprintf(path, sizeof path, "/proc/%u/task", root_pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10), inner;
		int levels;
		char buf[4096];

		if (!tid)
			continue;
		snprintf(path, sizeof path, "/proc/%u/task/%u/status", root_pid, tid);
		if (proc_read_file(path, buf, sizeof buf) <= 0)
			continue;
		char *p = strstr(buf, "\nNSpid:");
		if (!p)
			continue;
		/* innermost = last number on the line */
		char *eol = strchr(p + 1, '\n');
		if (eol)
			*eol = 0;
		char *last = strrchr(p, '\t');
		inner = (uint32_t)strtoul(last ? last + 1 : p + 7, NULL, 10);
		levels = 0;
		(void)levels;
		if (inner == w)
			found = tid;
	}
	closedir(d);
	return found;
}

/* May a namespaced sender have one more walk of /proc this second? */
static int ns_budget(struct sender *s, long now_s)
{
	if (s->scan_second != now_s) {
		s->scan_second = now_s;
		s->scans = 0;
	}
	return s->scans++ < IDENTITY_NS_SCANS;
}

static int check(struct sender *s, uint32_t wpid, uint32_t wtid, uint32_t *pid, uint32_t *tid, long now_s)
{
	uint32_t rp = wpid, rt = wtid;

	if (s->in_ns) {
		if (wpid != s->ns_pid && !ns_budget(s, now_s))
			return -1;
		rp = ns_find_pid(s, wpid);
		if (!rp)
			return -1;
		if (wtid) {
			rt = wtid == wpid ? rp : ns_find_tid(rp, wtid);
			if (!rt)
				return -1;
		}
	} else if (!proc_tree_is_descendant(rp, s->pid)) {
		return -1;
	}
	if (rt && !proc_tree_thread_of(rt, rp))
		return -1;
	*pid = rp;
	*tid = rt;
	return 0;
}

int identity_resolve(struct sender *s, uint32_t *pid, uint32_t *tid, int may_wait)
{
	uint32_t wpid = *pid, wtid = *tid, rp = 0, rt = 0;
	struct id_cache_entry *c = &s->cache[(wtid ? wtid : wpid) * 2654435761u % IDENTITY_CACHE];
	int ok;

	struct timespec now;
	int hit = c->wire_tid == (wtid ? wtid : wpid) && c->wire_pid == wpid;

	if (hit && c->ok > 0) {
		*pid = c->pid;
		*tid = wtid ? c->tid : 0;
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* a pair refused less than a second ago is refused again at once, so
	 * a flood of spoofed records costs a cache lookup each */
	if (hit && c->ok < 0 && now.tv_sec - c->refused_at <= 1)
		return -1;
	ok = check(s, wpid, wtid, &rp, &rt, now.tv_sec) == 0;
	/* the kernel's fork/thread events may not have reached us yet: ask
	 * again once they have (not cached: the answer may change) */
	if (!ok && may_wait)
		return 1;
	if (!ok) {
		c->wire_pid = wpid;
		c->wire_tid = wtid ? wtid : wpid;
		c->ok = -1;
		c->refused_at = now.tv_sec;
		return -1;
	}
	c->wire_pid = wpid;
	c->wire_tid = wtid ? wtid : wpid;
	c->pid = rp;
	c->tid = wtid ? rt : rp;
	c->ok = 1;
	*pid = rp;
	*tid = wtid ? rt : 0;
	return 0;
}
