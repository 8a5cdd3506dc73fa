/*
 * nvtx.c — the main process's NVTX ranges against the GPU's idle time
 * (nvtx.h).  One query read once: each range's name (emit_nvtx's call
 * numbers cut off) and time, then sorted by name and length, so a name's
 * median is its middle one; the gaps' time inside a range is
 * ia_spans_within's (gpu_time.h) over the gaps merged.
 */
#include "measure/nvtx.h"
#include "load/db.h"
#include "base/json_out.h"

#include <ingero/fnv.h>
#include <ingero/u64map.h>

#include <stdlib.h>
#include <string.h>

/* The gaps as spans, sorted and merged (a relay's are read on several
 * threads), for ia_spans_within; *total their time.  NULL with n 0 when
 * there are none, or out of memory (-1 in *n then). */
static struct ia_span *idle_spans(const struct ia_gaps *g, size_t *n, uint64_t *total)
{
	*n = 0;
	*total = 0;
	if (!g->n)
		return NULL;
	struct ia_span *s = malloc(g->n * sizeof *s);
	if (!s) {
		*n = (size_t)-1;
		return NULL;
	}
	for (size_t i = 0; i < g->n; i++)
		s[i] = (struct ia_span){ g->g[i].start, g->g[i].end };
	*n = ia_spans_merge(s, g->n, 0, UINT64_MAX);
	for (size_t i = 0; i < *n; i++)
		*total += s[i].b - s[i].a;
	return s;
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
	return ingero_mix64(ingero_fnv(INGERO_FNV_SEED, s, n)) | 1;   /* (0 is no key) */
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
	size_t nidle;
	struct ia_span *idle = idle_spans(g, &nidle, &out->idle_ns);
	if (nidle == (size_t)-1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
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
					    b > a ? ia_spans_within(idle, nidle, a, b) : 0 };
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
	free(idle);
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
