/*
 * stacks_out.c — sampled stacks as folded lines or a speedscope file
 * (stacks_out.h).
 *
 * Folded lines stream as the rows come.  A speedscope file shares one
 * frame table between its profiles: frames are interned through a map
 * from the name's 64-bit hash (a collision only adds a frame), and a
 * thread's samples are gathered until the rows move to the next thread
 * (they come in tid order), then written as one profile.
 */
#include "render/stacks_out.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/stack_walk.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ',' : *s == '\n' ? ' ' : *s, f);
}

struct folded {
	FILE *f;
	int offcpu;
	size_t rows;
};

static int folded_row(const struct ia_stack_row *r, void *ctx)
{
	struct folded *x = ctx;
	double v = x->offcpu ? r->weight / 1e3 : r->weight;
	if (v < 0.5)
		return 0;   /* under a microsecond blocked: nothing a flame graph shows */
	fprintf(x->f, "%s %d;", r->process, r->pid);
	folded_name(x->f, r->thread);
	fprintf(x->f, " %u", r->tid);
	for (size_t i = 0; i < r->nframes; i++) {
		fputc(';', x->f);
		folded_name(x->f, r->frames[i]);
	}
	fprintf(x->f, " %.0f\n", v);
	x->rows++;
	return 0;
}

struct scope {
	cJSON *frames, *profiles, *cur;    /* cur: the thread's profile being filled */
	cJSON *samples, *weights;
	struct ia_map map;                 /* name hash -> frame index */
	size_t nframes;
	uint32_t tid;
	double total, unit_ns;             /* unit_ns: ns a weight unit is (on-CPU: the sampling period) */
	int offcpu, oom;
	size_t rows;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int frame_index(struct scope *x, const char *name)
{
	uint64_t h = hash(name);
	uint32_t i = ia_map_get(&x->map, h);
	if (i != UINT32_MAX)
		return (int)i;
	cJSON *fr = cJSON_CreateObject();
	cJSON_AddStringToObject(fr, "name", name);
	cJSON_AddItemToArray(x->frames, fr);
	if (ia_map_put(&x->map, h, (uint32_t)x->nframes) < 0)
		x->oom = 1;
	return (int)x->nframes++;
}

static void profile_end(struct scope *x)
{
	if (!x->cur)
		return;
	ia_json_round(x->cur, "endValue", x->total, 0);
	cJSON_AddItemToArray(x->profiles, x->cur);
	x->cur = NULL;
}

static int scope_row(const struct ia_stack_row *r, void *ctx)
{
	struct scope *x = ctx;
	if (!x->cur || r->tid != x->tid) {
		profile_end(x);
		char name[160];
		snprintf(name, sizeof name, "%s %d, thread %s %u: %s", r->process, r->pid, r->thread, r->tid,
			 x->offcpu ? "off-CPU (where it blocked)" : "on-CPU");
		x->cur = cJSON_CreateObject();
		cJSON_AddStringToObject(x->cur, "type", "sampled");
		cJSON_AddStringToObject(x->cur, "name", name);
		cJSON_AddStringToObject(x->cur, "unit", x->unit_ns > 0 ? "nanoseconds" : "none");
		cJSON_AddNumberToObject(x->cur, "startValue", 0);
		x->samples = cJSON_AddArrayToObject(x->cur, "samples");
		x->weights = cJSON_AddArrayToObject(x->cur, "weights");
		x->tid = r->tid;
		x->total = 0;
	}
	cJSON *s = cJSON_CreateArray();
	for (size_t i = 0; i < r->nframes; i++)
		cJSON_AddItemToArray(s, cJSON_CreateNumber(frame_index(x, r->frames[i])));
	double w = x->unit_ns > 0 ? round(r->weight * x->unit_ns) : r->weight;
	cJSON_AddItemToArray(x->samples, s);
	cJSON_AddItemToArray(x->weights, cJSON_CreateNumber(w));
	x->total += w;
	x->rows++;
	return x->oom ? -1 : 0;
}

int ia_stacks_write(FILE *f, const struct ia_trace *t, int offcpu, enum ia_stacks_format fmt, size_t *rows, char *err,
		    size_t errlen)
{
	if (fmt == IA_STACKS_FOLDED) {
		struct folded x = { f, offcpu, 0 };
		int rc = ia_stack_walk(t, offcpu, folded_row, &x, err, errlen);
		*rows = x.rows;
		return rc;
	}
	struct scope x = { 0 };
	x.offcpu = offcpu;
	double hz = ia_sample_hz(t);
	x.unit_ns = offcpu ? 1 : hz > 0 ? 1e9 / hz : 0;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "$schema", "https://www.speedscope.app/file-format-schema.json");
	cJSON_AddStringToObject(root, "exporter", "ingero-analyze");
	cJSON_AddStringToObject(root, "name", t->command ? t->command : "ingero trace");
	x.frames = cJSON_AddArrayToObject(cJSON_AddObjectToObject(root, "shared"), "frames");
	x.profiles = cJSON_AddArrayToObject(root, "profiles");
	int rc = ia_stack_walk(t, offcpu, scope_row, &x, err, errlen);
	profile_end(&x);
	if (x.oom) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	cJSON_AddNumberToObject(root, "activeProfileIndex", 0);
	*rows = x.rows;
	if (rc == 0 && ia_json_print(root, f, 0) < 0) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	cJSON_Delete(root);
	ia_map_free(&x.map);
	return rc;
}
