/*
 * competitors.c — untraced CPU holders grouped by name (see competitors.h).
 *
 * Few competitors take a CPU from a traced thread (tens, not thousands),
 * so groups are a short array searched linearly; the CPU time of each is a
 * series sum per window (series.h).
 */
#include "measure/competitors.h"
#include "measure/per_process.h"

#include "load/db.h"
#include "base/json_out.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_cpu(const void *a, const void *b)
{
	const struct ia_comp_group *x = a, *y = b;
	int xu = x->role == IA_TAKER_UNNAMED, yu = y->role == IA_TAKER_UNNAMED;
	if (xu != yu)
		return xu - yu;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return strcmp(x->comm, y->comm);
}

size_t ia_competitors_in(const struct ia_evidence *e, const uint64_t *w, size_t n, struct ia_comp_group *out,
			 size_t max, uint64_t *total)
{
	struct ia_comp_group *all = calloc(e->ncomp + 1, sizeof *all);
	size_t ng = 0;
	*total = 0;
	if (!all)
		return 0;
	for (size_t c = 0; c < e->ncomp; c++) {
		uint64_t ns = 0;
		for (size_t k = 0; k < n; k++)
			ns += ia_series_sum(&e->comp[c].cpu, w[2 * k], w[2 * k + 1]);
		if (!ns)
			continue;
		const char *name = e->comp[c].comm[0] ? e->comp[c].comm : "(no name)";
		size_t i;
		for (i = 0; i < ng && strcmp(all[i].comm, name); i++)
			;
		if (i == ng)
			snprintf(all[ng++].comm, sizeof all[0].comm, "%s", name);
		all[i].npids++;
		all[i].cpu_ns += ns;
		all[i].preemptions += e->comp[c].preemptions;
		*total += ns;
	}
	if (ng)
		qsort(all, ng, sizeof *all, by_cpu);
	size_t k = ng < max ? ng : max;
	memcpy(out, all, k * sizeof *out);
	free(all);
	return k;
}

/* tid: the thread, where it is named apart (0: the process) */
struct taker { int pid, tid; uint64_t ns; };

/* (pid, tid)'s time in [a, b) within the windows onto its taker; -1 out of
 * memory */
static int take(struct taker **tk, size_t *ntk, size_t *cap, int pid, int tid, uint64_t a, uint64_t b,
		const uint64_t *w, size_t n)
{
	uint64_t ns = 0;
	for (size_t k = ia_window_after(w, n, a); k < n && w[2 * k] < b; k++)
		ns += ia_overlap(a, b, w[2 * k], w[2 * k + 1]);
	if (!ns)
		return 0;
	size_t i;
	for (i = 0; i < *ntk && ((*tk)[i].pid != pid || (*tk)[i].tid != tid); i++)
		;
	if (i == *ntk) {
		if (ia_grow((void **)tk, cap, *ntk + 1, sizeof **tk) < 0)
			return -1;
		(*tk)[i] = (struct taker){ pid, tid, 0 };
		(*ntk)++;
	}
	(*tk)[i].ns += ns;
	return 0;
}

/* One interval of the thread onto its takers, as the file says it: a
 * preempted one's whole time the next task's (pid); a woken one's wait
 * for a CPU, from runnable r to its end b, the holder's for the time it
 * held the CPU (the last `held` of it) and other tasks' before; -1 out of
 * memory. */
static int take_interval(struct taker **tk, size_t *ntk, size_t *cap, const struct ia_trace *t, uint32_t self_proc,
			 int preempted, int pid, uint64_t s, uint64_t b, uint64_t r, uint64_t held, int htid,
			 const uint64_t *w, size_t n)
{
	if (preempted)
		return take(tk, ntk, cap, pid, 0, s, b, w, n);
	uint64_t from = held < b - r ? b - held : r;
	int hth = htid > 0 ? ia_thread_index(t, (uint32_t)htid) : -1;
	if (hth < 0 || (t->threads[hth].proc != self_proc && !ia_thread_is_tracer(&t->threads[hth])))
		htid = 0;
	return take(tk, ntk, cap, pid, htid, from, b, w, n) < 0 || take(tk, ntk, cap, IA_TAKER_OTHERS, 0, r, from, w, n) < 0
		? -1 : 0;
}

/* The thread's intervals in [w[0], w[2n - 1]) from the loaded rows, in
 * time order (trace.off_by_th), their takers from the scan's side tables. */
