/*
 * wakers.c — follow the wait (see wakers.h).
 *
 * Costs: per hop, a walk over the waiter's loaded intervals in the gaps'
 * span (who woke each: the loader's side table, trace.off_wakers), one
 * over the waker's in the stretches it was waited for, and one query over
 * its cpu_samples there.  Three hops at most.
 *
 * Only waits a thread's action ends are followed: a futex (a lock, a
 * condition, a queue), a pipe or a socket read or poll, a child's exit.  A
 * sleep is ended by a timer and storage by an I/O completion — interrupts,
 * whose "current task" is whoever they interrupted, not a cause.
 */
#include "measure/wakers.h"

#include "base/json_out.h"
#include "base/util.h"
#include "load/db.h"
#include "load/mechanisms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct piece {
	uint64_t a, b;
	uint32_t waker;   /* tid */
};

struct pieces {
	struct piece *p; size_t n, cap;
};

static int woken_by_a_thread(enum ia_wait k)
{
	return k == IA_WAIT_FUTEX || k == IA_WAIT_POLL || k == IA_WAIT_READ || k == IA_WAIT_WRITE ||
	       k == IA_WAIT_CHILD || k == IA_WAIT_UNKNOWN;
}

/* Who woke interval off (a tid), 0 when nobody recorded. */
static uint32_t waker_of(const struct ia_trace *t, uint32_t off)
{
	size_t i = ia_off_side_find(t->off_wakers, t->noff_wakers, sizeof *t->off_wakers, off);
	return i < t->noff_wakers ? t->off_wakers[i].tid : 0;
}

/* The waiter's blocked parts inside the windows, each with who woke it;
 * *blocked: all its blocked time there (a waker seen or not). */
static int waiter_pieces(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n, struct pieces *out,
			 uint64_t *blocked, char *err, size_t errlen)
{
	*blocked = 0;
	if (!n)
		return 0;
	const struct ia_thread *x = &t->threads[th];
	const uint32_t *ix = t->off_by_th + x->off_first;
	for (size_t k = ia_thread_off_lower(t, th, w[0]); k < x->off_n; k++) {
		const struct ia_off *o = &t->offs[ix[k]];
		if (o->start >= w[2 * n - 1])
			break;
		if (o->th & IA_OFF_PREEMPTED)
			continue;
		uint64_t s = o->start, r = o->end - o->runq;
		uint32_t waker = waker_of(t, ix[k]);
		int follow = !(o->th & IA_OFF_IOWAIT) && woken_by_a_thread(ia_syscall_wait(ia_off_sys(o))) && waker &&
			     waker != x->tid;
		for (size_t i = ia_window_after(w, n, s); i < n && w[2 * i] < r; i++) {
			uint64_t a = s > w[2 * i] ? s : w[2 * i], b = r < w[2 * i + 1] ? r : w[2 * i + 1];
			if (b <= a)
				continue;
			*blocked += b - a;
			if (!follow)
				continue;
			if (ia_grow((void **)&out->p, &out->cap, out->n + 1, sizeof *out->p) < 0) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			out->p[out->n++] = (struct piece){ a, b, waker };
		}
	}
	return 0;
}

/* Hop 0 of a relay (gaps.h): each driving thread's blocked parts in the
 * gaps it drove, in their order. */
static int relay_pieces(const struct ia_trace *t, const struct ia_gaps *g, struct pieces *p, uint64_t *blocked,
			char *err, size_t errlen)
{
	uint64_t *w = malloc(2 * g->n * sizeof *w);
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*blocked = 0;
	for (size_t r = 0; r < g->nrelay; r++) {
		size_t n = 0;
		uint64_t b = 0;
		for (size_t i = 0; i < g->n; i++)
			if (g->g[i].th == g->relay[r]) {
				w[2 * n] = g->g[i].start;
				w[2 * n + 1] = g->g[i].end;
				n++;
			}
		if (waiter_pieces(t, g->relay[r], w, n, p, &b, err, errlen) < 0) {
			free(w);
			return -1;
		}
		*blocked += b;
	}
	free(w);
	return 0;
}

/* The waker that ended the most of the pieces' time, and that time. */
static uint32_t top_waker(const struct pieces *p, uint64_t *ns)
{
	uint32_t best = 0;
	uint64_t best_ns = 0;
	for (size_t i = 0; i < p->n; i++) {
		uint32_t k = p->p[i].waker;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = p->p[j].waker == k;
		if (seen)
			continue;
		uint64_t sum = 0;
		for (size_t j = i; j < p->n; j++)
			if (p->p[j].waker == k)
				sum += p->p[j].b - p->p[j].a;
		if (sum > best_ns || (sum == best_ns && k < best)) {
			best = k;
			best_ns = sum;
		}
	}
	*ns = best_ns;
	return best;
}

