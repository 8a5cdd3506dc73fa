/*
 * progress.c — the terminal progress line (see progress.h).
 *
 * State is one static struct: the analyzer runs one long operation at a
 * time.  begin/phase/end belong to the main thread; update/add and the
 * SQLite handler may run on any thread (the scanners are threads): the
 * count is atomic and drawing happens under a trylock, so a thread never
 * waits for another one's redraw.  The expensive parts are kept off the
 * hot path: update() only counts until 4096 calls have passed, then reads
 * the monotonic clock, and draws only when 100 ms have passed since the
 * last draw (and 500 ms since the start).  A drawn line always starts with '\r' and ends with "\033[K"
 * (erase to end of line), so a shorter line never leaves debris, and end()
 * erases it so the next output starts on a clean line.
 */
#include "base/progress.h"
#include "base/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define START_DELAY_NS 500000000ull
#define REDRAW_NS      100000000ull
#define CLOCK_EVERY    4096u
#define SQLITE_OPS     100000

static struct {
	int decided, on;          /* whether to draw at all (decided once) */
	FILE *out;
	int immediate;            /* tests */
	atomic_int active;
	char label[64];
	uint64_t total;
	_Atomic uint64_t done;
	uint64_t t0, last_draw;
	atomic_uint countdown;
	unsigned spin;
	int drawn;                /* something is on the line */
	sqlite3 *db;
	pthread_mutex_t draw_lock;   /* updates may come from several threads */
} P = { .draw_lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int enabled(void)
{
	if (!P.decided) {
		const char *term = getenv("TERM");
		const char *env = getenv("INGERO_PROGRESS");
		P.decided = 1;
		P.on = isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb")) && !(env && !strcmp(env, "0"));
		if (!P.out)
			P.out = stderr;
	}
	return P.on;
}

void ia_progress_output(FILE *f, int immediate)
{
	P.decided = 1;
	P.on = f != NULL;
	P.out = f ? f : stderr;
	P.immediate = immediate;
	if (!f)
		P.decided = 0;
}

/* "4.5M" style counts keep the line short and steady in width. */
static void short_count(char *buf, size_t len, uint64_t n)
{
	if (n >= 10000000000ull)
		snprintf(buf, len, "%.0fG", n / 1e9);
	else if (n >= 1000000000ull)
		snprintf(buf, len, "%.1fG", n / 1e9);
	else if (n >= 10000000)
		snprintf(buf, len, "%.0fM", n / 1e6);
	else if (n >= 1000000)
		snprintf(buf, len, "%.1fM", n / 1e6);
	else if (n >= 10000)
		snprintf(buf, len, "%.0fk", n / 1e3);
	else
		snprintf(buf, len, "%llu", (unsigned long long)n);
}

static void draw(uint64_t now)
{
	static const char spinner[] = "|/-\\";
	char el[32], a[24], b[24];
	ia_fmt_dur(el, sizeof el, now - P.t0);
	if (P.total) {
		uint64_t d = atomic_load(&P.done);
		if (d > P.total)
			d = P.total;
		short_count(a, sizeof a, d);
		short_count(b, sizeof b, P.total);
		fprintf(P.out, "\r%s %3.0f%%  %s/%s  %s\033[K", P.label, 100.0 * (double)d / (double)P.total,
			a, b, el);
	} else {
		fprintf(P.out, "\r%s %c  %s\033[K", P.label, spinner[P.spin++ % 4], el);
	}
	fflush(P.out);
	P.drawn = 1;
	P.last_draw = now;
}

/* Draws if it is time; a thread that finds another one drawing skips. */
static void maybe_draw(void)
{
	if (pthread_mutex_trylock(&P.draw_lock) != 0)
		return;
	uint64_t now = now_ns();
	if (P.active && (P.immediate || (now - P.t0 >= START_DELAY_NS && now - P.last_draw >= REDRAW_NS)))
		draw(now);
	pthread_mutex_unlock(&P.draw_lock);
}

void ia_progress_begin(const char *label, uint64_t total)
{
	if (!enabled())
		return;
	if (!P.active) {
		P.t0 = now_ns();
		P.last_draw = 0;
		P.spin = 0;
	}
	pthread_mutex_lock(&P.draw_lock);
	snprintf(P.label, sizeof P.label, "%s", label);
	P.total = total;
	atomic_store(&P.done, 0);
	atomic_store(&P.countdown, CLOCK_EVERY);
	atomic_store(&P.active, 1);
	pthread_mutex_unlock(&P.draw_lock);
	if (P.immediate)
		maybe_draw();
}

void ia_progress_update(uint64_t done)
{
	if (!atomic_load_explicit(&P.active, memory_order_relaxed))
		return;
	atomic_store_explicit(&P.done, done, memory_order_relaxed);
	if (!P.immediate && atomic_fetch_sub_explicit(&P.countdown, 1, memory_order_relaxed) != 1)
		return;
	atomic_store_explicit(&P.countdown, CLOCK_EVERY, memory_order_relaxed);
	maybe_draw();
}

void ia_progress_add(uint64_t n)
{
	if (!atomic_load_explicit(&P.active, memory_order_relaxed))
		return;
	atomic_fetch_add_explicit(&P.done, n, memory_order_relaxed);
	maybe_draw();   /* called per chunk of work, not per row: look at the clock every time */
}

void ia_progress_phase(const char *label)
{
	if (!enabled())
		return;
	ia_progress_begin(label, 0);
}

static int on_sqlite_progress(void *arg)
{
	(void)arg;
	if (atomic_load_explicit(&P.active, memory_order_relaxed))
		maybe_draw();
	return 0;   /* never interrupts the statement */
}

void ia_progress_attach(sqlite3 *db)
{
	if (!enabled() || !db)
		return;
	if (!P.active)
		ia_progress_begin("reading", 0);
	P.db = db;
	sqlite3_progress_handler(db, SQLITE_OPS, on_sqlite_progress, NULL);
}

void ia_progress_detach(void)
{
	if (P.db)
		sqlite3_progress_handler(P.db, 0, NULL, NULL);
	P.db = NULL;
}

void ia_progress_end(void)
{
	ia_progress_detach();
	pthread_mutex_lock(&P.draw_lock);
	if (P.drawn) {
		fputs("\r\033[K", P.out);
		fflush(P.out);
	}
	P.drawn = 0;
	atomic_store(&P.active, 0);
	P.total = 0;
	atomic_store(&P.done, 0);
	pthread_mutex_unlock(&P.draw_lock);
}
