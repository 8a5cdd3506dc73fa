/*
 * phases.c — slicing the run into start-up, compilation, autotuning and
 * the steady state (see phases.h).
 *
 * One scan of cpu_samples keeps the samples that vote (the main process's
 * threads, compiler processes) with their reason; stacks are named through
 * the shared cache, so a stack's frames are read once.  Slices are then
 * decided, bridged and grouped into episodes in linear passes; the details
 * of each phase (reasons, the user's lines, modules imported) come from a
 * second pass over the kept samples, now that each sample's slice is known.
 */
#include "measure/phases.h"

#include "load/db.h"
#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(IA_WHY_N <= 32, "an episode's reasons are a 32-bit mask");

struct ia_phase_vote {
	uint64_t ts, stack;
	uint8_t why;        /* enum ia_phase_why */
	uint8_t main;       /* the main thread's own sample */
	uint16_t hints;     /* enum ia_frame_hint of its stack (asserted to fit below) */
};
_Static_assert(IA_HINT_ACCUMULATE <= 0xffff, "a vote keeps its hints in 16 bits");
_Static_assert(sizeof(struct ia_phase_vote) == 24, "a vote per sample: keep it 24 bytes");

static int cmp_vote_ts(const void *x, const void *y)
{
	const struct ia_phase_vote *a = x, *b = y;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

static size_t slice_of(const struct ia_phases *ph, uint64_t ts)
{
	return ts < ph->t0 ? 0 : (size_t)((ts - ph->t0) / IA_PHASE_SLICE_NS);
}

/* The samples that vote, in any order. */
static int load_votes(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		      struct ia_phases *ph, struct ia_phase_vote **out, size_t *nout, char *err, size_t errlen)
{
	*out = NULL;
	*nout = 0;
	if (!ia_db_has_table(t->db, "cpu_samples"))
		return 0;
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT tid, ts_ns, stack_id FROM cpu_samples "
					 "WHERE ts_ns >= ?1 AND ts_ns < ?2", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	uint32_t main_proc = pp->p[pp->main].proc;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int th = ia_thread_index(t, (uint32_t)sqlite3_column_int64(st, 0));
		if (th < 0 || ia_thread_is_tracer(&t->threads[th]))
			continue;
		uint32_t proc = t->threads[th].proc;
		const struct ia_proc_stats *ps = ia_pp_of_proc(pp, proc);
		int compiler = ps && ps->role == IA_ROLE_COMPILER;
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 2);
		size_t s = slice_of(ph, (uint64_t)sqlite3_column_int64(st, 1));
		if (ps && ps->role == IA_ROLE_WORKER && s < ph->nslices && ia_stack_loading(names, id))
			ph->input[s] |= IA_SLICE_WORKERS_LOAD;
		if (proc != main_proc && !compiler)
			continue;
		if ((uint32_t)th == pp->main_thread && s < ph->nslices)
			ph->input[s] |= IA_SLICE_MAIN_ONCPU;
		int why = ia_stack_phase_why(names, id);
		/* a compiler process compiles, whatever its frames say (its
		 * imports are the pool's start-up, part of compiling) */
		if (compiler)
			why = IA_WHY_COMPILER_PROC;
		int is_main = (uint32_t)th == pp->main_thread;
		if (!is_main && ia_why_phase(why) == IA_PHASE_STEADY)
			continue;   /* other threads speak only for a phase */
		if (ia_grow((void **)out, &cap, *nout + 1, sizeof **out) < 0) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		struct ia_phase_vote *v = &(*out)[(*nout)++];
		v->ts = (uint64_t)sqlite3_column_int64(st, 1);
		v->stack = id;
		v->why = (uint8_t)why;
		v->main = (uint8_t)is_main;
		v->hints = (uint16_t)ia_stack_phase_hints(names, id);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		ia_db_step_error(t->db, rc, err, errlen);
		return -1;
	}
	return 0;
}

