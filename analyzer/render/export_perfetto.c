/*
 * export_perfetto.c — a trace as Chrome trace-event JSON that
 * ui.perfetto.dev (and chrome://tracing) load (export_perfetto.h;
 * `ingero-analyze export --format perfetto`, cli/cmd_export.c).
 *
 * Layout: one process per traced process (named with its role), one track
 * per thread with its CUDA calls as complete ("X") slices; a second track
 * per thread ("… off-CPU") with its off-CPU intervals, the run-queue part
 * nested inside (kept apart because an off-CPU interval may straddle the
 * end of a call, and slices of one track must nest); a GPU track in the
 * main process: with GPU marks (schema 3) "GPU (measured)", its slices the
 * stretches the GPU certainly had work ("busy") or certainly had none
 * ("idle"), the rest left blank (not resolved); without them "GPU
 * (estimate)", the steady state's stretches when no CUDA work was queued;
 * one track per stream with the kernels and copies the marks timed alone
 * (their GPU time, exact), named; flows from the last work a thread queued
 * to the sync that waited for it, bound to the two slices by id
 * (bind_id, flow_out/flow_in: no viewer has to match them by time); counters
 * for CPU busy %% and page allocations per second.  The tracer's own
 * threads (ia_thread_is_tracer) are left out.
 *
 * Collectives (measure/collective_list.h), when the trace has any: a
 * "collectives" track in each process that made some (named with its
 * rank), each collective a slice "all_reduce #17" from its arrival to its
 * completion — by the GPU marks around it when there are, else the call —
 * with its communicator, sequence number, bytes, ranks, backend, its
 * lateness after the first rank and its wait for the last as args; and
 * across the ranks, from the part of the rank that arrived last (by more
 * than a tie) to each part that waited for it, a Trace Event Format flow
 * (ph "s" on the last rank's slice, "f" with "bp":"e" on the waiting
 * one's, each at a time inside its slice: one source has several targets,
 * which bind_id cannot say).  A trace without collectives is written as
 * before, byte for byte.
 *
 * NVTX ranges (table nvtx_ranges, schema 11), when the trace has any: a
 * track per thread ("… NVTX") with its pushed ranges as slices (they nest:
 * push and pop are a thread's stack), marks as instant events there, and a
 * started range (which may end on another thread) as an async slice of its
 * process.  A trace without ranges is written as before.
 *
 * Every track is well formed: slices on one track are disjoint or nested,
 * never partly overlapping (a call that outlasts the one it started in is
 * cut at its end; the GPU track's spans are cut at the previous one's
 * end).  The headline every view opens with (render/headline.h) is in
 * otherData.
 *
 * The file can hold tens of millions of events, so it is streamed with
 * fprintf; every string goes through ia_json_write_string (escaped, valid
 * UTF-8).  Timestamps are microseconds since the trace start, with ns
 * precision (three decimals).
 */
#include "load/trace_status.h"
#include "render/export_perfetto.h"

#include "base/json_out.h"
#include "base/progress.h"
#include "base/util.h"
#include "render/headline.h"
#include "load/db.h"
#include "load/syscalls.h"

#include <ingero/api.h>
#include <ingero/event.h>
#include <ingero/u64map.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFF_TRACK_BASE 1000000000u   /* tid of a thread's off-CPU track: base + tid */
#define GPU_TRACK_TID 999999999u
#define COLL_TRACK_TID 999999000u      /* a process's collectives: below the stream tracks' tids */
#define STREAM_TRACKS 64               /* streams with timed work drawn, at most: tids below the GPU track's */
#define NEST_MAX 16
#define NVTX_TRACK_BASE 2000000000u  /* tid of a thread's NVTX track: base + tid */

struct out {
	FILE *f;
	int first;
	uint64_t t0;               /* ts 0, on the clock of the output (node 0's with several nodes) */
	unsigned long long flow_id;
	int64_t shift;             /* added to the node's times: onto node 0's clock (0 for one file) */
	int pid_base;              /* added to its pids: node n's n * IA_PERFETTO_NODE_PIDS (0 for one file) */
};

static void sep(struct out *o)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = 0;
}

static void ts(struct out *o, const char *key, uint64_t abs_ns)
{
	uint64_t at = o->shift >= 0 || abs_ns >= (uint64_t)-o->shift ? abs_ns + (uint64_t)o->shift : 0;
	uint64_t rel = at >= o->t0 ? at - o->t0 : 0;
	fprintf(o->f, "\"%s\":%llu.%03llu", key, (unsigned long long)(rel / 1000), (unsigned long long)(rel % 1000));
}

