/*
 * gpu_clock.c — the GPU's event clock carried onto the host's (gpu_clock.h).
 */
#include "gpu_clock.h"

#include "clock.h"
#include "config.h"

/* Of the record call's tries, one this quick is kept (a slower one lost
 * its CPU inside the call, and its return is late for the stamp). */
#define QUICK_RECORD_NS 20000ull

/* The anchors' mean GPU and host times, each from the window's first. */
static void means(const uint64_t *host, const double *gpu, unsigned n, double *mx, double *my)
{
	*mx = *my = 0;
	for (unsigned i = 0; i < n; i++) {
		*mx += gpu[i] - gpu[0];
		*my += (double)(host[i] - host[0]);
	}
	*mx /= n, *my /= n;
}

double ingero_gpu_clock_fit(const uint64_t *host, const double *gpu, unsigned n)
{
	if (n < 2 || host[n - 1] - host[0] < INGERO_GPU_CLOCK_MIN_SPAN_NS)
		return 1.0;
	double mx, my;
	means(host, gpu, n, &mx, &my);
	double sxy = 0, sxx = 0;
	for (unsigned i = 0; i < n; i++) {
		double x = gpu[i] - gpu[0] - mx, y = (double)(host[i] - host[0]) - my;
		sxy += x * y;
		sxx += x * x;
	}
	if (sxx <= 0)
		return 1.0;
	double r = sxy / sxx, ppm = (r - 1.0) * 1e6;
	return ppm > INGERO_GPU_CLOCK_MAX_PPM || ppm < -INGERO_GPU_CLOCK_MAX_PPM ? 1.0 : r;
}

/* The anchor's GPU time from the window's first, appended; the window
 * starts again where the elapsed time cannot be read. */
static void window_add(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d, unsigned next, uint64_t t)
{
	float ms = 0;
	if (!c->n || d->event_elapsed(&ms, c->ev[c->cur], c->ev[next]) != INGERO_CU_SUCCESS || ms <= 0) {
		c->host[0] = t;
		c->gpu[0] = 0;
		c->n = 1;
		return;
	}
	double g = c->gpu[c->n - 1] + (double)ms * 1e6;
	if (c->n == INGERO_GPU_CLOCK_WINDOW) {
		for (unsigned i = 1; i < c->n; i++)
			c->host[i - 1] = c->host[i], c->gpu[i - 1] = c->gpu[i];
		c->n--;
	}
	c->host[c->n] = t;
	c->gpu[c->n] = g;
	c->n++;
}

/* INGERO_DEBUG: the rate, and how far the anchors' host times sit off the
 * fitted line (the GPU's pickup of each anchor's event, as it varied) */
static void say_rate(const struct ingero_gpu_clock *c)
{
	double mx, my, lo = 0, hi = 0;
	means(c->host, c->gpu, c->n, &mx, &my);
	for (unsigned i = 0; i < c->n; i++) {
		double off = (double)(c->host[i] - c->host[0]) - my - c->ratio * (c->gpu[i] - c->gpu[0] - mx);
		lo = i && off > lo ? lo : off;
		hi = i && off < hi ? hi : off;
	}
	ingero_debug("GPU clock: %+.2f ppm against the host's (fitted over %u anchors, %.2f s; "
		     "the anchors %.2f to %+.2f us off the fit)", (1.0 / c->ratio - 1.0) * 1e6, c->n,
		     (double)(c->host[c->n - 1] - c->host[0]) / 1e9, lo / 1e3, hi / 1e3);
}

void ingero_gpu_clock_renew(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d)
{
	unsigned next = c->ok ? 1 - c->cur : c->cur;
	uint64_t t1 = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = ingero_now();
		if (d->event_record(c->ev[next], c->stream) != INGERO_CU_SUCCESS) {
			c->ok = false;
			return;
		}
		t1 = ingero_now();
		if (d->event_sync(c->ev[next]) != INGERO_CU_SUCCESS) {
			c->ok = false;
			return;
		}
		/* the event holds the last try: keep trying while the record
		 * call itself was slow */
		if (t1 - t0 < QUICK_RECORD_NS)
			break;
	}
	if (!c->ok)
		c->n = 0;
	window_add(c, d, next, t1);
	double was = c->ratio;
	c->ratio = ingero_gpu_clock_fit(c->host, c->gpu, c->n);
	/* said once the rate is first fitted, then every window */
	if (c->ratio != 1.0 && (was == 1.0 || ++c->said % INGERO_GPU_CLOCK_WINDOW == 0))
		say_rate(c);
	c->anchor_ns = t1;
	c->cur = next;
	c->renewed_at = ingero_now();
	c->ok = true;
}

bool ingero_gpu_clock_open(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d)
{
	c->ok = false;
	c->n = 0;
	c->cur = 0;
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