enum ia_phase ia_phases_of_why(const struct ia_phases *ph, enum ia_phase_why w)
{
	if (w == IA_WHY_CUDNN_PLANS && !ph->cudnn_benchmark)
		return IA_PHASE_STARTUP;
	if (ia_why_phase(w) == IA_PHASE_EPOCH && !ph->epochs)
		return IA_PHASE_STARTUP;
	return ia_why_phase(w);
}

/* Decide each slice from its votes (see phases.h). */
static int decide_slices(struct ia_phases *ph, const struct ia_phase_vote *v, size_t nv)
{
	/* per slice: the main thread's votes per phase, and the others' */
	uint32_t (*mv)[IA_PHASE_N] = calloc(ph->nslices, sizeof *mv);
	uint32_t (*ov)[IA_PHASE_N] = calloc(ph->nslices, sizeof *ov);
	if (!mv || !ov) {
		free(mv);
		free(ov);
		return -1;
	}
	for (size_t i = 0; i < nv; i++) {
		size_t s = slice_of(ph, v[i].ts);
		if (s >= ph->nslices)
			continue;
		enum ia_phase p = ia_phases_of_why(ph, v[i].why);
		if (v[i].main)
			mv[s][p]++;
		else
			ov[s][p]++;
	}
	const uint8_t EMPTY = 0xff;
	for (size_t s = 0; s < ph->nslices; s++) {
		uint32_t tagged = 0, best = 0;
		enum ia_phase bp = IA_PHASE_STEADY;
		for (int p = 1; p < IA_PHASE_N; p++) {
			tagged += mv[s][p];
			/* the main thread's own votes first, the others' break ties */
			uint32_t score = mv[s][p] * 1000 + ov[s][p];
			if (score > best) {
				best = score;
				bp = (enum ia_phase)p;
			}
		}
		if (mv[s][IA_PHASE_STEADY] || tagged)
			ph->slice[s] = tagged > mv[s][IA_PHASE_STEADY] ? (uint8_t)bp : IA_PHASE_STEADY;
		else
			ph->slice[s] = best ? (uint8_t)bp : EMPTY;
	}
	/* bridge short runs of empty slices between two of one phase */
	for (size_t s = 0; s < ph->nslices;) {
		if (ph->slice[s] != EMPTY) {
			s++;
			continue;
		}
		size_t e = s;
		while (e < ph->nslices && ph->slice[e] == EMPTY)
			e++;
		uint8_t fill = IA_PHASE_STEADY;
		if (s > 0 && e < ph->nslices && e - s <= IA_PHASE_FILL && ph->slice[s - 1] == ph->slice[e])
			fill = ph->slice[s - 1];
		for (size_t k = s; k < e; k++)
			ph->slice[k] = fill;
		s = e;
	}
	free(mv);
	free(ov);
	return 0;
}

/* Slices at least half between capture windows are "not recorded",
 * whatever else voted in them (the edges' samples). */
static int mark_paused(struct ia_phases *ph, const struct ia_capture *c)
{
	if (!c->npaused)
		return 0;
	uint64_t *in = calloc(ph->nslices, sizeof *in);   /* paused ns per slice */
	if (!in)
		return -1;
	uint64_t end = ph->t0 + ph->nslices * IA_PHASE_SLICE_NS;
	for (size_t i = 0; i < c->npaused; i++) {
		uint64_t a = c->paused[2 * i] > ph->t0 ? c->paused[2 * i] : ph->t0;
		uint64_t b = c->paused[2 * i + 1] < end ? c->paused[2 * i + 1] : end;
		for (size_t s = a < b ? slice_of(ph, a) : ph->nslices; s < ph->nslices; s++) {
			uint64_t s0 = ph->t0 + s * IA_PHASE_SLICE_NS;
			if (s0 >= b)
				break;
			in[s] += ia_overlap(s0, s0 + IA_PHASE_SLICE_NS, a, b);
		}
	}
	for (size_t s = 0; s < ph->nslices; s++)
		if (2 * in[s] >= IA_PHASE_SLICE_NS)
			ph->slice[s] = IA_PHASE_PAUSED;
	free(in);
	return 0;
}

/* A "not recorded" episode's edges are the capture's own (its slices
 * only locate it): the steady windows around it then end and start where
 * the recording did. */