static void dur(struct out *o, uint64_t ns)
{
	fprintf(o->f, ",\"dur\":%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void meta(struct out *o, const char *what, int pid, uint64_t tid, const char *name)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%llu,\"ts\":0,\"args\":{\"name\":", what,
		o->pid_base + pid, (unsigned long long)tid);
	ia_json_write_string(o->f, name);
	fputs("}}", o->f);
}

static void sort_meta(struct out *o, const char *what, int pid, uint64_t tid, long idx)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%llu,\"ts\":0,\"args\":{\"sort_index\":%ld}}", what,
		o->pid_base + pid, (unsigned long long)tid, idx);
}

static const char *dir_name(int d)
{
	static const char *const n[] = { "none", "HtoD", "DtoH", "DtoD", "HtoH", "default", "peer" };
	return d >= 0 && d < 7 ? n[d] : "none";
}

/* The flow each call takes part in: for a sync, the id of the flow from the
 * last work the thread queued before it; for that work, the same id. */
static unsigned long long *flow_ids(struct out *o, const struct ia_trace *t, const struct ia_thread *x)
{
	unsigned long long *id = calloc(x->call_n ? x->call_n : 1, sizeof *id);
	if (!id)
		return NULL;
	long last_work = -1;
	for (uint32_t k = 0; k < x->call_n; k++) {
		int cls = ingero_api_class(t->calls[t->call_by_th[x->call_first + k]].api);
		if (cls == INGERO_CLASS_LAUNCH || cls == INGERO_CLASS_COPY || cls == INGERO_CLASS_MEMSET) {
			last_work = (long)k;
		} else if (cls == INGERO_CLASS_SYNC && last_work >= 0) {
			id[k] = id[last_work] = ++o->flow_id;
			last_work = -1;
		}
	}
	return id;
}

/* ns cut so that [start, start + ns) nests in the slices still open on the
 * track (ends, *n of them: popped up to start, then pushed). */
static uint64_t nest(uint64_t *ends, int *n, uint64_t start, uint64_t ns)
{
	while (*n && ends[*n - 1] <= start)
		(*n)--;
	if (*n && start + ns > ends[*n - 1])
		ns = ends[*n - 1] - start;
	if (*n < NEST_MAX)
		ends[(*n)++] = start + ns;
	return ns;
}

static void write_calls(struct out *o, const struct ia_trace *t, struct ia_stack_names *names, uint32_t th)
{
	const struct ia_thread *x = &t->threads[th];
	int pid = o->pid_base + t->procs[x->proc].pid;
	unsigned long long *flow = flow_ids(o, t, x);
	uint64_t ends[NEST_MAX];
	int open = 0;
	for (uint32_t k = 0; k < x->call_n; k++) {
		const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + k]];
		int cls = ingero_api_class(c->api);
		sep(o);
		fputs("{\"ph\":\"X\",\"cat\":\"cuda\",\"name\":", o->f);
		ia_json_write_string(o->f, ia_api_name(t, c->api));
		fprintf(o->f, ",\"pid\":%d,\"tid\":%u,", pid, x->tid);
		ts(o, "ts", c->start);
		dur(o, nest(ends, &open, c->start, c->dur));
		if (flow && flow[k])
			fprintf(o->f, ",\"bind_id\":\"0x%llx\",\"%s\":true", flow[k],
				cls == INGERO_CLASS_SYNC ? "flow_in" : "flow_out");
		fprintf(o->f, ",\"args\":{\"class\":\"%s\"", ingero_api_class_name(cls));
		if (c->dur > 0 && open && ends[open - 1] < c->start + c->dur)
			fprintf(o->f, ",\"dur_ns\":%llu", (unsigned long long)c->dur);   /* cut to nest: its whole time */
		if (cls == INGERO_CLASS_COPY || c->bytes) {
			fprintf(o->f, ",\"bytes\":%llu,\"dir\":\"%s\",\"memory\":\"%s\"", (unsigned long long)c->bytes,
				dir_name(c->dir), c->flags & INGERO_FLAG_HOST_PINNED ? "pinned"
				: c->flags & INGERO_FLAG_HOST_PAGEABLE ? "pageable" : "unknown");
			if (c->dur && !((c->flags & INGERO_FLAG_ASYNC) && (c->flags & INGERO_FLAG_HOST_PINNED)))
				fprintf(o->f, ",\"gbps\":%.3f", (double)c->bytes / (double)c->dur);
		}
		const char *py = ia_stack_python(names, t->stack_ids[c->stack]);
		if (py) {
			fputs(",\"python\":", o->f);
			ia_json_write_string(o->f, py);
		}
		fputs("}}", o->f);
	}
	free(flow);
}

