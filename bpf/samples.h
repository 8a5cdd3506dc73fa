/*
 * samples.h — on-CPU samples samples.bpf.c emits (contract with
 * collector/samples.c): a traced thread seen on a CPU by the software
 * CPU clock, with its user and kernel stacks copied into the record
 * (innermost first).  Copying instead of a stack-id map means no hash
 * collisions and no map to fill: the collector interns stacks itself.
 */
#ifndef INGERO_BPF_SAMPLES_H
#define INGERO_BPF_SAMPLES_H

#include "traced.h"

#define INGERO_STACK_DEPTH 127   /* PERF_MAX_STACK_DEPTH */

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
};

#endif
