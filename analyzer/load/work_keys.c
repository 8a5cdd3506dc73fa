/*
 * work_keys.c — what names a call's GPU work (work_keys.h).
 */
#include "load/work_keys.h"

#include <ingero/api.h>
#include <ingero/event.h>

/* ia_call.work: FNV-1a over what the GPU will run */
static uint32_t fnv(uint32_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (uint32_t)(v & 0xff)) * 16777619u;
	return h;
}

uint32_t ia_launch_func(uint64_t kernel)
{
	uint32_t f = fnv(fnv(2166136261u, INGERO_CLASS_LAUNCH), kernel);
	return f ? f : 1;   /* (0 is "nothing queued") */
}

uint32_t ia_copy_func(unsigned cls, unsigned dir, int pinned)
{
	uint32_t f = fnv(fnv(fnv(2166136261u, cls), dir), pinned ? INGERO_FLAG_HOST_PINNED : 0);
	return f ? f : 1;
}

void ia_work_keys(const struct ingero_cuda_call *x, uint32_t *work, uint32_t *func)
{
	unsigned cls = ingero_api_class(x->api);
	uint32_t h, f;
	*work = *func = 0;
	if (cls == INGERO_CLASS_LAUNCH) {
		if (!x->kernel)
			return;
		f = h = ia_launch_func(x->kernel);
		for (int i = 0; i < 3; i++)
			h = fnv(fnv(h, x->grid[i]), x->block[i]);
	} else if (cls == INGERO_CLASS_COPY || cls == INGERO_CLASS_MEMSET) {
		unsigned lg = 0;
		for (uint64_t b = x->bytes; b > 1; b >>= 1)
			lg++;
		f = h = ia_copy_func(cls, x->dir, x->flags & INGERO_FLAG_HOST_PINNED);
		h = fnv(h, lg);
	} else {
		return;
	}
	*work = h ? h : 1;
	*func = f ? f : 1;
}
