/*
 * capture.h — the program's capture windows (table capture, schema 4):
 * under INGERO_CAPTURE=cudaProfilerApi the library records only between
 * cudaProfilerStart and cudaProfilerStop, so the trace is read from the
 * first start to the last stop unless the user chose a window (--from,
 * --to, --since).
 */
#ifndef INGERO_ANALYZER_CAPTURE_H
#define INGERO_ANALYZER_CAPTURE_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ia_capture {
	size_t n;              /* windows (starts); 0: recorded throughout (or a file before schema 4) */
	uint64_t first, last;  /* the first start; the last stop (or the trace's end: open) */
	uint64_t recorded_ns;  /* inside windows, all processes' added up */
	int open;              /* a window still open at the end */
	int applied;           /* the analysis window was set to [first, last) */
	/* Between first and last, the stretches in which no process was
	 * recording (between windows): (start, end) pairs, in time order.
	 * Nothing of the program's CUDA calls or of its kernel evidence is
	 * there, so the analysis leaves them out (phases.h: "not recorded"). */
	uint64_t *paused; size_t npaused;
	uint64_t paused_ns;
	uint64_t paused_in_ns;  /* of it, inside the analysis window (what explain leaves out) */
};

/* Reads the windows; end is the trace's last evidence (an open window's end).
 * 0, or -1 with a one-line reason. */
int ia_capture_load(sqlite3 *db, uint64_t end, struct ia_capture *c, char *err, size_t errlen);

void ia_capture_free(struct ia_capture *c);

/* Time of [a, b) between windows (c->paused). */
uint64_t ia_capture_paused_in(const struct ia_capture *c, uint64_t a, uint64_t b);

/* One line for explain and stats (nothing when there were no windows);
 * times relative to t0. */
void ia_capture_print(FILE *f, const struct ia_capture *c, uint64_t t0);
/* "capture": {windows, recorded_ns, first_rel_ns, last_rel_ns, open, applied}
 * into obj (nothing when there were no windows). */
void ia_capture_json(cJSON *obj, const struct ia_capture *c, uint64_t t0);

#endif
