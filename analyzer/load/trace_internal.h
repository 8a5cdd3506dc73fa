/*
 * trace_internal.h — inside the trace loader (trace.c, trace_small.c): the
 * maps behind ia_proc_index, ia_thread_index and ia_session, and the
 * small tables' reading (trace_small.c).
 */
#ifndef IA_TRACE_INTERNAL_H
#define IA_TRACE_INTERNAL_H

#include "load/trace.h"
#include "base/util.h"

struct maps {
	struct ia_map tid, pid, stack;
	char **skeys, **svals;
	size_t nsess;
};

/* session, apis, processes and threads; 0, or -1 with one line in err */
int ia_trace_load_small(struct ia_trace *t, char *err, size_t errlen, size_t *pcap, size_t *tcap);
/* a thread (and its process when new); its index, or -1 out of memory */
int ia_trace_add_thread(struct ia_trace *t, uint32_t tid, int pid, size_t *cap, size_t *pcap);
/* the losses by source, non-zero (docs/schema.md, losses: the reader of
 * any figure needs them next to it); 0, or -1 with one line in err */
int ia_trace_load_losses(struct ia_trace *t, char *err, size_t errlen);

#endif
