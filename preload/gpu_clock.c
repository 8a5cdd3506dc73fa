/*
 * gpu_clock.c — the GPU's event clock carried onto the host's (gpu_clock.h).
 */
#include "gpu_clock.h"

#include <stdlib.h>

#include "clock.h"
#include "config.h"

/* Of the tries, one whose record call was this quick (else it lost its CPU
 * inside the call, and its return is late for the stamp) ... */
#define QUICK_RECORD_NS 20000ull
/* ... and whose wait returned this soon after it (else the GPU picked the
 * event up late, behind other work, or the thread lost its CPU) is kept. */
#define QUICK_WAIT_NS 50000ull
#define TRIES 3

double ingero_gpu_clock_ppm(double ratio)
{
	return (1.0 / ratio - 1.0) * 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int ingero_gpu_clock_fit(const uint64_t *host, const double *gpu, const bool *quick, unsigned n, double *r)
{
	double slope[INGERO_GPU_CLOCK_WINDOW * (INGERO_GPU_CLOCK_WINDOW - 1) / 2];
	unsigned ns = 0;
	for (unsigned i = 0; i < n && i < INGERO_GPU_CLOCK_WINDOW; i++)
		for (unsigned j = i + 1; j < n && j < INGERO_GPU_CLOCK_WINDOW; j++)
			if (quick[i] && quick[j] && host[j] - host[i] >= INGERO_GPU_CLOCK_MIN_SPAN_NS &&
			    gpu[j] > gpu[i])
				slope[ns++] = (double)(host[j] - host[i]) / (gpu[j] - gpu[i]);
	if (!ns)
		return 0;
	qsort(slope, ns, sizeof *slope, cmp_double);
	*r = ns % 2 ? slope[ns / 2] : (slope[ns / 2 - 1] + slope[ns / 2]) / 2;
	double ppm = ingero_gpu_clock_ppm(*r);
	return ppm > INGERO_GPU_CLOCK_MAX_PPM || ppm < -INGERO_GPU_CLOCK_MAX_PPM ? -1 : 1;
}

/* INGERO_DEBUG: the rate, and how far the window's anchors sit off it (the
 * GPU's pickup of each anchor's event, as it varied) — from the last
 * anchor, carried back by the rate */
static void say_rate(const struct ingero_gpu_clock *c)
{
	double lo = 0, hi = 0;
	for (unsigned i = 0; i < c->n; i++) {
		double off = (double)(int64_t)(c->host[i] - c->host[c->n - 1]) + c->ratio * (c->gpu[c->n - 1] - c->gpu[i]);
		lo = i && off > lo ? lo : off;
		hi = i && off < hi ? hi : off;
	}
	ingero_debug("GPU clock: %+.2f ppm against the host's (%u anchors over %.2f s; the anchors %.2f to %+.2f us "
		     "off it, the last's way)", ingero_gpu_clock_ppm(c->ratio), c->n,
		     (double)(c->host[c->n - 1] - c->host[0]) / 1e9, lo / 1e3, hi / 1e3);
}

void ingero_gpu_clock_add(struct ingero_gpu_clock *c, uint64_t t, double gpu_ns, bool quick)
{
	if (!c->n || gpu_ns <= 0) {
		c->n = 0;
	} else if (c->n == INGERO_GPU_CLOCK_WINDOW) {
		for (unsigned i = 1; i < c->n; i++)
			c->host[i - 1] = c->host[i], c->gpu[i - 1] = c->gpu[i], c->quick[i - 1] = c->quick[i];
		c->n--;
	}
	c->host[c->n] = t;
	c->gpu[c->n] = c->n ? c->gpu[c->n - 1] + gpu_ns : 0;
	c->quick[c->n] = quick;
	c->n++;
	double r = 1.0;
	int fit = ingero_gpu_clock_fit(c->host, c->gpu, c->quick, c->n, &r);
	if (fit < 0) {
		ingero_debug("GPU clock: a rate of %+.0f ppm against the host's is not a clock's: %+.2f kept",
			     ingero_gpu_clock_ppm(r), ingero_gpu_clock_ppm(c->ratio));
	} else if (fit > 0) {
		bool first = c->ratio == 1.0;
		c->ratio = r;
		/* said once the rate is first fitted, then every window */
		if (first || ++c->said % INGERO_GPU_CLOCK_WINDOW == 0)
			say_rate(c);
	}
	c->anchor_ns = t;
}

void ingero_gpu_clock_renew(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d)
{
	unsigned next = c->ok ? 1 - c->cur : c->cur;
	uint64_t t1 = 0;
	bool quick = false;
	for (int i = 0; i < TRIES && !quick; i++) {
		uint64_t t0 = ingero_now();
		if (d->event_record(c->ev[next], c->stream) != INGERO_CU_SUCCESS)
			goto refused;
		t1 = ingero_now();
		if (d->event_sync(c->ev[next]) != INGERO_CU_SUCCESS)
			goto refused;
		/* the event holds the last try */
		quick = t1 - t0 < QUICK_RECORD_NS && ingero_now() - t1 < QUICK_WAIT_NS;
	}
	float ms = 0;
	double gpu_ns = -1;
	if (c->ok && d->event_elapsed(&ms, c->ev[c->cur], c->ev[next]) == INGERO_CU_SUCCESS)
		gpu_ns = (double)ms * 1e6;
	ingero_gpu_clock_add(c, t1, gpu_ns, quick);
	c->cur = next;
	c->failures = 0;
	c->renewed_at = ingero_now();
	c->ok = true;
	return;
refused:
	/* the anchor before stays good (its event untouched): tried again at
	 * the next renewal, given up after a few in a row */
	c->renewed_at = ingero_now();
	if (!c->ok || ++c->failures >= INGERO_GPU_CLOCK_MAX_FAILURES)
		c->ok = false;
}

bool ingero_gpu_clock_open(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d)
{
	c->ok = false;
	c->n = 0;
	c->cur = 0;
	c->failures = 0;
	c->ratio = 1.0;
	if (d->stream_create(&c->stream, INGERO_CU_STREAM_NON_BLOCKING) != INGERO_CU_SUCCESS ||
	    d->event_create(&c->ev[0], 0) != INGERO_CU_SUCCESS || d->event_create(&c->ev[1], 0) != INGERO_CU_SUCCESS)
		return false;
	ingero_gpu_clock_renew(c, d);
	return c->ok;
}

CUresult_t ingero_gpu_clock_read(const struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d, void *ev,
				 uint64_t *done)
{
	float ms = 0;
	CUresult_t r = d->event_elapsed(&ms, c->ev[c->cur], ev);
	if (r == INGERO_CU_SUCCESS)
		*done = (uint64_t)((int64_t)c->anchor_ns + (int64_t)((double)ms * 1e6 * c->ratio));
	return r;
}
