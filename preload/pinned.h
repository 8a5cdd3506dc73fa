/*
 * pinned.h — the page-locked host ranges the program itself made
 * (cudaHostAlloc, cudaMallocHost, cudaHostRegister, cuMemHostAlloc,
 * cuMemAllocHost, cuMemHostRegister), so a copy can be tagged pinned or
 * pageable without asking CUDA anything.
 */
#ifndef INGERO_PRELOAD_PINNED_H
#define INGERO_PRELOAD_PINNED_H

#include <stddef.h>

void ingero_pinned_add(const void *p, size_t len);
void ingero_pinned_remove(const void *p);
/* 1: inside a pinned range; 0: known pageable; -1: cannot tell (the table
 * overflowed, or a writer was busy). */
int ingero_pinned_lookup(const void *p);
/* Fork child: a writer interrupted by the fork is gone; free its lock. */
void ingero_pinned_after_fork(void);
/* Tests: forget everything. */
void ingero_pinned_reset(void);

#endif
