/*
 * report_timeline.c — the HTML report's timeline SVG (report_timeline.h).
 *
 * Each row accumulates, per column, the fraction of the column's time in
 * each of its states (a linear pass over the intervals; an interval
 * touches only the columns it covers), then is drawn as stacked columns:
 * each state's share quantized to the row's height in units, and runs of
 * columns with the same heights merged into one rectangle per state.
 */
#include "render/report_timeline.h"

#include "base/util.h"

#include <ingero/api.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLS IA_TL_COLS
#define ROW_H IA_TL_ROW_H
#define GAP 6          /* between rows */
#define LABEL_W 230    /* the labels' column */
#define TOP 18         /* the phases' names above the rows */
#define MAX_ROWS 14
#define MAX_LAYERS 4
#define MAX_WORKERS 8

struct row {
	char label[96], key[32];
	int nl;
	const char *lname[MAX_LAYERS], *color[MAX_LAYERS];
	double v[MAX_LAYERS][COLS];
};

struct tl {
	uint64_t a, b;
	struct row *r;
	int n;
	int steps;     /* the steps row is drawn after the rows */
};

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

static void add_span(const struct tl *t, double *v, uint64_t a, uint64_t b, double w)
{
	if (b <= a || t->b <= t->a)
		return;
	if (a < t->a)
		a = t->a;
	if (b > t->b)
		b = t->b;
	if (b <= a)
		return;
	double colw = (double)(t->b - t->a) / COLS;
	size_t c0 = (size_t)((double)(a - t->a) / colw), c1 = (size_t)((double)(b - t->a) / colw);
	if (c1 >= COLS)
		c1 = COLS - 1;
	for (size_t c = c0; c <= c1; c++) {
		double lo = (double)t->a + colw * (double)c, hi = lo + colw;
		double x0 = (double)a > lo ? (double)a : lo, x1 = (double)b < hi ? (double)b : hi;
		if (x1 > x0)
			v[c] += w * (x1 - x0) / colw;
	}
}

static struct row *row_new(struct tl *t, const char *key, const char *label)
{
	if (t->n >= MAX_ROWS)
		return NULL;
	struct row *r = &t->r[t->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->key, sizeof r->key, "%s", key);
	snprintf(r->label, sizeof r->label, "%s", label);
	return r;
}

static int layer(struct row *r, const char *name, const char *color)
{
	r->lname[r->nl] = name;
	r->color[r->nl] = color;
	return r->nl++;
}

/* The colours of the states, the same in every row and in the legend. */
#define C_IDLE "#d62728"
#define C_BUSY "#2ca02c"
#define C_CALL "#1f77b4"
#define C_ONCPU "#4d4d4d"
#define C_RUNQ "#ff7f0e"
#define C_BLOCKED "#b0b0b0"
#define C_CPU "#9467bd"

/* A thread's states per column: on a CPU, waiting for a CPU, blocked;
 * with calls, the time inside its CUDA calls out of its on-CPU share. */
static void thread_row(struct tl *tl, struct row *r, const struct ia_trace *t, uint32_t th, int calls)
{
	int lc = calls ? layer(r, "inside CUDA calls", C_CALL) : -1;
	int lon = layer(r, "on a CPU", C_ONCPU), lrq = layer(r, "waiting for a CPU", C_RUNQ);
	int lbl = layer(r, "blocked", C_BLOCKED);
	const struct ia_thread *x = &t->threads[th];
	uint64_t sa, sb;
	ia_thread_span(t, th, &sa, &sb);
	add_span(tl, r->v[lon], sa, sb, 1);
	for (uint32_t k = 0; k < x->off_n; k++) {
		const struct ia_off *o = &t->offs[t->off_by_th[x->off_first + k]];
		uint64_t s = o->start > sa ? o->start : sa, e = o->end < sb ? o->end : sb;
		if (e <= s)
			continue;
		uint64_t rq = o->end - o->runq > s ? o->end - o->runq : s;
		add_span(tl, r->v[lbl], s, rq, 1);
		add_span(tl, r->v[lrq], rq, e, 1);
	}
	if (lc >= 0)
		for (uint32_t k = 0; k < x->call_n; k++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + k]];
			add_span(tl, r->v[lc], c->start, c->start + c->dur, 1);
		}
	for (int c = 0; c < COLS; c++) {   /* on a CPU: the thread's life less its time off */
		double off = r->v[lbl][c] + r->v[lrq][c];
		double on = r->v[lon][c] - off;
		on = on < 0 ? 0 : on;
		if (lc >= 0) {   /* calls: inside them while not off (a blocking sync counts as blocked) */
			double in = r->v[lc][c] < on ? r->v[lc][c] : on;
			r->v[lc][c] = in;
			on -= in;
		}
		r->v[lon][c] = on;
	}
}

