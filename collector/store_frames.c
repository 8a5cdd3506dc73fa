/*
 * store_frames.c — a stack written with its frames stored once (schema
 * version 8, docs/schema.md "stacks"): each distinct frame is one row of
 * frames, and a stack is one row of stacks whose columns kernel, native
 * and python list its frames' ids, innermost first, as JSON arrays.
 *
 * On real traces a few thousand frames make up hundreds of thousands of
 * stack frames (c07 of the corpus: 14,719 distinct of 533,704), and a row
 * per frame of every stack was 75-88 % of the file (docs/benchmarks.md).
 *
 * The writer thread keeps every frame it wrote to this database in
 * memory: an array whose index + 1 is the frame's id, and a map from a
 * hash of the frame's columns to the latest frame with that hash (a frame
 * links to an earlier one of the same hash, so a collision costs a
 * comparison, never a wrong id).  The set belongs to one struct store,
 * which is one database from store_open to store_close: the ids it gives
 * are valid in that file only, and nothing else writes frames into it.
 * The --max-size cap never deletes frames or stacks (store_cap.c), and a
 * transaction that fails stops recording for good (store_fail.c), so a
 * frame the set knows is never missing from the file a stack refers to.
 */
#include "ingero/fnv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* A frame's columns as stored: NULL ip and offset when the ip is unknown
 * (python frames), NULL line when negative (none). */
struct stored_frame {
	uint64_t hash;
	uint32_t same_hash;   /* index + 1 of an earlier frame with this hash; 0: none */
	int kind;
	uint64_t ip, offset;
	int64_t line;
	char *symbol, *module, *file;
};

static const char *const kinds[STORE_FRAME_KINDS] = { "kernel", "native", "python" };

/* Its column of stacks (0 kernel, 1 native, 2 python), or -1: a kind the
 * schema has no list for (none is made: store.h). */
static int kind_index(const char *kind)
{
	for (int k = 0; k < STORE_FRAME_KINDS; k++)
		if (kind && !strcmp(kind, kinds[k]))
			return k;
	return -1;
}


static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? ingero_fnv(ingero_fnv(h, "s", 1), s, strlen(s) + 1) : ingero_fnv(h, "n", 1);
}

/* r as it is stored (the NULL conventions above), hash included. */
static struct stored_frame normalized(const struct frame_row *r, int kind)
{
	struct stored_frame f = { .kind = kind, .ip = r->ip, .offset = r->ip ? r->offset : 0,
				  .line = r->line >= 0 ? r->line : -1,
				  .symbol = (char *)r->symbol, .module = (char *)r->module, .file = (char *)r->file };
	uint64_t h = INGERO_FNV_SEED;

	h = ingero_fnv(h, &f.kind, sizeof f.kind);
	h = ingero_fnv(h, &f.ip, sizeof f.ip);
	h = ingero_fnv(h, &f.offset, sizeof f.offset);
	h = ingero_fnv(h, &f.line, sizeof f.line);
	h = fnv_str(h, f.symbol);
	h = fnv_str(h, f.module);
	f.hash = fnv_str(h, f.file);
	return f;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_frame(const struct stored_frame *a, const struct stored_frame *b)
{
	return a->hash == b->hash && a->kind == b->kind && a->ip == b->ip && a->offset == b->offset &&
	       a->line == b->line && same_str(a->symbol, b->symbol) && same_str(a->module, b->module) &&
	       same_str(a->file, b->file);
}

static char *dup_or_null(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		abort();   /* as vec_push: the writer cannot go on without memory */
	return d;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* One row of frames. */
static void write_frame(struct store *s, const struct stored_frame *f, int64_t id)
{
	sqlite3_stmt *st = s->st[ST_FRAME];

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, kinds[f->kind], -1, SQLITE_STATIC);
	if (f->ip) {
		sqlite3_bind_int64(st, 3, (int64_t)f->ip);
		sqlite3_bind_int64(st, 6, (int64_t)f->offset);
	} else {
		sqlite3_bind_null(st, 3);
		sqlite3_bind_null(st, 6);
	}
	bind_text_or_null(st, 4, f->symbol);
	bind_text_or_null(st, 5, f->module);
	bind_text_or_null(st, 7, f->file);
	if (f->line >= 0)
		sqlite3_bind_int64(st, 8, f->line);
	else
		sqlite3_bind_null(st, 8);
	store_step(s, st);
}

/* The id of r's frame in this database, its row written when new. */
static int64_t frame_id(struct store *s, const struct frame_row *r, int kind)
{
	struct frame_set *fs = &s->frames;
	struct stored_frame f = normalized(r, kind);
	uint32_t head = (uint32_t)(uintptr_t)ingero_map_get(&fs->by_hash, f.hash);

	for (uint32_t i = head; i; i = fs->f[i - 1].same_hash)
		if (same_frame(&fs->f[i - 1], &f))
			return i;
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 1024;
		struct stored_frame *p = realloc(fs->f, cap * sizeof *p);

		if (!p || cap > UINT32_MAX)
			abort();
		fs->f = p;
		fs->cap = cap;
	}
	f.same_hash = head;
	f.symbol = dup_or_null(f.symbol);
	f.module = dup_or_null(f.module);
	f.file = dup_or_null(f.file);
	fs->f[fs->n++] = f;
	if (ingero_map_put(&fs->by_hash, f.hash, (void *)(uintptr_t)fs->n))
		abort();
	write_frame(s, &fs->f[fs->n - 1], (int64_t)fs->n);
	return (int64_t)fs->n;
}