static int takers_loaded(const struct ia_trace *t, int th, uint32_t self_proc, const uint64_t *w, size_t n,
			 struct taker **tk, size_t *ntk, size_t *cap)
{
	const struct ia_thread *me = &t->threads[th];
	for (uint32_t k = me->off_first; k < me->off_first + me->off_n; k++) {
		uint32_t i = t->off_by_th[k];
		const struct ia_off *o = &t->offs[i];
		if (o->start >= w[2 * n - 1])
			break;
		if (o->end <= w[0])
			continue;
		int rc = 0;
		if (o->th & IA_OFF_PREEMPTED) {
			size_t x = ia_off_side_find(t->off_nexts, t->noff_nexts, sizeof *t->off_nexts, i);
			int pid = x < t->noff_nexts ? (int)t->off_nexts[x].tid : 0;
			rc = take_interval(tk, ntk, cap, t, self_proc, 1, pid, o->start, o->end, 0, 0, 0, w, n);
		} else if (t->off_holder) {
			size_t x = ia_off_side_find(t->off_holders, t->noff_holders, sizeof *t->off_holders, i);
			const struct ia_off_holder *h = x < t->noff_holders ? &t->off_holders[x] : NULL;
			if (h)
				rc = take_interval(tk, ntk, cap, t, self_proc, 0, h->pid, o->start, o->end, h->runnable_ns,
						   h->held_ns, t->off_holder_tid ? (int)h->tid : 0, w, n);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The same read from the file (the thread's rows not loaded: a process
 * not selected, or a command that loads no off-CPU rows). */
static int takers_read(const struct ia_trace *t, uint32_t tid, uint32_t self_proc, const uint64_t *w, size_t n,
		       struct taker **tk, size_t *ntk, size_t *cap, char *err, size_t errlen)
{
	char sql[400];
	if (t->off_holder)   /* (holder_tid from schema 10) */
		snprintf(sql, sizeof sql, "SELECT preempted = 1, next_pid, start_ns, end_ns, holder_pid, runnable_ns, "
			 "holder_ns, %s FROM off_cpu WHERE tid = ?1 AND start_ns < ?3 AND end_ns > ?2 AND (preempted = 1 OR "
			 "(holder_pid IS NOT NULL AND end_ns > runnable_ns)) ORDER BY start_ns",
			 t->off_holder_tid ? "holder_tid" : "NULL");
	else
		snprintf(sql, sizeof sql, "SELECT 1, next_pid, start_ns, end_ns FROM off_cpu WHERE tid = ?1 AND "
			 "start_ns < ?3 AND end_ns > ?2 AND preempted = 1 ORDER BY start_ns");
	sqlite3_stmt *st = ia_db_prepare(t->db, sql, err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, tid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)w[0]);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)w[2 * n - 1]);
	int rc, oom = 0;
	while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int pre = sqlite3_column_int(st, 0);
		oom = take_interval(tk, ntk, cap, t, self_proc, pre, sqlite3_column_int(st, pre ? 1 : 4),
				    (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
				    pre ? 0 : (uint64_t)sqlite3_column_int64(st, 5), pre ? 0 : (uint64_t)sqlite3_column_int64(st, 6),
				    pre ? 0 : sqlite3_column_int(st, 7), w, n) < 0;
	}
	return ia_db_finish(st, oom ? SQLITE_NOMEM : rc, err, errlen);
}