/* The thread of process proc whose tid is the pid (its main thread), else its first. */
static uint32_t proc_thread(const struct ia_trace *t, uint32_t proc)
{
	uint32_t first = UINT32_MAX;
	for (size_t th = 0; th < t->nthreads; th++) {
		if (t->threads[th].proc != proc || ia_thread_is_tracer(&t->threads[th]))
			continue;
		if ((int)t->threads[th].tid == t->procs[proc].pid)
			return (uint32_t)th;
		if (first == UINT32_MAX)
			first = (uint32_t)th;
	}
	return first;
}

static void build_rows(struct tl *tl, const struct ia_analysis *a)
{
	const struct ia_trace *t = a->t;
	const struct ia_gaps *g = &a->gaps;
	char lbl[96];
	struct row *r = row_new(tl, "gpu", g->gpu.measured ? "GPU (measured)" : "GPU (estimate from host evidence)");
	if (g->gpu.measured) {
		int li = layer(r, "GPU idle", C_IDLE), lb = layer(r, "GPU busy", C_BUSY);
		for (size_t i = 0; i < g->gpu.nidle; i++)
			add_span(tl, r->v[li], g->gpu.idle[i].a, g->gpu.idle[i].b, 1);
		for (size_t i = 0; i < g->gpu.nbusy; i++)
			add_span(tl, r->v[lb], g->gpu.busy[i].a, g->gpu.busy[i].b, 1);
	} else {
		int li = layer(r, "no GPU work queued", C_IDLE);
		for (size_t i = 0; i < g->n; i++)
			add_span(tl, r->v[li], g->g[i].start, g->g[i].end, 1);
	}
	if (a->pp.main_thread != UINT32_MAX) {
		const struct ia_thread *x = &t->threads[a->pp.main_thread];
		snprintf(lbl, sizeof lbl, "main thread %s (%u)", x->comm, x->tid);
		if ((r = row_new(tl, "main", lbl)))
			thread_row(tl, r, t, a->pp.main_thread, 1);
	}
	size_t nw = 0;
	for (size_t i = 0; i < a->pp.n; i++) {
		const struct ia_proc_stats *s = &a->pp.p[i];
		if (s->role != IA_ROLE_WORKER || nw++ >= MAX_WORKERS)
			continue;
		uint32_t th = proc_thread(t, s->proc);
		if (th == UINT32_MAX)
			continue;
		snprintf(lbl, sizeof lbl, "DataLoader worker pid %d", t->procs[s->proc].pid);
		if ((r = row_new(tl, "worker", lbl)))
			thread_row(tl, r, t, th, 0);
	}
	if (nw > MAX_WORKERS) {
		snprintf(lbl, sizeof lbl, "(%zu more workers: per-process table)", nw - MAX_WORKERS);
		row_new(tl, "note", lbl);
	}
	if (g->sibling_top != UINT32_MAX && g->sibling_top_ns) {
		const struct ia_thread *x = &t->threads[g->sibling_top];
		snprintf(lbl, sizeof lbl, "thread %s (%u)", x->comm, x->tid);
		if ((r = row_new(tl, "thread", lbl)))
			thread_row(tl, r, t, g->sibling_top, 0);
	}
	if (g->child_top >= 0 && g->child_top_ns) {
		uint32_t th = proc_thread(t, (uint32_t)g->child_top);
		snprintf(lbl, sizeof lbl, "child %s pid %d", t->procs[g->child_top].comm, t->procs[g->child_top].pid);
		if (th != UINT32_MAX && (r = row_new(tl, "child", lbl)))
			thread_row(tl, r, t, th, 0);
	}
	const struct ia_series *busy = &a->ev.busy;
	if (busy->n && busy->width && a->ev.ncpus && (r = row_new(tl, "cpus", "CPUs busy (all of the machine's)"))) {
		int lc = layer(r, "CPUs busy", C_CPU);
		for (size_t i = 0; i < busy->n; i++)
			add_span(tl, r->v[lc], busy->b[i].t, busy->b[i].t + busy->width,
				 (double)busy->b[i].v / ((double)busy->width * a->ev.ncpus));
	}
}

