/*
 * main_metrics.h — the collector's /metrics page from the analyzer's
 * figures (main_metrics.c), for metrics.h's refresher.
 */
#ifndef INGERO_COLLECTOR_MAIN_METRICS_H
#define INGERO_COLLECTOR_MAIN_METRICS_H

#include <pthread.h>

#include "intake.h"

struct metrics_ctx {
	const char *path;            /* the report being written */
	pthread_mutex_t lock;        /* guards in, is, have_final */
	struct intake *in;           /* live counters while it runs; NULL once stopping */
	struct intake_stats is;      /* the final counters */
	int have_final;
};

/* metrics_figures_fn (metrics.h): the page for the file as committed so far. */
char *metrics_page(void *arg, int final);
/* The intake is about to stop (is NULL: no more live counters from it), or
 * has stopped with these final counters. */
void metrics_ctx_final(struct metrics_ctx *c, const struct intake_stats *is);

#endif
