/*
 * kernel.h — naming launched functions: the first launch of a function by a
 * process puts a KERNEL record into the ring, with the name when the
 * driver can give it cheaply, else for the sender to resolve.
 */
#ifndef INGERO_PRELOAD_KERNEL_H
#define INGERO_PRELOAD_KERNEL_H

#include <stdint.h>

#include "intern.h"
#include "record.h"

/* Out of line, once per kernel: its KERNEL record (1 KiB of name). */
void ingero_kernel_name(uint64_t addr, enum ingero_kernel_kind kind, uint32_t pid) __attribute__((noinline, cold));

/* Every launch: a kernel not yet put into the ring by this process is named. */
static inline void ingero_kernel_note(uint64_t addr, enum ingero_kernel_kind kind, uint32_t pid)
{
	if (!ingero_set_has_in(ingero_kernel_keys, INGERO_SET_CAP, addr))
		ingero_kernel_name(addr, kind, pid);
}

#endif
