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

/* From /proc/PID/stat: its state letter (R, S, D, Z, ...) and when it
 * started (field 22, clock ticks since boot; with the pid it names one
 * process even across pid reuse).  0, or -1 when the process is gone. */
int ingero_read_stat(uint32_t pid, char *state, uint64_t *start_ticks);

#endif
