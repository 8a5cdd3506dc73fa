/*
 * headline.h — the figures every view opens with (measure/figures.h), in
 * one wording: explain, stats and per-process print these lines, the HTML
 * report shows them, the Perfetto export carries them in its metadata,
 * and explain --json's "figures" (which the MCP server and the gate read)
 * holds the same lines and their numbers.
 *
 *   Trace: python3 train.py (16 CPUs, NVIDIA H200), 13.5s traced
 *   GPU idle 83-99% (about 91%) of the steady state, measured on the GPU
 *   Window 8.38s (first GPU work to last CUDA call): GPU idle 94-100%; ...
 *   Steps: one every 27.4ms (51 CUDA calls)
 *   Main thread in the steady state (2.47s): ...
 */
#ifndef IA_HEADLINE_H
#define IA_HEADLINE_H

#include "rules/chains.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* "Trace: CMD (16 CPUs, NVIDIA H200), 13.5s traced" */
const char *ia_headline_trace(const struct ia_analysis *a, char *buf, size_t len);
/* "GPU idle 83-99% (about 91%) of the steady state, measured on the GPU",
 * or the sentence saying there is no such figure. */
const char *ia_headline_idle(const struct ia_analysis *a, char *buf, size_t len);
/* "Window 8.38s (...): GPU idle 94-100% of it; start-up 5.91s (71%), steady
 * state 2.47s (29%)"; "" without a window. */
const char *ia_headline_window(const struct ia_analysis *a, char *buf, size_t len);
/* "Steps: one every 27.4ms (51 CUDA calls)"; "" when no step was found. */
const char *ia_headline_steps(const struct ia_analysis *a, char *buf, size_t len);
/* "Lost while tracing: 2 on-CPU samples without their Python frames";
 * "" when nothing was (verbose: the losses table's source names). */
const char *ia_headline_losses(const struct ia_analysis *a, int verbose, char *buf, size_t len);

/* The headline's lines, each ending in '\n': trace, losses, capture,
 * GPU idle, window, steps; with main, the main thread's steady state. */
void ia_headline_print(FILE *f, const struct ia_analysis *a, int main, int verbose);
/* The main thread's time over the steady state (figures.h), three lines. */
void ia_headline_main_print(FILE *f, const struct ia_analysis *a);

/* explain --json's "figures": the lines above and their numbers. */
cJSON *ia_figures_json(const struct ia_analysis *a);

#endif
