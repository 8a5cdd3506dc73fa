/*
 * test_analyzer_gpu_estimate.c — the estimate of GPU time from work timed
 * alone (analyzer/measure/gpu_estimate.c), on one hand-built stream: which marks
 * time a piece of work (right behind it on an empty stream, or waiting for
 * it) and which only bound it (recorded late, after the stream was empty;
 * two pieces since the previous completion); the replay (alike work takes
 * the timed time, one piece after another, held to the completions, never
 * inside the stream's certainly-idle spans); work never timed alike takes
 * nothing in the short replay, the process's typical time in the middle
 * one and all it can in the long one; fewer than three times of a kind say
 * nothing; a kernel timed under another geometry stands in when its own
 * was never timed; the median replay's time summed by kernel; a kernel
 * queued behind another timed from the mark behind the one before (the
 * calling threads' runs where the GPU lags), but not from a completion
 * that only bounds; a stretch too short for the work queued before it
 * shared among that work as its times, not given to the first pieces;
 * a mark recorded while a long copy call on its stream still ran (the
 * watcher's, whose cuEventRecord waited for that call) times nothing; a
 * piece behind a wait for an event while another stream still ran times
 * nothing, one queued once that stream was done is timed; a
 * copy the host waited through takes its call's time in the replay; the
 * range's ends hold the mean of skewed times, and stay inside the
 * quartiles' where many were timed; a kernel timed in two places of a
 * step at two lengths stands in for each place with that place's time;
 * a large copy of a size never timed takes its bytes at the pace of its
 * link's large copies that were (either way between host and device), a
 * small one or one over a link never timed does not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../analyzer/measure/gpu_time_internal.h"

#include <stdlib.h>
#include <string.h>

#define US 1000ull

static void sub(struct stream_acc *s, uint64_t a, uint64_t b, uint32_t work, uint32_t func)
{
	s->sub = realloc(s->sub, (s->nsub + 1) * sizeof *s->sub);
	s->sub[s->nsub++] = (struct sub){ a, b, work, func, .launch = 1 };
}

/* A copy the host waited through (a pageable one): its call brackets it. */
static void sync_copy(struct stream_acc *s, uint64_t a, uint64_t b, uint32_t work, uint32_t func)
{
	s->sub = realloc(s->sub, (s->nsub + 1) * sizeof *s->sub);
	s->sub[s->nsub++] = (struct sub){ a, b, work, func, .host_sync = 1 };
}

/* A copy of kib KiB over link, queued asynchronously. */
static void copy(struct stream_acc *s, uint64_t a, uint64_t b, uint32_t work, uint32_t func, enum ia_link link,
		 uint32_t kib)
{
	s->sub = realloc(s->sub, (s->nsub + 1) * sizeof *s->sub);
	s->sub[s->nsub++] = (struct sub){ a, b, work, func, .link = link, .kib = kib };
}

static void mark(struct stream_acc *s, uint64_t r, uint64_t g)
{
	s->cp = realloc(s->cp, (s->ncp + 1) * sizeof *s->cp);
	s->cp[s->ncp++] = (struct cpt){ r, g, 1, 1 };
}

/* A host wait that returned at once: done by then, but when is not known. */
static void bound(struct stream_acc *s, uint64_t r, uint64_t g)
{
	s->cp = realloc(s->cp, (s->ncp + 1) * sizeof *s->cp);
	s->cp[s->ncp++] = (struct cpt){ r, g, 0, 0 };
}

/* An empty accumulator with one stream, of process 1. */
static struct stream_acc *stream(struct acc *a)
{
	memset(a, 0, sizeof *a);
	a->s = calloc(1, sizeof *a->s);
	a->n = 1;
	a->s->pid = 1;
	return a->s;
}

/* The pieces the stream's marks time alone, sorted for look-up, and each
 * piece's alike samples found (as gpu_time.c does before its replays). */
static void time_alone(struct acc *a, struct stream_acc *s)
{
	ia_gt_time_alone(a, s);
	ia_gt_samples_ready(a);
	ia_gt_alike_find(a, s);
}

