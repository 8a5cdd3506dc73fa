/*
 * report_timeline.h — the HTML report's timeline: one SVG, as wide as the
 * page, of the analysis window.
 *
 * Rows, top to bottom: the GPU (measured: busy and idle, the rest not
 * resolved; without GPU marks, the stretches with no work queued), the
 * main thread's states (inside CUDA calls, on a CPU, waiting for a CPU,
 * blocked), one row per thread or process the analysis names (each
 * DataLoader worker, the main process's busiest other thread, the busiest
 * child process), and the machine's CPUs busy.  Each row is a stacked
 * column chart: the window is cut into columns and each column shows the
 * share of its time in each state, so a row reads as an area chart and a
 * share can be measured off a screenshot.  Runs of equal columns are one
 * rectangle with hover text (<title>) saying the time and the shares.
 * Phases (start-up, compilation, ...) are shaded behind the rows and named
 * above them; steps are ticks on their own row; an axis with ticks in
 * seconds since the trace start runs below, a legend under it.
 *
 * Every row group carries data-row (its name) and data-filled (1 when it
 * has something to draw), for the report's check in headless Chromium
 * (tests/e2e/report_chromium.sh).
 */
#ifndef IA_REPORT_TIMELINE_H
#define IA_REPORT_TIMELINE_H

#include "rules/chains.h"

#include <stdio.h>

#define IA_TL_COLS 800        /* columns (SVG units) of the timeline */
#define IA_TL_ROW_H 24        /* a row's height (SVG units) */

void ia_report_timeline(FILE *f, const struct ia_analysis *a);

#endif