static void write_offs(struct out *o, const struct ia_trace *t, uint32_t th)
{
	const struct ia_thread *x = &t->threads[th];
	int pid = o->pid_base + t->procs[x->proc].pid;
	for (uint32_t k = 0; k < x->off_n; k++) {
		const struct ia_off *f = &t->offs[t->off_by_th[x->off_first + k]];
		const char *how = (f->th & IA_OFF_PREEMPTED) ? "off-CPU: preempted"
			: (f->th & IA_OFF_IOWAIT) ? "off-CPU: I/O wait (D)" : "off-CPU: blocked";
		sep(o);
		fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"sched\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,",
			how, pid, OFF_TRACK_BASE + x->tid);
		ts(o, "ts", f->start);
		dur(o, f->end - f->start);
		uint8_t sys = ia_off_sys(f);
		const char *in = ia_syscall_where(sys);
		if (in && !(f->th & IA_OFF_PREEMPTED))   /* what it blocked in (version 5 on) */
			fprintf(o->f, ",\"args\":{\"runq_ns\":%u,\"syscall\":\"%s\"}}", f->runq, in);
		else
			fprintf(o->f, ",\"args\":{\"runq_ns\":%u}}", f->runq);
		if (f->runq && !(f->th & IA_OFF_PREEMPTED)) {   /* the runnable tail of a blocked interval, nested */
			sep(o);
			fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"sched\",\"name\":\"waiting for a CPU\",\"pid\":%d,\"tid\":%u,",
				pid, OFF_TRACK_BASE + x->tid);
			ts(o, "ts", f->end - f->runq);
			dur(o, f->runq);
			fputs("}", o->f);
		}
	}
}

static void counter(struct out *o, int pid, const char *name, const char *key, uint64_t at, double v)
{
	sep(o);
	fputs("{\"ph\":\"C\",\"name\":", o->f);
	ia_json_write_string(o->f, name);
	fprintf(o->f, ",\"pid\":%d,\"tid\":0,", o->pid_base + pid);
	ts(o, "ts", at);
	fprintf(o->f, ",\"args\":{\"%s\":%.2f}}", key, v);
}

static void gpu_slice(struct out *o, int pid, unsigned tid, const char *cat, const char *name, uint64_t a,
		      uint64_t b)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	ia_json_write_string(o->f, name);
	fprintf(o->f, ",\"pid\":%d,\"tid\":%u,", o->pid_base + pid, tid);
	ts(o, "ts", a);
	dur(o, b - a);
	fputc('}', o->f);
}

/* The measured busy and idle spans (gpu_time.h) on one track, in time
 * order, each cut at the end of the one before: never overlapping. */
static void write_gpu_measured(struct out *o, int pid, const struct ia_gpu_time *g)
{
	size_t i = 0, j = 0;
	uint64_t until = 0;
	while (i < g->nbusy || j < g->nidle) {
		int busy = j >= g->nidle || (i < g->nbusy && g->busy[i].a <= g->idle[j].a);
		const struct ia_span *s = busy ? &g->busy[i++] : &g->idle[j++];
		uint64_t a = s->a > until ? s->a : until;
		if (s->b <= a)
			continue;
		gpu_slice(o, pid, GPU_TRACK_TID, "gpu_measured", busy ? "busy" : "idle", a, s->b);
		until = s->b;
	}
}

/* The name of a timed piece's work: its kernel's (stats --kernels' short name), else its kind. */
static const char *piece_name(const struct ia_gpu_time *g, const struct ia_timed_piece *p)
{
	for (size_t k = 0; k < g->nall; k++)
		if (g->all[k].k.func == p->func)
			return g->all[k].k.short_name;
	return p->launch ? "kernel" : "copy or memset";
}

/* One track per stream with the work the marks timed alone (its exact GPU time). */
static void write_gpu_streams(struct out *o, int mpid, const struct ia_gpu_time *g)
{
	uint32_t keys[STREAM_TRACKS];
	int pids[STREAM_TRACKS];
	size_t nk = 0;
	uint64_t until[STREAM_TRACKS] = { 0 };
	for (size_t i = 0; i < g->ntimed_pieces; i++) {
		const struct ia_timed_piece *p = &g->timed[i];
		size_t k = 0;
		while (k < nk && !(keys[k] == p->stream && pids[k] == p->pid))
			k++;
		if (k == nk) {
			if (nk == STREAM_TRACKS)
				continue;
			keys[nk] = p->stream;
			pids[nk++] = p->pid;
			char name[96];
			snprintf(name, sizeof name, "GPU stream %zu of pid %d: work timed alone", k + 1, p->pid);
			meta(o, "thread_name", mpid, GPU_TRACK_TID - 1 - k, name);
			sort_meta(o, "thread_sort_index", mpid, GPU_TRACK_TID - 1 - k, (long)k + 1);
		}
		uint64_t a = p->a > until[k] ? p->a : until[k];
		if (p->b <= a)
			continue;
		gpu_slice(o, mpid, GPU_TRACK_TID - 1 - (unsigned)k, "gpu_timed", piece_name(g, p), a, p->b);
		until[k] = p->b;
	}
}

