/*
 * pinned.c — a sorted array of [start, end) ranges under a seqlock.
 *
 * Lookups happen on every copy and must never wait: a reader takes the
 * sequence, binary-searches with relaxed atomic loads, and retries a few
 * times if a writer was active; if it keeps losing, it answers "unknown"
 * rather than spin.  Writers (pinned allocations: rare) serialise on a
 * spin flag that they only try for a bounded time: a writer interrupted by
 * a signal whose handler also allocates pinned memory would otherwise
 * deadlock; instead the second writer gives up and marks the table lossy,
 * after which "not found" means "unknown" rather than "pageable".  A fork
 * child resets the flag (the thread that held it does not exist there).
 */
#include "pinned.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CAP 8192

static _Atomic uint64_t seq;
static atomic_flag wlock = ATOMIC_FLAG_INIT;
static _Atomic uint32_t count;
static _Atomic bool lossy;
static _Atomic uint64_t starts[CAP], ends[CAP];

static bool wlock_try(void)
{
	for (int i = 0; i < 1 << 16; i++) {
		if (!atomic_flag_test_and_set_explicit(&wlock, memory_order_acquire))
			return true;
		__builtin_ia32_pause();
	}
	return false;
}

static void wbegin(void)
{
	atomic_store_explicit(&seq, atomic_load_explicit(&seq, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void wend(void)
{
	atomic_store_explicit(&seq, atomic_load_explicit(&seq, memory_order_relaxed) + 1,
			      memory_order_release);
	atomic_flag_clear_explicit(&wlock, memory_order_release);
}

/* First index whose start is > a (count if none). */
static uint32_t upper(uint64_t a, uint32_t n)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (atomic_load_explicit(&starts[mid], memory_order_relaxed) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void ingero_pinned_add(const void *p, size_t len)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	if (!p || !len)
		return;
	if (!wlock_try()) {
		atomic_store(&lossy, true);
		return;
	}
	uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
	uint32_t at = upper(a, n);
	if (at > 0 && atomic_load_explicit(&starts[at - 1], memory_order_relaxed) == a) {
		/* the same allocation seen twice (runtime call, then its driver
		 * call): one range */
		wbegin();
		atomic_store_explicit(&ends[at - 1], a + len, memory_order_relaxed);
		wend();
		return;
	}
	if (n == CAP) {
		atomic_store(&lossy, true);
		atomic_flag_clear_explicit(&wlock, memory_order_release);
		return;
	}
	wbegin();
	uint32_t i = upper(a, n);
	for (uint32_t j = n; j > i; j--) {
		atomic_store_explicit(&starts[j], atomic_load_explicit(&starts[j - 1], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&ends[j], atomic_load_explicit(&ends[j - 1], memory_order_relaxed),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&starts[i], a, memory_order_relaxed);
	atomic_store_explicit(&ends[i], a + len, memory_order_relaxed);
	atomic_store_explicit(&count, n + 1, memory_order_relaxed);
	wend();
}

void ingero_pinned_remove(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	if (!wlock_try()) {
		atomic_store(&lossy, true);
		return;
	}
	uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
	uint32_t i = upper(a, n);
	if (i == 0 || atomic_load_explicit(&starts[i - 1], memory_order_relaxed) != a) {
		atomic_flag_clear_explicit(&wlock, memory_order_release);
		return;
	}
	wbegin();
	for (uint32_t j = i - 1; j + 1 < n; j++) {
		atomic_store_explicit(&starts[j], atomic_load_explicit(&starts[j + 1], memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&ends[j], atomic_load_explicit(&ends[j + 1], memory_order_relaxed),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&count, n - 1, memory_order_relaxed);
	wend();
}

int ingero_pinned_lookup(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t s1 = atomic_load_explicit(&seq, memory_order_acquire);
		if (s1 & 1) {
			__builtin_ia32_pause();
			continue;
		}
		uint32_t n = atomic_load_explicit(&count, memory_order_relaxed);
		if (n > CAP)
			n = CAP;
		uint32_t i = upper(a, n);
		bool in = i > 0 && a < atomic_load_explicit(&ends[i - 1], memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&seq, memory_order_relaxed) != s1)
			continue;
		if (in)
			return 1;
		return atomic_load_explicit(&lossy, memory_order_relaxed) ? -1 : 0;
	}
	return -1;
}

void ingero_pinned_after_fork(void)
{
	/* If the fork caught a writer mid-update, the sequence is odd: make it
	 * even again; the half-done update may have left one range wrong, so
	 * say so. */
	uint64_t s = atomic_load_explicit(&seq, memory_order_relaxed);
	if (s & 1) {
		atomic_store_explicit(&seq, s + 1, memory_order_relaxed);
		atomic_store_explicit(&lossy, true, memory_order_relaxed);
	}
	atomic_flag_clear(&wlock);
}

void ingero_pinned_reset(void)
{
	atomic_store(&count, 0);
	atomic_store(&lossy, false);
	atomic_store(&seq, 0);
	atomic_flag_clear(&wlock);
}
