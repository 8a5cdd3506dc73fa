/*
 * lines.h — time and counts gathered by Python line (a gap's closing call,
 * a sync, a block, a phase's samples), in small lists: a few distinct lines
 * per trace, so a linear search finds a line's slot.
 */
#ifndef IA_LINES_H
#define IA_LINES_H

#include <stddef.h>
#include <stdint.h>

struct ia_gap_line {
	char line[200];         /* file:line, or "(no Python frame)" */
	uint16_t api;           /* the API most often at that line */
	uint64_t count, ns;     /* gaps it ends (or syncs it made), and their time */
	uint64_t gap_ns, overlap_ns;   /* sync lines: gaps they open; sum of min(gap, sync wait) */
	uint64_t gap_blocked_ns;       /* sync lines: of gap_ns, the main thread blocked (not preparing work) */
	/* sync lines, with the GPU estimate (gpu_time.h): sum of min(sync wait,
	 * the GPU's idle from the sync's end to the next completing call, by the
	 * replay that leaves it least idle) — the refill: a host that waited for
	 * the queue to drain then issues the next step while the GPU idles
	 * between its launches, which the certain gap right after the sync is
	 * only the start of (c21: .item() every step, 60 ms certain, ~200 ms
	 * estimated); 0 without the estimate */
	uint64_t est_overlap_ns;
	char inner[240];        /* sync and block lines: "function (file:line)" of the library code it is in, or "" */
	char op_inner[64], op_outer[64];   /* sync lines: the ATen operation that synchronised and the one the
	                                    * line called (load/aten_ops.h), or "" */
	int backward;           /* sync lines: the backward pass's, on the autograd engine's thread, the line
	                         * the one that ran it (backward_line.h) */
	int compiled;           /* sync lines: the line runs in a torch.compile'd function, eagerly between
	                         * its graphs (load/stacks.h ia_stack_user_compiled): its sync is a graph break */
	double weight;          /* block lines: their blocks' time in the gaps over the chance each had of a stack */
};

/* qsort order of ia_gap_lines: most counted first, then by line. */
int ia_gap_line_by_count(const void *a, const void *b);
/* The entry for `line` in a small growable list (linear search: few
 * distinct lines), added zeroed when absent; NULL when out of memory. */
struct ia_gap_line *ia_line_slot(struct ia_gap_line **v, size_t *n, size_t *cap, const char *line);

#endif