/* The waker's blocked time in the windows: in D state, by system call. */
static void hop_blocked(const struct ia_trace *t, uint32_t th, const uint64_t *w, size_t n, struct ia_wait_hop *h)
{
	const struct ia_thread *x = &t->threads[th];
	const uint32_t *ix = t->off_by_th + x->off_first;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = ia_thread_off_lower(t, th, w[2 * i]); k < x->off_n; k++) {
			const struct ia_off *o = &t->offs[ix[k]];
			if (o->start >= w[2 * i + 1])
				break;
			if (o->th & IA_OFF_PREEMPTED)
				continue;
			uint64_t blk = ia_overlap(o->start, o->end - o->runq, w[2 * i], w[2 * i + 1]);
			h->sys_ns[ia_off_sys(o)] += blk;
			if (o->th & IA_OFF_IOWAIT)
				h->iowait_ns += blk;
		}
	}
}

/* Its most sampled stack in the windows. */
static int hop_samples(const struct ia_trace *t, struct ia_stack_names *names, const uint64_t *w, size_t n,
		       struct ia_wait_hop *h, char *err, size_t errlen)
{
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT ts_ns, stack_id FROM cpu_samples WHERE tid = ?1 AND ts_ns >= ?2 "
					 "AND ts_ns < ?3", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, t->threads[h->th].tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)w[0]);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)w[2 * n - 1]);
	struct { uint64_t id, n; } *ids = NULL;
	size_t nids = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t ts = (uint64_t)sqlite3_column_int64(st, 0), id = (uint64_t)sqlite3_column_int64(st, 1);
		size_t i = ia_window_after(w, n, ts);
		if (i == n || ts < w[2 * i])
			continue;
		h->samples++;
		size_t k = 0;
		while (k < nids && ids[k].id != id)
			k++;
		if (k == nids) {
			if (ia_grow((void **)&ids, &cap, nids + 1, sizeof *ids) < 0) {
				rc = SQLITE_NOMEM;
				break;
			}
			ids[nids++] = (typeof(*ids)){ id, 0 };
		}
		ids[k].n++;
	}
	rc = rc == SQLITE_NOMEM ? (snprintf(err, errlen, "out of memory"), -1) : ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	/* where its time went: the line with the most samples (a line's
	 * work spreads over many native leaves), then that line's top leaf */
	const char *best_line = NULL;
	uint64_t best_n = 0;
	for (size_t k = 0; rc == 0 && k < nids; k++) {
		const char *line = ia_stack_source(names, ids[k].id);
		if (!line)
			continue;
		uint64_t n_line = 0;
		for (size_t m = 0; m < nids; m++) {
			const char *l2 = ia_stack_source(names, ids[m].id);
			if (l2 && !strcmp(l2, line))
				n_line += ids[m].n;
		}
		if (n_line > best_n || (n_line == best_n && best_line && strcmp(line, best_line) < 0)) {
			best_n = n_line;
			best_line = line;
			snprintf(h->line, sizeof h->line, "%s", line);
			best_line = h->line;
		}
	}
	size_t best = nids;
	for (size_t k = 0; rc == 0 && k < nids; k++) {
		const char *line = ia_stack_source(names, ids[k].id);
		if (h->line[0] && (!line || strcmp(line, h->line)))
			continue;
		if (best == nids || ids[k].n > ids[best].n || (ids[k].n == ids[best].n && ids[k].id < ids[best].id))
			best = k;
	}
	h->top_samples = h->line[0] ? best_n : best < nids ? ids[best].n : 0;
	/* by mechanism too: what its time was (a copy, fresh memory), whatever line ran it */
	uint64_t by_mech[IA_MECH_N] = { 0 };
	for (size_t k = 0; rc == 0 && k < nids; k++)
		by_mech[ia_mech_family((enum ia_mech)ia_stack_mech(names, ids[k].id))] += ids[k].n;
	for (int m = IA_MECH_NONE + 1; m < IA_MECH_N; m++)
		if (by_mech[m] > h->mech_samples)
			h->mech = m, h->mech_samples = by_mech[m];
	if (rc == 0 && best < nids) {
		const char *leaf = ia_stack_leaf(names, ids[best].id);
		const char *fn = ia_stack_python_func(names, ids[best].id);
		/* a thread running Python code is named by its function, else by its native leaf */
		snprintf(h->label, sizeof h->label, "%s",
			 ia_stack_runs_python(names, ids[best].id) && fn ? fn : leaf ? leaf : "");
	}
	free(ids);
	return rc;
}