static void snap_paused(struct ia_phases *ph, const struct ia_capture *c)
{
	for (size_t i = 0; i < ph->nep; i++) {
		struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase != IA_PHASE_PAUSED)
			continue;
		uint64_t lo = i ? ph->ep[i - 1].end : ph->t0, hi = i + 1 < ph->nep ? ph->ep[i + 1].start : UINT64_MAX;
		uint64_t s = UINT64_MAX, t = 0;
		for (size_t k = 0; k < c->npaused; k++)
			if (ia_overlap(c->paused[2 * k], c->paused[2 * k + 1], e->start, e->end)) {
				if (c->paused[2 * k] < s)
					s = c->paused[2 * k];
				if (c->paused[2 * k + 1] > t)
					t = c->paused[2 * k + 1];
			}
		if (s < t) {
			e->start = s > lo ? s : lo;
			e->end = t < hi ? t : hi;
		}
	}
}

/* Runs of slices of phase p. */
static size_t runs_of(const struct ia_phases *ph, enum ia_phase p)
{
	size_t n = 0;
	for (size_t s = 0; s < ph->nslices; s++)
		n += ph->slice[s] == p && (s == 0 || ph->slice[s - 1] != p);
	return n;
}

/* One epoch boundary is one stretch: steady slices between two of its
 * slices in which the main process launched nothing (no step ran: the end
 * of one epoch's sampling, then the next one's start) are part of it. */
static void join_epochs(struct ia_phases *ph)
{
	size_t last = SIZE_MAX;   /* the last epoch slice seen */
	for (size_t s = 0; s < ph->nslices; s++) {
		if (ph->slice[s] != IA_PHASE_EPOCH)
			continue;
		int join = last != SIZE_MAX && s - last - 1 <= IA_PHASE_FILL;
		for (size_t k = last + 1; join && k < s; k++)
			join = ph->slice[k] == IA_PHASE_STEADY && !ph->launches[k];
		for (size_t k = last + 1; join && k < s; k++)
			ph->slice[k] = IA_PHASE_EPOCH;
		last = s;
	}
}

/* Slices decided with epoch boundaries told apart when the trace holds
 * enough of them, else with their reasons read as start-up (phases.h). */
static int decide_epochs(struct ia_phases *ph, const struct ia_phase_vote *v, size_t nv)
{
	ph->epochs = 1;
	if (decide_slices(ph, v, nv) < 0)
		return -1;
	join_epochs(ph);
	if (runs_of(ph, IA_PHASE_EPOCH) >= IA_EPOCH_MIN)
		return 0;
	ph->epochs = 0;
	return decide_slices(ph, v, nv);
}