/* The legend of the GPU track (otherData's note): no character in it needs escaping. */
static const char *gpu_note(const struct ia_gaps *g)
{
	return g->gpu.measured
		? "GPU (measured): CUDA event marks timed on the GPU; busy = some stream certainly had unfinished work, "
		  "idle = every stream certainly had none, blank = not resolved"
		: "GPU (estimate): stretches with no CUDA work queued by the main process, from host evidence";
}

/* A process's name: one file's "comm [role]"; a node's of several prefixed
 * by the node and its rank, and its own pid said (the JSON's is mapped). */
static void proc_name(char *buf, size_t n, const struct ia_perfetto_node *nd, const struct ia_proc *p, uint32_t proc,
		      enum ia_role role)
{
	if (!nd) {
		snprintf(buf, n, "%s [%s]", p->comm[0] ? p->comm : "?", ia_role_name(role));
		return;
	}
	char rank[32] = "";
	const struct ia_rank_proc *rp = nd->rk && nd->rk->p ? &nd->rk->p[proc] : NULL;
	if (rp && rp->rank >= 0 && rp->role != IA_RANK_NONE && rp->role != IA_RANK_AGENT)
		snprintf(rank, sizeof rank, "rank %d · ", rp->rank);
	snprintf(buf, n, "%s · %s%s [%s] (pid %d)", nd->label, rank, p->comm[0] ? p->comm : "?", ia_role_name(role),
		 p->pid);
}

/* Every event of one analysis: its processes and threads named, their
 * calls and off-CPU intervals, the GPU track, the counters.  nd is NULL
 * for one file; else the node whose shift and pid base o carries, its
 * processes sorted after the nodes before it. */
static void write_events(struct out *o, const struct ia_analysis *a, const struct ia_perfetto_node *nd, size_t node)
{
	const struct ia_trace *t = a->t;
	struct ia_stack_names *names = a->names;
	const struct ia_per_process *pp = &a->pp;
	const struct ia_gaps *g = &a->gaps;
	const struct ia_evidence *ev = &a->ev;
	long sort_base = (long)node * 1000000;
	char name[256];
	/* names and order: main first, then workers, then others */
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		proc_name(name, sizeof name, nd, p, s->proc, s->role);
		meta(o, "process_name", p->pid, 0, name);
		sort_meta(o, "process_sort_index", p->pid, 0, sort_base + (long)i);
	}
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		const struct ia_proc *p = &t->procs[x->proc];
		if (!p->selected || (!x->call_n && !x->off_n) || ia_thread_is_tracer(x))
			continue;
		const char *comm = x->comm[0] ? x->comm : p->comm;
		snprintf(name, sizeof name, "%s %u", comm, x->tid);
		meta(o, "thread_name", p->pid, x->tid, name);
		sort_meta(o, "thread_sort_index", p->pid, x->tid, (long)(2 * th + 1));
		snprintf(name, sizeof name, "%s %u off-CPU", comm, x->tid);
		meta(o, "thread_name", p->pid, OFF_TRACK_BASE + x->tid, name);
		sort_meta(o, "thread_sort_index", p->pid, OFF_TRACK_BASE + x->tid, (long)(2 * th + 2));
	}
	int mpid = pp->main >= 0 ? t->procs[pp->p[pp->main].proc].pid : 0;
	if (pp->main >= 0 && g->gpu.measured) {
		meta(o, "thread_name", mpid, GPU_TRACK_TID, "GPU (measured)");
		sort_meta(o, "thread_sort_index", mpid, GPU_TRACK_TID, 0);
		write_gpu_measured(o, mpid, &g->gpu);
		write_gpu_streams(o, mpid, &g->gpu);
	} else if (pp->main >= 0) {
		meta(o, "thread_name", mpid, GPU_TRACK_TID, "GPU (estimate): no CUDA work queued (steady state)");
		sort_meta(o, "thread_sort_index", mpid, GPU_TRACK_TID, 0);
		for (size_t i = 0; i < g->n; i++) {
			sep(o);
			fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"gpu_estimate\",\"name\":\"no CUDA work queued\",\"pid\":%d,\"tid\":%u,",
				o->pid_base + mpid, GPU_TRACK_TID);
			ts(o, "ts", g->g[i].start);
			dur(o, g->g[i].end - g->g[i].start);
			fprintf(o->f, ",\"args\":{\"main_oncpu_ns\":%llu,\"main_runq_ns\":%llu}}",
				(unsigned long long)(g->g[i].end - g->g[i].start - g->g[i].main_off_ns),
				(unsigned long long)g->g[i].main_runq_ns);
		}
	}
	ia_progress_begin("writing the Perfetto trace", t->ncalls + t->noffs);
	uint64_t written = 0;
	for (size_t th = 0; th < t->nthreads; th++) {
		if (!t->procs[t->threads[th].proc].selected || ia_thread_is_tracer(&t->threads[th]))
			continue;
		written += t->threads[th].call_n + t->threads[th].off_n;
		ia_progress_update(written);
		write_calls(o, t, names, (uint32_t)th);
		write_offs(o, t, (uint32_t)th);
	}
	/* counters: CPU busy %% over all CPUs; page allocations per second per process */
	if (nd) {
		snprintf(name, sizeof name, "%s · system", nd->label);
		meta(o, "process_name", 0, 0, name);
		sort_meta(o, "process_sort_index", 0, 0, sort_base + 999999);
	} else {
		meta(o, "process_name", 0, 0, "system");
	}
	for (size_t i = 0; i < ev->busy.n && ev->ncpus && ev->busy.width; i++)
		counter(o, 0, "CPU busy %", "busy", ev->busy.b[i].t,
			100.0 * (double)ev->busy.b[i].v / ((double)ev->ncpus * (double)ev->busy.width));
	for (size_t p = 0; p < ev->npages; p++) {
		const struct ia_series *s = &ev->pages[p];
		for (size_t i = 0; i < s->n && s->width; i++)
			counter(o, t->procs[p].pid, "page allocations/s", "pages_per_s", s->b[i].t,
				(double)s->b[i].v * 1e9 / (double)s->width);
	}
	ia_progress_end();
}

