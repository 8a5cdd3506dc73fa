/*
 * gpu_kernels.c — the estimate's GPU time by kernel, named (gpu_time.h):
 * where a GPU that is busy spends its time, so that a run that waits on
 * its own GPU work is told which kernels to make cheaper — or that copies
 * are what it does.
 *
 * The median replay (gpu_estimate.c) gives each launch, copy and memset a
 * span of GPU time, clipped to the completions the marks measured; they
 * are summed by kernel, or by kind of copy (ia_call.func) here, and named:
 * kernels from the trace's kernels table, whose addresses give the same
 * func (load/work_keys.h, ia_launch_func), copies and memsets by their direction and
 * host memory (ia_copy_func).
 */
#include "measure/gpu_time_internal.h"
#include "load/work_keys.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEADY_BIT (1ull << 63)

void ia_gt_mark_main(struct acc *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct stream_acc *s = &a->s[i], *best = s;
		for (size_t j = 0; j < a->n; j++) {
			const struct stream_acc *o = &a->s[j];
			if (o->pid != s->pid || !o->nsub)
				continue;
			if (o != s && s->nsub)
				a->several = 1;
			if (o->nsub > best->nsub || (o->nsub == best->nsub && o < best))
				best = (struct stream_acc *)o;
		}
		s->main = best == s && s->nsub;
	}
}

void ia_gt_kernel_add(struct acc *a, const struct stream_acc *s, uint32_t func, int launch, uint64_t ns, int steady)
{
	uint32_t i = ia_map_get(&a->kmap, func);
	if (i == UINT32_MAX) {
		if (ia_grow((void **)&a->kt, &a->ckt, a->nkt + 1, sizeof *a->kt) < 0 ||
		    ia_map_put(&a->kmap, func, (uint32_t)a->nkt) < 0) {
			a->oom = 1;
			return;
		}
		i = (uint32_t)a->nkt;
		a->kt[a->nkt++] = (struct kacc){ .func = func, .launch = launch };
	}
	unsigned on = ns ? (s->main ? IA_ON_MAIN : IA_ON_OTHER) : 0;   /* (a piece clipped away ran nowhere here) */
	a->kt[i].where |= on;
	if (ia_grow((void **)&a->kt[i].d, &a->kt[i].cd, a->kt[i].nd + 1, sizeof *a->kt[i].d) < 0) {
		a->oom = 1;
		return;
	}
	a->kt[i].d[a->kt[i].nd++] = ns | (steady ? STEADY_BIT : 0);
	a->kt[i].ns += ns;
	a->kt[i].n++;
	if (steady) {
		a->kt[i].steady_ns += ns;
		a->kt[i].steady_n++;
		a->kt[i].steady_where |= on;
	}
}

/* "_ZN2at6native29vectorized_elementwise_kernelILi4E…" → "at::native::
 * vectorized_elementwise_kernel": the nested name's parts, up to its
 * template arguments or end; what is not a mangled name, as it is. */
static void short_name(const char *m, char *out, size_t n)
{
	size_t o = 0;
	const char *p = NULL;
	if (strncmp(m, "_ZN", 3) == 0)
		p = m + 3;
	else if (strncmp(m, "_Z", 2) == 0 && m[2] >= '1' && m[2] <= '9')
		p = m + 2;
	while (p && *p >= '1' && *p <= '9') {
		char *end;
		unsigned long len = strtoul(p, &end, 10);
		if (len > strlen(end) || o + len + 3 > n)
			break;
		if (o) {
			memcpy(out + o, "::", 2);
			o += 2;
		}
		memcpy(out + o, end, len);
		o += len;
		p = end + len;
		if (m[1] == 'Z' && m[2] != 'N')
			break;   /* not nested: one part */
	}
	if (!o)
		snprintf(out, n, "%s", m);
	else
		out[o] = 0;
}

/* Launches of func timed alone, in any process: the samples the replay
 * stood its other launches on (each is filed under its function too). */
static uint64_t timed_alone(const struct acc *a, uint32_t func)
{
	uint64_t n = 0;
	for (size_t i = 0; i < a->nsmp; i++)
		n += a->smp[i].by_func == 1 && a->smp[i].key == func;
	return n;
}

/* "copies host to device (pinned)": a copy's or memset's func named by
 * trying every kind (ia_copy_func); its kind, IA_WORK_KERNEL when it is
 * none of them. */
static enum ia_work_kind copy_name(uint32_t func, char *out, size_t n)
{
	static const char *const dirs[] = {
		[INGERO_DIR_NONE] = "", [INGERO_DIR_HTOD] = " host to device", [INGERO_DIR_DTOH] = " device to host",
		[INGERO_DIR_DTOD] = " device to device", [INGERO_DIR_HTOH] = " host to host",
		[INGERO_DIR_DEFAULT] = " (direction by address)", [INGERO_DIR_PEER] = " peer to peer",
	};
	for (unsigned d = 0; d < sizeof dirs / sizeof *dirs; d++)
		for (int pinned = 0; pinned <= 1; pinned++) {
			if (ia_copy_func(INGERO_CLASS_MEMSET, d, pinned) == func) {
				snprintf(out, n, "memsets");
				return IA_WORK_MEMSET;
			}
			if (ia_copy_func(INGERO_CLASS_COPY, d, pinned) == func) {
				int host = d == INGERO_DIR_HTOD || d == INGERO_DIR_DTOH || d == INGERO_DIR_HTOH;
				snprintf(out, n, "copies%s%s", dirs[d], host ? (pinned ? " (pinned)" : " (pageable)") : "");
				return IA_WORK_COPY;
			}
		}
	return IA_WORK_KERNEL;
}

