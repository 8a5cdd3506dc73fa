/*
 * record.h — what producers put into the ring, and the per-call hot path
 * the hooks share.
 *
 * Ring records are plain structs (same process image on both ends: the
 * producer is the owner or a fork of it), each starting with rrec_hdr.
 * Variable-length ones (STACK, KERNEL) span several slots; the ring puts
 * them back together for the sender.
 */
#ifndef INGERO_PRELOAD_RECORD_H
#define INGERO_PRELOAD_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#include "ingero/api.h"
#include "ingero/event.h"
#include "hot_data.h"
#include "lane.h"
#include "stack_budget.h"

enum ingero_rrec_type {
	INGERO_RREC_CALL = 1,
	INGERO_RREC_HELLO = 2,
	INGERO_RREC_STACK = 3,
	INGERO_RREC_KERNEL = 4,
	INGERO_RREC_BYE = 5,
	INGERO_RREC_GPU = 6,
	INGERO_RREC_GPU_STATS = 7,
	INGERO_RREC_CAPTURE = 8,
	INGERO_RREC_COLL = 9,
	INGERO_RREC_RANGE = 10,
	INGERO_RREC_RANGE_STATS = 11,
};

struct rrec_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t pad;
	uint32_t pid;
};

/* rrec_hdr.flags of a CALL: start/dur are TSC ticks, not ns (clock.h). */
#define INGERO_RREC_TSC 1u

struct rrec_call {
	struct rrec_hdr h;
	struct ingero_cuda_call ev;
};

struct rrec_hello {
	struct rrec_hdr h;
	uint32_t ppid;
	uint32_t pad;
	uint64_t start_ns;
	char comm[16];
};

struct rrec_bye {
	struct rrec_hdr h;
	uint64_t end_ns;
};

/* GPU: a mark's completion (gpu_marks.h).  h.flags INGERO_RREC_TSC: rec is
 * in ticks; done_ns and seen_ns are CLOCK_MONOTONIC ns. */
struct rrec_gpu {
	struct rrec_hdr h;
	uint32_t mflags;              /* enum ingero_gpu_mark_flags */
	uint32_t pad;
	uint64_t stream;
	uint64_t rec;                 /* recorded (host) */
	uint64_t done_ns;             /* completed (GPU clock, in host time) */
	uint64_t seen_ns;             /* when the watcher found it complete */
};

/* CAPTURE: the program asked to record (1) or pause (0) at t_ns (capture.c). */
struct rrec_capture {
	struct rrec_hdr h;
	uint64_t t_ns;
	uint32_t recording;
	uint32_t pad;
};

/* COLL: an NCCL call (nccl_hooks.c; wire.h COLL).  h.flags INGERO_RREC_TSC:
 * start and dur are ticks. */
struct rrec_coll {
	struct rrec_hdr h;
	uint8_t op;                   /* enum ingero_nccl_op */
	uint8_t pad;
	uint16_t cflags;              /* enum ingero_coll_flags */
	uint32_t tid;
	int32_t rank, nranks, peer, dtype, ret, pad2;
	uint64_t comm, comm_id, seq, count, stream, start, dur;
	uint64_t lost;                /* COLL records the process lost before this one */
};

/* RANGE: an NVTX range or mark (nvtx_hooks.c; wire.h RANGE), its name
 * (name_len bytes, not NUL-terminated) after it.  h.flags INGERO_RREC_TSC:
 * start and dur are ticks. */
struct rrec_range {
	struct rrec_hdr h;
	uint32_t tid;
	uint16_t depth;
	uint8_t kind;                 /* enum ingero_range_kind */
	uint8_t pad;
	uint64_t start, dur;
	uint64_t lost;                /* RANGE records the process lost before this one */
	uint16_t name_len;
	char name[];
};

/* RANGE_STATS: the NVTX ranges the process lost in all (nvtx_hooks.c). */
struct rrec_range_stats {
	struct rrec_hdr h;
	uint64_t lost;
};

