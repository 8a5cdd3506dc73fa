/*
 * report_charts.h — the HTML report's small charts, each an inline SVG
 * with its axes labelled: the main thread's steady state as one stacked
 * bar (measure/figures.h), each step's time in order and their histogram
 * (measure/step_times.h), and the latency histogram of the busiest CUDA
 * APIs (log-scaled counts, so a tail of a few calls stays visible).
 */
#ifndef IA_REPORT_CHARTS_H
#define IA_REPORT_CHARTS_H

#include "rules/chains.h"

#include <stdio.h>

void ia_report_main_bar(FILE *f, const struct ia_analysis *a);
/* Nothing when no step was timed. */
void ia_report_steps(FILE *f, const struct ia_analysis *a);
void ia_report_latency(FILE *f, const struct ia_analysis *a);

/* A y axis at x from y0 (top) over h pixels, 5 ticks 0..max; unit "ns"
 * (durations) or "n" (counts). */
void ia_report_y_axis(FILE *f, int x, int y0, int h, double max, const char *unit);

/* s HTML-escaped */
void ia_html_esc(FILE *f, const char *s);

#endif