/* The step, from the steady run of slices with the most launches. */
static int find_steps(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_phases *ph, char *err,
		      size_t errlen)
{
	size_t best_s = 0, best_e = 0;
	uint64_t best = 0;
	for (size_t s = 0; s < ph->nslices;) {
		size_t e = s;
		uint64_t n = 0;
		while (e < ph->nslices && ph->slice[e] == ph->slice[s])
			n += ph->launches[e++];
		if (ph->slice[s] == IA_PHASE_STEADY && n > best) {
			best = n;
			best_s = s;
			best_e = e;
		}
		s = e;
	}
	ph->again_launches = IA_PHASE_AGAIN_LAUNCHES;
	if (!best)
		return 0;
	/* the query sorts what its window covers: keep the window to about the
	 * calls it reads (launches are at most the calls) */
	int pid = t->procs[pp->p[pp->main].proc].pid;
	uint64_t n = 0;
	size_t e = best_s;
	while (e < best_e && n < IA_STEPS_MAX_CALLS)
		n += ph->launches[e++];
	if (ia_steps_find(t, pid, ph->t0 + best_s * IA_PHASE_SLICE_NS, ph->t0 + e * IA_PHASE_SLICE_NS,
			  IA_STEPS_MAX_PERIOD, IA_STEPS_MAX_CALLS, &ph->steps, err, errlen) < 0)
		return -1;
	/* none in it, and the run holds more: a step longer than the first
	 * look sees three of (steps.h) */
	if (!ph->steps.calls && e < best_e) {
		while (e < best_e && n < IA_STEPS_LONG_CALLS)
			n += ph->launches[e++];
		if (ia_steps_find(t, pid, ph->t0 + best_s * IA_PHASE_SLICE_NS, ph->t0 + e * IA_PHASE_SLICE_NS,
				  IA_STEPS_LONG_PERIOD, IA_STEPS_LONG_CALLS, &ph->steps, err, errlen) < 0)
			return -1;
	}
	/* what ran before the loop's first full step is its set-up (a dataset
	 * built, a buffer pinned, the model moved): one-time work, so start-up
	 * — unless it queued as much GPU work as a few steps (an earlier loop;
	 * the loop's own first steps, slowed by a library loading, are in a
	 * start-up slice already and say nothing of that).  The slices right
	 * before the first full step that launch are the loop's own first
	 * steps, irregular while its allocator warms up (c22): not an earlier
	 * loop, so not counted. */
	if (ph->steps.calls) {
		size_t first = slice_of(ph, ph->steps.first_ns), runup = first < ph->nslices ? first : ph->nslices;
		uint64_t launches = 0;
		while (runup > 0 && ph->slice[runup - 1] == IA_PHASE_STEADY && ph->launches[runup - 1])
			runup--;
		for (size_t k = 0; k < runup; k++)
			if (ph->slice[k] == IA_PHASE_STEADY)
				launches += ph->launches[k];
		/* ... but not where the main thread is off its CPU while the
		 * DataLoader's workers load: it waits for its first batch, the
		 * job's own input work, which the workers do every step (c45:
		 * 3.4 s of six 1 GiB batches' loading read as start-up).  From
		 * the first such slice to the last, one stretch: a gap is the
		 * steady state's or a phase's whole, and one cut into pieces
		 * would be counted in both (c73). */
		size_t in_lo = SIZE_MAX, in_hi = 0;
		for (size_t k = 0; k < first && k < ph->nslices; k++)
			if (ph->slice[k] == IA_PHASE_STEADY && ph->input[k] == IA_SLICE_WORKERS_LOAD) {
				in_lo = in_lo == SIZE_MAX ? k : in_lo;
				in_hi = k;
			}
		if (launches < 3 * (uint64_t)ph->steps.launches + 3)
			for (size_t k = 0; k < first && k < ph->nslices; k++)
				if (ph->slice[k] == IA_PHASE_STEADY && (k < in_lo || k > in_hi))
					ph->slice[k] = IA_PHASE_STARTUP;
	}
	if ((uint64_t)IA_PHASE_AGAIN_STEPS * ph->steps.launches > ph->again_launches)
		ph->again_launches = (uint64_t)IA_PHASE_AGAIN_STEPS * ph->steps.launches;
	return 0;
}

static int build_episodes(struct ia_phases *ph)
{
	size_t cap = 0;
	uint64_t since[IA_PHASE_N] = { 0 };   /* launches since the last episode of each phase */
	int seen[IA_PHASE_N] = { 0 };
	for (size_t s = 0; s < ph->nslices;) {
		enum ia_phase p = (enum ia_phase)ph->slice[s];
		size_t e = s;
		while (e < ph->nslices && ph->slice[e] == p)
			e++;
		if (p != IA_PHASE_STEADY) {
			if (ia_grow((void **)&ph->ep, &cap, ph->nep + 1, sizeof *ph->ep) < 0)
				return -1;
			struct ia_phase_episode *x = &ph->ep[ph->nep++];
			x->phase = p;
			x->start = ph->t0 + s * IA_PHASE_SLICE_NS;
			x->end = ph->t0 + e * IA_PHASE_SLICE_NS;
			x->launches_before = seen[p] ? since[p] : 0;
			x->repeat = 0;   /* decided once the sites are known (mark_repeats) */
			x->site[0] = 0;
			x->whys = 0;
			x->hints = 0;
			seen[p] = 1;
			since[p] = 0;
		}
		for (size_t k = s; k < e; k++)
			for (int q = 0; q < IA_PHASE_N; q++)
				if (q != (int)p)
					since[q] += ph->launches[k];
		s = e;
	}
	return 0;
}

