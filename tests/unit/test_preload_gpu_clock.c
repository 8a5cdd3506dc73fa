/*
 * test_preload_gpu_clock.c — the GPU clock's rate against the host's, fitted
 * from the anchors (preload/gpu_clock.c): a drift of -20 ppm (an H100 host's)
 * under the anchors' pickup noise is found within a few ppm, and a mark a
 * quarter second past the last anchor is then placed within a microsecond,
 * where the unscaled elapsed time puts it 5 us early; too short a span, or a
 * rate no clock has, leaves the elapsed times as they are.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../preload/gpu_clock.h"

#define QUARTER 250000000ull

/* n anchors a quarter second apart on the host, the GPU's clock running
 * ppm fast, each anchor's host time read early by 0..noise_ns (the GPU
 * picks its event up after the record call returns) */
static void anchors(uint64_t *host, double *gpu, unsigned n, double ppm, unsigned noise_ns, unsigned seed)
{
	srand(seed);
	for (unsigned i = 0; i < n; i++) {
		uint64_t stamp = 1000000000000ull + i * QUARTER;   /* host time of the GPU's stamp */
		host[i] = stamp - (noise_ns ? (uint64_t)(rand() % noise_ns) : 0);
		gpu[i] = (double)(stamp - 1000000000000ull) * (1.0 + ppm * 1e-6);
	}
}

static void drift_found_under_noise(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 20; seed++) {
		uint64_t host[INGERO_GPU_CLOCK_WINDOW];
		double gpu[INGERO_GPU_CLOCK_WINDOW];
		anchors(host, gpu, INGERO_GPU_CLOCK_WINDOW, -20, 5000, seed);
		double r = ingero_gpu_clock_fit(host, gpu, INGERO_GPU_CLOCK_WINDOW);
		double ppm = (1.0 / r - 1.0) * 1e6;
		assert_true(ppm > -23 && ppm < -17);
		/* a mark stamped a quarter second after the last anchor: its host
		 * time from the anchor and the elapsed time, scaled and not */
		double elapsed = QUARTER * (1.0 - 20e-6);
		double scaled = (double)host[INGERO_GPU_CLOCK_WINDOW - 1] + elapsed * r;
		double raw = (double)host[INGERO_GPU_CLOCK_WINDOW - 1] + elapsed;
		double truth = 1000000000000.0 + INGERO_GPU_CLOCK_WINDOW * (double)QUARTER;
		/* (the anchor itself is read up to 5 us early: that offset stays) */
		assert_true(truth - scaled > -1000 && truth - scaled < 5000 + 1000);
		assert_true(truth - raw > 4000);
	}
}

static void exact_without_noise(void **state)
{
	(void)state;
	uint64_t host[8];
	double gpu[8];
	anchors(host, gpu, 8, 0.6, 0, 1);
	double ppm = (1.0 / ingero_gpu_clock_fit(host, gpu, 8) - 1.0) * 1e6;
	assert_true(ppm > 0.59 && ppm < 0.61);
}

static void too_short_or_too_far(void **state)
{
	(void)state;
	uint64_t host[INGERO_GPU_CLOCK_WINDOW];
	double gpu[INGERO_GPU_CLOCK_WINDOW];
	anchors(host, gpu, 2, -20, 0, 1);   /* a quarter second: noise */
	assert_true(ingero_gpu_clock_fit(host, gpu, 2) == 1.0);
	anchors(host, gpu, 3, -20, 0, 1);   /* half a second: fitted */
	assert_true(ingero_gpu_clock_fit(host, gpu, 3) != 1.0);
	assert_true(ingero_gpu_clock_fit(host, gpu, 1) == 1.0);
	assert_true(ingero_gpu_clock_fit(host, gpu, 0) == 1.0);
	anchors(host, gpu, 8, -1900, 0, 1);
	assert_true(ingero_gpu_clock_fit(host, gpu, 8) != 1.0);
	anchors(host, gpu, 8, 2500, 0, 1);   /* no clock's rate: a VM paused, a reset */
	assert_true(ingero_gpu_clock_fit(host, gpu, 8) == 1.0);
	anchors(host, gpu, 8, -2500, 0, 1);
	assert_true(ingero_gpu_clock_fit(host, gpu, 8) == 1.0);
	for (unsigned i = 0; i < 8; i++)     /* the GPU's clock stood still */
		gpu[i] = 0;
	assert_true(ingero_gpu_clock_fit(host, gpu, 8) == 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drift_found_under_noise),
		cmocka_unit_test(exact_without_noise),
		cmocka_unit_test(too_short_or_too_far),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