static int filled(const struct row *r)
{
	for (int l = 0; l < r->nl; l++)
		for (int c = 0; c < COLS; c++)
			if (r->v[l][c] > 0.005)
				return 1;
	return 0;
}

static double rel_s(const struct tl *tl, const struct ia_trace *t, double col)
{
	return ((double)(tl->a - t->t0) + (double)(tl->b - tl->a) * col / COLS) / 1e9;
}

/* One row: stacked columns, equal runs merged, each run with its hover text. */
static void draw_row(FILE *f, const struct tl *tl, const struct ia_trace *t, const struct row *r, int y)
{
	fprintf(f, "<g class='row' data-row='%s' data-filled='%d' data-y='%d' data-h='%d'>", r->key, filled(r), y, ROW_H);
	fprintf(f, "<text x='0' y='%d' class='lbl'>", y + ROW_H / 2 + 4);
	esc(f, r->label);
	/* the row's ground lets the phases' shading through */
	fprintf(f, "</text><rect x='%d' y='%d' width='%d' height='%d' fill='#e8e8e8' fill-opacity='0.5'/>\n", LABEL_W, y,
		COLS, ROW_H);
	int h[MAX_LAYERS], ph[MAX_LAYERS];
	int start = 0;
	for (int c = 0; c <= COLS; c++) {
		int same = c < COLS;
		for (int l = 0; l < r->nl; l++) {
			double v = c < COLS ? r->v[l][c] : 0;
			h[l] = (int)lround((v > 1 ? 1 : v < 0 ? 0 : v) * ROW_H);
			if (c > start && h[l] != ph[l])
				same = 0;
		}
		if (c > start && same)
			continue;
		if (c > start) {   /* the run [start, c) */
			int any = 0;
			for (int l = 0; l < r->nl; l++)
				any |= ph[l] > 0;
			if (any) {
				fprintf(f, "<g><title>+%.3fs to +%.3fs: ", rel_s(tl, t, start), rel_s(tl, t, c));
				for (int l = 0; l < r->nl; l++)
					fprintf(f, "%s%s %d%%", l ? ", " : "", r->lname[l], (int)lround(100.0 * ph[l] / ROW_H));
				fputs("</title>", f);
				int base = y + ROW_H;
				for (int l = 0; l < r->nl; l++) {
					if (!ph[l])
						continue;
					int hh = ph[l] < base - y ? ph[l] : base - y;
					fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'/>", LABEL_W + start,
						base - hh, c - start, hh, r->color[l]);
					base -= hh;
				}
				fputs("</g>", f);
			}
		}
		start = c;
		memcpy(ph, h, sizeof h);
	}
	fputs("</g>\n", f);
}

static const char *phase_color(enum ia_phase p)
{
	switch (p) {
	case IA_PHASE_STARTUP: return "#fff3c4";
	case IA_PHASE_COMPILE: return "#ffe0cc";
	case IA_PHASE_AUTOTUNE: return "#e8dcff";
	case IA_PHASE_EPOCH: return "#d8f0ff";
	default: return "#eeeeee";
	}
}

static int x_of(const struct tl *tl, uint64_t ts)
{
	if (ts <= tl->a)
		return LABEL_W;
	if (ts >= tl->b)
		return LABEL_W + COLS;
	return LABEL_W + (int)((double)(ts - tl->a) * COLS / (double)(tl->b - tl->a));
}

static void draw_phases(FILE *f, const struct tl *tl, const struct ia_analysis *a, int h)
{
	const struct ia_phases *ph = &a->ph;
	int label_end = 0;   /* names never overlap: one that would is left to the hover text */
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase == IA_PHASE_STEADY || e->end <= tl->a || e->start >= tl->b)
			continue;
		int x0 = x_of(tl, e->start), x1 = x_of(tl, e->end);
		if (x1 <= x0)
			x1 = x0 + 1;
		fprintf(f, "<g class='phase' data-phase='%s'><title>%s</title><rect x='%d' y='%d' width='%d' height='%d' "
			   "fill='%s'/>", ia_phase_name(e->phase), ia_phase_title(e->phase), x0, TOP, x1 - x0, h - TOP,
			phase_color(e->phase));
		int w = 6 * (int)strlen(ia_phase_title(e->phase));
		if (x1 - x0 >= 24 && x0 >= label_end) {
			fprintf(f, "<text x='%d' y='%d' class='tick'>%s</text>", x0 + 2, TOP - 5, ia_phase_title(e->phase));
			label_end = x0 + w + 8;
		}
		fputs("</g>\n", f);
	}
}

