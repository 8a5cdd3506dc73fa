/*
 * frames.c — a stack's frames from either layout (frames.h).
 *
 * Rows (versions 1 to 7): one statement over stack_frames by its primary
 * key (stack_id, kind, depth), which gives them in the order wanted.
 * Lists (version 8): the stack's row gives three JSON lists (read with
 * cJSON: ids are integers, a null keeps a depth without a frame), then
 * each frame by its id from a cache of the frames this reader has met,
 * filled by lookups of the integer primary key.  A frame id that names no
 * row is left out, as the view's join leaves it out.  The cache holds
 * each distinct frame once (c07 of the corpus: 14,719 for 533,704 frames
 * of 5,332 stacks): a lookup per frame instead made explain's reading of
 * stacks slower than the old rows, now it is faster (docs/benchmarks.md,
 * "Trace size").  The cache is filled by one scan of the table the first
 * time a frame is wanted — most of a trace's frames are (its stacks are
 * its samples' and its calls'), and a scan costs a fraction of a lookup a
 * row; where the scan meets an error, the frames it did not reach are
 * looked up one by one again, so a damaged page costs only its frames.
 */
#include "load/frames.h"

#include "base/util.h"
#include "load/db.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct frame_ref {
	int64_t id;
	int kind, depth;
};

/* A row of frames as read (absent: the id names none). */
struct known_frame {
	char *symbol, *module, *file;
	int64_t ip, offset, line;
	int has_line, absent;
};

struct ia_frames {
	sqlite3_stmt *rows;    /* versions 1 to 7 */
	sqlite3_stmt *lists;   /* version 8: a stack's lists ... */
	sqlite3_stmt *frame;   /* ... and one frame by id */
	sqlite3_stmt *all;     /* ... or every frame, once (the first frame wanted) */
	int scanned;           /* 0: not yet, 1: every frame known, -1: the scan failed */
	struct frame_ref *refs;
	size_t nrefs, cap, next;
	struct ia_map by_id;   /* frame id -> known index */
	struct known_frame *known;
	size_t nknown, known_cap;
	int rc;                /* an SQLite error met by ia_frames_start */
	int bad_kind;          /* a list that is not one (a kind), or -1 */
	uint64_t stack_id;
};

static const char *const kind_names[] = { "kernel", "native", "python" };

static enum ia_frame_kind kind_of(const char *s)
{
	for (int k = 0; k < IA_FRAME_OTHER; k++)
		if (s && !strcmp(s, kind_names[k]))
			return (enum ia_frame_kind)k;
	return IA_FRAME_OTHER;
}

/* Version 8 has a table of frames; older files a table of rows (in
 * version 8, stack_frames is a view). */
enum layout { LAYOUT_NONE, LAYOUT_ROWS, LAYOUT_LISTS };

static int layout_of(sqlite3 *db)
{
	int rows = ia_db_has_table(db, "stack_frames");
	if (rows)
		return rows < 0 ? -1 : LAYOUT_ROWS;
	int lists = ia_db_has_table(db, "frames");
	return lists < 0 ? -1 : lists ? LAYOUT_LISTS : LAYOUT_NONE;
}

int ia_frames_exist(sqlite3 *db)
{
	int l = layout_of(db);
	return l < 0 ? -1 : l != LAYOUT_NONE;
}

struct ia_frames *ia_frames_new(sqlite3 *db, char *err, size_t errlen)
{
	int l = layout_of(db);
	if (l <= LAYOUT_NONE) {
		if (l < 0)
			ia_db_step_error(db, sqlite3_errcode(db), err, errlen);
		else
			snprintf(err, errlen, "%s: no stack frames in this file", ia_db_path());
		return NULL;
	}
	struct ia_frames *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->bad_kind = -1;
	if (l == LAYOUT_ROWS)
		r->rows = ia_db_prepare(db, "SELECT kind, depth, ip, symbol, module, offset, file, line FROM stack_frames "
					"WHERE stack_id = ?1 ORDER BY kind, depth", err, errlen);
	else if ((r->lists = ia_db_prepare(db, "SELECT kernel, native, python FROM stacks WHERE id = ?1", err, errlen)) &&
		 (r->frame = ia_db_prepare(db, "SELECT ip, symbol, module, offset, file, line FROM frames WHERE id = ?1",
					  err, errlen)))
		r->all = ia_db_prepare(db, "SELECT ip, symbol, module, offset, file, line, id FROM frames", err, errlen);
	if (!r->rows && !r->all) {
		ia_frames_free(r);
		return NULL;
	}
	return r;
}

