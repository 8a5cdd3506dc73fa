/*
 * gate_run.c — looking figures up in a run summary (gate_run.h).
 */
#include "gate/gate_run.h"

#include <string.h>

const struct ia_gate_api *ia_gate_summary_api(const struct ia_gate_summary *s, const char *name)
{
	for (size_t i = 0; i < s->napis; i++)
		if (!strcmp(s->apis[i].name, name))
			return &s->apis[i];
	return NULL;
}
