/*
 * syscalls.c — the system calls a blocked thread is named by (syscalls.h):
 * the ones programs block in, x86_64 numbers.  Any other is "another
 * system call" (its number stays in off_cpu.syscall).
 */
#include "load/syscalls.h"

#include <stddef.h>

static const struct {
	int nr;
	const char *name;
	enum ia_wait what;
} known[] = {
	{ 0, "read", IA_WAIT_READ },
	{ 1, "write", IA_WAIT_WRITE },
	{ 2, "open", IA_WAIT_OPEN },
	{ 4, "stat", IA_WAIT_OPEN },
	{ 7, "poll", IA_WAIT_POLL },
	{ 16, "ioctl", IA_WAIT_OTHER },
	{ 17, "pread64", IA_WAIT_READ },
	{ 18, "pwrite64", IA_WAIT_WRITE },
	{ 19, "readv", IA_WAIT_READ },
	{ 20, "writev", IA_WAIT_WRITE },
	{ 23, "select", IA_WAIT_POLL },
	{ 26, "msync", IA_WAIT_SYNC },
	{ 34, "pause", IA_WAIT_SLEEP },
	{ 35, "nanosleep", IA_WAIT_SLEEP },
	{ 42, "connect", IA_WAIT_POLL },
	{ 43, "accept", IA_WAIT_POLL },
	{ 44, "sendto", IA_WAIT_WRITE },
	{ 45, "recvfrom", IA_WAIT_READ },
	{ 46, "sendmsg", IA_WAIT_WRITE },
	{ 47, "recvmsg", IA_WAIT_READ },
	{ 61, "wait4", IA_WAIT_CHILD },
	{ 73, "flock", IA_WAIT_FUTEX },
	{ 74, "fsync", IA_WAIT_SYNC },
	{ 75, "fdatasync", IA_WAIT_SYNC },
	{ 202, "futex", IA_WAIT_FUTEX },
	{ 230, "clock_nanosleep", IA_WAIT_SLEEP },
	{ 232, "epoll_wait", IA_WAIT_POLL },
	{ 247, "waitid", IA_WAIT_CHILD },
	{ 257, "openat", IA_WAIT_OPEN },
	{ 262, "newfstatat", IA_WAIT_OPEN },
	{ 270, "pselect6", IA_WAIT_POLL },
	{ 271, "ppoll", IA_WAIT_POLL },
	{ 277, "sync_file_range", IA_WAIT_SYNC },
	{ 281, "epoll_pwait", IA_WAIT_POLL },
	{ 288, "accept4", IA_WAIT_POLL },
	{ 295, "preadv", IA_WAIT_READ },
	{ 296, "pwritev", IA_WAIT_WRITE },
	{ 299, "recvmmsg", IA_WAIT_READ },
	{ 307, "sendmmsg", IA_WAIT_WRITE },
	{ 327, "preadv2", IA_WAIT_READ },
	{ 328, "pwritev2", IA_WAIT_WRITE },
	{ 332, "statx", IA_WAIT_OPEN },
	{ 426, "io_uring_enter", IA_WAIT_OTHER },
	{ 441, "epoll_pwait2", IA_WAIT_POLL },
	{ 449, "futex_waitv", IA_WAIT_FUTEX },
};
#define NKNOWN (sizeof known / sizeof known[0])

uint8_t ia_syscall_code(int64_t nr, int known_)
{
	if (!known_)
		return IA_SYS_UNKNOWN;
	if (nr == -1)
		return IA_SYS_FAULT;
	for (size_t i = 0; i < NKNOWN; i++)
		if (known[i].nr == nr)
			return (uint8_t)(2 + i);
	return IA_SYS_OTHER;
}

const char *ia_syscall_name(uint8_t code)
{
	return code >= 2 && code - 2u < NKNOWN ? known[code - 2].name : NULL;
}

const char *ia_syscall_where(uint8_t code)
{
	return code == IA_SYS_FAULT ? "a page fault" : ia_syscall_name(code);
}

const char *ia_sys_code_name(uint8_t code)
{
	const char *n = ia_syscall_where(code);
	return n ? n : "another system call";
}

enum ia_wait ia_syscall_wait(uint8_t code)
{
	if (code == IA_SYS_UNKNOWN)
		return IA_WAIT_UNKNOWN;
	if (code == IA_SYS_FAULT)
		return IA_WAIT_FAULT;
	return code - 2u < NKNOWN ? known[code - 2].what : IA_WAIT_OTHER;
}

const char *ia_wait_name(enum ia_wait w)
{
	static const char *const names[IA_WAIT_N] = {
		[IA_WAIT_UNKNOWN] = "not recorded",
		[IA_WAIT_FAULT] = "a page fault",
		[IA_WAIT_SLEEP] = "asleep",
		[IA_WAIT_FUTEX] = "a lock, a condition or a queue",
		[IA_WAIT_POLL] = "a socket or a pipe (poll, select, epoll)",
		[IA_WAIT_READ] = "reading a socket, a pipe or a file",
		[IA_WAIT_WRITE] = "writing a socket, a pipe or a file",
		[IA_WAIT_SYNC] = "storage (fsync)",
		[IA_WAIT_CHILD] = "a child process",
		[IA_WAIT_OPEN] = "the file system (open, stat)",
		[IA_WAIT_OTHER] = "another system call",
	};
	return (unsigned)w < IA_WAIT_N ? names[w] : "?";
}

int ia_wait_not_input(enum ia_wait w)
{
	return w == IA_WAIT_WRITE || w == IA_WAIT_SYNC || w == IA_WAIT_CHILD;
}
