/*
 * clock.c — TSC ticks to CLOCK_MONOTONIC (see clock.h).
 *
 * The sender keeps up to CAL_POINTS calibration pairs, one every few
 * milliseconds while it runs (and at least one per drain).  A tick value is
 * converted by linear interpolation between the pairs around it, so the
 * kernel's own slewing of CLOCK_MONOTONIC (NTP) is followed; beyond the
 * last pair it extrapolates with the slope of the last interval, and
 * before the first with the first interval's slope.  Each pair is read as
 * rdtsc, clock_gettime, rdtsc and kept only when the two reads are close
 * (the thread was not preempted in between).
 */
#include "clock.h"

#include <cpuid.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

#define CAL_POINTS 8192

struct pair {
	uint64_t tsc, ns;
};

static struct pair pts[CAL_POINTS];   /* sender only, plus the constructor's first */
static struct pair first;             /* the constructor's, kept for ingero_clock_ticks_per_us */
static unsigned head, count;          /* ring of pairs, oldest at head */

static struct pair sample(void)
{
	struct pair best = { 0, 0 };
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a = __rdtsc();
		uint64_t ns = ingero_now();
		uint64_t b = __rdtsc();
		if (b - a < best_gap) {
			best_gap = b - a;
			best.tsc = a + (b - a) / 2;
			best.ns = ns;
		}
		if (best_gap < 2000)
			break;
	}
	return best;
}

static void add(struct pair p)
{
	if (count && p.tsc <= pts[(head + count - 1) % CAL_POINTS].tsc)
		return;
	if (count == CAL_POINTS) {
		pts[head] = p;
		head = (head + 1) % CAL_POINTS;
	} else {
		pts[(head + count) % CAL_POINTS] = p;
		count++;
	}
}

void ingero_clock_init(void)
{
	unsigned a, b, c, d;
	/* CPUID 0x80000007 EDX bit 8: invariant TSC (constant rate, runs in
	 * every C-state) */
	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		ingero_hot.use_tsc = true;
	if (ingero_hot.use_tsc) {
		first = sample();
		add(first);
	}
}

uint64_t ingero_clock_ticks_per_us(void)
{
	if (!ingero_hot.use_tsc || !first.ns)
		return 1000;
	struct pair now = sample();
	if (now.ns - first.ns < 1000000)   /* under a millisecond since init: too short to tell */
		return 0;
	return (now.tsc - first.tsc) * 1000 / (now.ns - first.ns);
}

/* A hypervisor's clock made from the TSC (the host's, scaled): where
 * INGERO_CLOCK_TSC asks for it, stamping with the TSC is what the kernel's
 * clock does too, and the stamps are mapped onto CLOCK_MONOTONIC by
 * calibration all the same.  Not hpet or acpi_pm: a kernel that left the
 * TSC for one of those found it unfit (unsynchronised, stopping). */
static bool paravirt_tsc(const char *cs)
{
	return strncmp(cs, "kvm-clock", 9) == 0 || strncmp(cs, "xen", 3) == 0 ||
	       strncmp(cs, "hyperv_clocksource_tsc_page", 27) == 0;
}

void ingero_clock_check(void)
{
	if (!ingero_hot.use_tsc)
		return;
	char buf[32] = "";
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = 0;
		close(fd);
	}
	if (strncmp(buf, "tsc", 3) != 0 && !(ingero_cfg.clock_tsc && paravirt_tsc(buf))) {
		ingero_debug("kernel clocksource is '%.*s', not tsc%s: stamping with clock_gettime",
			     (int)strcspn(buf, "\n"), buf,
			     ingero_cfg.clock_tsc ? " nor a hypervisor's clock made from it" : "");
		ingero_hot.use_tsc = false;
	}
}

void ingero_clock_calibrate(uint64_t min_gap_ns)
{
	if (count) {
		const struct pair *last = &pts[(head + count - 1) % CAL_POINTS];
		if (ingero_now() - last->ns < min_gap_ns)
			return;
	}
	add(sample());
}

static const struct pair *at(unsigned i)
{
	return &pts[(head + i) % CAL_POINTS];
}

static uint64_t interp(const struct pair *p, const struct pair *q, uint64_t tsc)
{
	if (q->tsc == p->tsc)
		return p->ns;
	__int128 dt = (__int128)tsc - (__int128)p->tsc;
	__int128 ns = (__int128)p->ns + dt * (__int128)(q->ns - p->ns) / (__int128)(q->tsc - p->tsc);
	return ns < 0 ? 0 : (uint64_t)ns;
}

uint64_t ingero_clock_ns(uint64_t tsc)
{
	if (count == 0)
		return 0;
	if (count == 1) {
		/* one pair: assume the nominal rate until a second one exists */
		struct pair now = sample();
		add(now);
	}
	if (count < 2)
		return at(0)->ns;
	/* the last pair with tsc ≤ the value */
	unsigned lo = 0, hi = count;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (at(mid)->tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return interp(at(0), at(1), tsc);
	if (lo == count)
		return interp(at(count - 2), at(count - 1), tsc);
	return interp(at(lo - 1), at(lo), tsc);
}
