/*
 * gpu_clock.h — the GPU's event clock carried onto the host's (the marks'
 * completion times, gpu_watch.c).
 *
 * An anchor event is recorded into a private stream with nothing queued and
 * waited for; the host's clock as its record call returns is taken as its
 * time, and a mark's completion is the anchor's time plus cuEventElapsedTime
 * from the anchor to the mark.  The GPU's clock does not run at the host's
 * rate: on H100 hosts it ran ~21 ppm slow on one and 0.6 ppm fast on another
 * (docs/gpu-runs.md section 55), so within one anchor's second the marks
 * drifted up to 20 us early — before they were even recorded, and were
 * clamped (71-93 % of c77's marks on that host), which made tiny kernels'
 * pieces ~0.1 us and the launch-bound estimate's idle too high.  So the
 * anchor is renewed every quarter second (gpu_watch.c) and each renewal's
 * elapsed time from the one before (two events, alternated) goes into a
 * window of the last INGERO_GPU_CLOCK_WINDOW anchors; the rate — host ns per
 * GPU ns — is the median of the slopes between the window's anchors half a
 * second or more apart (Theil-Sen: one anchor the GPU picked up late, or a
 * record call that lost its CPU, moves a least-squares fit by tens of ppm
 * and the median not at all), anchors whose record or wait was slow left
 * out, and the elapsed times are scaled by it.
 */
#ifndef INGERO_PRELOAD_GPU_CLOCK_H
#define INGERO_PRELOAD_GPU_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_driver.h"

#define INGERO_GPU_CLOCK_WINDOW 16
/* Anchors closer than this give no slope: an anchor's time is off by the
 * GPU's pickup of its event, microseconds that vary (ppm over a second). */
#define INGERO_GPU_CLOCK_MIN_SPAN_NS 500000000ull
/* A rate further from the host's than this is not a clock's (the H100s
 * seen: -21 to +0.6 ppm; a VM paused, migrated, a driver reset): it is
 * said (INGERO_DEBUG) and the rate before kept. */
#define INGERO_GPU_CLOCK_MAX_PPM 500.0
/* Renewals failing in a row before the context's clock is given up (its
 * marks then coarse: done when the watcher saw them). */
#define INGERO_GPU_CLOCK_MAX_FAILURES 8

struct ingero_gpu_clock {
	void *ctx;
	void *stream;              /* private, non-blocking */
	void *ev[2];               /* the anchor and the one before it, alternated */
	unsigned cur;              /* ev[cur] is the anchor */
	uint64_t anchor_ns;        /* host time the anchor completed */
	uint64_t renewed_at;
	double ratio;              /* host ns per GPU ns */
	/* the last anchors: host time, GPU time since the window's first, and
	 * whether its record and wait were quick (a slope's end) */
	uint64_t host[INGERO_GPU_CLOCK_WINDOW];
	double gpu[INGERO_GPU_CLOCK_WINDOW];
	bool quick[INGERO_GPU_CLOCK_WINDOW];
	unsigned n;
	unsigned said;             /* anchors since the rate was said (INGERO_DEBUG) */
	unsigned failures;         /* renewals failed in a row */
	bool ok;
};

/* Makes the clock's stream and events in its context (pushed by the
 * caller) and takes the first anchor; false when the driver refused. */
bool ingero_gpu_clock_open(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d);
/* A new anchor (context pushed).  A renewal the driver refuses keeps the
 * anchor before it; INGERO_GPU_CLOCK_MAX_FAILURES in a row give the clock up. */
void ingero_gpu_clock_renew(struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d);
/* When event ev completed, on the host's clock: CUDA's result
 * (INGERO_CU_NOT_READY while it has not). */
CUresult_t ingero_gpu_clock_read(const struct ingero_gpu_clock *c, const struct ingero_gpu_driver *d, void *ev,
				 uint64_t *done);
/* A new anchor at host time t, gpu_ns of the GPU's time after the one
 * before (<= 0: not read, the window starts again); quick: its record and
 * wait were quick.  The rate refitted; the one before kept where no slope
 * spans enough or the fit is past INGERO_GPU_CLOCK_MAX_PPM. */
void ingero_gpu_clock_add(struct ingero_gpu_clock *c, uint64_t t, double gpu_ns, bool quick);
/* The rate of n anchors (host times, GPU times on one origin): 1 and *r
 * set, 0 where no two quick anchors span INGERO_GPU_CLOCK_MIN_SPAN_NS, -1
 * (*r set) past INGERO_GPU_CLOCK_MAX_PPM. */
int ingero_gpu_clock_fit(const uint64_t *host, const double *gpu, const bool *quick, unsigned n, double *r);
/* A rate's ppm: how much faster the GPU's clock runs than the host's. */
double ingero_gpu_clock_ppm(double ratio);

#endif
