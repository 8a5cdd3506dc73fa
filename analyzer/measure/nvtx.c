/*
 * nvtx.c — the main process's NVTX ranges against the GPU's idle time
 * (nvtx.h).  One query read once: each range's name (emit_nvtx's call
 * numbers cut off) and time, then sorted by name and length, so a name's
 * median is its middle one; the gaps' time inside a range is a difference
 * of the gaps' cumulative time (merged and sorted first: a relay's gaps are
 * read on several threads).
 */
#include "measure/nvtx.h"
#include "load/db.h"
#include "base/json_out.h"

#include <ingero/u64map.h>

#include <stdlib.h>
#include <string.h>

struct idle_line {
	uint64_t *start, *end, *before;   /* merged gaps by start; idle time before each */
	size_t n;
};

static int cmp_u64_pair(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static void idle_line_free(struct idle_line *l)
{
	free(l->start);
	free(l->end);
	free(l->before);
}

static int idle_line_make(const struct ia_gaps *g, struct idle_line *l)
{
	memset(l, 0, sizeof *l);
	if (!g->n)
		return 0;
	uint64_t *p = malloc(g->n * 2 * sizeof *p);
	l->start = malloc(g->n * sizeof *l->start);
	l->end = malloc(g->n * sizeof *l->end);
	l->before = malloc(g->n * sizeof *l->before);
	if (!p || !l->start || !l->end || !l->before) {
		free(p);
		idle_line_free(l);
		return -1;
	}
	for (size_t i = 0; i < g->n; i++)
		p[2 * i] = g->g[i].start, p[2 * i + 1] = g->g[i].end;
	qsort(p, g->n, 2 * sizeof *p, cmp_u64_pair);
	uint64_t sum = 0;
	for (size_t i = 0; i < g->n; i++) {
		uint64_t s = p[2 * i], e = p[2 * i + 1];
		if (e <= s)
			continue;
		if (l->n && s <= l->end[l->n - 1]) {
			if (e > l->end[l->n - 1]) {
				sum += e - l->end[l->n - 1];
				l->end[l->n - 1] = e;
			}
			continue;
		}
		l->start[l->n] = s;
		l->end[l->n] = e;
		l->before[l->n] = sum;
		sum += e - s;
		l->n++;
	}
	free(p);
	return 0;
}

/* The gaps' time before x. */
static uint64_t idle_before(const struct idle_line *l, uint64_t x)
{
	size_t lo = 0, hi = l->n;   /* the first gap starting after x */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->start[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	size_t i = lo - 1;
	return l->before[i] + ((x < l->end[i] ? x : l->end[i]) - l->start[i]);
}

static uint64_t idle_total(const struct idle_line *l)
{
	return l->n ? l->before[l->n - 1] + l->end[l->n - 1] - l->start[l->n - 1] : 0;
}

static int cmp_total(const void *x, const void *y)
{
	const struct ia_nvtx_name *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* One range: its name's index and its time. */
struct sample {
	uint32_t name, depth;
	uint64_t dur, idle;
};

static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->dur < b->dur ? -1 : a->dur > b->dur;
}

/* How much of a name is the range's kind: emit_nvtx() names each operator
 * "aten::mm, seq = 12, op_id = 29, sizes = [...]" — one name per call — so
 * what follows the operator's own name is left out. */
static size_t base_len(const char *name)
{
	static const char *const cut[] = { ", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = " };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
		const char *c = strstr(name, cut[i]);
		if (c && (size_t)(c - name) < n)
			n = (size_t)(c - name);
	}
	return n;
}

static uint64_t hash_name(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return ingero_mix64(h) | 1;
}

int ia_nvtx_compute(const struct ia_trace *t, int pid, const struct ia_gaps *g, struct ia_nvtx *out, char *err,
		    size_t errlen)
{
	memset(out, 0, sizeof *out);
	int has = ia_db_has_table(t->db, "nvtx_ranges");
	if (has <= 0) {
		if (has < 0)
			ia_db_step_error(t->db, SQLITE_ERROR, err, errlen);
		return has;
	}
	out->present = 1;
	struct idle_line l;
	if (idle_line_make(g, &l) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	out->idle_ns = idle_total(&l);
	sqlite3_stmt *st = ia_db_prepare(t->db,
					 "SELECT name, start_ns, end_ns, depth, kind = 'mark' FROM nvtx_ranges "
					 "WHERE pid = ?1 AND start_ns < ?3 AND end_ns >= ?2",
					 err, errlen);
	int rc = -1;
	struct u64map by_name = { 0 };
	struct sample *sm = NULL;
	size_t ns = 0, scap = 0, ncap = 0;
	if (!st)
		goto out;
	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 3, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 4)) {
			out->nmarks++;
			continue;
		}
		const char *name = (const char *)sqlite3_column_text(st, 0);
		uint64_t a = (uint64_t)sqlite3_column_int64(st, 1), b = (uint64_t)sqlite3_column_int64(st, 2);
		/* the window's part of it */
		if (a < t->from)
			a = t->from;
		if (b > t->to)
			b = t->to;
		if (!name)
			name = "";
		size_t len = base_len(name);
		uint64_t h = hash_name(name, len);
		size_t idx;
		/* another name under the same hash (64 bits: in theory) goes on to the next key */
		while ((idx = (size_t)(uintptr_t)ingero_map_get(&by_name, h)) &&
		       (strncmp(out->names[idx - 1].name, name, len) || out->names[idx - 1].name[len]))
			h = ingero_mix64(h + 1) | 1;
		if (!idx) {
			if (out->n == ncap) {
				size_t nc = ncap ? 2 * ncap : 16;
				void *p = realloc(out->names, nc * sizeof *out->names);
				if (!p)
					goto oom;
				out->names = p;
				ncap = nc;
			}
			struct ia_nvtx_name *x = &out->names[out->n];
			memset(x, 0, sizeof *x);
			if (!(x->name = strndup(name, len)))
				goto oom;
			out->n++;
			idx = out->n;
			if (ingero_map_put(&by_name, h, (void *)(uintptr_t)idx) < 0)
				goto oom;
		}
		if (ns == scap) {
			size_t nc = scap ? 2 * scap : 256;
			void *p = realloc(sm, nc * sizeof *sm);
			if (!p)
				goto oom;
			sm = p;
			scap = nc;
		}
		sm[ns++] = (struct sample){ (uint32_t)(idx - 1), (uint32_t)sqlite3_column_int64(st, 3), b > a ? b - a : 0,
					    b > a ? idle_before(&l, b) - idle_before(&l, a) : 0 };
	}
	rc = ia_db_done(st, rc, err, errlen);
	if (rc < 0)
		goto out;
	out->nranges = ns;
	if (ns)
		qsort(sm, ns, sizeof *sm, cmp_sample);
	for (size_t i = 0, first = 0; i < ns; i++) {
		struct ia_nvtx_name *x = &out->names[sm[i].name];
		if (!x->count || sm[i].depth < x->depth)
			x->depth = sm[i].depth;
		x->count++;
		x->total_ns += sm[i].dur;
		x->idle_ns += sm[i].idle;
		x->max_ns = sm[i].dur;   /* shortest first: the last is the longest */
		if (i + 1 == ns || sm[i + 1].name != sm[i].name) {
			x->p50_ns = sm[first + (i - first) / 2].dur;
			first = i + 1;
		}
	}
	if (out->n)
		qsort(out->names, out->n, sizeof *out->names, cmp_total);
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
	rc = -1;