static int count_line(struct ia_gap_line **v, size_t *n, size_t *cap, const char *line)
{
	struct ia_gap_line *l = ia_line_slot(v, n, cap, line);
	if (!l)
		return -1;
	l->count++;
	return 0;
}

/* Index of the episode holding ts, or -1 (episodes are sorted, disjoint). */
static long episode_at(const struct ia_phases *ph, uint64_t ts)
{
	size_t lo = 0, hi = ph->nep;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ph->ep[mid].end <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ph->nep && ph->ep[lo].start <= ts ? (long)lo : -1;
}

/* Each episode's site: the user's line of most of its samples. */
static int episode_sites(struct ia_phases *ph, struct ia_stack_names *names, const struct ia_phase_vote *v, size_t nv)
{
	struct ia_gap_line **lines = calloc(ph->nep + 1, sizeof *lines);
	size_t *n = calloc(ph->nep + 1, sizeof *n), *cap = calloc(ph->nep + 1, sizeof *cap);
	int rc = lines && n && cap ? 0 : -1;
	for (size_t i = 0; !rc && i < nv; i++) {
		long e = episode_at(ph, v[i].ts);
		if (e < 0 || ia_phases_of_why(ph, v[i].why) != ph->ep[e].phase)
			continue;
		ph->ep[e].whys |= 1u << v[i].why;
		ph->ep[e].hints |= v[i].hints;
		const char *user = ia_stack_user_python(names, v[i].stack);
		rc = count_line(&lines[e], &n[e], &cap[e], user ? user : "");
	}
	for (size_t e = 0; !rc && e < ph->nep; e++) {
		const struct ia_gap_line *best = NULL;
		for (size_t k = 0; k < n[e]; k++)
			if (!best || lines[e][k].count > best->count)
				best = &lines[e][k];
		snprintf(ph->ep[e].site, sizeof ph->ep[e].site, "%s", best ? best->line : "");
	}
	for (size_t e = 0; lines && e < ph->nep; e++)
		free(lines[e]);
	free(lines);
	free(n);
	free(cap);
	return rc;
}

/* A compile or autotune episode after enough launches, from a site an
 * earlier episode of its phase had: the same code again (phases.h). */
static void mark_repeats(struct ia_phases *ph)
{
	for (size_t e = 0; e < ph->nep; e++) {
		struct ia_phase_episode *x = &ph->ep[e];
		if ((x->phase != IA_PHASE_COMPILE && x->phase != IA_PHASE_AUTOTUNE) || x->launches_before < ph->again_launches)
			continue;
		for (size_t k = 0; k < e && !x->repeat; k++)
			x->repeat = ph->ep[k].phase == x->phase && !strcmp(ph->ep[k].site, x->site);
	}
}

/* ".../site-packages/torch/_dynamo/__init__.py" -> "torch._dynamo": the
 * name a person imports */
static const char *module_name(char *buf, size_t len, const char *file)
{
	const char *roots[] = { "/site-packages/", "/dist-packages/", "/lib/python3" };
	const char *s = file;
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		const char *p = strstr(file, roots[i]);
		if (p) {
			s = p + strlen(roots[i]);
			if (i == 2 && (p = strchr(s, '/')))   /* /lib/python3.12/json/... */
				s = p + 1;
			break;
		}
	}
	snprintf(buf, len, "%s", s);
	size_t l = strlen(buf);
	if (l > 12 && !strcmp(buf + l - 12, "/__init__.py"))
		buf[l - 12] = 0;
	else if (l > 3 && !strcmp(buf + l - 3, ".py"))
		buf[l - 3] = 0;
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '.';
	return buf;
}

static void detail_free(struct ia_phase_detail *d)
{
	free(d->lines);
	free(d->frames);
	free(d->modules);
	free(d->import_lines);
	memset(d, 0, sizeof *d);
}