/* The kind of a collective, as its slice is named ("all_reduce #17"). */
static const char *coll_kind(const char *op)
{
	static const char *const k[][2] = {
		{ "ncclAllReduce", "all_reduce" }, { "ncclReduceScatter", "reduce_scatter" },
		{ "ncclAllGather", "all_gather" }, { "ncclBroadcast", "broadcast" }, { "ncclBcast", "broadcast" },
		{ "ncclReduce", "reduce" }, { "gloo all-reduce", "all_reduce" },
	};
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (!strcmp(op, k[i][0]))
			return k[i][1];
	return op;
}

/* Who made a collective, as its flows name it: its rank in the job, else its process. */
static void coll_who(char *buf, size_t n, const struct ia_coll_item *x, int nodes)
{
	if (x->job_rank >= 0)
		snprintf(buf, n, "rank %d", x->job_rank);
	else if (nodes)
		snprintf(buf, n, "pid %d of node %d", x->pid, x->node);
	else
		snprintf(buf, n, "pid %d", x->pid);
}

/* otherData's entry, only when there are collectives. */
static void coll_data(FILE *f, const struct ia_coll_list *l)
{
	if (!l || !l->n)
		return;
	size_t groups = 0;
	for (size_t g = 0; g < l->ng; g++)
		groups += l->g[g].last != IA_COLL_ALONE;
	fprintf(f, ",\"collectives\":{\"slices\":%zu,\"matched\":%zu,\"with_last_rank\":%zu,\"flows\":%zu,\"note\":\"a track "
		"'collectives' in each process that made some: each collective from its arrival (its stream's earlier work "
		"done, by the GPU mark before it, else the call) to its completion (the GPU mark after it, else the call's "
		"return; gloo: the sync of the copy out to the copy back); flows (ph s/f) from the rank that arrived last, by "
		"more than %llu us, to each rank that waited for it\"}", l->n, l->ng, groups, l->nlinked,
		(unsigned long long)(IA_COLL_TIE_NS / 1000));
}

/* A flow's end: s on the last rank's slice, f (bound to the enclosing slice) on a waiting one's. */
static void coll_flow(struct out *o, const char *ph, unsigned long long id, const char *name, int pid, uint64_t at)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"%s\",\"id\":%llu,\"cat\":\"collective\",\"name\":", ph, id);
	ia_json_write_string(o->f, name);
	fprintf(o->f, ",\"pid\":%d,\"tid\":%u,", pid, COLL_TRACK_TID);
	ts(o, "ts", at);
	fputs(*ph == 'f' ? ",\"bp\":\"e\"}" : "}", o->f);
}

/* The collectives' tracks and flows (the header).  pid_base: node n's
 * (nodes) or 0; the items' times are on the output's clock already. */
