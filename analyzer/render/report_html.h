/*
 * report_html.h — one self-contained HTML page of an analysis: the GPU
 * idle headline, the verdict, the chains, a timeline and latency
 * histograms as inline SVG, the per-API and per-process tables.
 */
#ifndef IA_REPORT_HTML_H
#define IA_REPORT_HTML_H

#include "rules/chains.h"

#include <stdio.h>

/* db_path: the file it was read from, named at the page's foot. */
void ia_report_html_write(FILE *f, const struct ia_analysis *a, const char *db_path);

#endif
