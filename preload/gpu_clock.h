/*
 * gpu_clock.h — the GPU's event clock carried onto the host's (the marks'
 * completion times, gpu_watch.c).
 *
 * An anchor event is recorded into a private stream with nothing queued and
 * waited for; the host's clock as its record call returns is taken as its
 * time, and a mark's completion is the anchor's time plus cuEventElapsedTime
 * from the anchor to the mark.  The GPU's clock does not run at the host's
 * rate: on H100 hosts it ran 0.6 ppm fast on one and ~20 ppm slow on another
 * (docs/gpu-runs.md section 55), so within one anchor's second the marks
 * drifted up to 20 us early — before they were even recorded, and were
 * clamped (71-93 % of c77's marks on that host), which made tiny kernels'
 * pieces ~0.1 us and the launch-bound estimate's idle too high.  So the
 * anchor is renewed every ANCHOR_EVERY_NS and each renewal's elapsed time
 * from the one before (two events, alternated) fits the rate — host ns per
 * GPU ns, least squares over the last INGERO_GPU_CLOCK_WINDOW anchors once
 * they span INGERO_GPU_CLOCK_MIN_SPAN_NS — by which the elapsed times are
 * scaled.
 */
#ifndef INGERO_PRELOAD_GPU_CLOCK_H
#define INGERO_PRELOAD_GPU_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_driver.h"

#define INGERO_GPU_CLOCK_WINDOW 16
/* A rate fitted over less than this is noise: an anchor's time is off by
 * the GPU's pickup of its event, a few microseconds that vary (ppm over a
 * second) */
#define INGERO_GPU_CLOCK_MIN_SPAN_NS 500000000ull
/* Further from 1 than this is not a clock's rate (a VM paused, migrated, a
 * driver reset): the elapsed times are taken as they are */
#define INGERO_GPU_CLOCK_MAX_PPM 2000.0

struct ingero_gpu_clock {
	void *ctx;
	void *stream;              /* private, non-blocking */
	void *ev[2];               /* the anchor and the one before it, alternated */
	unsigned cur;              /* ev[cur] is the anchor */
	uint64_t anchor_ns;        /* host time the anchor completed */
	uint64_t renewed_at;
	double ratio;              /* host ns per GPU ns */
	/* the last anchors: host time, and GPU time since the window's first */
	uint64_t host[INGERO_GPU_CLOCK_WINDOW];
	double gpu[INGERO_GPU_CLOCK_WINDOW];
	unsigned n;
	unsigned said;             /* anchors since the rate was said (INGERO_DEBUG) */
	bool ok;
};

/* Makes the clock's stream and events in its context (pushed by the
 * caller) and takes the first anchor; false when the driver refused. */
bool ingero_gpu_clock_open(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d);
/* A new anchor (context pushed); the rate refitted with it. */
void ingero_gpu_clock_renew(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d);
/* When event ev completed, on the host's clock: CUDA's result
 * (INGERO_CU_NOT_READY while it has not). */
CUresult_t ingero_gpu_clock_read(const struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d, void *ev,
				 uint64_t *done);
/* The rate of n anchors (host times, GPU times on one origin): host ns per
 * GPU ns, least squares; 1 where they span less than
 * INGERO_GPU_CLOCK_MIN_SPAN_NS or the fit is past INGERO_GPU_CLOCK_MAX_PPM. */
double ingero_gpu_clock_fit(const uint64_t *host, const double *gpu, unsigned n);

#endif
