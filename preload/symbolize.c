/*
 * symbolize.c — dladdr on the sender thread.  It sees the dynamic symbol
 * tables of the objects loaded in the owner; a fork child shares the
 * owner's image, so its addresses resolve the same unless it loaded
 * something after the fork.  Functions missing from the dynamic symbol
 * table (static, hidden, stripped) come out as module + offset, which is
 * still enough to symbolise offline.
 */
#include "symbolize.h"

#include <dlfcn.h>
#include <stdint.h>

void ingero_symbolize(uint64_t ip, int innermost, struct ingero_native_sym *out, void *arg)
{
	(void)innermost;
	(void)arg;
	Dl_info di;
	/* a return address may point just past the call's function */
	uintptr_t look = (uintptr_t)ip - 1;
	out->symbol = NULL;
	out->module = NULL;
	out->offset = ip;
	if (!dladdr((void *)look, &di))
		return;
	out->module = di.dli_fname;
	if (di.dli_sname && di.dli_saddr) {
		out->symbol = di.dli_sname;
		out->offset = ip - (uint64_t)(uintptr_t)di.dli_saddr;
	} else {
		out->offset = ip - (uint64_t)(uintptr_t)di.dli_fbase;
	}
}

const char *ingero_symbol_name(uint64_t addr)
{
	Dl_info di;
	if (!dladdr((void *)(uintptr_t)addr, &di) || !di.dli_sname ||
	    (uint64_t)(uintptr_t)di.dli_saddr != addr)
		return NULL;
	return di.dli_sname;
}
