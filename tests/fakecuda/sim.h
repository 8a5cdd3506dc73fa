/*
 * sim.h — the fake GPU behind the fake libcuda.so.1 (internal to the driver).
 *
 * The device is a set of stream timelines: each stream holds the
 * CLOCK_MONOTONIC instant its queued work completes ("busy until").  Work is
 * queued by advancing that instant; a host wait sleeps until it.  Nothing is
 * really computed or copied: times follow the configured rates, never the
 * speed of this machine.
 */
#ifndef FAKECUDA_SIM_H
#define FAKECUDA_SIM_H

#include <stddef.h>
#include <stdint.h>

/* Settings, read once from the environment (see sim.c for the variables). */
struct sim_config {
	int noop;                /* FAKECUDA_NOOP: every call returns at once */
	uint64_t kernel_ns;      /* device time of one kernel */
	uint64_t launch_ns;      /* host time a launch spends on-CPU */
	uint64_t sync_extra_ns;  /* added to every host wait for the device */
	double pinned_gbps;      /* DMA rate, pinned host memory (bytes/ns) */
	double pageable_gbps;    /* staging rate, pageable host memory */
	double d2d_gbps;         /* device-to-device and memset rate */
	int pageable_on_cpu;     /* 1: pageable staging burns CPU time; 0: sleeps */
	double gpu_rate;         /* FAKECUDA_GPU_PPM: the event clock's ns per host ns */
};

const struct sim_config *sim_cfg(void);
uint64_t sim_now(void);

/* --- streams --------------------------------------------------------------- */
#define SIM_STREAM_MAGIC 0x5354524du   /* "STRM" */
struct sim_stream {
	uint32_t magic;
	uint64_t busy_until;   /* CLOCK_MONOTONIC ns the queued work completes */
};

struct sim_stream *sim_stream_new(void);
void sim_stream_free(struct sim_stream *s);
/* Handle → stream.  NULL and CU_STREAM_LEGACY name the legacy default
 * stream, CU_STREAM_PER_THREAD the calling thread's; a NULL handle means the
 * per-thread stream when per_thread is set (the _ptsz/_ptds entry points).
 * Returns NULL for a handle that is not a stream. */
struct sim_stream *sim_stream_of(const void *handle, int per_thread);

/* Queues dur_ns of device work on s after what is already queued; returns
 * the instant it completes. */
uint64_t sim_queue(struct sim_stream *s, uint64_t dur_ns);
/* Moves s's completion to at least t (a dependency on other work). */
void sim_queue_after(struct sim_stream *s, uint64_t t);
uint64_t sim_stream_done_at(const struct sim_stream *s);
uint64_t sim_device_done_at(void);

/* Host waits: until the instant t (off-CPU, like a blocking sync), then the
 * configured extra sync latency. */
void sim_wait_until(uint64_t t);
/* Host work: stay on-CPU for ns of wall time. */
void sim_spin(uint64_t ns);

/* --- events --------------------------------------------------------------------- */
#define SIM_EVENT_MAGIC 0x45564e54u    /* "EVNT" */
struct sim_event {
	uint32_t magic;
	uint64_t done_at;      /* completion of the work before the record */
};

/* --- memory ---------------------------------------------------------------------- */
/* Device memory is fake addresses at and above this (never valid host
 * addresses on x86-64: user space ends below 2^47). */
#define SIM_DEVICE_BASE (1ull << 48)
uint64_t sim_device_alloc(size_t bytes);
int sim_is_device(uint64_t addr);

/* Pinned host ranges: cuMemHostAlloc / cuMemAllocHost / cuMemHostRegister. */
/* owned: the driver allocated the memory (cuMemHostAlloc) rather than the
 * program registering its own (cuMemHostRegister). */
int sim_pinned_add(const void *p, size_t len, int owned);   /* 0, or -1 if already there */
int sim_pinned_remove(const void *p, int owned);            /* 0, or -1 if no such range */
int sim_is_pinned(const void *p, size_t len);         /* whole [p, p+len) inside one range */

/* --- copies ---------------------------------------------------------------------- */
enum sim_dir { SIM_H2D, SIM_D2H, SIM_D2D, SIM_H2H };
/* Simulates one copy of bytes in direction dir whose host side is host
 * (NULL for D2D) on stream s.  async: the *Async form of the call. */
void sim_copy(enum sim_dir dir, const void *host, size_t bytes, struct sim_stream *s, int async);

#endif
