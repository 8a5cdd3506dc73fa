/*
 * runtime_hooks.c — the registry of runtime wrappers (for dlsym look-ups)
 * and the copy classification they share.
 */
#include "runtime_hooks.h"

#include <string.h>

#include "pinned.h"

#define INGERO_RT_DEF_(n) _Atomic(void *) ingero_real_##n;
INGERO_RT_HOOKS(INGERO_RT_DEF_)
#undef INGERO_RT_DEF_

static const struct ingero_hook rt_hooks[] = {
#define INGERO_RT_ENTRY_(n) { #n, (void *)n, &ingero_real_##n },
	INGERO_RT_HOOKS(INGERO_RT_ENTRY_)
#undef INGERO_RT_ENTRY_
};

const struct ingero_hook *ingero_rt_hook(const char *name)
{
	for (size_t i = 0; i < sizeof rt_hooks / sizeof rt_hooks[0]; i++)
		if (strcmp(rt_hooks[i].name, name) == 0)
			return &rt_hooks[i];
	return NULL;
}

static void host_flags(struct ingero_cuda_call *ev, const void *host)
{
	int p = ingero_pinned_lookup(host);
	if (p > 0)
		ev->flags |= INGERO_FLAG_HOST_PINNED;
	else if (p == 0)
		ev->flags |= INGERO_FLAG_HOST_PAGEABLE;
}

void ingero_fill_host(struct ingero_cuda_call *ev, const void *host)
{
	host_flags(ev, host);
}

void ingero_fill_copy(struct ingero_cuda_call *ev, int kind, const void *dst, const void *src)
{
	switch (kind) {
	case cudaMemcpyHostToDevice:
		ev->dir = INGERO_DIR_HTOD;
		host_flags(ev, src);
		break;
	case cudaMemcpyDeviceToHost:
		ev->dir = INGERO_DIR_DTOH;
		host_flags(ev, dst);
		break;
	case cudaMemcpyDeviceToDevice:
		ev->dir = INGERO_DIR_DTOD;
		break;
	case cudaMemcpyHostToHost:
		ev->dir = INGERO_DIR_HTOH;
		host_flags(ev, src);
		break;
	default:
		/* cudaMemcpyDefault: the driver infers the direction from the
		 * pointers; without asking it, we only know a side is pinned
		 * when it is one of the program's pinned ranges. */
		ev->dir = INGERO_DIR_DEFAULT;
		if (ingero_pinned_lookup(src) > 0 || ingero_pinned_lookup(dst) > 0)
			ev->flags |= INGERO_FLAG_HOST_PINNED;
		break;
	}
}