void ia_frames_free(struct ia_frames *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->rows);
	sqlite3_finalize(r->lists);
	sqlite3_finalize(r->frame);
	sqlite3_finalize(r->all);
	free(r->refs);
	for (size_t i = 0; i < r->nknown; i++) {
		free(r->known[i].symbol);
		free(r->known[i].module);
		free(r->known[i].file);
	}
	free(r->known);
	ia_map_free(&r->by_id);
	free(r);
}

/* One kind's list: its ids, at their depths; -1 when it is not a list,
 * -2 when memory ran out. */
static int add_list(struct ia_frames *r, int kind, const char *text, int len)
{
	if (!text)
		return 0;   /* no frames of that kind */
	cJSON *a = cJSON_ParseWithLength(text, (size_t)len);
	int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
	if (n < 0 || ia_grow((void **)&r->refs, &r->cap, r->nrefs + (size_t)n, sizeof *r->refs) < 0) {
		cJSON_Delete(a);
		return n < 0 ? -1 : -2;
	}
	int depth = 0;
	for (cJSON *e = a->child; e; e = e->next, depth++) {
		double v = cJSON_IsNumber(e) ? e->valuedouble : NAN;
		if (v >= 1 && v < 9007199254740992.0 && v == floor(v))   /* else no frame at that depth */
			r->refs[r->nrefs++] = (struct frame_ref){ (int64_t)v, kind, depth };
	}
	cJSON_Delete(a);
	return 0;
}

void ia_frames_start(struct ia_frames *r, uint64_t stack_id)
{
	r->stack_id = stack_id;
	r->rc = SQLITE_OK;
	r->bad_kind = -1;
	r->nrefs = r->next = 0;
	sqlite3_stmt *q = r->rows ? r->rows : r->lists;
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, (sqlite3_int64)stack_id);
	if (r->rows)
		return;   /* stepped by ia_frames_next */
	int rc = sqlite3_step(q), bad = 0;
	for (int k = 0; rc == SQLITE_ROW && !bad && k < IA_FRAME_OTHER; k++)
		if ((bad = add_list(r, k, (const char *)sqlite3_column_text(q, k), sqlite3_column_bytes(q, k))) == -1)
			r->bad_kind = k;
	if (bad == -2)
		rc = SQLITE_NOMEM;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		r->rc = rc;
	sqlite3_reset(q);
}

static void fill(struct ia_frame *f, sqlite3_stmt *q, int c)
{
	f->ip = sqlite3_column_int64(q, c);
	f->symbol = (const char *)sqlite3_column_text(q, c + 1);
	f->module = (const char *)sqlite3_column_text(q, c + 2);
	f->offset = sqlite3_column_int64(q, c + 3);
	f->file = (const char *)sqlite3_column_text(q, c + 4);
	f->has_line = sqlite3_column_type(q, c + 5) != SQLITE_NULL;
	f->line = sqlite3_column_int64(q, c + 5);
}

static int next_row(struct ia_frames *r, struct ia_frame *f, char *err, size_t errlen)
{
	int rc = sqlite3_step(r->rows);
	if (rc == SQLITE_ROW) {
		f->kind = kind_of((const char *)sqlite3_column_text(r->rows, 0));
		f->depth = sqlite3_column_int(r->rows, 1);
		fill(f, r->rows, 2);
		f->key = UINT32_MAX;   /* (rows are not kept: no key) */
		return 1;
	}
	return ia_db_done(r->rows, rc, err, errlen) < 0 ? -1 : 0;
}

static char *dup_or_null(const unsigned char *s, int *oom)
{
	char *d = s ? strdup((const char *)s) : NULL;
	*oom |= s && !d;
	return d;
}

/* The row q is on (ip, symbol, module, offset, file, line) as frame id of
 * the cache: its index, or -1 with err (out of memory). */