int ia_cpu_takers(const struct ia_trace *t, const struct ia_per_process *pp, const struct ia_evidence *e, uint32_t tid,
		  const uint64_t *w, size_t n,
		  struct ia_comp_group *out, size_t max, size_t *nout, uint64_t *total, uint64_t *untraced,
		  char *err, size_t errlen)
{
	*nout = 0;
	*total = *untraced = 0;
	if (!n)
		return 0;
	/* one pass over the thread's preemptions in the windows' span, each
	 * cut by the windows it overlaps (in time order both: a query per
	 * window walked the thread's rows from its first each time); where the
	 * trace says who held a woken thread's CPU longest while it waited
	 * (schema 9), its waits after a wake-up too: holder_ns of each that
	 * task's, the rest other tasks', not named (placed at the wait's end
	 * and start: the windows cut them close enough).  From the rows the
	 * scan loaded when they are the thread's (next_pid and the holders
	 * read beside them: 0.7 s of the 10 M + 10 M bench's explain went to
	 * reading them again through the index), else from the file. */
	struct taker *tk = NULL;
	size_t ntk = 0, cap = 0;
	/* a holder thread named apart from its process: one of the waiter's own
	 * process (its autograd engine or pin-memory thread, which woke it and
	 * kept the CPU), or the tracer's (what tracing takes from it) */
	int self_th = ia_thread_index(t, tid);
	uint32_t self_proc = self_th >= 0 ? t->threads[self_th].proc : UINT32_MAX;
	int loaded = self_th >= 0 && t->off_by_th && t->procs[self_proc].selected;
	if ((loaded ? takers_loaded(t, self_th, self_proc, w, n, &tk, &ntk, &cap)
		    : takers_read(t, tid, self_proc, w, n, &tk, &ntk, &cap, err, errlen)) < 0) {
		free(tk);
		if (loaded)
			snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* by name: a traced process's, else the competitors table's */
	struct ia_comp_group *g = calloc(ntk + 1, sizeof *g);
	size_t ng = 0;
	if (!g) {
		free(tk);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ntk; i++) {
		int pi = ia_proc_index(t, tk[i].pid);
		int th = tk[i].tid ? ia_thread_index(t, (uint32_t)tk[i].tid) : -1;
		const char *name = th >= 0 && t->threads[th].comm[0] ? t->threads[th].comm : pi >= 0 ? t->procs[pi].comm : NULL;
		for (size_t c = 0; !name && c < e->ncomp; c++)
			if (e->comp[c].pid == tk[i].pid && e->comp[c].comm[0])
				name = e->comp[c].comm;
		char pidname[32];
		if (tk[i].pid == IA_TAKER_OTHERS)
			name = "(other tasks)";
		else if (!name) {
			snprintf(pidname, sizeof pidname, tk[i].pid ? "pid %d" : "(idle)", tk[i].pid);
			name = pidname;
		}
		const struct ia_proc_stats *ps = pi >= 0 && pp ? ia_pp_of_proc(pp, (uint32_t)pi) : NULL;
		enum ia_taker_role role = tk[i].pid == IA_TAKER_OTHERS ? IA_TAKER_UNNAMED
					  : th >= 0 ? (ia_thread_is_tracer(&t->threads[th]) ? IA_TAKER_TRACER : IA_TAKER_OWN_THREAD)
					  : pi >= 0 && (uint32_t)pi == self_proc ? IA_TAKER_OWN_PROC
					  : ps && ps->role == IA_ROLE_WORKER ? IA_TAKER_WORKER
					  : ps && ps->role == IA_ROLE_MAIN ? IA_TAKER_MAIN
					  : pi < 0 && !strncmp(name, "ingero-", 7) ? IA_TAKER_TRACER_PROC : IA_TAKER_NONE;
		size_t k;
		for (k = 0; k < ng && (strcmp(g[k].comm, name) || g[k].role != role); k++)
			;
		if (k == ng) {
			snprintf(g[ng].comm, sizeof g[0].comm, "%s", name);
			g[ng++].role = role;
		}
		g[k].npids++;
		g[k].cpu_ns += tk[i].ns;
		g[k].traced |= pi >= 0;
		*total += tk[i].ns;
		if (pi < 0 && tk[i].pid != IA_TAKER_OTHERS)
			*untraced += tk[i].ns;
	}
	if (ng)
		qsort(g, ng, sizeof *g, by_cpu);
	*nout = ng < max ? ng : max;
	memcpy(out, g, *nout * sizeof *out);
	if (ng > max && max && g[ng - 1].role == IA_TAKER_UNNAMED)   /* (kept, in the last place) */
		out[max - 1] = g[ng - 1];
	free(g);
	free(tk);
	return 0;
}

char *ia_competitors_text(char *buf, size_t len, const struct ia_comp_group *g, size_t n)
{
	char d[32];
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		int w;
		const char *sep = i ? ", " : "";
		ia_fmt_dur(d, sizeof d, g[i].cpu_ns);
		switch (g[i].role) {
		case IA_TAKER_TRACER:
			w = snprintf(buf + o, len - o, "%s%s (the tracer's thread) %s", sep, g[i].comm, d);
			break;
		case IA_TAKER_OWN_THREAD:
			w = snprintf(buf + o, len - o, "%s%s (its own process's thread) %s", sep, g[i].comm, d);
			break;
		case IA_TAKER_WORKER:
			w = snprintf(buf + o, len - o, "%s%s (%u DataLoader worker%s) %s", sep, g[i].comm, g[i].npids,
				     g[i].npids > 1 ? "s" : "", d);
			break;
		case IA_TAKER_TRACER_PROC:
			w = g[i].npids > 1 ? snprintf(buf + o, len - o, "%s%s (the tracer, %u processes) %s", sep, g[i].comm,
						      g[i].npids, d)
					   : snprintf(buf + o, len - o, "%s%s (the tracer) %s", sep, g[i].comm, d);
			break;
		case IA_TAKER_MAIN:
			w = snprintf(buf + o, len - o, "%s%s (main process) %s", sep, g[i].comm, d);
			break;
		case IA_TAKER_OWN_PROC:
			w = snprintf(buf + o, len - o, "%s%s (its own process's other threads) %s", sep, g[i].comm, d);
			break;
		case IA_TAKER_UNNAMED:
			w = snprintf(buf + o, len - o, "%sothers not named %s", sep, d);
			break;
		default:
			w = g[i].npids > 1 ? snprintf(buf + o, len - o, "%s%s (%u processes) %s", sep, g[i].comm, g[i].npids, d)
					   : snprintf(buf + o, len - o, "%s%s %s", sep, g[i].comm, d);
		}
		if (w < 0 || (size_t)w >= len - o)
			break;
		o += (size_t)w;
	}
	return buf;
}

cJSON *ia_competitors_json(const struct ia_comp_group *g, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "comm", g[i].comm);
		ia_json_u64(o, "processes", g[i].npids);
		ia_json_u64(o, "cpu_ns", g[i].cpu_ns);
		static const char *const role[] = { [IA_TAKER_WORKER] = "worker", [IA_TAKER_MAIN] = "main",
						    [IA_TAKER_TRACER] = "tracer", [IA_TAKER_OWN_THREAD] = "own_thread",
						    [IA_TAKER_TRACER_PROC] = "tracer", [IA_TAKER_UNNAMED] = "unnamed",
						    [IA_TAKER_OWN_PROC] = "own_process" };
		if (g[i].role != IA_TAKER_NONE)
			cJSON_AddStringToObject(o, "role", role[g[i].role]);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