/* GPU_STATS: the watcher's cumulative counts. */
struct rrec_gpu_stats {
	struct rrec_hdr h;
	uint64_t made, lost;
};

/* STACK: n_native instruction pointers (innermost first), then n_python
 * frames, each rrec_pyframe followed by file_len + func_len bytes. */
struct rrec_stack {
	struct rrec_hdr h;
	uint64_t id;
	uint16_t n_native;
	uint16_t n_python;
	uint32_t pad;
	uint64_t ips[];
};

struct rrec_pyframe {
	uint32_t line;
	uint16_t file_len;
	uint16_t func_len;
};

/* KERNEL: a launched function handle; flags say what it is and the name (if
 * the producer could get it) follows. */
enum ingero_kernel_kind {
	INGERO_KERNEL_NONE = 0,
	INGERO_KERNEL_HOST_STUB = 1,  /* cudaLaunchKernel(ExC): a host stub address */
	INGERO_KERNEL_CUKERNEL = 2,   /* __cudaLaunchKernel: a cudaKernel_t / CUkernel */
	INGERO_KERNEL_CUFUNC = 3,     /* cuLaunchKernel(Ex): a CUfunction */
};
struct rrec_kernel {
	struct rrec_hdr h;            /* flags: enum ingero_kernel_kind */
	uint64_t addr;
	uint16_t name_len;            /* 0: the sender names it from the address */
	char name[];
};

#define INGERO_KERNEL_NAME_MAX 1024

/* The per-launch path's functions, together and in the order a launch runs
 * them, so that its code is a few consecutive lines in one page rather than
 * scattered over the library, whose lines and pages a big program has
 * evicted between two of its calls (`make bench-cold`): each goes into
 * .text.sorted.ingero.KEY, which the linker places in the order of KEY,
 * right after .text.hot (binutils 2.36+; older ones put it in .text, as
 * they do any named section).  Each starts a cache line (one line fewer, on
 * average, than starting mid-line).  Keys, by what calls them:
 *   10-13  in one page: PyTorch's own kernels' launches (the runtime's
 *          __cudaLaunchKernel, whose driver call passes through our
 *          cuLaunchKernel's entry) and what every launch shares
 *          (ingero_emit_launch, ingero_gpu_note_slow); 14 the recording
 *          half of the driver's cuLaunchKernel (cuBLAS's and Triton's
 *          launches, as cuGetProcAddress hands it out), the next page
 *   2x  cuLaunchKernelEx   3x  the runtime's public launches   4x  the rest */
#define INGERO_HOT_AT(key) __attribute__((hot, aligned(64), section(".text.sorted.ingero." #key)))

/* INGERO_SELF_TIME, a thread's share by capture mode (ingero_mode_real, below) */
struct ingero_mode_time {
	uint64_t real_ticks, gap_ticks, short_ticks;
	uint32_t calls, gaps, shorts;
};