static void details_free(struct ia_phases *ph)
{
	for (int p = 0; p < IA_PHASE_N; p++)
		detail_free(&ph->d[p]);
	detail_free(&ph->recompile);
}

/* Whether ts lies in a compile episode that is a repeat. */
static int in_recompile(const struct ia_phases *ph, uint64_t ts)
{
	size_t lo = 0, hi = ph->nep;   /* (episodes by start) the last starting at or before ts */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ph->ep[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct ia_phase_episode *e = lo ? &ph->ep[lo - 1] : NULL;
	return e && ts < e->end && e->phase == IA_PHASE_COMPILE && e->repeat;
}

/* Reasons, the user's lines, the phase's own frames and imported modules
 * of each phase's samples in [a, b). */
static int details(struct ia_phases *ph, struct ia_stack_names *names, const struct ia_phase_vote *v, size_t nv,
		   uint64_t a, uint64_t b)
{
	/* (caps per phase, and [IA_PHASE_N] for the recompiles) */
	size_t lcap[IA_PHASE_N + 1] = { 0 }, fcap[IA_PHASE_N + 1] = { 0 }, mcap[IA_PHASE_N + 1] = { 0 },
	       icap[IA_PHASE_N + 1] = { 0 };
	details_free(ph);
	for (size_t i = 0; i < nv; i++) {
		if (v[i].ts < a || v[i].ts >= b)
			continue;
		enum ia_phase sp = ia_phase_at(ph, v[i].ts), vp = ia_phases_of_why(ph, v[i].why);
		if (sp == IA_PHASE_STEADY || vp != sp)
			continue;   /* only the samples that made the slice what it is */
		struct ia_phase_detail *d = &ph->d[sp];
		if (sp == IA_PHASE_COMPILE && in_recompile(ph, v[i].ts))
			d = &ph->recompile, sp = IA_PHASE_N;
		d->samples++;
		d->why[v[i].why]++;
		const char *user = ia_stack_user_python(names, v[i].stack);
		if (user && count_line(&d->lines, &d->nlines, &lcap[sp], user) < 0)
			return -1;
		const char *func = ia_stack_python_func(names, v[i].stack), *py = ia_stack_python(names, v[i].stack);
		char frame[200];
		if (func && py)
			snprintf(frame, sizeof frame, "%s (%s)", func, py);
		else
			ia_short_symbol(frame, sizeof frame, ia_stack_leaf(names, v[i].stack) ? ia_stack_leaf(names, v[i].stack)
											       : "(unnamed frames)");
		if (v[i].why != IA_WHY_COMPILER_PROC && count_line(&d->frames, &d->nframes, &fcap[sp], frame) < 0)
			return -1;
		const char *mod = v[i].why == IA_WHY_IMPORT ? ia_stack_import_module(names, v[i].stack) : NULL;
		char dotted[200];
		if (mod && count_line(&d->modules, &d->nmodules, &mcap[sp], module_name(dotted, sizeof dotted, mod)) < 0)
			return -1;
		if (mod && user && count_line(&d->import_lines, &d->nimport_lines, &icap[sp], user) < 0)
			return -1;
	}
	for (int p = 0; p <= IA_PHASE_N; p++) {
		struct ia_phase_detail *d = p < IA_PHASE_N ? &ph->d[p] : &ph->recompile;
		if (d->nlines)
			qsort(d->lines, d->nlines, sizeof *d->lines, ia_gap_line_by_count);
		if (d->nframes)
			qsort(d->frames, d->nframes, sizeof *d->frames, ia_gap_line_by_count);
		if (d->nmodules)
			qsort(d->modules, d->nmodules, sizeof *d->modules, ia_gap_line_by_count);
		if (d->nimport_lines)
			qsort(d->import_lines, d->nimport_lines, sizeof *d->import_lines, ia_gap_line_by_count);
	}
	return 0;
}

int ia_phases_compute(const struct ia_trace *t, const struct ia_per_process *pp, struct ia_stack_names *names,
		      struct ia_phases *ph, char *err, size_t errlen)
{
	memset(ph, 0, sizeof *ph);
	if (pp->main < 0 || t->last_ns <= t->first_ns)
		return 0;
	ph->t0 = t->first_ns;
	ph->nslices = (size_t)((t->last_ns - t->first_ns) / IA_PHASE_SLICE_NS) + 1;
	ph->slice = calloc(ph->nslices, 1);
	ph->launches = calloc(ph->nslices, sizeof *ph->launches);
	ph->input = calloc(ph->nslices, 1);
	if (!ph->slice || !ph->launches || !ph->input)
		goto oom;
	uint32_t main_proc = pp->p[pp->main].proc;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct ia_thread *x = &t->threads[i];
		if (x->proc != main_proc)
			continue;
		for (uint32_t k = 0; k < x->call_n; k++) {
			const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + k]];
			size_t s = slice_of(ph, c->start);
			if (s < ph->nslices && ingero_api_class(c->api) == INGERO_CLASS_LAUNCH)
				ph->launches[s]++;
		}
	}
	for (size_t i = 0; i < pp->n; i++)
		if (pp->p[i].role == IA_ROLE_COMPILER) {
			ph->compiler_cpu_ns += pp->p[i].cpu_ns;
			ph->ncompilers++;
		}
	struct ia_phase_vote *v;
	size_t nv;
	if (load_votes(t, pp, names, ph, &v, &nv, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < nv; i++)
		ph->cudnn_benchmark |= v[i].why == IA_WHY_CUDNN_BENCHMARK;
	if (decide_epochs(ph, v, nv) < 0) {
		free(v);
		goto oom;
	}
	if (mark_paused(ph, &t->capture) < 0) {
		free(v);
		goto oom;
	}
	if (find_steps(t, pp, ph, err, errlen) < 0) {
		free(v);
		return -1;
	}
	if (nv)   /* by time, for ia_phases_gap (the other readers take any order) */
		qsort(v, nv, sizeof *v, cmp_vote_ts);
	ph->votes = v;   /* kept for ia_phases_focus */
	ph->nvotes = nv;
	if (build_episodes(ph) < 0)
		goto oom;
	snap_paused(ph, &t->capture);
	/* the repeats before the details: a repeat's samples are recompiling's */
	if (episode_sites(ph, names, v, nv) < 0)
		goto oom;
	mark_repeats(ph);
	if (details(ph, names, v, nv, 0, UINT64_MAX) < 0)
		goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void ia_phases_free(struct ia_phases *ph)
{
	free(ph->slice);
	free(ph->launches);
	free(ph->input);
	free(ph->ep);
	free(ph->votes);
	details_free(ph);
	memset(ph, 0, sizeof *ph);
}

int ia_phases_focus(struct ia_phases *ph, struct ia_stack_names *names, uint64_t a, uint64_t b)
{
	return details(ph, names, ph->votes, ph->nvotes, a, b);
}

int ia_phases_workers_persist(const struct ia_phases *ph)
{
	size_t starts = 0, forks = 0;
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->phase != IA_PHASE_EPOCH || !(e->hints & IA_HINT_LOADER_START))
			continue;
		starts++;
		forks += (e->whys >> IA_WHY_LOADER_WORKERS) & 1;
	}
	if (starts < 2)
		return -1;
	return forks < starts;
}

