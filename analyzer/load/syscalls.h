/*
 * syscalls.h — what a blocked thread waited in (off_cpu.syscall, schema
 * version 5): the system calls a program blocks in, by name and by what
 * they wait for.  x86_64 numbers (the collector's eBPF reads the number the
 * system call entry saved; other architectures record none).
 *
 * An off-CPU interval carries a one-byte code (trace.h IA_OFF_SYS_*): 0 not
 * known (preempted, or an older file), 1 blocked outside a system call (a
 * page fault), then one per system call named here, and IA_SYS_OTHER.
 */
#ifndef INGERO_ANALYZER_SYSCALLS_H
#define INGERO_ANALYZER_SYSCALLS_H

#include <stdint.h>

/* What a blocked thread waited for, by the system call it blocked in. */
enum ia_wait {
	IA_WAIT_UNKNOWN,   /* not recorded */
	IA_WAIT_FAULT,     /* outside a system call: a page fault */
	IA_WAIT_SLEEP,     /* nanosleep, clock_nanosleep: time.sleep, a timer */
	IA_WAIT_FUTEX,     /* a lock, a condition, a queue; in CPython also the GIL */
	IA_WAIT_POLL,      /* poll, select, epoll: a socket or a pipe (an event loop, a queue of processes) */
	IA_WAIT_READ,      /* read, recv: a socket, a pipe or a file */
	IA_WAIT_WRITE,     /* write, send: a socket, a pipe or a file */
	IA_WAIT_SYNC,      /* fsync, fdatasync, sync_file_range, msync: storage */
	IA_WAIT_CHILD,     /* wait4, waitid: a child process */
	IA_WAIT_OPEN,      /* open, stat: a file system */
	IA_WAIT_OTHER,     /* another system call */
	IA_WAIT_N
};

#define IA_SYS_UNKNOWN 0
#define IA_SYS_FAULT 1
#define IA_SYS_OTHER 255

/* The code of an off_cpu row's syscall column (known: not NULL). */
uint8_t ia_syscall_code(int64_t nr, int known);
/* The system call's name ("futex"), or NULL for codes naming none. */
const char *ia_syscall_name(uint8_t code);
enum ia_wait ia_syscall_wait(uint8_t code);
/* What a blocked interval was in, for one line: the system call's name, or
 * "a page fault"; NULL where it is not known or not one named here. */
const char *ia_syscall_where(uint8_t code);
/* The same, "another system call" for one not named here (codes other than
 * IA_SYS_UNKNOWN). */
const char *ia_sys_code_name(uint8_t code);
/* 1 for a wait that is not for the step's input: writing (a checkpoint, a
 * log), syncing files, a child process (a subprocess run in the loop) —
 * where a wait for input reads (a pipe, a socket, a file), opens a file,
 * polls, or waits on a queue or a lock (a worker's, a producer's). */
int ia_wait_not_input(enum ia_wait w);
/* What a wait is, for a timeline line ("a lock, a condition or a queue (futex)"). */
const char *ia_wait_name(enum ia_wait w);

#endif