static void acc_free(struct acc *a)
{
	ia_gt_acc_free(a);   /* the product's own: what it allocates, it frees */
}

static uint64_t total(const struct ia_span *sp, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += sp[i].b - sp[i].a;
	return t;
}

/* estimate of quantile q over [0, 10 ms), minus idle */
static uint64_t estimate(struct acc *a, int q, const struct ia_span *idle, size_t nidle, struct ia_span **out,
			 size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	ia_gt_estimate(a, a->s, q, 0, 10000 * US, idle, nidle, out, n, &cap);
	assert_int_equal(a->oom, 0);
	return total(*out, *n);
}

static void timed_alone_and_replayed(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* kernel 7 launched three times alone (call ends at 110, 150, 190),
	 * each with a mark 1 us later done 20 us after the call: timed */
	for (uint64_t t = 100; t <= 180; t += 40) {
		sub(s, t * US, (t + 10) * US, 7, 70);
		mark(s, (t + 11) * US, (t + 30) * US);
	}
	/* the same kernel twice more, then one mark behind both: it times
	 * neither (two pieces since the previous completion) */
	sub(s, 300 * US, 310 * US, 7, 70);
	sub(s, 400 * US, 410 * US, 7, 70);
	mark(s, 500 * US, 501 * US);
	/* kernel 8 alone, but its mark recorded 50 us after its call and done
	 * at once: only a bound (the thread lost its CPU in between), no time */
	sub(s, 600 * US, 610 * US, 8, 80);
	mark(s, 660 * US, 661 * US);
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 3);
	assert_int_equal(a.smp[0].ns, 20 * US);   /* filed under its work, then its function */

	struct ia_span *e;
	size_t n;
	/* p50: every 7 takes 20 us from its call's end; the 8, never timed
	 * alike, the process's typical piece (20 us too) */
	s->sub[5].launch = 0;   /* the 8 as a copy: its own entry, of a copy */
	assert_int_equal(estimate(&a, 1, NULL, 0, &e, &n), 120 * US);
	assert_int_equal(n, 6);
	/* the median replay's time by kernel (the 7's five pieces, 20 us each)
	 * and by kind of copy (the 8's one, 20 us) */
	assert_int_equal(a.nkt, 2);
	assert_int_equal(a.kt[0].func, 70);
	assert_int_equal(a.kt[0].launch, 1);
	assert_int_equal(a.kt[0].ns, 100 * US);
	assert_int_equal(a.kt[0].n, 5);
	assert_int_equal(a.kt[1].func, 80);
	assert_int_equal(a.kt[1].launch, 0);
	assert_int_equal(a.kt[1].ns, 20 * US);
	assert_int_equal(a.kt[1].n, 1);
	assert_int_equal(e[3].a, 310 * US);
	assert_int_equal(e[3].b, 330 * US);
	assert_int_equal(e[5].a, 610 * US);
	free(e);
	/* p25: the 8 takes nothing */
	assert_int_equal(estimate(&a, 0, NULL, 0, &e, &n), 100 * US);
	free(e);
	/* p75: the 8 takes all it can, until its completion at 661 */
	assert_int_equal(estimate(&a, 2, NULL, 0, &e, &n), 100 * US + 51 * US);
	free(e);
	/* never inside the stream's certainly-idle spans */
	struct ia_span idle[] = { { 315 * US, 325 * US } };
	assert_int_equal(estimate(&a, 1, idle, 1, &e, &n), 110 * US);
	free(e);

	size_t nwork = 0, alike = 0;
	ia_gt_coverage(s, 0, 10000 * US, &nwork, &alike);
	assert_int_equal(nwork, 6);
	assert_int_equal(alike, 5);
	acc_free(&a);
}

