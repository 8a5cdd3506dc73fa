/*
 * symbolize.h — naming native addresses for the sender (dladdr), off the
 * hot path.
 */
#ifndef INGERO_PRELOAD_SYMBOLIZE_H
#define INGERO_PRELOAD_SYMBOLIZE_H

#include "pack.h"

/* ip is a return address (all frames from unw_backtrace past ours are). */
void ingero_symbolize(uint64_t ip, int innermost, struct ingero_native_sym *out, void *arg);
/* A kernel host stub or handle: its symbol name, or NULL. */
const char *ingero_symbol_name(uint64_t addr);

#endif