/* The pieces of one waker as sorted windows (pairs): the waits it ended. */
static uint64_t *waker_windows(const struct pieces *p, uint32_t waker, size_t *n)
{
	uint64_t *w = malloc((2 * p->n + 2) * sizeof *w);
	if (!w)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->p[i].waker == waker) {
			if (k && w[2 * k - 1] >= p->p[i].a) {   /* touching: one window */
				if (p->p[i].b > w[2 * k - 1])
					w[2 * k - 1] = p->p[i].b;
				continue;
			}
			w[2 * k] = p->p[i].a;
			w[2 * k + 1] = p->p[i].b;
			k++;
		}
	*n = k;
	return w;
}

static uint64_t windows_ns(const uint64_t *w, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += w[2 * i + 1] - w[2 * i];
	return s;
}

static int blocked_on_a_thread(const struct ia_wait_hop *h)
{
	uint64_t by_thread = 0;
	for (int c = 0; c < 256; c++)
		if (woken_by_a_thread(ia_syscall_wait((uint8_t)c)))
			by_thread += h->sys_ns[c];
	return h->blocked_ns && by_thread * 2 >= h->blocked_ns && h->iowait_ns * 2 < h->blocked_ns;
}

int ia_wakers_compute(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_evidence *ev,
		      struct ia_stack_names *names, const struct ia_gaps *g, struct ia_wakers *w, char *err,
		      size_t errlen)
{
	memset(w, 0, sizeof *w);
	w->known = t->off_waker;
	if (!w->known || !g->n || pp->main_thread == UINT32_MAX || !t->noffs)
		return 0;
	uint64_t *win = ia_gap_windows(g);
	if (!win) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	size_t nwin = g->n;
	uint32_t waiter = pp->main_thread;
	int rc = 0;
	for (size_t hop = 0; hop < IA_WAIT_HOPS; hop++) {
		struct pieces p = { 0 };
		uint64_t blocked = 0, ns = 0;
		/* (a relay's first hop: each gap's own main thread) */
		if ((rc = hop == 0 && g->nrelay ? relay_pieces(t, g, &p, &blocked, err, errlen)
						: waiter_pieces(t, waiter, win, nwin, &p, &blocked, err, errlen)) < 0) {
			free(p.p);
			break;
		}
		if (hop == 0) {
			w->blocked_ns = blocked;
			for (size_t i = 0; i < p.n; i++)
				w->woken_ns += p.p[i].b - p.p[i].a;
		}
		uint32_t waker = top_waker(&p, &ns);
		int th = waker ? ia_thread_index(t, waker) : -1;
		int again = 0;
		for (size_t k = 0; k < w->nhops && th >= 0; k++)
			again |= w->hop[k].th == (uint32_t)th;
		if (th < 0 || again || (uint32_t)th == waiter || !blocked || (double)ns < IA_WAKER_SHARE * (double)blocked) {
			free(p.p);
			break;
		}
		size_t n = 0;
		uint64_t *ww = waker_windows(&p, waker, &n);
		free(p.p);
		if (!ww) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		struct ia_wait_hop *h = &w->hop[w->nhops++];
		memset(h, 0, sizeof *h);
		h->th = (uint32_t)th;
		h->waited_ns = ns;
		h->share_pm = ns * 1000 / blocked;
		h->oncpu_ns = ia_thread_cpu_windows(t, h->th, ww, n, &h->runq_ns);
		uint64_t total = windows_ns(ww, n);
		h->blocked_ns = total > h->oncpu_ns + h->runq_ns ? total - h->oncpu_ns - h->runq_ns : 0;
		hop_blocked(t, h->th, ww, n, h);
		if ((rc = hop_samples(t, names, ww, n, h, err, errlen)) < 0) {
			free(ww);
			break;
		}
		free(win);
		win = ww;
		nwin = n;
		waiter = h->th;
		if (!blocked_on_a_thread(h) || h->blocked_ns < h->oncpu_ns || h->blocked_ns < h->runq_ns)
			break;
	}
	if (rc == 0 && w->nhops) {
		const struct ia_wait_hop *h = &w->hop[w->nhops - 1];
		uint64_t slept = 0;
		for (int c = 0; c < 256; c++)
			if (ia_syscall_wait((uint8_t)c) == IA_WAIT_SLEEP)
				slept += h->sys_ns[c];
		w->end = h->runq_ns >= h->oncpu_ns && h->runq_ns >= h->blocked_ns ? IA_WAITEND_RUNQ
			: h->oncpu_ns >= h->blocked_ns ? IA_WAITEND_ONCPU
			: h->iowait_ns * 2 >= h->blocked_ns ? IA_WAITEND_IO
			: slept * 2 >= h->blocked_ns ? IA_WAITEND_SLEEP : IA_WAITEND_BLOCKED;
		if (w->end == IA_WAITEND_RUNQ) {
			uint64_t untraced = 0;
			rc = ia_cpu_takers(t, pp, ev, t->threads[h->th].tid, win, nwin, w->takers, 4, &w->ntakers,
					   &w->takers_ns, &untraced, err, errlen);
		}
	}
	free(win);
	return rc;
}

