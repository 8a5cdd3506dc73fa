/*
 * export_perfetto.h — the Perfetto (Chrome trace-event JSON) view of a
 * trace: every CUDA call and off-CPU interval of the selected threads, the
 * GPU track, the CPU and page-allocation counters.
 */
#ifndef IA_EXPORT_PERFETTO_H
#define IA_EXPORT_PERFETTO_H

#include "rules/chains.h"

#include <stdio.h>

/* Streams the whole document to f (errors surface at fclose/ferror). */
void ia_perfetto_write(FILE *f, const struct ia_analysis *a);

#endif