enum ia_phase ia_phase_at(const struct ia_phases *ph, uint64_t ts)
{
	if (!ph->nslices || ts < ph->t0)
		return IA_PHASE_STEADY;
	size_t s = slice_of(ph, ts);
	return s < ph->nslices ? (enum ia_phase)ph->slice[s] : IA_PHASE_STEADY;
}

uint64_t ia_phases_time_in(const struct ia_phases *ph, enum ia_phase p, uint64_t a, uint64_t b)
{
	if (!ph->nslices || b <= a)
		return 0;
	uint64_t end = ph->t0 + ph->nslices * IA_PHASE_SLICE_NS;
	if (a < ph->t0)
		a = ph->t0;
	if (b > end)
		b = end;
	uint64_t n = 0;
	for (size_t s = a < b ? slice_of(ph, a) : ph->nslices; s < ph->nslices; s++) {
		uint64_t s0 = ph->t0 + s * IA_PHASE_SLICE_NS;
		if (s0 >= b)
			break;
		int match = p == IA_PHASE_N ? ph->slice[s] != IA_PHASE_STEADY : ph->slice[s] == p;
		if (match)
			n += ia_overlap(s0, s0 + IA_PHASE_SLICE_NS, a, b);
	}
	return n;
}

enum ia_phase ia_phases_gap(const struct ia_phases *ph, uint64_t a, uint64_t b)
{
	/* the main thread's own samples in the gap, when it has any: a few
	 * milliseconds of lazy kernel loading between two steady slices are
	 * start-up, whatever the 50 ms slice around them says */
	size_t lo = 0, hi = ph->nvotes;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ph->votes[mid].ts < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	unsigned n[IA_PHASE_N] = { 0 }, total = 0;
	for (size_t i = lo; i < ph->nvotes && ph->votes[i].ts < b; i++)
		if (ph->votes[i].main) {
			n[ia_phases_of_why(ph, (enum ia_phase_why)ph->votes[i].why)]++;
			total++;
		}
	/* only to name a one-time phase: a long gap's edges hold the main
	 * thread's samples of the calls around it, which say nothing of what
	 * filled the gap (a compile pool's work, say) */
	for (int p = 1; p < IA_PHASE_N; p++)
		if (total && 2 * n[p] > total)
			return (enum ia_phase)p;
	return ia_phases_majority(ph, a, b);
}