int ia_wait_hop_mech(const struct ia_wait_hop *h)
{
	return h->samples && h->mech_samples * 2 >= h->samples ? h->mech : IA_MECH_NONE;
}

int ia_wait_hop_is_pin_thread(const struct ia_trace *t, const struct ia_wait_hop *h)
{
	return !strcmp(t->threads[h->th].comm, "pt_data_pin") ||
	       strstr(h->line, "torch/utils/data/_utils/pin_memory.py") != NULL;
}

int ia_wait_hop_is_gloo(const struct ia_trace *t, const struct ia_coll_tids *gloo, const struct ia_wait_hop *h)
{
	const struct ia_thread *x = &t->threads[h->th];
	return !strncmp(x->comm, "pt_gloo", 7) || ia_coll_tids_has(gloo, x->tid);
}

/* What PyTorch's own threads are, by the names it gives them: a user who
 * meets "pt_data_pin" in a finding should not have to look it up. */
static const char *torch_thread_role(const char *comm)
{
	if (!strncmp(comm, "pt_autograd_", 12))
		return "the autograd engine ";
	if (!strcmp(comm, "pt_data_pin"))
		return "the DataLoader's pin-memory ";
	if (!strcmp(comm, "pt_data_worker"))
		return "a DataLoader worker's ";
	if (!strncmp(comm, "pt_gloo", 7))
		return "gloo's collectives ";
	return "";
}

/* A thread's role, "" for a process's main thread (named as the process) */
static const char *hop_role(const struct ia_trace *t, const struct ia_wait_hop *h)
{
	const struct ia_thread *x = &t->threads[h->th];
	const struct ia_proc *p = &t->procs[x->proc];
	return (int)x->tid == p->pid ? "" : torch_thread_role(x->comm[0] ? x->comm : p->comm);
}

int ia_wait_hop_has_role(const struct ia_trace *t, const struct ia_wait_hop *h)
{
	return *hop_role(t, h) != 0;
}

const char *ia_wait_hop_name(const struct ia_trace *t, const struct ia_wait_hop *h, char *buf, size_t n)
{
	const struct ia_thread *x = &t->threads[h->th];
	const struct ia_proc *p = &t->procs[x->proc];
	if ((int)x->tid == p->pid)
		snprintf(buf, n, "process pid %d \"%s\"", p->pid, p->comm);
	else
		snprintf(buf, n, "%sthread tid %u \"%s\"", hop_role(t, h), x->tid, x->comm[0] ? x->comm : p->comm);
	return buf;
}

/* What the last hop did, in words: "was on a CPU for 1.9s, the most in
 * sha256 (prod.py:12)", "waited 2.0s for a CPU taken by sh (10 processes)". */
