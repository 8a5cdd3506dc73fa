/*
 * samples.h — on-CPU samples samples.bpf.c emits (contract with
 * collector/samples.c): a traced thread seen on a CPU by the software
 * CPU clock, with its user and kernel stacks as ids in the `stacks` map
 * (negative: none — e.g. a sample in user mode has no kernel stack).
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
	__s32 user_stack;
	__s32 kernel_stack;
	__u64 user_sp_word;  /* the word at the user stack pointer: a leaf
			      * function's return address (see samples.c) */
};

#endif
