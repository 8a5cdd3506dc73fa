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
 * (estimate)", the stretches when no CUDA work was queued; flows from the last work a thread queued to the sync that waited
 * for it (per thread: the schema does not keep streams apart in the loader);
 * counters for CPU busy %% and page allocations per second.
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
#include "load/syscalls.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <string.h>
#include <unistd.h>

#define OFF_TRACK_BASE 1000000000u   /* tid of a thread's off-CPU track: base + tid */
#define GPU_TRACK_TID 999999999u

struct out {
	FILE *f;
	int first;
	uint64_t t0;
	unsigned long long flow_id;
};

static void sep(struct out *o)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = 0;
}

static void ts(struct out *o, const char *key, uint64_t abs_ns)
{
	uint64_t rel = abs_ns >= o->t0 ? abs_ns - o->t0 : 0;
	fprintf(o->f, "\"%s\":%llu.%03llu", key, (unsigned long long)(rel / 1000), (unsigned long long)(rel % 1000));
}

static void dur(struct out *o, uint64_t ns)
{
	fprintf(o->f, ",\"dur\":%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000));
}

static void meta(struct out *o, const char *what, int pid, uint64_t tid, const char *name)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%llu,\"ts\":0,\"args\":{\"name\":", what, pid,
		(unsigned long long)tid);
	ia_json_write_string(o->f, name);
	fputs("}}", o->f);
}

static void sort_meta(struct out *o, const char *what, int pid, uint64_t tid, long idx)
{
	sep(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%llu,\"ts\":0,\"args\":{\"sort_index\":%ld}}", what,
		pid, (unsigned long long)tid, idx);
}

static const char *dir_name(int d)
{
	static const char *const n[] = { "none", "HtoD", "DtoH", "DtoD", "HtoH", "default", "peer" };
	return d >= 0 && d < 7 ? n[d] : "none";
}

static void write_calls(struct out *o, const struct ia_trace *t, struct ia_stack_names *names, uint32_t th)
{
	const struct ia_thread *x = &t->threads[th];
	int pid = t->procs[x->proc].pid;
	long last_work = -1;
	for (uint32_t k = 0; k < x->call_n; k++) {
		const struct ia_call *c = &t->calls[t->call_by_th[x->call_first + k]];
		int cls = ingero_api_class(c->api);
		sep(o);
		fputs("{\"ph\":\"X\",\"cat\":\"cuda\",\"name\":", o->f);
		ia_json_write_string(o->f, ia_api_name(t, c->api));
		fprintf(o->f, ",\"pid\":%d,\"tid\":%u,", pid, x->tid);
		ts(o, "ts", c->start);
		dur(o, c->dur);
		fprintf(o->f, ",\"args\":{\"class\":\"%s\"", ingero_api_class_name(cls));
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
		/* flow: the last work queued before a sync -> the sync that waited for it */
		if (cls == INGERO_CLASS_LAUNCH || cls == INGERO_CLASS_COPY || cls == INGERO_CLASS_MEMSET) {
			last_work = (long)k;
		} else if (cls == INGERO_CLASS_SYNC && last_work >= 0) {
			const struct ia_call *w = &t->calls[t->call_by_th[x->call_first + (uint32_t)last_work]];
			unsigned long long id = ++o->flow_id;
			sep(o);
			fprintf(o->f, "{\"ph\":\"s\",\"cat\":\"queue\",\"name\":\"sync waits for queued work\",\"id\":%llu,"
				"\"pid\":%d,\"tid\":%u,", id, pid, x->tid);
			ts(o, "ts", w->start + w->dur / 2);
			fputs("}", o->f);
			sep(o);
			fprintf(o->f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"queue\",\"name\":\"sync waits for queued work\","
				"\"id\":%llu,\"pid\":%d,\"tid\":%u,", id, pid, x->tid);
			ts(o, "ts", c->start + c->dur / 2);
			fputs("}", o->f);
			last_work = -1;
		}
	}
}

static void write_offs(struct out *o, const struct ia_trace *t, uint32_t th)
{
	const struct ia_thread *x = &t->threads[th];
	int pid = t->procs[x->proc].pid;
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
	fprintf(o->f, ",\"pid\":%d,\"tid\":0,", pid);
	ts(o, "ts", at);
	fprintf(o->f, ",\"args\":{\"%s\":%.2f}}", key, v);
}

/* Measured GPU spans of one kind (gpu_time.h) as slices of the GPU track. */
static void write_gpu_spans(struct out *o, int pid, const char *name, const struct ia_span *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sep(o);
		fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"gpu_measured\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,", name, pid,
			GPU_TRACK_TID);
		ts(o, "ts", s[i].a);
		dur(o, s[i].b - s[i].a);
		fputc('}', o->f);
	}
}

