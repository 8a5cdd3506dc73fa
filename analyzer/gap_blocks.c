/*
 * gap_blocks.c — where the main thread blocked in the gaps (gaps.h), from
 * the stacks the tracer takes of some of its blocks as it leaves a CPU
 * (off_cpu_stacks, files of version 6 on; bpf/block.bpf.h says which).
 * Its on-CPU samples cannot say it: a thread asleep in time.sleep or a
 * recv is never on a CPU to be sampled there.  Each sampled block weighs
 * what it was blocked inside the gaps (its off_cpu interval, joined by
 * thread and start) over the chance it had of a stack: an unbiased
 * estimate of the blocked time by line, whatever the blocks' count and
 * however the tracer guessed their lengths when it drew them.
 */
#include "gaps.h"
#include "db.h"
#include "json_out.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The main thread's interval that began at start, or NULL (lost): the
 * first one ending after start, if it is that one. */
static const struct ia_off *off_at(const struct ia_trace *t, uint32_t th, uint64_t start)
{
	size_t i = ia_thread_off_lower(t, th, start);
	const struct ia_thread *x = &t->threads[th];
	const struct ia_off *o = i < x->off_n ? &t->offs[t->off_by_th[x->off_first + i]] : NULL;
	return o && o->start == start ? o : NULL;
}

static int by_weight(const void *a, const void *b)
{
	const struct ia_gap_line *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->line, y->line);
}

int ia_gap_blocks_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			  struct ia_gaps *g, char *err, size_t errlen)
{
	int has = ia_db_has_table(t->db, "off_cpu_stacks");
	if (has < 0) {
		ia_db_step_error(t->db, sqlite3_errcode(t->db), err, errlen);
		return -1;
	}
	if (!has || !g->n || pp->main_thread == UINT32_MAX)
		return 0;
	g->blocks_known = 1;
	const struct ia_thread *mt = &t->threads[pp->main_thread];
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT start_ns, stack_id, chance FROM off_cpu_stacks "
					 "WHERE tid = ?1 AND start_ns >= ?2 AND start_ns < ?3", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, mt->tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)g->g[0].start);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)g->g[g->n - 1].end);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 0);
		size_t k = ia_gap_ending_after(g, start);
		if (k == g->n || g->g[k].start > start)
			continue;   /* blocked in a call (a sync), or between the gaps */
		const struct ia_off *o = off_at(t, pp->main_thread, start);
		uint64_t blk = o ? ia_overlap(o->start, o->end - o->runq, g->g[k].start, g->g[k].end) : 0;
		double chance = sqlite3_column_double(st, 2);
		if (!blk)
			continue;   /* its interval lost, or preempted there */
		if (!(chance > 0 && chance <= 1))
			chance = 1;   /* (a file's bad value counts once, as if certain) */
		double w = (double)blk / chance;
		uint64_t sid = (uint64_t)sqlite3_column_int64(st, 1);
		const char *line = sid ? ia_stack_source(names, sid) : NULL;
		struct ia_gap_line *l = ia_line_slot(&g->block_lines, &g->nblock_lines, &cap,
						     line ? line : "(no Python frame)");
		if (!l)
			goto oom;
		/* the library code it blocked in, where that is not the line */
		const char *inner = sid ? ia_stack_python(names, sid) : NULL, *func = sid ? ia_stack_python_func(names, sid) : NULL;
		if (!l->inner[0] && line && inner && func && strcmp(line, inner))
			snprintf(l->inner, sizeof l->inner, "%s (%s)", func, inner);
		l->count++;
		l->weight += w;
		g->blocks_sampled++;
		g->blocks_weight += w;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	if (g->nblock_lines)
		qsort(g->block_lines, g->nblock_lines, sizeof *g->block_lines, by_weight);
	return 0;
oom:
	sqlite3_finalize(st);
	snprintf(err, errlen, "out of memory");
	return -1;
}

const struct ia_gap_line *ia_gap_block_line(const struct ia_gaps *g)
{
	if (!g->nblock_lines || g->blocks_sampled < IA_BLOCK_LINE_MIN_STACKS)
		return NULL;
	const struct ia_gap_line *l = &g->block_lines[0];
	if (!strcmp(l->line, "(no Python frame)") || l->weight < IA_BLOCK_LINE_SHARE * g->blocks_weight)
		return NULL;
	return l;
}

void ia_gap_blocks_json(cJSON *parent, const struct ia_gaps *g, size_t max)
{
	if (!g->blocks_known)
		return;
	ia_json_u64(parent, "main_blocks_sampled", g->blocks_sampled);
	cJSON *a = cJSON_AddArrayToObject(parent, "main_blocked_at");
	for (size_t i = 0; a && i < g->nblock_lines && i < max; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o))
			break;
		ia_json_str(o, "line", g->block_lines[i].line);
		if (g->block_lines[i].inner[0])
			ia_json_str(o, "inner", g->block_lines[i].inner);
		ia_json_u64(o, "blocks", g->block_lines[i].count);
		ia_json_round(o, "share", g->block_lines[i].weight / g->blocks_weight, 4);
	}
}
