/*
 * gap_blocks.c — where the main thread blocked in the gaps (gaps.h), from
 * the stacks the tracer takes of some of its blocks as it leaves a CPU
 * (off_cpu_stacks, files of version 6 on; bpf/block.bpf.h says which).
 * Its on-CPU samples cannot say it: a thread asleep in time.sleep or a
 * recv is never on a CPU to be sampled there.  The workers' blocks say
 * where a DataLoader waits on storage or a remote store, and tell those
 * from a worker's wait for its next index.  Each sampled block weighs
 * what it was blocked inside the gaps (its off_cpu interval, joined by
 * thread and start) over the chance it had of a stack: an unbiased
 * estimate of the blocked time by line, whatever the blocks' count and
 * however the tracer guessed their lengths when it drew them.
 */
#include "measure/gaps.h"
#include "load/db.h"
#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_weight(const void *a, const void *b)
{
	const struct ia_gap_line *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->line, y->line);
}

/* A line's blocked weight in one piece of library code: a line waits in
 * several (c51: line 23 in Condition.wait, the pin thread's queue, 186
 * blocks, and in record_function's exit 10), and the one said is the
 * heaviest, not the first read. */
struct ia_gap_inner {
	size_t line;               /* index into lines */
	char inner[sizeof ((struct ia_gap_line *)0)->inner];
	double weight;
};

/* One sampled block of weight w (its blocked time in the gaps over its
 * chance) at stack sid, into b by its line. */
static int add_block(struct ia_gap_blocks *b, size_t *cap, struct ia_stack_names *names, uint64_t sid,
		     const char *line, double w)
{
	struct ia_gap_line *l = ia_line_slot(&b->lines, &b->n, cap, line ? line : "(no Python frame)");
	if (!l)
		return -1;
	l->count++;
	l->weight += w;
	/* the library code it blocked in, where that is not the line */
	const char *inner = sid ? ia_stack_python(names, sid) : NULL, *func = sid ? ia_stack_python_func(names, sid) : NULL;
	if (!line || !inner || !func || !strcmp(line, inner))
		return 0;
	char in[sizeof l->inner];
	snprintf(in, sizeof in, "%s (%s)", func, inner);
	size_t li = (size_t)(l - b->lines), k = 0;
	while (k < b->ninners && (b->inners[k].line != li || strcmp(b->inners[k].inner, in)))
		k++;
	if (k == b->ninners) {
		if (ia_grow((void **)&b->inners, &b->cinners, b->ninners + 1, sizeof *b->inners) < 0)
			return -1;
		b->inners[k].line = li;
		memcpy(b->inners[k].inner, in, sizeof in);
		b->inners[k].weight = 0;
		b->ninners++;
	}
	b->inners[k].weight += w;
	return 0;
}

/* Each line's heaviest library code, into its inner (before lines are sorted). */
static void pick_inners(struct ia_gap_blocks *b)
{
	double *best = calloc(b->n + 1, sizeof *best);
	for (size_t k = 0; best && k < b->ninners; k++) {
		const struct ia_gap_inner *x = &b->inners[k];
		struct ia_gap_line *l = &b->lines[x->line];
		if (x->weight > best[x->line] || (x->weight == best[x->line] && strcmp(x->inner, l->inner) < 0)) {
			best[x->line] = x->weight;
			memcpy(l->inner, x->inner, sizeof l->inner);
		}
	}
	free(best);
	free(b->inners);
	b->inners = NULL;
	b->ninners = b->cinners = 0;
}

/* The chance column, where a file holds a bad one: counted once, as if certain. */
static double chance_of(sqlite3_stmt *st, int col)
{
	double chance = sqlite3_column_double(st, col);
	return chance > 0 && chance <= 1 ? chance : 1;
}

/* Thread th's blocks begun in a gap it was the main thread of (gaps.h: in
 * a relay, the one driving then): what each was blocked in that gap.
 * SQLITE_DONE, or SQLite's error (SQLITE_NOMEM out of memory). */