void ia_perfetto_write(FILE *f, const struct ia_trace *t, struct ia_stack_names *names,
		       const struct ia_per_process *pp, const struct ia_gaps *g, const struct ia_evidence *ev)
{
	struct out o = { f, 1, t->t0, 0 };
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"ingero-analyze\",\"command\":", f);
	ia_json_write_string(f, t->command ? t->command : "");
	char incomplete[512];
	if (ia_trace_incomplete(t, incomplete, sizeof incomplete)) {   /* (trace_status.h) */
		fputs(",\"incomplete\":", f);
		ia_json_write_string(f, incomplete);
	}
	fputs(g->gpu.measured
		      ? ",\"note\":\"GPU (measured): CUDA event marks timed on the GPU; busy = some stream certainly had "
			"unfinished work, idle = every stream certainly had none, blank = not resolved\"},\"traceEvents\":["
		      : ",\"note\":\"GPU (estimate): stretches with no CUDA work queued by the main process, from host "
			"evidence\"},\"traceEvents\":[", f);
	/* names and order: main first, then workers, then others */
	for (size_t i = 0; i < pp->n; i++) {
		const struct ia_proc_stats *s = &pp->p[i];
		const struct ia_proc *p = &t->procs[s->proc];
		char name[96];
		snprintf(name, sizeof name, "%s [%s]", p->comm[0] ? p->comm : "?", ia_role_name(s->role));
		meta(&o, "process_name", p->pid, 0, name);
		sort_meta(&o, "process_sort_index", p->pid, 0, (long)i);
	}
	for (size_t th = 0; th < t->nthreads; th++) {
		const struct ia_thread *x = &t->threads[th];
		const struct ia_proc *p = &t->procs[x->proc];
		if (!p->selected || (!x->call_n && !x->off_n))
			continue;
		char name[96];
		const char *comm = x->comm[0] ? x->comm : p->comm;
		snprintf(name, sizeof name, "%s %u", comm, x->tid);
		meta(&o, "thread_name", p->pid, x->tid, name);
		sort_meta(&o, "thread_sort_index", p->pid, x->tid, (long)(2 * th + 1));
		snprintf(name, sizeof name, "%s %u off-CPU", comm, x->tid);
		meta(&o, "thread_name", p->pid, OFF_TRACK_BASE + x->tid, name);
		sort_meta(&o, "thread_sort_index", p->pid, OFF_TRACK_BASE + x->tid, (long)(2 * th + 2));
	}
	int mpid = pp->main >= 0 ? t->procs[pp->p[pp->main].proc].pid : 0;
	if (pp->main >= 0 && g->gpu.measured) {
		meta(&o, "thread_name", mpid, GPU_TRACK_TID, "GPU (measured)");
		sort_meta(&o, "thread_sort_index", mpid, GPU_TRACK_TID, 0);
		write_gpu_spans(&o, mpid, "busy", g->gpu.busy, g->gpu.nbusy);
		write_gpu_spans(&o, mpid, "idle", g->gpu.idle, g->gpu.nidle);
	} else if (pp->main >= 0) {
		meta(&o, "thread_name", mpid, GPU_TRACK_TID, "GPU (estimate): no CUDA work queued");
		sort_meta(&o, "thread_sort_index", mpid, GPU_TRACK_TID, 0);
		for (size_t i = 0; i < g->n; i++) {
			sep(&o);
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"gpu_estimate\",\"name\":\"no CUDA work queued\",\"pid\":%d,\"tid\":%u,",
				mpid, GPU_TRACK_TID);
			ts(&o, "ts", g->g[i].start);
			dur(&o, g->g[i].end - g->g[i].start);
			fprintf(f, ",\"args\":{\"main_oncpu_ns\":%llu,\"main_runq_ns\":%llu}}",
				(unsigned long long)(g->g[i].end - g->g[i].start - g->g[i].main_off_ns),
				(unsigned long long)g->g[i].main_runq_ns);
		}
	}
	ia_progress_begin("writing the Perfetto trace", t->ncalls + t->noffs);
	uint64_t written = 0;
	for (size_t th = 0; th < t->nthreads; th++) {
		if (!t->procs[t->threads[th].proc].selected)
			continue;
		written += t->threads[th].call_n + t->threads[th].off_n;
		ia_progress_update(written);
		write_calls(&o, t, names, (uint32_t)th);
		write_offs(&o, t, (uint32_t)th);
	}
	/* counters: CPU busy %% over all CPUs; page allocations per second per process */
	meta(&o, "process_name", 0, 0, "system");
	for (size_t i = 0; i < ev->busy.n && ev->ncpus && ev->busy.width; i++)
		counter(&o, 0, "CPU busy %", "busy", ev->busy.b[i].t,
			100.0 * (double)ev->busy.b[i].v / ((double)ev->ncpus * (double)ev->busy.width));
	for (size_t p = 0; p < ev->npages; p++) {
		const struct ia_series *s = &ev->pages[p];
		for (size_t i = 0; i < s->n && s->width; i++)
			counter(&o, t->procs[p].pid, "page allocations/s", "pages_per_s", s->b[i].t,
				(double)s->b[i].v * 1e9 / (double)s->width);
	}
	fputs("\n]}\n", f);
	ia_progress_end();
}