static void hop_state(const struct ia_trace *t, const struct ia_wakers *w, const struct ia_wait_hop *h,
		      char *buf, size_t n)
{
	char d[32], d2[32], names[256];
	(void)t;
	buf[0] = 0;
	if (h == &w->hop[w->nhops - 1] && w->end == IA_WAITEND_RUNQ) {
		snprintf(buf, n, "waited %s for a CPU%s%s", ia_fmt_dur(d, sizeof d, h->runq_ns),
			 w->ntakers ? " taken by " : "",
			 w->ntakers ? ia_competitors_text(names, sizeof names, w->takers, w->ntakers) : "");
	} else if (h->oncpu_ns >= h->blocked_ns && h->oncpu_ns >= h->runq_ns) {
		if (h->line[0])
			snprintf(buf, n, "was on a CPU for %s, at %s (%llu of its %llu samples there)",
				 ia_fmt_dur(d, sizeof d, h->oncpu_ns), h->line, (unsigned long long)h->top_samples,
				 (unsigned long long)h->samples);
		else
			snprintf(buf, n, "was on a CPU for %s%s%s", ia_fmt_dur(d, sizeof d, h->oncpu_ns),
				 h->label[0] ? ", the most in " : "", h->label);
		if (ia_wait_hop_mech(h)) {
			size_t at = strlen(buf);
			snprintf(buf + at, n - at, ", %.0f%% of them %s", 100.0 * (double)h->mech_samples / (double)h->samples,
				 ia_mech_family_name((enum ia_mech)h->mech));
		}
	} else if (h == &w->hop[w->nhops - 1] && w->end == IA_WAITEND_SLEEP) {
		uint8_t codes[1];
		size_t k = ia_gaps_blocked_in(h->sys_ns, h->blocked_ns, codes, 1);
		snprintf(buf, n, "slept %s of that time%s%s", ia_fmt_dur(d, sizeof d, h->blocked_ns), k ? " in " : "",
			 k ? ia_sys_code_name(codes[0]) : "");
	} else if (h->iowait_ns * 2 >= h->blocked_ns) {
		snprintf(buf, n, "was blocked %s, %s of it in D state (storage)", ia_fmt_dur(d, sizeof d, h->blocked_ns),
			 ia_fmt_dur(d2, sizeof d2, h->iowait_ns));
	} else {
		uint8_t codes[1];
		size_t k = ia_gaps_blocked_in(h->sys_ns, h->blocked_ns, codes, 1);
		snprintf(buf, n, "was blocked %s%s%s", ia_fmt_dur(d, sizeof d, h->blocked_ns), k ? ", the most in " : "",
			 k ? ia_sys_code_name(codes[0]) : "");
	}
}

const char *ia_wakers_text(const struct ia_trace *t, const struct ia_wakers *w, char *buf, size_t n)
{
	buf[0] = 0;
	if (!w->nhops)
		return buf;
	size_t at = 0;
	for (size_t i = 0; i < w->nhops && at < n; i++) {
		const struct ia_wait_hop *h = &w->hop[i];
		char who[160], d[32], state[400];
		ia_wait_hop_name(t, h, who, sizeof who);
		int last = i + 1 == w->nhops;
		if (last)
			hop_state(t, w, h, state, sizeof state);
		at += (size_t)snprintf(buf + at, n - at, "%s%s %s for %s (it ended %.0f%% of those waits)%s%s",
				       i ? ", which " : "the main thread", i ? "waited" : " waited",
				       ia_fmt_dur(d, sizeof d, h->waited_ns), who, h->share_pm / 10.0,
				       last ? ", which " : "", last ? state : "");
	}
	return buf;
}

void ia_wakers_json(cJSON *parent, const struct ia_trace *t, const struct ia_wakers *w)
{
	if (!w->known)
		return;
	cJSON *o = cJSON_AddObjectToObject(parent, "wait_for");
	ia_json_u64(o, "blocked_ns", w->blocked_ns);
	ia_json_u64(o, "woken_ns", w->woken_ns);
	static const char *ends[] = { "none", "on_cpu", "waiting_for_cpu", "storage", "asleep", "blocked" };
	ia_json_str(o, "end", ends[w->end]);
	cJSON *hops = cJSON_AddArrayToObject(o, "hops");
	for (size_t i = 0; i < w->nhops; i++) {
		const struct ia_wait_hop *h = &w->hop[i];
		const struct ia_thread *x = &t->threads[h->th];
		cJSON *j = cJSON_CreateObject();
		ia_json_u64(j, "pid", (uint64_t)t->procs[x->proc].pid);
		ia_json_u64(j, "tid", x->tid);
		ia_json_str(j, "comm", x->comm[0] ? x->comm : t->procs[x->proc].comm);
		ia_json_u64(j, "waited_ns", h->waited_ns);
		ia_json_round(j, "share", h->share_pm / 1000.0, 3);
		ia_json_u64(j, "oncpu_ns", h->oncpu_ns);
		ia_json_u64(j, "runq_ns", h->runq_ns);
		ia_json_u64(j, "blocked_ns", h->blocked_ns);
		ia_json_u64(j, "iowait_ns", h->iowait_ns);
		ia_json_str(j, "hot", h->label[0] ? h->label : NULL);
		ia_json_str(j, "line", h->line[0] ? h->line : NULL);
		if (ia_wait_hop_mech(h)) {
			ia_json_str(j, "mechanism", ia_mech_family_name((enum ia_mech)h->mech));
			ia_json_round(j, "mechanism_share", (double)h->mech_samples / (double)h->samples, 3);
		}
		cJSON_AddItemToArray(hops, j);
	}
	if (w->ntakers)
		cJSON_AddItemToObject(o, "cpu_takers", ia_competitors_json(w->takers, w->ntakers));
}
