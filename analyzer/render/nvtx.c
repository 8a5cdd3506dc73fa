/*
 * nvtx.c — the program's NVTX ranges as explain prints them: the names
 * that took the most time, and how much of the GPU's idle time fell inside
 * each — the user's own words for where the GPU waited.  Nested ranges
 * overlap, so their shares are each of the whole and add to more.
 */
#include "render/nvtx.h"

#include "base/util.h"

#include <ingero/utf8.h>

#include <string.h>

#define SHOWN 8

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void ia_nvtx_print_home(FILE *f, const struct ia_analysis *a)
{
	const struct ia_nvtx_name *x = ia_nvtx_idle_home(&a->nvtx);
	char d[32];
	if (!x)
		return;
	const char *nm = x->name[0] ? x->name : "(no name)";
	fprintf(f, "\nIn your NVTX ranges: %.0f%% of the GPU's idle time fell inside '%.*s' (%u range%s, median %s).\n",
		pct(x->idle_ns, a->nvtx.idle_ns), (int)ingero_utf8_cut(nm, 80), nm, x->count, x->count == 1 ? "" : "s",
		ia_fmt_dur(d, sizeof d, x->p50_ns));
}

void ia_nvtx_print(FILE *f, const struct ia_analysis *a, int verbose)
{
	const struct ia_nvtx *n = &a->nvtx;
	char d1[32], d2[32], d3[32];
	if (!n->nranges && !n->nmarks)
		return;
	fprintf(f, "\nNVTX ranges of the main process: %llu range%s, %llu mark%s. GPU idle inside each (gaps of 50 us or more; "
		   "%s in all), as a share of the range's time and of all GPU idle:\n",
		(unsigned long long)n->nranges, n->nranges == 1 ? "" : "s", (unsigned long long)n->nmarks,
		n->nmarks == 1 ? "" : "s", ia_fmt_dur(d1, sizeof d1, n->idle_ns));
	size_t shown = verbose || n->n <= SHOWN ? n->n : SHOWN;
	size_t w = 5;
	for (size_t i = 0; i < shown; i++)
		if (strlen(n->names[i].name) > w)
			w = strlen(n->names[i].name) > 40 ? 40 : strlen(n->names[i].name);
	fprintf(f, "  %-*s %7s %9s %9s %9s %7s %7s\n", (int)w, "range", "count", "median", "total", "GPU idle",
		"of it", "of all");
	for (size_t i = 0; i < shown; i++) {
		const struct ia_nvtx_name *x = &n->names[i];
		const char *nm = x->name[0] ? x->name : "(no name)";
		int nb = (int)ingero_utf8_cut(nm, 40);
		fprintf(f, "  %.*s%*s %7u %9s %9s %9s %6.0f%% %6.0f%%\n", nb, nm, (int)w - nb > 0 ? (int)w - nb : 0, "",
			x->count, ia_fmt_dur(d1, sizeof d1, x->p50_ns), ia_fmt_dur(d2, sizeof d2, x->total_ns),
			ia_fmt_dur(d3, sizeof d3, x->idle_ns), pct(x->idle_ns, x->total_ns), pct(x->idle_ns, n->idle_ns));
	}
	if (shown < n->n)
		fprintf(f, "  ... %zu more names (--verbose lists them)\n", n->n - shown);
}
