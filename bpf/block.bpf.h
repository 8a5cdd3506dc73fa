/*
 * block.bpf.h — where a traced thread was when it blocked: sched.bpf.c's
 * switch hook draws some of a thread's blocks (block_drawn) and tail-calls
 * samples.bpf.c's on_block, which copies the thread's user stack and Python
 * frames as it leaves the CPU (it is still `current` there).  A tail call,
 * not a second program on sched_switch: every switch on the machine runs
 * the one hook, and the scheduler object needs neither the Python walk
 * nor a kernel that allows it (an empty slot falls through).
 *
 * Which blocks: the time a thread spends blocked is what counts, not the
 * number of its blocks (c25 on the H200: 318 sleeps were 80 % of its main
 * thread's blocked time and 9 % of its 3,539 blocks, so a stack per block
 * drawn at random named the sleep 4 times in 72).  A block is taken with a
 * chance of its expected length over x — the thread's mean block length in
 * that system call so far (learned as each block ends, a moving average per
 * class of system call) over a per-thread span x — so that in expectation
 * a stack comes per x of blocked time, whichever call it is spent in; x
 * doubles while stacks come closer than BLOCK_NEAR_NS apart and halves after
 * BLOCK_FAR_NS without one: 12 to 50 stacks a second for a process's first
 * thread (where a training loop runs), a tenth of that for its other
 * threads.  The chance goes with the stack (block_pick.chance), and the
 * analyzer weighs each by its block's time over its chance: an unbiased
 * estimate of where the time went, whatever the guess of lengths.  Drawn,
 * not "the first block after T": that would always pick the same one of a
 * periodic loop's blocks.  Both objects declare these maps; the collector
 * hands sched's fds to samples before it loads (collector/samples.c).
 */
#ifndef INGERO_BLOCK_BPF_H
#define INGERO_BLOCK_BPF_H

#define BLOCK_NEAR_NS 20000000ull    /* closer: x doubles */
#define BLOCK_FAR_NS  80000000ull    /* none for this long: x halves */
#define BLOCK_OTHER_THREADS 10       /* the other threads' spacing: this many times more */
#define BLOCK_X_MIN_US 100u          /* x's range, µs */
#define BLOCK_X_MAX_US (1u << 30)
#define BLOCK_CLASSES 16             /* moving averages per thread, by system call */

static __always_inline u32 block_class(s32 syscall)
{
	return (((u32)syscall * 2654435761u) >> 28) & (BLOCK_CLASSES - 1);
}

/* What the switch hook hands on_block: the switch's time (the block's
 * off_cpu start_ns, which joins the two) and the chance the block had,
 * in 2^-32 units. */
struct block_pick {
	u64 at;
	u32 chance;
	u32 pad;
};

/* slot 0: samples.bpf.c's on_block, put there by the collector */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} block_tail SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct block_pick);
} block_at SEC(".maps");

#endif