/* --- per-thread state of the hot path -------------------------------------- */
/* (what a recorded launch reads and writes, in the first cache line) */
struct __attribute__((aligned(64))) ingero_tls {
	int depth;          /* nesting of interposed calls: only depth 0 records */
	unsigned gen;       /* ingero_hot.gen when tid was cached */
	uint32_t tid;
	uint32_t launches;  /* for 1-in-N launch stack sampling */
	uint8_t puts;       /* records put, for the sender's wake-up check (record.c: its low bits) */
	/* the launch path may be taken (ingero_emit_launch): the process
	 * records into a ring it owns, this thread's id is cached and it has
	 * a lane, launches take no stack by class.  Set by the general path
	 * once all hold — within a process none stops holding — and cleared
	 * in a fork child (fork.c: its one thread is the one that forked), so
	 * it rests on the fork handler running, as the gen's check did */
	bool launch_fast;
	uint16_t mark_state; /* the calling thread's GPU-mark runs (gpu_marks.c: marks of the run, or launches to pass over) */
	/* the stream this thread queued work on last, and its GPU-mark slot
	 * (gpu_marks.c): a launch loop finds it here, not by a probe; valid
	 * while ingero_hot.gpu_slots_gen is gpu_gen */
	uint32_t gpu_gen;
	uint64_t gpu_key;
	void *gpu_slot;
	/* this thread's lane (lane.h), claimed at its first recorded call */
	struct ingero_lane_writer lane;
	uint32_t lane_retry;  /* none was free: calls through the ring until this counts down */
	uint32_t mark_rng;    /* draws the launches passed over before a run of GPU marks */
	struct ingero_stack_budget stack_budget;
	/* ticks (clock.h): a launch sample due before this would find the
	 * stack budget refusing it (emit_stack), so the launch stays on its
	 * fast path, marked withheld, instead of taking the general one */
	uint64_t samples_refused_until;
	uint64_t self_ticks;  /* INGERO_SELF_TIME: not yet added to ingero_self_ticks */
	uint32_t self_calls;
	/* INGERO_SELF_TIME, by capture mode (0 paused, 1 recording): not yet
	 * added to ingero_mode_time; when this thread's last call returned */
	struct ingero_mode_time mode_time[2];
	uint64_t last_exit, gap_max, gap_short;
#ifdef INGERO_SELF_SEGMENTS
	uint64_t seg_last, seg[INGERO_SELF_SEGMENTS];
#endif
};
extern __thread struct ingero_tls ingero_tls __attribute__((tls_model("initial-exec")));

/* INGERO_SELF_TIME: the library's own time in recorded calls (TSC ticks:
 * a recorded call's time less its real function's), and how many calls;
 * the sender says it at exit.  What a call costs the program in place —
 * its code and data fetched again after the program's own work evicted
 * them — which no microbenchmark reproduces exactly (`make bench-cold`). */
extern _Atomic uint64_t ingero_self_ticks, ingero_self_calls;
/* INGERO_SELF_TIME, per capture mode: the real functions' time and the
 * program's own between two calls of a thread (gaps under
 * INGERO_GAP_MAX_NS: a sleep or a wait for the GPU is no code's time; and
 * apart, those under INGERO_GAP_SHORT_NS: the program's code alone, no
 * hand-over to another thread, no preemption) — whether recording slows
 * what is not the library's (the driver's calls, the program's code,
 * what interrupts it), against the same loop paused. */
#define INGERO_GAP_MAX_NS 1000000ull
#define INGERO_GAP_SHORT_NS 50000ull
extern _Atomic uint64_t ingero_mode_real[2], ingero_mode_gap[2], ingero_mode_calls[2], ingero_mode_gaps[2],
	ingero_mode_short[2], ingero_mode_shorts[2];
/* A build for finding where that time goes (-DINGERO_SELF_SEGMENTS=6, not
 * the product's: each mark reads the TSC): the recorded path's time split
 * at INGERO_SEG(i) marks (hooks.h, record.c), said at exit too. */
#ifdef INGERO_SELF_SEGMENTS
extern _Atomic uint64_t ingero_self_seg[INGERO_SELF_SEGMENTS];
#define INGERO_SEG_START(t) (ingero_tls.seg_last = (t))
#define INGERO_SEG(i)                                                  \
	do {                                                           \
		uint64_t n_ = ingero_stamp(ingero_hot.use_tsc);        \
		ingero_tls.seg[i] += n_ - ingero_tls.seg_last;         \
		ingero_tls.seg_last = n_;                              \
	} while (0)
#else
#define INGERO_SEG_START(t) ((void)0)
#define INGERO_SEG(i) ((void)0)
#endif
static inline void ingero_self_time_add(uint64_t ticks)
{
	ingero_tls.self_ticks += ticks;
	if (++ingero_tls.self_calls == 256) {
		atomic_fetch_add_explicit(&ingero_self_ticks, ingero_tls.self_ticks, memory_order_relaxed);
		atomic_fetch_add_explicit(&ingero_self_calls, ingero_tls.self_calls, memory_order_relaxed);
		ingero_tls.self_ticks = 0;
		ingero_tls.self_calls = 0;
#ifdef INGERO_SELF_SEGMENTS
		for (int i = 0; i < INGERO_SELF_SEGMENTS; i++) {
			atomic_fetch_add_explicit(&ingero_self_seg[i], ingero_tls.seg[i], memory_order_relaxed);
			ingero_tls.seg[i] = 0;
		}
#endif
	}
}

