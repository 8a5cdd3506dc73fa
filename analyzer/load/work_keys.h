/*
 * work_keys.h — what names a call's GPU work: ia_call.work, the same work
 * again (a launch by its kernel and geometry, a copy or memset by kind and
 * size to a power of two), and ia_call.func, the same without the geometry
 * or size.  FNV-1a over those fields; 0 is "nothing queued", so a key
 * never is.  The scan fills them in (scan.c); the estimate of GPU time
 * names its kernels and copies by them (gpu_kernels.c).
 */
#ifndef IA_WORK_KEYS_H
#define IA_WORK_KEYS_H

#include <ingero/event.h>

#include <stdint.h>

/* A call's work and func (0 and 0 when it queues nothing known). */
void ia_work_keys(const struct ingero_cuda_call *x, uint32_t *work, uint32_t *func);
/* A launch's func from its kernel's address (kernels.addr). */
uint32_t ia_launch_func(uint64_t kernel);
/* A copy's or memset's func: its class, direction and whether the host
 * side was pinned. */
uint32_t ia_copy_func(unsigned cls, unsigned dir, int pinned);

#endif