static void few_times_say_nothing(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* one kernel timed twice only (its first launch may have loaded it):
	 * not enough to stand in for the others */
	for (uint64_t t = 100; t <= 200; t += 100) {
		sub(s, t * US, (t + 10) * US, 7, 70);
		mark(s, (t + 11) * US, (t + 30) * US);
	}
	sub(s, 1000 * US, 1010 * US, 7, 70);
	mark(s, 2000 * US, 2001 * US);
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 2);
	size_t nwork = 0, alike = 0;
	ia_gt_coverage(s, 0, 10000 * US, &nwork, &alike);
	assert_int_equal(alike, 0);
	struct ia_span *e;
	size_t n;
	/* no 7 has alike times to take: in the short replay, nothing */
	assert_int_equal(estimate(&a, 0, NULL, 0, &e, &n), 0);
	free(e);
	acc_free(&a);
}

static void held_to_completions(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* a 100 us kernel timed alone three times */
	for (uint64_t t = 0; t <= 400; t += 200) {
		sub(s, t * US, (t + 10) * US, 5, 50);
		mark(s, (t + 11) * US, (t + 110) * US);
	}
	/* five queued back to back: replayed one after another, but a mark
	 * done at 700 says all five were done by then (not 1,101) */
	for (int i = 0; i < 5; i++)
		sub(s, (600 + i) * US, (601 + i) * US, 5, 50);
	mark(s, 606 * US, 700 * US);
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 3);
	struct ia_span *e;
	size_t n;
	assert_int_equal(estimate(&a, 1, NULL, 0, &e, &n), 300 * US + 99 * US);
	assert_int_equal(e[n - 1].b, 700 * US);
	free(e);
	acc_free(&a);
}

static void another_geometry_stands_in(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	for (uint64_t t = 0; t <= 200; t += 100) {   /* kernel 50, geometry A: timed, 30 us */
		sub(s, t * US, (t + 10) * US, 5, 50);
		mark(s, (t + 11) * US, (t + 40) * US);
	}
	sub(s, 300 * US, 310 * US, 6, 50);  /* kernel 50, geometry B: never timed itself */
	mark(s, 700 * US, 701 * US);
	time_alone(&a, s);
	struct ia_span *e;
	size_t n;
	assert_int_equal(estimate(&a, 1, NULL, 0, &e, &n), 90 * US + 30 * US);
	free(e);
	acc_free(&a);
}

static void timed_back_to_back(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* the GPU lags: kernel 9 (the long one) queued, a mark right behind
	 * it, then kernel 7 queued while 9 still runs, a mark right behind
	 * it: 7 ran from 9's mark (done at 500) to its own (done at 530) */
	for (uint64_t t = 0; t < 3000; t += 1000) {
		sub(s, t * US, (t + 5) * US, 9, 90);
		mark(s, (t + 6) * US, (t + 500) * US);
		sub(s, (t + 10) * US, (t + 15) * US, 7, 70);
		mark(s, (t + 16) * US, (t + 530) * US);
	}
	/* the same, but the completion before 7 a host wait that returned
	 * at once (it says 9 was done by 3,600, not when): 7 not timed */
	sub(s, 3000 * US, 3005 * US, 9, 90);
	bound(s, 3006 * US, 3600 * US);
	sub(s, 3010 * US, 3015 * US, 7, 70);
	mark(s, 3016 * US, 3630 * US);
	time_alone(&a, s);
	/* three 9s (the first ran alone from its launch; so do the others:
	 * the stream was empty when each came), three 7s back to back */
	assert_int_equal(a.ntimed, 6);
	int sevens = 0;
	for (size_t i = 0; i < a.nsmp; i++)
		if (a.smp[i].key == 7) {
			assert_int_equal(a.smp[i].ns, 30 * US);
			sevens++;
		}
	assert_int_equal(sevens, 3);
	acc_free(&a);
}

