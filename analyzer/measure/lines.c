/*
 * lines.c — counts by Python line (see lines.h).
 */
#include "measure/lines.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small keyed accumulators (few distinct keys: linear search is fine) ---- */
struct ia_gap_line *ia_line_slot(struct ia_gap_line **v, size_t *n, size_t *cap, const char *line)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].line, line))
			return &(*v)[i];
	if (ia_grow((void **)v, cap, *n + 1, sizeof **v) < 0)
		return NULL;
	struct ia_gap_line *l = &(*v)[(*n)++];
	memset(l, 0, sizeof *l);
	snprintf(l->line, sizeof l->line, "%s", line);
	return l;
}

int ia_gap_line_by_count(const void *a, const void *b)
{
	const struct ia_gap_line *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->line, y->line);
}