/* INGERO_SELF_TIME: a call of the given mode returned; its real function
 * took `real` ticks, it was entered at `in` and returned at `out`. */
void ingero_mode_time_add(int mode, uint64_t real, uint64_t in, uint64_t out);

/* CLOCK_MONOTONIC ns spent paused so far (capture.c): budgets earn nothing then. */
extern _Atomic uint64_t ingero_paused_ns;
/* At load, after ingero_hot.recording is set: a process that starts paused. */
void ingero_capture_init(void);

static inline uint64_t ingero_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A call's stamp: TSC ticks when tsc (ingero_hot.use_tsc), else ns. */
static inline uint64_t ingero_stamp(bool tsc)
{
	return tsc ? __rdtsc() : ingero_now();
}

/* Is this interposed call nested in another one on this thread (a runtime
 * call's own driver calls; our threads hold depth 1 for all theirs)?  It
 * is then forwarded as is, as a tail call: no frame of ours under the
 * real function, nothing written (`make bench-lines`).  An outermost call
 * holds depth 1 between ingero_enter and ingero_leave, recorded or not
 * (paused: so that a resume while it runs does not record its nested
 * calls as the program's own). */
static inline bool ingero_nested(void)
{
	return ingero_tls.depth != 0;
}

static inline bool ingero_recording_now(void)
{
	return atomic_load_explicit(&ingero_hot.recording, memory_order_relaxed);
}

static inline void ingero_enter(void)
{
	ingero_tls.depth++;
}

static inline void ingero_leave(void)
{
	ingero_tls.depth--;
}

/* Records one finished call; ev has api, start/dur, stream, bytes, dir,
 * flags, ret, kernel, grid/block filled in; pid, tid and stack_id are set
 * here.  cls is ingero_api_class(ev->api); kernel_kind says how to name
 * ev->kernel (launches); tsc, that
 * start_ns/dur_ns hold TSC ticks. */
void ingero_emit(struct ingero_cuda_call *ev, enum ingero_api_class cls, enum ingero_kernel_kind kernel_kind,
		 bool tsc);
/* A launch (INGERO_CLASS_LAUNCH), the path a training loop takes tens of
 * thousands of times a second: the wrapper fills in the lane unit the call
 * will most likely be (lane.h's short one: tag with its TSC bit, api, ret,
 * start, dur, stream, kernel, grid, block, flags), one line of its stack
 * where a cuda_call record is two; it is copied into the thread's lane as
 * is, and turned into a record only where it cannot be (a stack, no lane,
 * a full lane, a fork child).  Every line a call touches is one the
 * program's own work fetches again after it (`make bench-lines`). */
void ingero_emit_launch(const struct ingero_lane_short *u, enum ingero_kernel_kind kernel_kind);

/* The program asked to record (on) or to pause at t_ns (capture.c). */
void ingero_emit_capture(bool on, uint64_t t_ns);

/* The NVTX ranges the process lost, sent as it stops (nvtx_hooks.c): by
 * the owner before its final drain, by others before their BYE. */
void ingero_nvtx_final(void);
/* A fork child's NVTX state: the parent's open ranges and losses are not its own. */
void ingero_nvtx_after_fork(void);

/* The process is going away (destructor of a non-owner). */
void ingero_emit_bye(void);
/* A fork child's announcement (pid, ppid, comm). */
void ingero_emit_hello(void);

/* The calling thread's id (cached per thread and fork generation), for
 * records other than calls (nccl_hooks.c). */
uint32_t ingero_tid(void);

/* Puts one record into our ring; false if it was lost (and counted when it
 * is a CALL). */
bool ingero_put(const void *rec, uint32_t len, bool is_call);

#endif