static void write_collectives(struct out *o, const struct ia_coll_list *l, int nodes)
{
	if (!l || !l->n)
		return;
	uint64_t *shown = malloc(l->n * sizeof *shown);   /* each slice's drawn length: where its flows bind */
	uint64_t ends[NEST_MAX];
	int open = 0;
	char name[128];
	o->shift = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct ia_coll_item *x = &l->it[i];
		int pid = (nodes ? x->node * IA_PERFETTO_NODE_PIDS : 0) + x->pid;
		if (!i || x->node != l->it[i - 1].node || x->proc != l->it[i - 1].proc) {
			o->pid_base = nodes ? x->node * IA_PERFETTO_NODE_PIDS : 0;
			if (x->job_rank >= 0)
				snprintf(name, sizeof name, "collectives (rank %d)", x->job_rank);
			else
				snprintf(name, sizeof name, "collectives");
			meta(o, "thread_name", x->pid, COLL_TRACK_TID, name);
			sort_meta(o, "thread_sort_index", x->pid, COLL_TRACK_TID, -1);
			open = 0;
		}
		uint64_t len = nest(ends, &open, x->a, x->b - x->a);
		if (shown)
			shown[i] = len;
		sep(o);
		fputs("{\"ph\":\"X\",\"cat\":\"collective\",\"name\":", o->f);
		if (x->seq >= 0)
			snprintf(name, sizeof name, "%s #%lld", coll_kind(x->op), (long long)x->seq);
		else if (x->source == IA_COLL_GLOO)   /* not every rank's (a broadcast's root alone shows one) */
			snprintf(name, sizeof name, "gloo collective");
		else
			snprintf(name, sizeof name, "%s", coll_kind(x->op));
		ia_json_write_string(o->f, name);
		fprintf(o->f, ",\"pid\":%d,\"tid\":%u,", pid, COLL_TRACK_TID);
		ts(o, "ts", x->a);
		dur(o, len);
		fprintf(o->f, ",\"args\":{\"op\":\"%s\",\"backend\":\"%s\",\"communicator\":", x->op,
			ia_coll_source_name(x->source));
		if (x->has_comm)
			fprintf(o->f, "\"0x%016llx\"", (unsigned long long)x->comm_id);
		else
			fputs("null", o->f);
		if (x->seq >= 0)
			fprintf(o->f, ",\"seq\":%lld", (long long)x->seq);
		else
			fputs(",\"seq\":null", o->f);
		fprintf(o->f, ",\"bytes\":%llu", (unsigned long long)x->bytes);
		if (x->rank >= 0)
			fprintf(o->f, ",\"rank\":%d", x->rank);
		if (x->nranks > 0)
			fprintf(o->f, ",\"ranks\":%d", x->nranks);
		if (x->job_rank >= 0 && x->job_rank != x->rank)
			fprintf(o->f, ",\"job_rank\":%d", x->job_rank);
		fprintf(o->f, ",\"tid\":%u", x->tid);
		if (x->group != IA_COLL_ALONE) {
			const struct ia_coll_group *g = &l->g[x->group];
			fprintf(o->f, ",\"ranks_matched\":%zu,\"late_vs_first_ns\":%llu,\"wait_ns\":%llu,\"last\":", g->n,
				(unsigned long long)x->late_ns, (unsigned long long)x->wait_ns);
			if (g->last == IA_COLL_ALONE) {
				fprintf(o->f, "\"none: a tie (within %llu us)\"", (unsigned long long)(IA_COLL_TIE_NS / 1000));
			} else {
				coll_who(name, sizeof name, &l->it[g->last], nodes);
				ia_json_write_string(o->f, name);
				if (g->last == i)
					fputs(",\"arrived_last\":true", o->f);
			}
		} else {
			fputs(",\"ranks_matched\":1", o->f);
		}
		if (x->source == IA_COLL_NCCL)
			fprintf(o->f, ",\"arrival\":\"%s\",\"completion\":\"%s\",\"call_dur_ns\":%llu",
				x->marked_before ? "GPU mark before it" : "the call",
				x->marked_after ? "GPU mark after it" : "the call's return", (unsigned long long)x->call_dur_ns);
		else
			fputs(",\"arrival\":\"the sync of the copy out returned\",\"completion\":\"the copy back\"", o->f);
		if (len < x->b - x->a)
			fprintf(o->f, ",\"dur_ns\":%llu", (unsigned long long)(x->b - x->a));   /* cut to nest: its whole time */
		fputs("}}", o->f);
	}
	/* the flows: from the last rank's part to each part that waited for it,
	 * each end inside its slice as drawn (its whole length, out of memory) */
	for (size_t i = 0; i < l->n; i++) {
		const struct ia_coll_item *x = &l->it[i];
		if (x->group == IA_COLL_ALONE || l->g[x->group].last == IA_COLL_ALONE || l->g[x->group].last == i)
			continue;
		size_t s = l->g[x->group].last;
		const struct ia_coll_item *y = &l->it[s];
		uint64_t ls = shown ? shown[s] : y->b - y->a, li = shown ? shown[i] : x->b - x->a;
		uint64_t from = y->a + ls / 2;
		uint64_t lo = x->a + li / 4, hi = x->a + li - li / 4;
		uint64_t to = from < lo ? lo : from > hi ? hi : from;
		char who[64];
		coll_who(who, sizeof who, y, nodes);
		snprintf(name, sizeof name, "waited for %s", who);
		unsigned long long id = ++o->flow_id;
		coll_flow(o, "s", id, name, (nodes ? y->node * IA_PERFETTO_NODE_PIDS : 0) + y->pid, from);
		coll_flow(o, "f", id, name, (nodes ? x->node * IA_PERFETTO_NODE_PIDS : 0) + x->pid, to);
	}
	free(shown);
}

