/*
 * capture.c — the capture windows a trace holds (capture.h).
 */
#include "load/capture.h"
#include "load/db.h"
#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_start(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The stretches of [c->first, c->last) that no window covers, from the
 * windows w (n (start, end) pairs, any order): into c->paused. */
static int paused_between(struct ia_capture *c, uint64_t *w, size_t n)
{
	if (n)
		qsort(w, n, 2 * sizeof *w, by_start);
	size_t cap = 0;
	uint64_t cur = c->first;   /* covered up to here */
	for (size_t i = 0; i <= n; i++) {
		uint64_t s = i < n ? w[2 * i] : c->last, e = i < n ? w[2 * i + 1] : c->last;
		if (s > c->last)
			s = c->last;
		if (s > cur) {
			if (ia_grow((void **)&c->paused, &cap, 2 * (c->npaused + 1), sizeof *c->paused) < 0)
				return -1;
			c->paused[2 * c->npaused] = cur;
			c->paused[2 * c->npaused + 1] = s;
			c->npaused++;
			c->paused_ns += s - cur;
		}
		if (e > cur)
			cur = e;
	}
	return 0;
}

uint64_t ia_capture_paused_in(const struct ia_capture *c, uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	for (size_t i = 0; i < c->npaused; i++)
		n += ia_overlap(c->paused[2 * i], c->paused[2 * i + 1], a, b);
	return n;
}

void ia_capture_free(struct ia_capture *c)
{
	free(c->paused);
	c->paused = NULL;
	c->npaused = 0;
}

int ia_capture_load(sqlite3 *db, uint64_t end, struct ia_capture *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	int has = ia_db_has_table(db, "capture");
	if (has < 0) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return -1;
	}
	if (!has)   /* a file before schema 4: recorded throughout */
		return 0;
	sqlite3_stmt *st = ia_db_prepare(db, "SELECT pid, t_ns, recording FROM capture ORDER BY pid, t_ns", err,
					 errlen);
	if (!st)
		return -1;
	int64_t pid = -1;
	uint64_t start = 0;
	int in = 0, rc;
	uint64_t *w = NULL;   /* every process's windows, (start, end) pairs */
	size_t nw = 0, wcap = 0;
#define WINDOW(a, b)                                                                               \
	do {                                                                                       \
		if (ia_grow((void **)&w, &wcap, 2 * (nw + 1), sizeof *w) < 0)                     \
			goto oom;                                                                  \
		w[2 * nw] = (a), w[2 * nw + 1] = (b), nw++;                                        \
	} while (0)
	/* per process: a 1 opens a window (the process starts paused), a 0
	 * closes it; repeats of either change nothing */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		uint64_t t = (uint64_t)sqlite3_column_int64(st, 1);
		int on = sqlite3_column_int(st, 2) != 0;
		if (p != pid) {
			if (in) {
				c->open = 1, c->recorded_ns += end > start ? end - start : 0;
				WINDOW(start, end);
			}
			pid = p;
			in = 0;
		}
		if (on && !in) {
			in = 1;
			start = t;
			if (!c->n++ || t < c->first)
				c->first = t;
		} else if (!on && in) {
			in = 0;
			c->recorded_ns += t - start;
			if (t > c->last)
				c->last = t;
			WINDOW(start, t);
		}
	}
	if (in) {
		c->open = 1, c->recorded_ns += end > start ? end - start : 0;
		WINDOW(start, end);
	}
#undef WINDOW
	if (rc != SQLITE_DONE) {
		ia_db_step_error(db, rc, err, errlen);
		sqlite3_finalize(st);
		free(w);
		return -1;
	}
	sqlite3_finalize(st);
	if (c->open)
		c->last = end;
	if (paused_between(c, w, nw) < 0)
		goto oom_done;
	free(w);
	return 0;
oom:
	sqlite3_finalize(st);
oom_done:
	free(w);
	ia_capture_free(c);
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_capture_print(FILE *f, const struct ia_capture *c, uint64_t t0)
{
	char a[32], b[32], d[32];
	if (!c->n)
		return;
	fprintf(f, "Captured (cudaProfilerStart/Stop): %zu window%s, %s recorded, from %s to %s%s", c->n,
		c->n == 1 ? "" : "s", ia_fmt_dur(a, sizeof a, c->recorded_ns), ia_fmt_dur(b, sizeof b, c->first - t0),
		ia_fmt_dur(d, sizeof d, c->last - t0), c->open ? " (still recording at the end)" : "");
	if (!c->applied)
		fprintf(f, "; read in the window asked instead");
	if (c->paused_in_ns)
		fprintf(f, "; %s between windows left out (nothing was recorded there)",
			ia_fmt_dur(a, sizeof a, c->paused_in_ns));
	fputc('\n', f);
}

void ia_capture_json(cJSON *obj, const struct ia_capture *c, uint64_t t0)
{
	if (!c->n)
		return;
	cJSON *o = cJSON_AddObjectToObject(obj, "capture");
	ia_json_u64(o, "windows", c->n);
	ia_json_u64(o, "recorded_ns", c->recorded_ns);
	ia_json_u64(o, "first_rel_ns", c->first - t0);
	ia_json_u64(o, "last_rel_ns", c->last - t0);
	cJSON_AddBoolToObject(o, "open", c->open);
	cJSON_AddBoolToObject(o, "applied", c->applied);
	ia_json_u64(o, "between_windows_ns", c->paused_in_ns);   /* inside the analysis window */
}
