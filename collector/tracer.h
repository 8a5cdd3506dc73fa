/*
 * tracer.h — the kernel side of the collector: loads the BPF objects
 * (the bpf folder), shares their common maps, consumes the ring buffer and
 * drains the in-kernel aggregates into the store.  One loader file per
 * object, libbpf-tools style: sched.c, procs.c, mem.c, samples.c.
 */
#ifndef INGERO_COLLECTOR_TRACER_H
#define INGERO_COLLECTOR_TRACER_H

#include <stddef.h>
#include <stdint.h>

struct store;
struct symbolizer;

/* INGERO_SPLIT_BPF, for benchmarks: every second capture window of the
 * program keeps part of the eBPF evidence paused while the library records
 * (tracer_capture) — all of it, the on-CPU samples, the scheduler evidence
 * (off-CPU intervals, competitors) or the memory counts — so that one process
 * toggling its capture measures that part's share of recording chunk by
 * chunk against the rest, as the toggle measures recording against paused:
 * between processes the spread is wider than a part's share
 * (docs/gpu-runs.md section 20). */
enum tracer_split { TRACER_SPLIT_NONE, TRACER_SPLIT_ALL, TRACER_SPLIT_SAMPLES, TRACER_SPLIT_SCHED,
		    TRACER_SPLIT_MEM };
/* The setting's value by name: none for unset or empty, -1 for a name not known. */
int tracer_split_parse(const char *name);
/* Its name ("all", "samples", "sched", "mem"); NULL for none. */
const char *tracer_split_name(enum tracer_split s);
/* The names accepted, ", "-separated, for an error line. */
const char *tracer_split_choices(void);

struct tracer_opts {
	uint64_t bucket_ns;     /* aggregation bucket width */
	unsigned sample_hz;     /* on-CPU sampling rate; 0 = off */
	int python_frames;      /* Python frames in samples (bpf/samples.bpf.c's walk) */
	int block_stacks;       /* stacks of threads as they block (bpf/block.bpf.h) */
	enum tracer_split split;
};

struct tracer {
	struct store *store;
	struct tracer_opts o;
	int traced_fd, events_fd, drops_fd;
	int block_tail_fd, block_at_fd;   /* sched's hand-over to samples (bpf/block.bpf.h) */
	struct ring_buffer *rb;
	struct sched_bpf *sched;
	struct proc_bpf *proc;
	struct mem_bpf *mem;
	struct samples_bpf *samples;
	int ncpus;
	int *perf_fds;
	struct bpf_link **perf_links;
	struct symbolizer *sym;
	struct pythons *py;     /* CPython in traced processes (python.c) */
	uint64_t events;        /* records consumed */
	int stats_fd;           /* BPF run-time statistics on while open (bpf_cost.c) */
	struct bpf_modes *modes; /* their split between recording and paused (bpf_cost.c) */
	unsigned split_windows; /* INGERO_SPLIT_BPF: capture windows begun so far */
	int split_recording;    /* ... and whether one is open */
};

/* NULL when BPF is unavailable; `why` then says why (for the CUDA-only notice). */
struct tracer *tracer_open(struct store *st, const struct tracer_opts *o, char *why, size_t whylen);
int tracer_enroll(struct tracer *t, uint32_t pid);
/* The program paused (recording 0) or resumed its capture (CAPTURE
 * records): pid and its followed descendants stop or start giving
 * scheduler, memory and sample evidence; forks, execs and exits are still
 * followed.  No-op without BPF. */
int tracer_capture(struct tracer *t, uint32_t pid, int recording);
int tracer_poll(struct tracer *t, int timeout_ms);      /* consume the ring */
void tracer_flush(struct tracer *t, int final);         /* aggregates + loss counters */
void tracer_close(struct tracer *t);

/* per-object loaders and handlers */
void sched_new_generation(struct tracer *t);
int sched_attach(struct tracer *t);
void sched_event(struct tracer *t, const void *data, size_t len);
void sched_flush(struct tracer *t, int final);
/* Stop: sched_switch detached, the intervals closed but not sent, sent. */
void sched_flush_closed(struct tracer *t);
void sched_detach(struct tracer *t);

int procs_attach(struct tracer *t);
void procs_event(struct tracer *t, const void *data, size_t len);
void procs_detach(struct tracer *t);

int mem_attach(struct tracer *t);
void mem_flush(struct tracer *t, int final);
void mem_detach(struct tracer *t);

int samples_attach(struct tracer *t);
void samples_event(struct tracer *t, const void *data, size_t len);
void samples_detach(struct tracer *t);
void samples_fork(struct tracer *t, uint32_t child, uint32_t parent);
void samples_exec(struct tracer *t, uint32_t pid);
void samples_enroll(struct tracer *t, uint32_t pid);
void samples_exit(struct tracer *t, uint32_t pid);

/* the BPF programs' own run time (bpf_cost.c) */
void bpf_cost_enable(struct tracer *t);
void bpf_cost_store(struct tracer *t);   /* into the session table */
/* A capture pause or resume took effect: the programs' time so far goes
 * to the mode that ends (a program that toggles its capture: the toggle). */
void bpf_cost_mode(struct tracer *t, int recording);
void bpf_cost_disable(struct tracer *t);

uint64_t mono_now_ns(void);

struct bpf_map;
/* Point another object's shared maps at sched.bpf.c's (before its load). */
int tracer_share_maps(struct tracer *t, struct bpf_map *traced, struct bpf_map *events,
		      struct bpf_map *drops);

#endif