static void short_stretch_shared(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* kernel 5 timed at 90 us and kernel 6 at 10 us, three times each */
	for (uint64_t t = 0; t < 600; t += 200) {
		sub(s, t * US, (t + 5) * US, 5, 50);
		mark(s, (t + 6) * US, (t + 95) * US);
		sub(s, (t + 100) * US, (t + 105) * US, 6, 60);
		mark(s, (t + 106) * US, (t + 115) * US);
	}
	/* a 5 and a 6 queued together, a mark done 50 us later: the GPU
	 * was busier than the times say; the 50 us are shared 9 to 1, not
	 * all to the 5 queued first */
	sub(s, 1000 * US, 1001 * US, 5, 50);
	sub(s, 1001 * US, 1002 * US, 6, 60);
	mark(s, 1003 * US, 1051 * US);
	time_alone(&a, s);
	struct ia_span *e;
	size_t n;
	estimate(&a, 1, NULL, 0, &e, &n);
	free(e);
	assert_int_equal(a.nkt, 2);
	for (size_t i = 0; i < a.nkt; i++) {
		/* three timed pieces, then the share of the 50 us */
		uint64_t want = a.kt[i].func == 50 ? 3 * 90 * US + 45 * US : 3 * 10 * US + 5 * US;
		assert_int_equal(a.kt[i].ns, want);
	}
	acc_free(&a);
}

static void straddled_mark_times_nothing(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* three times over: kernel 4 (its call ends at 10), then a 9 ms
	 * pageable copy from 50; a mark recorded at 1 ms — inside the copy's
	 * call, so it may be ahead of the copy or behind it — done at 9.1 ms.
	 * Taken as right behind the kernel, it would time it at 9 ms. */
	for (uint64_t t = 0; t < 30000; t += 10000) {
		sub(s, t * US, (t + 10) * US, 4, 40);
		sync_copy(s, (t + 50) * US, (t + 9050) * US, 5, 50);
		mark(s, (t + 1000) * US, (t + 9100) * US);
	}
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 0);
	acc_free(&a);
}

/* A copy queued on a side stream right behind a wait for an event: while
 * the compute stream still ran (its mark done 5 ms later) the copy's span
 * to the mark behind it holds that wait — not timed; queued when the
 * compute stream had finished, the event had fired — timed (c52's gloo
 * copies; c08's XLA waits). */
static void waits_for_busy_stream_time_nothing(void **st)
{
	(void)st;
	struct acc a;
	memset(&a, 0, sizeof a);
	a.s = calloc(2, sizeof *a.s);
	a.n = 2;
	a.s[0].pid = a.s[1].pid = 1;
	struct stream_acc *compute = &a.s[0], *side = &a.s[1];
	for (uint64_t t = 0; t < 30000; t += 10000) {
		sub(compute, t * US, (t + 10) * US, 4, 40);          /* its backward: 5 ms on the GPU */
		mark(compute, (t + 11) * US, (t + 5000) * US);
		sub(side, (t + 20) * US, (t + 30) * US, 5, 50);       /* the copy behind the wait */
		side->sub[side->nsub - 1].after_wait = 1;
		mark(side, (t + 31) * US, (t + 5100) * US);
	}
	ia_gt_waits_met(&a);
	for (size_t k = 0; k < side->nsub; k++)
		assert_int_equal(side->sub[k].after_wait, 1);
	ia_gt_time_alone(&a, side);
	assert_int_equal(a.ntimed, 0);
	/* the same copies queued once the compute stream was done (6 ms on) */
	for (size_t k = 0; k < side->nsub; k++) {
		side->sub[k].a += 6000 * US, side->sub[k].b += 6000 * US, side->sub[k].after_wait = 1;
		side->cp[k].r += 6000 * US, side->cp[k].g = side->cp[k].r + 100 * US;
	}
	ia_gt_waits_met(&a);
	for (size_t k = 0; k < side->nsub; k++)
		assert_int_equal(side->sub[k].after_wait, 0);
	ia_gt_time_alone(&a, side);
	assert_int_equal(a.ntimed, 3);
	acc_free(&a);
}

static void host_sync_copy_takes_its_call(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* a kernel timed alone at 20 us three times, then a pageable copy
	 * whose call ran from 1,000 to 4,000 us and a mark done at 4,010:
	 * the copy is GPU work for its call's 3 ms, in the median replay and
	 * in the kernels' table (not the process's typical piece at its end) */
	for (uint64_t t = 0; t < 600; t += 200) {
		sub(s, t * US, (t + 10) * US, 4, 40);
		mark(s, (t + 11) * US, (t + 30) * US);
	}
	sync_copy(s, 1000 * US, 4000 * US, 5, 50);
	mark(s, 4001 * US, 4010 * US);
	time_alone(&a, s);
	struct ia_span *e;
	size_t n;
	for (int q = 0; q <= 2; q++) {
		assert_int_equal(estimate(&a, q, NULL, 0, &e, &n), 3 * 20 * US + 3000 * US);
		free(e);
	}
	for (size_t i = 0; i < a.nkt; i++)
		if (a.kt[i].func == 50)
			assert_int_equal(a.kt[i].ns, 3000 * US);
	acc_free(&a);
}