static int thread_blocks(const struct ia_trace *t, struct ia_stack_names *names, struct ia_gaps *g,
			 sqlite3_stmt *st, uint32_t th, size_t *cap)
{
	struct ia_gap_blocks *b = &g->main_blocks;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, t->threads[th].tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)g->g[g->n - 1].end);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 0);
		const struct ia_off *o = ia_thread_off_at(t, th, start);
		if (!o)
			continue;   /* its interval lost */
		/* what it was blocked inside the gaps it drove, wherever the
		 * block began: a q.get() begun while the GPU still ran the last
		 * step's work holds the GPU idle from the gap's start on (c39:
		 * the prefetch queue's wait, dropped as begun before its gap,
		 * had left the gaps' short waits as where it blocked) */
		uint64_t blk = 0, until = o->end - o->runq;
		for (size_t k = ia_gap_ending_after(g, start); k < g->n && g->g[k].start < until; k++)
			if (g->g[k].th == th)
				blk += ia_overlap(o->start, until, g->g[k].start, g->g[k].end);
		if (!blk)
			continue;   /* in a call (a sync), between the gaps, not driving then, or preempted */
		double w = (double)blk / chance_of(st, 2);
		uint64_t sid = (uint64_t)sqlite3_column_int64(st, 1);
		if (add_block(b, cap, names, sid, sid ? ia_stack_source(names, sid) : NULL, w) < 0)
			return SQLITE_NOMEM;
		b->sampled++;
		b->weight += w;
	}
	return rc;
}

/* The main thread's blocks begun in the gaps (each gap's: gaps.h). */
static int main_blocks(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		       struct ia_gaps *g, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT start_ns, stack_id, chance FROM off_cpu_stacks "
					 "WHERE tid = ?1 AND start_ns < ?2", err, errlen);
	if (!st)
		return -1;
	uint32_t one = pp->main_thread;
	const uint32_t *ths = g->nrelay ? g->relay : &one;
	size_t cap = 0, n = g->nrelay ? g->nrelay : 1;
	int rc = SQLITE_DONE;
	for (size_t i = 0; i < n && rc == SQLITE_DONE; i++)
		rc = thread_blocks(t, names, g, st, ths[i], &cap);
	return ia_db_finish(st, rc, err, errlen);
}

/* The blocked time of o over the gaps from gap k on (the first ending after o's start). */
static uint64_t blocked_from(const struct ia_gaps *g, const struct ia_off *o, size_t k)
{
	uint64_t a = o->start, b = o->end - o->runq, sum = 0;
	for (; k < g->n && g->g[k].start < b; k++)
		sum += ia_overlap(a, b, g->g[k].start, g->g[k].end);
	return sum;
}

uint64_t ia_gaps_blocked_over(const struct ia_gaps *g, const struct ia_off *o)
{
	return blocked_from(g, o, ia_gap_ending_after(g, o->start));
}

uint64_t ia_gaps_blocked_over_next(const struct ia_gaps *g, const struct ia_off *o, size_t *k)
{
	while (*k < g->n && g->g[*k].end <= o->start)
		++*k;
	return blocked_from(g, o, *k);
}

/* One worker thread's blocks over the gaps; only those while loading
 * (ia_stack_loading) go into lines. */
static int worker_thread_blocks(const struct ia_trace *t, uint32_t th, sqlite3_stmt *st, struct ia_stack_names *names,
				struct ia_gaps *g, size_t *cap)
{
	struct ia_gap_blocks *b = &g->worker_blocks;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, t->threads[th].tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)g->g[g->n - 1].end);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct ia_off *o = ia_thread_off_at(t, th, (uint64_t)sqlite3_column_int64(st, 0));
		uint64_t blk = o ? ia_gaps_blocked_over(g, o) : 0;
		if (!blk)
			continue;
		double w = (double)blk / chance_of(st, 2);
		uint64_t sid = (uint64_t)sqlite3_column_int64(st, 1);
		b->sampled++;
		b->weight += w;
		if (!sid || !ia_stack_loading(names, sid))
			continue;   /* waiting for its next index, or not known */
		b->loading_weight += w;
		b->loading_sampled++;
		b->loading_sys[ia_off_sys(o)] += w;
		if (o->th & IA_OFF_IOWAIT)
			b->loading_iowait += w;
		if (add_block(b, cap, names, sid, ia_stack_loading_line(names, sid), w) < 0)
			return SQLITE_NOMEM;
	}
	return rc;
}

