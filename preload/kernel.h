/*
 * kernel.h — naming launched functions: the first launch of a function by a
 * process puts a KERNEL record into the ring, with the name when the
 * driver can give it cheaply, else for the sender to resolve.
 */
#ifndef INGERO_PRELOAD_KERNEL_H
#define INGERO_PRELOAD_KERNEL_H

#include <stdint.h>

#include "record.h"

void ingero_kernel_note(uint64_t addr, enum ingero_kernel_kind kind, uint32_t pid);

#endif
