/*
 * traced.h — what every BPF object and the collector agree on about the
 * shared maps (see traced.bpf.h): the kinds of records that travel through
 * the one ring buffer `events`, and the slots of the per-CPU `drops` array
 * where each program counts the records it could not reserve.
 *
 * Every record in the ring starts with a u32 kind (enum ingero_ev_kind);
 * the record layouts live in the header of the object that emits them
 * (sched.h, proc.h, samples.h).  One ring for all objects keeps the order
 * in which the kernel saw things (a fork comes before its child's samples).
 */
#ifndef INGERO_BPF_TRACED_H
#define INGERO_BPF_TRACED_H

#define INGERO_TRACED_MAX   65536   /* traced tgids */
/* A `traced` entry's value: enrolled, and perhaps paused — the program
 * paused its capture (cudaProfilerStop under INGERO_CAPTURE=cudaProfilerApi):
 * its process lifecycle is still followed, its scheduler, memory and
 * sample evidence is not, until it resumes. */
#define INGERO_TRACED_ON     1u
#define INGERO_TRACED_PAUSED 2u
/* Recording, but without one part of the eBPF evidence: a benchmark's
 * window (INGERO_SPLIT_BPF, collector/tracer.c) — no on-CPU samples, no
 * scheduler evidence (off-CPU intervals, competitors), no memory counts. */
#define INGERO_TRACED_NO_SAMPLES 4u
#define INGERO_TRACED_NO_SCHED   8u
#define INGERO_TRACED_NO_MEM     16u
#define INGERO_TRACED_HELD (INGERO_TRACED_NO_SAMPLES | INGERO_TRACED_NO_SCHED | INGERO_TRACED_NO_MEM)
#define INGERO_TASK_COMM    16

enum ingero_ev_kind {
	EV_OFF_CPU = 1,    /* struct off_cpu_event   (sched.h) */
	EV_CPU_BUSY = 2,   /* struct cpu_busy_event  (sched.h) */
	EV_FORK = 3,       /* struct proc_event      (proc.h) */
	EV_EXEC = 4,
	EV_EXIT = 5,
	EV_THREAD = 6,     /* a traced process created or renamed a thread */
	EV_SAMPLE = 7,     /* struct sample_event    (samples.h) */
	EV_BLOCK = 8,      /* struct sample_event: where a thread blocked (block.bpf.h) */
};

/* Slots of the `drops` per-CPU array; names in the losses table are
 * "bpf_ringbuf_" + drop_names[slot] (collector/bpf_common.c). */
enum ingero_drop_slot {
	DROP_SCHED_SWITCH = 0,   /* ring full at an off-CPU interval */
	DROP_CPU_BUSY,           /* ring full at a busy-time bucket */
	DROP_FORK,
	DROP_EXEC,
	DROP_EXIT,
	DROP_THREAD,
	DROP_SAMPLE,
	DROP_START_MAP,          /* per-thread switch-out map full */
	DROP_MEM_MAP,            /* page-alloc aggregation map full */
	DROP_COMP_MAP,           /* competitor aggregation map full */
	DROP_TRACED_MAP,         /* traced map full: a child was not enrolled */
	DROP_BLOCK,              /* ring full at a blocked thread's stack */
	DROP_UNCLOSED,           /* an interval its switch-in did not close: its row lost */
	DROP_NSLOTS,
};

#endif