/* Ticks at 1, 2 or 5 times a power of ten, about eight over the window. */
static void draw_axis(FILE *f, const struct tl *tl, const struct ia_trace *t, int y)
{
	double s0 = (double)(tl->a - t->t0) / 1e9, s1 = (double)(tl->b - t->t0) / 1e9, span = s1 - s0;
	if (span <= 0)
		return;
	double raw = span / 8, p = pow(10, floor(log10(raw))), step = p;
	if (raw / p >= 5)
		step = 5 * p;
	else if (raw / p >= 2)
		step = 2 * p;
	int digits = step >= 1 ? 0 : (int)ceil(-log10(step));
	fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", LABEL_W, y, LABEL_W + COLS, y);
	for (double s = ceil(s0 / step) * step; s <= s1 + 1e-12; s += step) {
		int x = LABEL_W + (int)((s - s0) / span * COLS);
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/><text x='%d' y='%d' class='tick' "
			   "text-anchor='middle'>%.*fs</text>", x, y, x, y + 4, x, y + 15, digits, s);
	}
	fprintf(f, "<text x='0' y='%d' class='tick'>seconds since the trace start</text>\n", y + 15);
}

static void draw_steps(FILE *f, const struct tl *tl, const struct ia_analysis *a, int y)
{
	const struct ia_step_times *s = &a->step_times;
	fprintf(f, "<g class='row' data-row='steps' data-filled='%d' data-y='%d' data-h='%d'><text x='0' y='%d' "
		   "class='lbl'>steps (%zu timed, ticks at their starts)</text>", s->n > 0, y, 10, y + 9, s->n);
	int last = -1;
	for (size_t i = 0; i < s->n; i++) {
		int x = x_of(tl, s->start[i]);
		if (x == last)
			continue;
		last = x;
		fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", x, y, x, y + 10);
	}
	fputs("</g>\n", f);
}

static void draw_legend(FILE *f, const struct tl *tl, int y)
{
	const char *names[16], *colors[16];
	int n = 0;
	for (int i = 0; i < tl->n; i++)
		for (int l = 0; l < tl->r[i].nl; l++) {
			int seen = 0;
			for (int k = 0; k < n; k++)
				seen |= !strcmp(names[k], tl->r[i].lname[l]);
			if (!seen && n < 16) {
				names[n] = tl->r[i].lname[l];
				colors[n++] = tl->r[i].color[l];
			}
		}
	int x = LABEL_W;
	fprintf(f, "<g class='legend'>");
	for (int k = 0; k < n; k++) {
		int w = 20 + 7 * (int)strlen(names[k]);
		if (x + w > LABEL_W + COLS) {
			x = LABEL_W;
			y += 16;
		}
		fprintf(f, "<rect x='%d' y='%d' width='12' height='12' fill='%s'/><text x='%d' y='%d' class='tick'>%s</text>",
			x, y, colors[k], x + 16, y + 10, names[k]);
		x += w;
	}
	fprintf(f, "<rect x='%d' y='%d' width='12' height='12' fill='#f2f2f2' stroke='#ccc'/><text x='%d' y='%d' "
		   "class='tick'>not known</text></g>\n", x, y, x + 16, y + 10);
}

void ia_report_timeline(FILE *f, const struct ia_analysis *a)
{
	const struct ia_gaps *g = &a->gaps;
	struct tl tl = { .a = g->win_start, .b = g->win_end };
	tl.r = calloc(MAX_ROWS, sizeof *tl.r);
	if (!tl.r || tl.b <= tl.a) {
		free(tl.r);
		return;
	}
	build_rows(&tl, a);
	int rows_h = TOP + tl.n * (ROW_H + GAP) + 14;
	int h = rows_h + 30 + 40;
	fprintf(f, "<svg class='timeline' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' width='100%%' "
		   "shape-rendering='crispEdges' role='img' aria-label='timeline of the GPU and the host'>\n", LABEL_W + COLS + 10, h);
	draw_phases(f, &tl, a, rows_h - 14);
	for (int i = 0; i < tl.n; i++)
		draw_row(f, &tl, a->t, &tl.r[i], TOP + i * (ROW_H + GAP));
	draw_steps(f, &tl, a, TOP + tl.n * (ROW_H + GAP));
	draw_axis(f, &tl, a->t, rows_h + 2);
	draw_legend(f, &tl, rows_h + 26);
	fputs("</svg>\n", f);
	free(tl.r);
}
