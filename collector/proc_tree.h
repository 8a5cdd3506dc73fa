/*
 * proc_tree.h — the collector's picture of process ancestry and thread
 * ownership, in the root pid namespace, fed by the kernel's fork/thread
 * events (bpf/proc.bpf.c) and, for processes older than the collector, by
 * /proc.  Used to decide whether a sender may speak for a pid.
 * Thread-safe: the BPF consumer writes while intake reads.
 */
#ifndef INGERO_COLLECTOR_PROC_TREE_H
#define INGERO_COLLECTOR_PROC_TREE_H

#include <stdint.h>

void proc_tree_fork(uint32_t pid, uint32_t ppid, int traced);
void proc_tree_exit(uint32_t pid);
void proc_tree_thread(uint32_t tid, uint32_t pid);
void proc_tree_set_traced(uint32_t pid);
int proc_tree_is_traced(uint32_t pid);
/* 1 when pid or an ancestor is traced (then pid is marked traced too). */
int proc_tree_in_traced_tree(uint32_t pid);

/* Parent of pid (tree, then /proc); 0 when unknown. */
uint32_t proc_tree_ppid(uint32_t pid);
/* 1 when pid == ancestor or descends from it. */
int proc_tree_is_descendant(uint32_t pid, uint32_t ancestor);
/* 1 when tid is a thread of pid. */
int proc_tree_thread_of(uint32_t tid, uint32_t pid);

/* The BPF consumer calls epoch_advance() after each complete drain of the
 * ring: once the epoch is two past the one read at time T, every kernel
 * event that happened before T has been applied.  proc_tree_epoch() reads
 * it; 0 when no kernel events flow (nothing to wait for), else 1. */
void proc_tree_enable_epochs(void);
void proc_tree_epoch_advance(void);
int proc_tree_epoch(uint64_t *now);

/* /proc helpers */
int proc_read_status_u32(uint32_t pid, const char *field, uint32_t *out);
int proc_read_file(const char *path, char *buf, size_t size);   /* bytes read or -1 */

#endif