/* Room for n more bytes in a kind's list. */
static char *list_room(struct frame_set *fs, int kind, size_t len, size_t n)
{
	if (len + n > fs->list_cap[kind]) {
		size_t cap = fs->list_cap[kind] ? fs->list_cap[kind] : 256;
		char *p;

		while (cap < len + n)
			cap *= 2;
		if (!(p = realloc(fs->list[kind], cap)))
			abort();
		fs->list[kind] = p;
		fs->list_cap[kind] = cap;
	}
	return fs->list[kind] + len;
}

/* The stack's lists: each kind's frame ids at their depths ("[3,4,9]"; a
 * depth no frame has is null, a second frame at a depth is left out, as
 * the old table's primary key left it out); len[kind] 0 when it has none.
 * Depths past STORE_MAX_DEPTH are left out (the callers' are below 300). */
static void make_lists(struct store *s, const struct frame_row *f, size_t n, size_t *len)
{
	struct frame_set *fs = &s->frames;
	int64_t *at = fs->at;   /* 0: no frame at that depth (ids start at 1) */

	for (int k = 0; k < STORE_FRAME_KINDS; k++) {
		uint32_t depths = 0;

		for (size_t j = 0; j < n; j++)
			if (kind_index(f[j].kind) == k && f[j].depth < STORE_MAX_DEPTH && f[j].depth >= depths)
				depths = f[j].depth + 1;
		len[k] = 0;
		if (!depths)
			continue;
		memset(at, 0, depths * sizeof *at);
		for (size_t j = 0; j < n; j++)
			if (kind_index(f[j].kind) == k && f[j].depth < depths && !at[f[j].depth])
				at[f[j].depth] = frame_id(s, &f[j], k);
		for (uint32_t d = 0; d < depths; d++) {
			char *p = list_room(fs, k, len[k], 24);

			len[k] += at[d] ? (size_t)sprintf(p, "%c%lld", d ? ',' : '[', (long long)at[d])
					: (size_t)sprintf(p, "%cnull", d ? ',' : '[');
		}
		*list_room(fs, k, len[k], 1) = ']';
		len[k]++;
	}
}

void store_write_stack(struct store *s, const struct q_stack *k, const struct frame_row *f)
{
	sqlite3_stmt *st = s->st[ST_STACK];
	size_t len[STORE_FRAME_KINDS];

	make_lists(s, f, k->n, len);
	sqlite3_bind_int64(st, 1, k->id);
	sqlite3_bind_int64(st, 2, k->pid);
	for (int i = 0; i < STORE_FRAME_KINDS; i++) {
		if (len[i])
			sqlite3_bind_text(st, 3 + i, s->frames.list[i], (int)len[i], SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 3 + i);
	}
	store_step(s, st);
}

void store_frames_free(struct frame_set *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->f[i].symbol);
		free(fs->f[i].module);
		free(fs->f[i].file);
	}
	free(fs->f);
	for (int k = 0; k < STORE_FRAME_KINDS; k++)
		free(fs->list[k]);
	ingero_map_free(&fs->by_hash);
	*fs = (struct frame_set){ 0 };
}
