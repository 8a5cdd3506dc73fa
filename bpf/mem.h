/*
 * mem.h — the in-kernel memory aggregate mem.bpf.c keeps and
 * collector/mem.c drains: per traced process and time bucket, pages
 * allocated (sum of 2^order), allocation calls, and user page faults.
 */
#ifndef INGERO_BPF_MEM_H
#define INGERO_BPF_MEM_H

struct mem_key {
	__u32 pid;         /* tgid */
	__u32 pad;
	__u64 bucket;      /* bucket start, CLOCK_MONOTONIC ns */
};

struct mem_val {
	__u64 pages;
	__u64 allocs;
	__u64 faults;
};

#endif
