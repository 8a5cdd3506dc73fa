/*
 * export_perfetto.h — the Perfetto (Chrome trace-event JSON) view of a
 * trace: every CUDA call and off-CPU interval of the selected threads, the
 * GPU track, the CPU and page-allocation counters.
 */
#ifndef IA_EXPORT_PERFETTO_H
#define IA_EXPORT_PERFETTO_H

#include "load/series.h"
#include "load/stacks.h"
#include "load/trace.h"
#include "measure/gaps.h"
#include "measure/per_process.h"

#include <stdio.h>

/* Streams the whole document to f (errors surface at fclose/ferror). */
void ia_perfetto_write(FILE *f, const struct ia_trace *t, struct ia_stack_names *names,
		       const struct ia_per_process *pp, const struct ia_gaps *g, const struct ia_evidence *ev);

#endif