static int worker_blocks(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			 struct ia_gaps *g, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT start_ns, stack_id, chance FROM off_cpu_stacks "
					 "WHERE tid = ?1 AND start_ns < ?2", err, errlen);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc = SQLITE_DONE;
	for (size_t th = 0; th < t->nthreads && rc == SQLITE_DONE; th++)
		if (ia_worker_main_thread(t, pp, (uint32_t)th))   /* (gap_workers.c says why) */
			rc = worker_thread_blocks(t, (uint32_t)th, st, names, g, &cap);
	return ia_db_finish(st, rc, err, errlen);
}

int ia_gap_blocks_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
			  struct ia_gaps *g, char *err, size_t errlen)
{
	int has = ia_db_has_table(t->db, "off_cpu_stacks");
	if (has < 0) {
		ia_db_step_error(t->db, sqlite3_errcode(t->db), err, errlen);
		return -1;
	}
	if (!has || !g->n)
		return 0;
	g->blocks_known = 1;
	if (pp->main_thread != UINT32_MAX && main_blocks(t, pp, names, g, err, errlen) < 0)
		return -1;
	if (pp->nworkers && worker_blocks(t, pp, names, g, err, errlen) < 0)
		return -1;
	struct ia_gap_blocks *all[] = { &g->main_blocks, &g->worker_blocks };
	for (size_t i = 0; i < 2; i++) {
		pick_inners(all[i]);
		if (all[i]->n)
			qsort(all[i]->lines, all[i]->n, sizeof *all[i]->lines, by_weight);
	}
	return 0;
}

void ia_gap_blocks_free(struct ia_gap_blocks *b)
{
	free(b->lines);
	free(b->inners);
	memset(b, 0, sizeof *b);
}

/* What the shares are of: the workers' lines hold only their loading. */
static double share_base(const struct ia_gap_blocks *b)
{
	double base = b->loading_weight > 0 ? b->loading_weight : b->weight;
	return base > 0 ? base : 1;
}

const struct ia_gap_line *ia_gap_block_line(const struct ia_gap_blocks *b)
{
	if (!b->n || (b->loading_sampled ? b->loading_sampled : b->sampled) < IA_BLOCK_LINE_MIN_STACKS)
		return NULL;
	const struct ia_gap_line *l = &b->lines[0];
	if (!strcmp(l->line, "(no Python frame)") || l->weight < IA_BLOCK_LINE_SHARE * share_base(b))
		return NULL;
	return l;
}

const char *ia_gap_blocks_text(const struct ia_gap_blocks *b, char *buf, size_t n)
{
	buf[0] = 0;
	for (size_t i = 0; i < b->n && i < 3; i++) {
		const struct ia_gap_line *l = &b->lines[i];
		if (i && 100 * l->weight / share_base(b) < 0.5)
			break;   /* a line with none of the time to speak of: not said */
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "%s%s %.0f%%%s%s%s", i ? ", " : "", l->line, 100 * l->weight / share_base(b),
			 l->inner[0] ? " (in " : "", l->inner, l->inner[0] ? ")" : "");
	}
	return buf;
}

void ia_gap_blocks_json(cJSON *parent, const char *prefix, const struct ia_gaps *g, const struct ia_gap_blocks *b,
			size_t max)
{
	if (!g->blocks_known)
		return;
	char key[64];
	snprintf(key, sizeof key, "%s_blocks_sampled", prefix);
	ia_json_u64(parent, key, b->sampled);
	snprintf(key, sizeof key, "%s_blocked_at", prefix);
	cJSON *a = cJSON_AddArrayToObject(parent, key);
	for (size_t i = 0; a && i < b->n && i < max; i++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(a, o))
			break;
		ia_json_str(o, "line", b->lines[i].line);
		if (b->lines[i].inner[0])
			ia_json_str(o, "inner", b->lines[i].inner);
		ia_json_u64(o, "blocks", b->lines[i].count);
		ia_json_round(o, "share", b->lines[i].weight / share_base(b), 4);
	}
}