/* One end (ph "b" or "e") of a started range's async slice. */
static void nvtx_async(struct out *o, const char *ph, unsigned long long id, int pid, uint32_t tid, const char *name,
		       uint64_t at)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"%s\",\"cat\":\"nvtx\",\"id\":%llu,\"pid\":%d,\"tid\":%u,\"name\":", ph, id,
		o->pid_base + pid, tid);
	ia_json_write_string(o->f, name);
	fputc(',', o->f);
	ts(o, "ts", at);
	fputs("}", o->f);
}

/* The program's NVTX ranges (the header).  Pushed ranges were recorded
 * when popped, so a thread's come innermost first: sorted by start, then
 * the longer first, they nest as drawn. */
static void write_nvtx(struct out *o, const struct ia_trace *t)
{
	if (ia_db_has_table(t->db, "nvtx_ranges") <= 0)
		return;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(t->db, "SELECT pid, tid, start_ns, end_ns, kind, name FROM nvtx_ranges "
				      "WHERE start_ns < ?2 AND end_ns >= ?1 ORDER BY start_ns, end_ns DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)t->from);
	sqlite3_bind_int64(st, 2, t->to > INT64_MAX ? INT64_MAX : (sqlite3_int64)t->to);
	struct u64map named = { 0 };   /* threads whose NVTX track is named */
	unsigned long long async_id = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int pid = sqlite3_column_int(st, 0);
		uint32_t tid = (uint32_t)sqlite3_column_int64(st, 1);
		int proc = ia_proc_index(t, pid);
		if (proc < 0 || !t->procs[proc].selected)
			continue;
		uint64_t a = (uint64_t)sqlite3_column_int64(st, 2), b = (uint64_t)sqlite3_column_int64(st, 3);
		const char *kind = (const char *)sqlite3_column_text(st, 4), *name = (const char *)sqlite3_column_text(st, 5);
		if (!kind || !name)
			continue;
		if (!strcmp(kind, "start")) {
			async_id++;
			nvtx_async(o, "b", async_id, pid, tid, name, a);
			nvtx_async(o, "e", async_id, pid, tid, name, b);
			continue;
		}
		/* a thread's track named at its first range (key tid + 1: 0 is no key) */
		if (!ingero_map_get(&named, (uint64_t)tid + 1) && ingero_map_put(&named, (uint64_t)tid + 1, &named) == 0) {
			char tname[64];
			snprintf(tname, sizeof tname, "%u NVTX", tid);
			meta(o, "thread_name", pid, NVTX_TRACK_BASE + tid, tname);
		}
		sep(o);
		fprintf(o->f, "{\"ph\":\"%s\",\"cat\":\"nvtx\",\"pid\":%d,\"tid\":%u,\"name\":", strcmp(kind, "mark") ? "X" : "i",
			o->pid_base + pid, NVTX_TRACK_BASE + tid);
		ia_json_write_string(o->f, name);
		fputc(',', o->f);
		ts(o, "ts", a);
		if (strcmp(kind, "mark"))
			dur(o, b > a ? b - a : 0);
		else
			fputs(",\"s\":\"t\"", o->f);
		fputs("}", o->f);
	}
	sqlite3_finalize(st);
	ingero_map_free(&named);
}