static long keep_frame(struct ia_frames *r, sqlite3_stmt *q, int64_t id, int absent, char *err, size_t errlen)
{
	if (ia_grow((void **)&r->known, &r->known_cap, r->nknown + 1, sizeof *r->known) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct known_frame *k = &r->known[r->nknown];
	memset(k, 0, sizeof *k);
	int oom = 0;
	if (absent) {
		k->absent = 1;   /* an id without a frame: none at that depth */
	} else {
		k->ip = sqlite3_column_int64(q, 0);
		k->symbol = dup_or_null(sqlite3_column_text(q, 1), &oom);
		k->module = dup_or_null(sqlite3_column_text(q, 2), &oom);
		k->offset = sqlite3_column_int64(q, 3);
		k->file = dup_or_null(sqlite3_column_text(q, 4), &oom);
		k->has_line = sqlite3_column_type(q, 5) != SQLITE_NULL;
		k->line = sqlite3_column_int64(q, 5);
	}
	if (oom || ia_map_put(&r->by_id, (uint64_t)id, (uint32_t)r->nknown) < 0) {
		free(k->symbol);
		free(k->module);
		free(k->file);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return (long)r->nknown++;
}

/* Every frame into the cache, in one scan: 0, or -1 with err (out of
 * memory).  A read error leaves r->scanned -1: what was read is kept, the
 * rest is looked up by id. */
static int scan_frames(struct ia_frames *r, char *err, size_t errlen)
{
	sqlite3_stmt *q = r->all;
	int rc;
	r->scanned = -1;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, 6);
		if (ia_map_get(&r->by_id, (uint64_t)id) != UINT32_MAX)
			continue;
		if (keep_frame(r, q, id, 0, err, errlen) < 0) {
			sqlite3_reset(q);
			return -1;
		}
	}
	sqlite3_reset(q);
	if (rc == SQLITE_DONE)
		r->scanned = 1;
	return 0;
}

/* Frame id from the file into the cache: its index, or -1 with err. */
static long read_frame(struct ia_frames *r, int64_t id, char *err, size_t errlen)
{
	if (!r->scanned) {
		if (scan_frames(r, err, errlen) < 0)
			return -1;
		uint32_t i = ia_map_get(&r->by_id, (uint64_t)id);
		if (i != UINT32_MAX)
			return (long)i;
	}
	if (r->scanned > 0)   /* every frame is known: an id without a row */
		return keep_frame(r, NULL, id, 1, err, errlen);
	sqlite3_stmt *q = r->frame;
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, id);
	int rc = sqlite3_step(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		ia_db_done(q, rc, err, errlen);
		return -1;
	}
	long at = keep_frame(r, q, id, rc == SQLITE_DONE, err, errlen);
	sqlite3_reset(q);
	return at;
}

static int next_listed(struct ia_frames *r, struct ia_frame *f, char *err, size_t errlen)
{
	if (r->rc) {
		ia_db_step_error(sqlite3_db_handle(r->lists), r->rc, err, errlen);
		return -1;
	}
	if (r->bad_kind >= 0) {
		ia_db_corrupt(err, errlen, "stacks.%s of stack %lld is not a list of frame ids",
			      kind_names[r->bad_kind], (long long)r->stack_id);
		return -1;
	}
	while (r->next < r->nrefs) {
		const struct frame_ref *x = &r->refs[r->next++];
		uint32_t i = ia_map_get(&r->by_id, (uint64_t)x->id);
		long at = i != UINT32_MAX ? (long)i : read_frame(r, x->id, err, errlen);
		if (at < 0)
			return -1;
		const struct known_frame *k = &r->known[at];
		if (k->absent)
			continue;
		*f = (struct ia_frame){ (enum ia_frame_kind)x->kind, x->depth, k->symbol, k->module, k->file,
					k->ip, k->offset, k->line, k->has_line, (uint32_t)at };
		return 1;
	}
	return 0;
}

int ia_frames_next(struct ia_frames *r, struct ia_frame *f, char *err, size_t errlen)
{
	return r->rows ? next_row(r, f, err, errlen) : next_listed(r, f, err, errlen);
}

int ia_frames_pid_has_python(sqlite3 *db, int pid)
{
	int l = layout_of(db);
	sqlite3_stmt *st;
	const char *sql = l == LAYOUT_ROWS ?
		"SELECT 1 FROM stacks s JOIN stack_frames f ON f.stack_id = s.id "
		"WHERE s.pid = ?1 AND f.kind = 'python' LIMIT 1" :
		"SELECT 1 FROM stacks s, json_each(s.python) j JOIN frames f ON f.id = j.value "
		"WHERE s.pid = ?1 LIMIT 1";
	if (l <= LAYOUT_NONE || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int(st, 1, pid);
	int yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

const char *ia_module_base(const char *module)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	return base ? base + 1 : module;
}

int ia_module_is_cpython(const char *module)
{
	const char *base = ia_module_base(module);
	return base && (!strncmp(base, "libpython", 9) || !strncmp(base, "python", 6));
}
