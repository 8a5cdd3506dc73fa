/*
 * clock_anchor.c — where this node's CLOCK_MONOTONIC stands against
 * CLOCK_REALTIME, stored once per trace (session keys clock_anchor_*), so
 * that traces of one job written on several nodes can be put on one
 * timeline (ingero-analyze explain a.db b.db: every monotonic time plus
 * realtime − monotonic of its own node).
 *
 * The realtime clock is read between two monotonic reads; of 32 tries the
 * narrowest pair is kept: the anchor's monotonic time is their middle and
 * its uncertainty half their distance (a few tens of ns on an idle
 * machine, more on a busy VM).  That is this machine's reading only: how
 * far the nodes' realtime clocks disagree (NTP, PTP) is not known here —
 * the analyzer refines the alignment with the collectives, which complete
 * at nearly the same instant on every rank, and states what remains.
 * The boot id names the monotonic clock's epoch (a reboot restarts it).
 *
 * INGERO_TEST_CLOCK_OFFSET_NS (tests only: a signed integer) is added to
 * the realtime reading, to play a node whose clock is that far off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_anchor.h"
#include "store.h"

static uint64_t now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void clock_anchor_record(struct store *st)
{
	uint64_t best = UINT64_MAX, mono = 0, real = 0;
	for (int i = 0; i < 32; i++) {
		uint64_t m0 = now(CLOCK_MONOTONIC), r = now(CLOCK_REALTIME), m1 = now(CLOCK_MONOTONIC);
		if (m1 - m0 < best) {
			best = m1 - m0;
			mono = m0 + (m1 - m0) / 2;
			real = r;
		}
	}
	const char *off = getenv("INGERO_TEST_CLOCK_OFFSET_NS");
	if (off && *off)
		real += (uint64_t)strtoll(off, NULL, 10);
	char buf[64];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)real);
	store_session(st, "clock_anchor_realtime_ns", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)mono);
	store_session(st, "clock_anchor_mono_ns", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)(best / 2 + 1));
	store_session(st, "clock_anchor_uncertainty_ns", buf);
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (fgets(buf, sizeof buf, f)) {
			buf[strcspn(buf, "\n")] = 0;
			store_session(st, "boot_id", buf);
		}
		fclose(f);
	}
}
