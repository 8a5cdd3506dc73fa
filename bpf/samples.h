/*
 * samples.h — on-CPU samples samples.bpf.c emits (contract with
 * collector/samples.c): a traced thread seen on a CPU by the software
 * CPU clock, with its user and kernel stacks copied into the record
 * (innermost first).  Copying instead of a stack-id map means no hash
 * collisions and no map to fill: the collector interns stacks itself.
 *
 * In a CPython process (an entry in py_procs, filled by
 * collector/python.c) the record also carries the thread's Python frames:
 * each frame's code object and instruction (pointer, or f_lasti on 3.10),
 * innermost first, named later in user space; and whether the thread is
 * the one running the cyclic garbage collector (py_gc).
 */
#ifndef INGERO_BPF_SAMPLES_H
#define INGERO_BPF_SAMPLES_H

#include "traced.h"

#define INGERO_STACK_DEPTH 127   /* PERF_MAX_STACK_DEPTH */
#define INGERO_PY_DEPTH 48       /* Python frames per sample */
#define INGERO_PY_THREADS 256    /* thread states searched for the sampled thread */

/* Where one process's CPython keeps its threads and frames
 * (include/ingero/python_layout.h, with the runtime's address). */
struct py_proc {
	__u64 runtime;             /* &_PyRuntime in the process */
	__u32 rt_interp_main, interp_threads_head, ts_next, ts_thread_id, ts_frame;
	__s32 cf_current;          /* -1: no cframe */
	__u32 fr_code, fr_prev, fr_instr;
	__s32 fr_owner;            /* -1: no owner byte (3.10) */
	__u32 instr_is_int;        /* 3.10: f_lasti, an int */
	__u32 skip_owner;          /* owner value of entry shims (3.12+), else 256 */
	/* the garbage collector running in the sampled thread: the
	 * interpreter's gc.collecting, and the GIL's last holder, in _PyRuntime
	 * (3.10, 3.11) or in the interpreter (3.12+); -1: not known */
	__s32 gc_collecting, gil_holder_rt, gil_holder_interp;
	/* the bytes of a frame that hold code, previous, instruction and
	 * owner: read in one copy per frame (0: field by field) */
	__u32 fr_span;
};

/* the most of a frame read in one copy (3.10's f_lasti ends at 100) */
#define INGERO_PY_FRAME_SPAN 128

struct py_frame {
	__u64 code;
	__u64 instr;
};

struct sample_event {
	__u32 kind;        /* EV_SAMPLE */
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns;
	__u64 user_sp_word;  /* the word at the user stack pointer: a frameless
			      * leaf function's return address (see samples.c) */
	__u32 n_user;      /* frames in user[] */
	__u32 n_kernel;    /* frames in kernel[] */
	__u64 user[INGERO_STACK_DEPTH];
	__u64 kernel[INGERO_STACK_DEPTH];
	__u32 n_py;        /* frames in py[] */
	__u32 py_status;   /* enum py_status */
	struct py_frame py[INGERO_PY_DEPTH];
	__u32 chance;      /* EV_BLOCK: the chance the block had of a stack, in 2^-32 units (block.bpf.h) */
	__u32 py_gc;       /* 1: the thread runs CPython's cyclic garbage collector (its
			    * interpreter's gc.collecting is set and it holds the GIL);
			    * named as an innermost Python frame "<gc>" */
};

enum py_status {
	PY_NONE = 0,         /* not a Python process (or not known yet) */
	PY_OK = 1,           /* frames found (maybe none: the thread runs no Python) */
	PY_NO_THREAD = 2,    /* no thread state for this thread (not a Python thread) */
	PY_READ_FAILED = 3,  /* a read failed on the way (paged out, or a layout mismatch) */
	PY_AMBIGUOUS = 4,    /* two thread states carry this thread's id */
};

#endif