/* The GPU time of replay q (no idle spans), its spans let go. */
static uint64_t replayed(struct acc *a, int q)
{
	struct ia_span *e;
	size_t n;
	uint64_t t = estimate(a, q, NULL, 0, &e, &n);
	free(e);
	return t;
}

/* Kernel 3 queued n times on an empty stream `every` us apart, each timed
 * alone at `d` us, the last `nlong` at `dlong`; then once more at 9 ms with
 * nothing behind it (inside the replayed 10 ms: the replay gives it its
 * time whole). */
static void kernel3_timed(struct acc *a, struct stream_acc *s, uint64_t n, uint64_t every, uint64_t d, uint64_t nlong,
			  uint64_t dlong)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t = i * every;
		sub(s, t * US, (t + 10) * US, 3, 30);
		mark(s, (t + 11) * US, (t + 10 + (i < n - nlong ? d : dlong)) * US);
	}
	sub(s, 9000 * US, 9010 * US, 3, 30);
	time_alone(a, s);
}

static void range_holds_the_mean(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	/* kernel 3 timed alone 40 times: 32 at 10 us, 8 at 100 us (skewed:
	 * median, p75 and the median's interval all 10 us; the mean less a
	 * tenth at each end, 28 x 10 and 4 x 100 over 32: 21.25 us) */
	kernel3_timed(&a, s, 40, 200, 10, 8, 100);
	assert_int_equal(a.ntimed, 40);
	uint64_t mid = replayed(&a, 1), lo = replayed(&a, 0), hi = replayed(&a, 2);
	/* every piece 10 us at the median and at the range's low end, the
	 * trimmed mean's 21.25 at its high end (the quartiles' would be 10:
	 * no range at all) where its completion leaves room: the eight 100 us
	 * pieces and the last one, 11.25 us more each (the others' completions
	 * clip them) */
	assert_int_equal(mid - lo, 0);
	assert_int_equal(hi - mid, 9 * 11250);
	acc_free(&a);
}

/* One piece timed while something else held the GPU (1.9 ms among
 * eight of 22 us) moves neither end of the range. */
static void range_ignores_one_stray_time(void **st)
{
	(void)st;
	struct acc a;
	struct stream_acc *s = stream(&a);
	kernel3_timed(&a, s, 8, 1000, 22, 1, 1900);
	assert_int_equal(a.ntimed, 8);
	/* the last piece: 22 us whatever the replay */
	uint64_t mid = replayed(&a, 1), hi = replayed(&a, 2);
	assert_int_equal(hi - mid, 0);
	acc_free(&a);
}

/* Work queued after `after` on the stream (gpu_time.c sets it from the
 * piece before). */
static void sub_after(struct stream_acc *s, uint64_t a, uint64_t b, uint32_t work, uint32_t after)
{
	sub(s, a, b, work, work * 10);
	s->sub[s->nsub - 1].after = after;
}

/* Kernel 4 timed 8 times after kernel 1 at 10 us and 8 times after kernel
 * 2 at 30 us; with `last`, one more after kernel 2 with nothing behind it
 * (the replay gives it its time whole): the estimate's median replay. */
