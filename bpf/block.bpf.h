/*
 * block.bpf.h — where a traced thread was when it blocked: sched.bpf.c's
 * switch hook picks some of a thread's blocks (block_due) and tail-calls
 * samples.bpf.c's on_block, which copies the thread's user stack and Python
 * frames as it leaves the CPU (it is still `current` there).  A tail call,
 * not a second program on sched_switch: every switch on the machine runs
 * the one hook, and the scheduler object needs neither the Python walk
 * nor a kernel that allows it (an empty slot falls through).
 *
 * Which blocks: a thread's blocks are passed over a random number of times
 * (0 to 2k), k doubling while stacks come closer than BLOCK_NEAR_NS apart
 * and halving when further than BLOCK_FAR_NS: 12 to 50 stacks a second for
 * a process's first thread (where a training loop runs), a tenth of that
 * for its other threads, whatever their rate of blocks, none favoured by
 * its place in a loop (a fixed "first block after T" would always pick the
 * same one of a periodic loop's blocks).  Weighted by how long each lasted
 * (the off_cpu interval it names), they tell where the thread spent its
 * blocked time.  Both objects declare these maps; the collector hands sched's fds
 * to samples before it loads (collector/samples.c).
 */
#ifndef INGERO_BLOCK_BPF_H
#define INGERO_BLOCK_BPF_H

#define BLOCK_NEAR_NS 20000000ull    /* closer: pass over twice as many */
#define BLOCK_FAR_NS  80000000ull    /* further: half as many */
#define BLOCK_OTHER_THREADS 10       /* the other threads' spacing: this many times more */
#define BLOCK_K_MAX   65536u

/* slot 0: samples.bpf.c's on_block, put there by the collector */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} block_tail SEC(".maps");

/* the switch's time, for the tail-called program: the block's off_cpu
 * interval begins then (its start_ns), which joins the two */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} block_at SEC(".maps");

#endif