out:
	sqlite3_finalize(st);
	free(sm);
	ingero_map_free(&by_name);
	idle_line_free(&l);
	return rc;
}

void ia_nvtx_free(struct ia_nvtx *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->names[i].name);
	free(n->names);
	memset(n, 0, sizeof *n);
}

const struct ia_nvtx_name *ia_nvtx_idle_home(const struct ia_nvtx *n)
{
	const struct ia_nvtx_name *best = NULL;
	for (size_t i = 0; i < n->n; i++) {
		const struct ia_nvtx_name *x = &n->names[i];
		if (n->idle_ns && 2 * x->idle_ns >= n->idle_ns && (!best || x->total_ns < best->total_ns))
			best = x;
	}
	return best;
}

cJSON *ia_nvtx_json(const struct ia_nvtx *n)
{
	if (!n->present)
		return NULL;
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "ranges");
	ia_json_u64(o, "count", n->nranges);
	ia_json_u64(o, "marks", n->nmarks);
	ia_json_u64(o, "gpu_idle_ns", n->idle_ns);
	const struct ia_nvtx_name *home = ia_nvtx_idle_home(n);
	if (home)
		ia_json_str(o, "idle_mostly_in", home->name);
	for (size_t i = 0; i < n->n; i++) {
		const struct ia_nvtx_name *x = &n->names[i];
		cJSON *r = cJSON_CreateObject();
		ia_json_str(r, "name", x->name);
		ia_json_u64(r, "count", x->count);
		ia_json_u64(r, "total_ns", x->total_ns);
		ia_json_u64(r, "p50_ns", x->p50_ns);
		ia_json_u64(r, "max_ns", x->max_ns);
		ia_json_u64(r, "depth", x->depth);
		ia_json_u64(r, "gpu_idle_ns", x->idle_ns);
		cJSON_AddItemToArray(arr, r);
	}
	return o;
}