cJSON *ia_phases_json(const struct ia_phases *ph, const struct ia_trace *t, uint64_t a, uint64_t b)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t other = 0;
	for (int p = 1; p < IA_PHASE_N; p++) {
		char key[48];
		/* (between capture windows: the capture's exact stretches) */
		uint64_t n = p == IA_PHASE_PAUSED ? ia_capture_paused_in(&t->capture, a, b)
						  : ia_phases_time_in(ph, (enum ia_phase)p, a, b);
		snprintf(key, sizeof key, "%s_ns", ia_phase_name((enum ia_phase)p));
		ia_json_u64(o, key, n);
		other += n;
	}
	ia_json_u64(o, "steady_ns", b > a + other ? b - a - other : 0);
	ia_json_u64(o, "slice_ns", IA_PHASE_SLICE_NS);
	cJSON *st = cJSON_AddObjectToObject(o, "step");   /* the loop's step (steps.h), when found */
	ia_json_u64(st, "calls", ph->steps.calls);
	ia_json_u64(st, "launches", ph->steps.launches);
	ia_json_u64(st, "ns", ph->steps.ns);
	ia_json_u64(o, "repeat_after_launches", ph->again_launches);
	cJSON *eps = cJSON_AddArrayToObject(o, "episodes");
	for (size_t i = 0; i < ph->nep; i++) {
		const struct ia_phase_episode *e = &ph->ep[i];
		if (e->end <= a || e->start >= b)
			continue;
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "phase", ia_phase_name(e->phase));
		ia_json_u64(x, "start_rel_ns", e->start - t->t0);
		ia_json_u64(x, "end_rel_ns", e->end - t->t0);
		ia_json_u64(x, "launches_before", e->launches_before);
		cJSON_AddBoolToObject(x, "repeat", e->repeat);
		ia_json_str(x, "site", e->site[0] ? e->site : NULL);
		cJSON_AddItemToArray(eps, x);
	}
	return o;
}

uint64_t ia_phases_main_samples(const struct ia_phases *ph, uint64_t a, uint64_t b, int steady,
				void (*fn)(uint64_t stack, void *arg), void *arg)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ph->nvotes; i++) {
		const struct ia_phase_vote *v = &ph->votes[i];
		if (!v->main || v->ts < a || v->ts >= b || (steady && ia_phase_at(ph, v->ts) != IA_PHASE_STEADY))
			continue;
		n++;
		if (fn)
			fn(v->stack, arg);
	}
	return n;
}