void ia_perfetto_write(FILE *f, const struct ia_analysis *a, const struct ia_coll_list *coll)
{
	const struct ia_trace *t = a->t;
	struct out o = { f, 1, t->t0, 0, 0, 0 };
	char buf[1024];
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"ingero-analyze\",\"command\":", f);
	ia_json_write_string(f, t->command ? t->command : "");
	char incomplete[512];
	if (ia_trace_incomplete(t, incomplete, sizeof incomplete)) {   /* (trace_status.h) */
		fputs(",\"incomplete\":", f);
		ia_json_write_string(f, incomplete);
	}
	fputs(",\"trace_line\":", f);
	ia_json_write_string(f, ia_headline_trace(a, buf, sizeof buf));
	fputs(",\"headline\":", f);
	ia_json_write_string(f, ia_headline_idle(a, buf, sizeof buf));
	fputs(",\"window_line\":", f);
	ia_json_write_string(f, ia_headline_window(a, buf, sizeof buf));
	fprintf(f, ",\"note\":\"%s\"", gpu_note(&a->gaps));
	coll_data(f, coll);
	fputs("},\"traceEvents\":[", f);
	write_events(&o, a, NULL, 0);
	write_collectives(&o, coll, 0);
	write_nvtx(&o, t);
	fputs("\n]}\n", f);
}

static void kv_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, ",\"%s\":", key);
	if (v)
		ia_json_write_string(f, v);
	else
		fputs("null", f);
}

/* otherData's entry for one node: where it came from, the shift applied
 * and how it was found, what remains uncertain, its own headline. */
static void node_data(FILE *f, const struct ia_perfetto_node *n, size_t i)
{
	char buf[1024];
	fprintf(f, "%s{\"node\":%zu", i ? "," : "", i);
	kv_str(f, "label", n->label);
	kv_str(f, "file", n->path);
	kv_str(f, "host", n->host);
	kv_str(f, "boot_id", n->boot);
	kv_str(f, "command", n->a->t->command);
	fprintf(f, ",\"pid_base\":%d,\"offset_applied_ns\":%lld,\"anchor_offset_ns\":%lld,\"anchor_uncertainty_ns\":%llu"
		",\"correction_ns\":%lld,\"collectives_used\":%zu,\"uncertainty_ns\":",
		(int)i * IA_PERFETTO_NODE_PIDS, (long long)n->shift_ns, (long long)n->anchor_offset_ns,
		(unsigned long long)n->anchor_unc_ns, (long long)n->correction_ns, n->collectives_used);
	if (!i || n->collectives_used)
		fprintf(f, "%llu", (unsigned long long)(i ? n->uncertainty_ns : 0));
	else
		fputs("null", f);
	kv_str(f, "clock", !i ? "the reference: its own clock"
	       : n->collectives_used ? "moved by its clock anchor's offset from node 0's, refined by the collectives' "
				       "completions; uncertainty_ns is what remains"
	       : "moved by its clock anchor's offset from node 0's alone (no collective of both to refine it): "
		 "the anchors' agreement (NTP's) is all there is");
	char incomplete[512];
	if (ia_trace_incomplete(n->a->t, incomplete, sizeof incomplete))
		kv_str(f, "incomplete", incomplete);
	kv_str(f, "trace_line", ia_headline_trace(n->a, buf, sizeof buf));
	kv_str(f, "headline", ia_headline_idle(n->a, buf, sizeof buf));
	kv_str(f, "note", gpu_note(&n->a->gaps));
	fputc('}', f);
}

void ia_perfetto_write_nodes(FILE *f, const struct ia_perfetto_node *n, size_t nn, const struct ia_coll_list *coll)
{
	/* ts 0: the earliest node's trace start, on node 0's clock */
	int64_t origin = INT64_MAX;
	for (size_t i = 0; i < nn; i++) {
		int64_t s = (int64_t)n[i].a->t->t0 + n[i].shift_ns;
		if (s < origin)
			origin = s;
	}
	struct out o = { f, 1, origin > 0 ? (uint64_t)origin : 0, 0, 0, 0 };
	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"ingero-analyze\",\"clock\":\"%zu nodes' "
		"traces of one job on node 0's CLOCK_MONOTONIC: each node's times moved by its offset_applied_ns; ts 0 is "
		"the earliest node's trace start\",\"pids\":\"node n's process of pid P is pid n * %d + P (its "
		"name says the node, the rank and its own pid)\",\"nodes\":[", nn, IA_PERFETTO_NODE_PIDS);
	for (size_t i = 0; i < nn; i++)
		node_data(f, &n[i], i);
	fputc(']', f);
	coll_data(f, coll);
	fputs("},\"traceEvents\":[", f);
	for (size_t i = 0; i < nn; i++) {
		o.shift = n[i].shift_ns;
		o.pid_base = (int)i * IA_PERFETTO_NODE_PIDS;
		write_events(&o, n[i].a, &n[i], i);
		write_nvtx(&o, n[i].a->t);
	}
	write_collectives(&o, coll, 1);
	fputs("\n]}\n", f);
}