static uint64_t two_places(int last)
{
	struct acc a;
	struct stream_acc *s = stream(&a);
	for (uint64_t i = 0; i < 8; i++) {
		uint64_t t = i * 1000;
		sub_after(s, t * US, (t + 10) * US, 1, 0);
		mark(s, (t + 11) * US, (t + 30) * US);
		sub_after(s, (t + 100) * US, (t + 110) * US, 4, 1);
		mark(s, (t + 111) * US, (t + 120) * US);
		sub_after(s, (t + 300) * US, (t + 310) * US, 2, 4);
		mark(s, (t + 311) * US, (t + 330) * US);
		sub_after(s, (t + 400) * US, (t + 410) * US, 4, 2);
		mark(s, (t + 411) * US, (t + 440) * US);
	}
	if (last)
		sub_after(s, 9000 * US, 9010 * US, 4, 2);
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 32);
	uint64_t t = replayed(&a, 1);
	acc_free(&a);
	return t;
}

static void timed_in_its_place(void **st)
{
	(void)st;
	/* the last piece takes its place's 30 us, not kernel 4's median over
	 * both places (10 us: half its times are 10, half 30) */
	assert_int_equal(two_places(1) - two_places(0), 30 * US);
}

/* Five 4 MiB copies to the device (pinned) timed alone at 80, 90, 100, 120
 * and 140 us (the rate's quartiles 90 and 120, its median 100), then — with
 * last — one more copy with nothing behind it: the GPU time of replay q. */
static uint64_t after_4mib_copies(int q, int last, enum ia_link link, uint32_t kib)
{
	static const uint64_t took[] = { 80, 90, 100, 120, 140 };
	struct acc a;
	struct stream_acc *s = stream(&a);
	for (int i = 0; i < 5; i++) {
		uint64_t t = 200 * (uint64_t)i;
		copy(s, t * US, (t + 10) * US, 5, 50, IA_LINK_HOST_PINNED, 4096);
		mark(s, (t + 11) * US, (t + 10 + took[i]) * US);
	}
	if (last)   /* (another direction: another work, another func) */
		copy(s, 5000 * US, 5010 * US, 6, 60, link, kib);
	time_alone(&a, s);
	assert_int_equal(a.ntimed, 5);
	uint64_t t = replayed(&a, q);
	acc_free(&a);
	return t;
}

/* The last copy's part of replay q. */
static uint64_t last_copy(int q, enum ia_link link, uint32_t kib)
{
	return after_4mib_copies(q, 1, link, kib) - after_4mib_copies(q, 0, link, kib);
}

static void large_copy_at_its_links_pace(void **st)
{
	(void)st;
	/* 16 MiB back to the host: four times the 4 MiB ones' pace at the
	 * rate's quartiles (the short and long replays) and median */
	assert_int_equal(last_copy(0, IA_LINK_HOST_PINNED, 16384), 4 * 90 * US);
	assert_int_equal(last_copy(1, IA_LINK_HOST_PINNED, 16384), 4 * 100 * US);
	assert_int_equal(last_copy(2, IA_LINK_HOST_PINNED, 16384), 4 * 120 * US);
	/* 512 KiB: its fixed cost may be most of its time — not rated: the
	 * process's typical piece in the middle, nothing in the short replay */
	assert_int_equal(last_copy(1, IA_LINK_HOST_PINNED, 512), 100 * US);
	assert_int_equal(last_copy(0, IA_LINK_HOST_PINNED, 512), 0);
	/* pageable: a link whose pace nothing measured */
	assert_int_equal(last_copy(1, IA_LINK_HOST_PAGEABLE, 16384), 100 * US);
	assert_int_equal(last_copy(0, IA_LINK_HOST_PAGEABLE, 16384), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timed_alone_and_replayed),
		cmocka_unit_test(few_times_say_nothing),
		cmocka_unit_test(held_to_completions),
		cmocka_unit_test(another_geometry_stands_in),
		cmocka_unit_test(timed_back_to_back),
		cmocka_unit_test(short_stretch_shared),
		cmocka_unit_test(straddled_mark_times_nothing),
		cmocka_unit_test(waits_for_busy_stream_time_nothing),
		cmocka_unit_test(host_sync_copy_takes_its_call),
		cmocka_unit_test(range_holds_the_mean),
		cmocka_unit_test(range_ignores_one_stray_time),
		cmocka_unit_test(timed_in_its_place),
		cmocka_unit_test(large_copy_at_its_links_pace),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
