/*
 * stack_walk.c — sampled stacks as frame lists (stack_walk.h).
 *
 * One grouped query gives each (thread, stack) its weight; each distinct
 * stack's frames are read once (frames.h, by the stack's id) and
 * kept as strings while the rows of that window are handed out.
 */
#include "load/stack_walk.h"

#include "base/util.h"
#include "load/db.h"
#include "load/frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 256

struct frames {
	char **f;
	size_t n;
};

static void frames_free(struct frames *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->f[i]);
	free(x->f);
	x->f = NULL;
	x->n = 0;
}

static int push(struct frames *x, char *s)
{
	if (!s)
		return -1;
	if (x->n >= MAX_FRAMES) {   /* deeper than any flame graph shows: the rest left out */
		free(s);
		return 0;
	}
	char **p = realloc(x->f, (x->n + 1) * sizeof *p);
	if (!p) {
		free(s);
		return -1;
	}
	x->f = p;
	x->f[x->n++] = s;
	return 0;
}

static char *fmt(const char *a, const char *b, long line)
{
	char *s = NULL;
	if (b && line > 0)
		return asprintf(&s, "%s (%s:%ld)", a, b, line) < 0 ? NULL : s;
	if (b)
		return asprintf(&s, "%s (%s)", a, b) < 0 ? NULL : s;
	return strdup(a);
}

/* A stack's frames, outermost first (stack_walk.h). */
static int read_frames(struct ia_frames *q, uint64_t id, struct frames *out, char *err, size_t errlen)
{
	struct { char *s; int depth; } py[MAX_FRAMES], nat[MAX_FRAMES], ker[MAX_FRAMES];
	size_t npy = 0, nnat = 0, nker = 0;
	int interp = -1;   /* depth of the innermost CPython frame among the native ones */
	struct ia_frame f;
	ia_frames_start(q, id);
	int rc, bad = 0;
	while ((rc = ia_frames_next(q, &f, err, errlen)) > 0) {
		int depth = f.depth;
		const char *sym = f.symbol, *mod = f.module;
		long line = f.has_line ? (int)f.line : -1;
		if (f.kind == IA_FRAME_PYTHON && npy < MAX_FRAMES) {
			py[npy].depth = depth;
			bad |= !(py[npy++].s = fmt(sym ? sym : "?", f.file, line));
		} else if (f.kind == IA_FRAME_NATIVE && nnat < MAX_FRAMES) {
			if (ia_module_is_cpython(mod) && (interp < 0 || depth < interp))
				interp = depth;
			nat[nnat].depth = depth;
			const char *base = mod ? strrchr(mod, '/') : NULL;
			bad |= !(nat[nnat++].s = sym ? strdup(sym) : fmt("??", base ? base + 1 : mod, -1));
		} else if (f.kind == IA_FRAME_KERNEL && nker < MAX_FRAMES) {
			char *k = NULL;
			if (asprintf(&k, "[k] %s", sym ? sym : "?") < 0) {
				k = NULL;
				bad = 1;
			}
			ker[nker].depth = depth;
			ker[nker++].s = k;
		}
	}
	int failed = rc < 0;
	/* frames come by kind, then depth (0 innermost): outermost first is the reverse */
	for (size_t i = npy; i-- > 0 && !bad && !failed;) {
		bad |= push(out, py[i].s) < 0;
		py[i].s = NULL;
	}
	for (size_t i = nnat; i-- > 0 && !bad && !failed;) {
		if (npy && interp >= 0 && nat[i].depth >= interp)
			continue;   /* the interpreter and what called it: the Python frames say it */
		bad |= push(out, nat[i].s) < 0;
		nat[i].s = NULL;
	}
	for (size_t i = nker; i-- > 0 && !bad && !failed;) {
		bad |= push(out, ker[i].s) < 0;
		ker[i].s = NULL;
	}
	for (size_t i = 0; i < npy; i++)
		free(py[i].s);
	for (size_t i = 0; i < nnat; i++)
		free(nat[i].s);
	for (size_t i = 0; i < nker; i++)
		free(ker[i].s);
	if (bad && !failed)
		snprintf(err, errlen, "out of memory");
	return bad || failed ? -1 : 0;
}

double ia_sample_hz(const struct ia_trace *t)
{
	const char *hz = ia_session(t, "sample_hz");
	return hz ? strtod(hz, NULL) : 0;
}

int ia_stack_walk(const struct ia_trace *t, int offcpu, ia_stack_row_fn fn, void *ctx, char *err, size_t errlen)
{
	static const char *const on_sql =
		"SELECT pid, tid, stack_id, count(*) FROM cpu_samples WHERE ts_ns >= ?1 AND ts_ns < ?2 "
		"AND stack_id IS NOT NULL GROUP BY tid, stack_id ORDER BY tid, stack_id";
	static const char *const off_sql =
		"SELECT s.pid, s.tid, s.stack_id, sum((o.runnable_ns - o.start_ns) / s.chance) FROM off_cpu_stacks s "
		"JOIN off_cpu o ON o.tid = s.tid AND o.start_ns = s.start_ns WHERE s.start_ns >= ?1 AND s.start_ns < ?2 "
		"AND s.stack_id IS NOT NULL GROUP BY s.tid, s.stack_id ORDER BY s.tid, s.stack_id";
	if (!ia_db_has_table(t->db, offcpu ? "off_cpu_stacks" : "cpu_samples"))
		return 0;   /* an older file, or a trace without them: no stacks */
	sqlite3_stmt *st = ia_db_prepare(t->db, offcpu ? off_sql : on_sql, err, errlen);
	struct ia_frames *q = st ? ia_frames_new(t->db, err, errlen) : NULL;
	if (!st || !q) {
		sqlite3_finalize(st);
		return -1;
	}
	uint64_t to = t->to && t->to < (UINT64_MAX >> 1) ? t->to : UINT64_MAX >> 1;   /* open: no end */
	sqlite3_bind_int64(st, 1, (sqlite3_int64)(t->from < to ? t->from : 0));
	sqlite3_bind_int64(st, 2, (sqlite3_int64)to);
	int rc, out = 0;
	while (!out && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 1);
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 2);
		double w = sqlite3_column_double(st, 3);
		int pi = ia_proc_index(t, pid), ti = ia_thread_index(t, tid);
		if (pi < 0 || !t->procs[pi].selected || (ti >= 0 && ia_thread_is_tracer(&t->threads[ti])))
			continue;
		struct frames fr = { 0 };
		if (read_frames(q, id, &fr, err, errlen) < 0) {
			frames_free(&fr);
			out = -1;
			break;
		}
		const char *proc = t->procs[pi].comm[0] ? t->procs[pi].comm : "?";
		struct ia_stack_row r = { pid, tid, ti >= 0 && t->threads[ti].comm[0] ? t->threads[ti].comm : proc, proc,
					  (const char *const *)fr.f, fr.n, w };
		if (fr.n)
			out = fn(&r, ctx);
		frames_free(&fr);
	}
	if (!out && ia_db_done(st, rc, err, errlen) < 0)
		out = -1;
	sqlite3_finalize(st);
	ia_frames_free(q);
	return out;
}