const char *ia_kernel_stream(const struct ia_gpu_time *g, const struct ia_kernel_time *kt)
{
	if (!g->several_streams || kt->where == IA_ON_MAIN || !kt->where)
		return "main";
	return kt->where == IA_ON_OTHER ? "other" : "several";
}

/* A launch's GPU time over the part its kernel's figures are of (the
 * steady state's pieces, or every piece): mean, p50, max. */
static void launch_times(struct kacc *k, int steady_only, struct ia_kernel_row *r)
{
	size_t n = 0;
	uint64_t sum = 0;
	for (size_t i = 0; i < k->nd; i++)
		if (!steady_only || (k->d[i] & STEADY_BIT)) {
			k->d[n] = k->d[i] & ~STEADY_BIT;
			sum += k->d[n++];
		}
	if (!n)
		return;
	r->mean_ns = sum / n;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++)
		if (k->d[i] > mx)
			mx = k->d[i];
	r->max_ns = mx;
	r->p50_ns = ia_percentile(k->d, n, 50);
}

static int most_time_first(const void *x, const void *y)
{
	const struct kacc *p = x, *q = y;
	return p->ns < q->ns ? 1 : p->ns > q->ns ? -1 : (p->func > q->func) - (p->func < q->func);
}

int ia_gt_kernels_name(const struct ia_trace *t, struct acc *a, struct ia_gpu_time *g)
{
	uint64_t steady = 0;
	for (size_t i = 0; i < a->nkt; i++)
		steady += a->kt[i].steady_ns;
	if (steady) {   /* the steady state's shares: the rest was one-time work's */
		g->kernels_steady = 1;
		for (size_t i = 0; i < a->nkt; i++) {
			a->kt[i].ns = a->kt[i].steady_ns;
			a->kt[i].n = a->kt[i].steady_n;
			a->kt[i].where = a->kt[i].steady_where;
		}
	}
	g->several_streams = a->several;
	for (size_t i = 0; i < a->nkt; i++)
		g->work_ns += a->kt[i].ns;
	if (!a->nkt || !g->work_ns || !t->db)
		return 0;
	qsort(a->kt, a->nkt, sizeof *a->kt, most_time_first);
	/* the names of every kernel with time: every process's definition of
	 * an address is the same kernel's (a library's code) */
	size_t want = a->nkt;
	g->all = calloc(want ? want : 1, sizeof *g->all);
	if (!g->all)
		return -1;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(t->db, "SELECT addr, name FROM kernels WHERE name IS NOT NULL AND name <> ''", -1,
			       &st, NULL) == SQLITE_OK) {
		struct ia_map at = { 0 };   /* func -> index into kt */
		for (size_t k = 0; k < want; k++)
			if (ia_map_put(&at, a->kt[k].func, (uint32_t)k) < 0) {
				ia_map_free(&at);
				sqlite3_finalize(st);
				return -1;
			}
		while (sqlite3_step(st) == SQLITE_ROW) {
			uint32_t k = ia_map_get(&at, ia_launch_func((uint64_t)sqlite3_column_int64(st, 0)));
			if (k != UINT32_MAX && !g->all[k].k.name)
				g->all[k].k.name = strdup((const char *)sqlite3_column_text(st, 1));
		}
		ia_map_free(&at);
	}
	sqlite3_finalize(st);   /* a trace without the table: no kernels' names */
	for (size_t k = 0; k < want; k++) {
		char name[64];
		if (!a->kt[k].launch && !g->all[k].k.name &&
		    (g->all[k].k.kind = copy_name(a->kt[k].func, name, sizeof name)) != IA_WORK_KERNEL)
			g->all[k].k.name = strdup(name);
	}
	/* the named ones with time, in order (the others stay in work_ns);
	 * the verdict's: the named among the first IA_GPU_KERNELS_MAX */
	size_t n = 0, top = 0;
	for (size_t k = 0; k < want; k++) {
		char *name = g->all[k].k.name;
		enum ia_work_kind kind = g->all[k].k.kind;
		g->all[k].k.name = NULL;
		if (!name || !a->kt[k].ns) {
			free(name);
			continue;
		}
		struct ia_kernel_row *r = &g->all[n++];
		r->k = (struct ia_kernel_time){ .name = name, .kind = kind, .ns = a->kt[k].ns,
						.launches = a->kt[k].n, .timed = timed_alone(a, a->kt[k].func),
						.func = a->kt[k].func, .where = a->kt[k].where };
		short_name(name, r->k.short_name, sizeof r->k.short_name);
		launch_times(&a->kt[k], g->kernels_steady, r);
		top += k < IA_GPU_KERNELS_MAX;
	}
	g->nall = n;
	g->kernels = calloc(top ? top : 1, sizeof *g->kernels);
	if (!g->kernels)
		return -1;
	for (size_t k = 0; k < top; k++) {
		g->kernels[k] = g->all[k].k;
		if (!(g->kernels[k].name = strdup(g->all[k].k.name)))
			return -1;
	}
	g->nkernels = top;
	return 0;
}
