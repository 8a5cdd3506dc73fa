/*
 * procfs.h — reading a process's identity from /proc, shared by the preload
 * library (which announces itself) and the collector (which fills in what
 * the kernel's events lack).  Plain open/read/readlink: no allocation, so
 * the library may call it from its sender thread after a fork.
 */
#ifndef INGERO_PROCFS_H
#define INGERO_PROCFS_H

#include <stddef.h>
#include <stdint.h>

/* Arguments joined by spaces into buf (NUL-terminated, truncated to size);
 * "" when the process is gone or has none (a kernel thread). */
void ingero_read_cmdline(uint32_t pid, char *buf, size_t size);

/* When a running process started (/proc/PID/stat field 22, clock ticks
 * since boot), or 0 when it is gone (a zombie counts as gone): with the pid,
 * names one process even across pid reuse. */
uint64_t ingero_read_start_ticks(uint32_t pid);

#endif
