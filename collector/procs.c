/*
 * procs.c — loads bpf/proc.bpf.c and keeps the processes and threads
 * tables: fork (parent, start), exec (new comm, exe, command line), exit
 * (time, code), threads and their names.  Also enrols processes from user
 * space (-- CMD, -p, HELLO), reading what the kernel did not tell us from
 * /proc.  exe and cmdline are read from /proc when the exec record arrives,
 * which is soon enough for all but processes that exit within milliseconds.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/proc.skel.h"
#include "../bpf/proc.h"
#include <ingero/procfs.h>
#include <ingero/schema.h>
#include "proc_env.h"
#include "proc_tree.h"
#include "procs.h"
#include "store.h"
#include "tracer.h"

int procs_attach(struct tracer *t)
{
	int err;

	t->proc = proc_bpf__open();
	if (!t->proc)
		return -errno;
	t->proc->rodata->bucket_ns = t->o.bucket_ns;
	if ((err = tracer_share_maps(t, t->proc->maps.traced, t->proc->maps.events,
				     t->proc->maps.drops)) ||
	    (err = proc_bpf__load(t->proc)) || (err = proc_bpf__attach(t->proc)))
		return err;
	return 0;
}

void procs_detach(struct tracer *t)
{
	proc_bpf__destroy(t->proc);
	t->proc = NULL;
}

static int read_exe(uint32_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%u/exe", pid);
	n = readlink(path, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static void read_comm(const char *path, char *buf, size_t size)
{
	int n = proc_read_file(path, buf, size);

	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	if (n <= 0)
		buf[0] = 0;
}

/* The arguments the exec record carries, as /proc/PID/cmdline reads
 * (spaces between them): for a process gone before /proc was read. */
static void exec_args(const struct proc_exec_ev *x, char *buf, size_t cap)
{
	size_t n = x->args_len < sizeof x->args ? x->args_len : sizeof x->args;
	while (n && !x->args[n - 1])
		n--;
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = x->args[i] ? x->args[i] : ' ';
	buf[n] = 0;
}

void procs_event(struct tracer *t, const void *data, size_t len)
{
	const struct proc_ev *e = data;
	char comm[sizeof e->comm + 1], exe[4096], cmdline[4096];
	struct proc_row r = { .pid = e->pid, .ppid = -1, .start_ns = -1, .exit_ns = -1,
			      .exit_code = -1, .made = -1, .dropped = -1 };

	if (len < sizeof(*e))
		return;
	memcpy(comm, e->comm, sizeof e->comm);
	comm[sizeof e->comm] = 0;
	switch (e->kind) {
	case EV_FORK:
		proc_tree_fork(e->pid, e->ppid, e->traced);
		if (!e->traced)
			return;
		samples_fork(t, e->pid, e->ppid);
		r.ppid = e->ppid;
		r.comm = comm;
		r.start_ns = (int64_t)e->ts_ns;
		store_process(t->store, &r);
		store_thread(t->store, e->pid, e->pid, comm);
		break;
	case EV_EXEC:
		samples_exec(t, e->pid);
		r.comm = comm;
		if (read_exe(e->pid, exe, sizeof exe) == 0)
			r.exe = exe;
		ingero_read_cmdline(e->pid, cmdline, sizeof cmdline);
		if (!cmdline[0] && len >= sizeof(struct proc_exec_ev))
			exec_args((const struct proc_exec_ev *)data, cmdline, sizeof cmdline);
		if (cmdline[0])
			r.cmdline = cmdline;
		store_process(t->store, &r);
		store_thread(t->store, e->tid, e->pid, comm);
		if (proc_env_record(t->store, e->pid) < 0)   /* gone before its exec record was read */
			store_loss_add(t->store, INGERO_LOSS_ENV_UNREAD, e->pid, 1);
		break;
	case EV_EXIT: {
		int code = e->exit_code;

		proc_tree_exit(e->pid);
		samples_exit(t, e->pid);
		r.exit_ns = (int64_t)e->ts_ns;
		/* shell convention: 128 + signal when killed */
		r.exit_code = (code & 0x7f) ? 128 + (code & 0x7f) : (code >> 8) & 0xff;
		store_process(t->store, &r);
		break;
	}
	case EV_THREAD:
		proc_tree_thread(e->tid, e->pid);
		store_thread(t->store, e->tid, e->pid, comm);
		break;
	}
}

int64_t procs_start_ns(uint32_t pid)
{
	char state;
	uint64_t ticks;
	struct timespec boot, mono;
	long hz = sysconf(_SC_CLK_TCK);

	if (ingero_read_stat(pid, &state, &ticks) < 0 || hz <= 0)
		return -1;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* starttime counts from boot (CLOCK_BOOTTIME); shift by the time spent suspended */
	int64_t start = (int64_t)(ticks * (1000000000ull / hz));
	int64_t suspended = ((int64_t)boot.tv_sec - mono.tv_sec) * 1000000000ll +
			    (boot.tv_nsec - mono.tv_nsec);
	return start - suspended;
}

static void enroll_one(struct tracer *t, struct store *st, uint32_t pid)
{
	char path[64], comm[64], exe[4096], cmdline[4096];
	struct proc_row r = { .pid = pid, .ppid = -1, .start_ns = -1, .exit_ns = -1,
			      .exit_code = -1, .made = -1, .dropped = -1 };
	DIR *d;
	struct dirent *e;

	tracer_enroll(t, pid);
	proc_tree_set_traced(pid);
	samples_enroll(t, pid);
	r.ppid = proc_tree_ppid(pid);
	snprintf(path, sizeof path, "/proc/%u/comm", pid);
	read_comm(path, comm, sizeof comm);
	r.comm = comm[0] ? comm : NULL;
	if (read_exe(pid, exe, sizeof exe) == 0)
		r.exe = exe;
	ingero_read_cmdline(pid, cmdline, sizeof cmdline);
	r.cmdline = cmdline[0] ? cmdline : NULL;
	r.start_ns = procs_start_ns(pid);
	store_process(st, &r);
	proc_env_record(st, pid);

	snprintf(path, sizeof path, "/proc/%u/task", pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
		char tpath[96];

		if (!tid)
			continue;
		snprintf(tpath, sizeof tpath, "/proc/%u/task/%u/comm", pid, tid);
		read_comm(tpath, comm, sizeof comm);
		proc_tree_thread(tid, pid);
		store_thread(st, tid, pid, comm[0] ? comm : NULL);
	}
	closedir(d);
}

int procs_enroll(struct tracer *t, struct store *st, uint32_t pid, int children)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	uint32_t *kids = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof path, "/proc/%u", pid);
	if (access(path, F_OK))
		return -ESRCH;
	/* the parent first: children forked from now on are enrolled by the kernel */
	enroll_one(t, st, pid);
	if (!children)
		return 0;
	if (!(d = opendir("/proc")))
		return 0;
	while ((e = readdir(d))) {
		uint32_t p = (uint32_t)strtoul(e->d_name, NULL, 10), ppid = 0;

		if (!p || p == pid || proc_read_status_u32(p, "PPid", &ppid) || ppid != pid)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			uint32_t *k = realloc(kids, cap * sizeof(*k));
			if (!k)
				break;
			kids = k;
		}
		kids[n++] = p;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		procs_enroll(t, st, kids[i], 1);
	free(kids);
	return 0;
}
