/*
 * capture.c — the capture windows a trace holds (capture.h).
 */
#include "capture.h"
#include "db.h"
#include "json_out.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

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
	/* per process: a 1 opens a window (the process starts paused), a 0
	 * closes it; repeats of either change nothing */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		uint64_t t = (uint64_t)sqlite3_column_int64(st, 1);
		int on = sqlite3_column_int(st, 2) != 0;
		if (p != pid) {
			if (in)
				c->open = 1, c->recorded_ns += end > start ? end - start : 0;
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
		}
	}
	if (in)
		c->open = 1, c->recorded_ns += end > start ? end - start : 0;
	if (rc != SQLITE_DONE) {
		ia_db_step_error(db, rc, err, errlen);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	if (c->open)
		c->last = end;
	return 0;
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
	else if (c->n > 1)   /* what the analysis cannot yet cut out */
		fprintf(f, "; between windows nothing CUDA was recorded (the eBPF evidence was)");
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
}
