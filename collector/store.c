/*
 * store.c — the report.db writer.
 *
 * Producers append rows to the `pending` batch under one mutex (a memcpy
 * per row, or per message for CUDA calls); the writer thread swaps it with
 * its own empty batch every flush_ms (or sooner when it is large) and
 * writes the whole batch in one transaction through prepared statements.
 * WAL + synchronous=NORMAL: a commit is an append to the WAL, and a killed
 * collector leaves a file that opens with every committed transaction.
 * Checkpoints (copying the WAL into the file, with its two fsyncs) run on a
 * thread of their own with a second connection, so the writer never waits
 * for them: inside the writer's commits they took about a sixth of its CPU
 * at full ingest rate, plus their fsyncs (docs/benchmarks.md).
 *
 * Aggregates (cpu_busy, page_allocs, competitors) are additive upserts, so
 * a bucket delivered in two parts adds up.  Losses are cumulative counters
 * kept here and rewritten when they change.  With --max-size the writer
 * deletes the oldest tenth of the event tables until the live pages fit and
 * counts the rows in losses 'size_cap_rows'.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingero/api.h"
#include "ingero/call_block.h"
#include "ingero/schema.h"
#include "store.h"
#include <ingero/wire_decode.h>

/* --- growable arrays ------------------------------------------------------------ */

struct vec {
	void *p;
	size_t n, cap;
};

static void *vec_push(struct vec *v, size_t elem, size_t count)
{
	if (v->n + count > v->cap) {
		size_t cap = v->cap ? v->cap : 256;
		void *p;

		while (cap < v->n + count)
			cap *= 2;
		p = realloc(v->p, cap * elem);
		if (!p) {
			fprintf(stderr, "ingero-collector: out of memory queuing rows\n");
			abort();
		}
		v->p = p;
		v->cap = cap;
	}
	v->n += count;
	return (char *)v->p + (v->n - count) * elem;
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* --- queued rows ---------------------------------------------------------------- */

struct q_proc { struct proc_row r; };
struct q_thread { uint32_t tid, pid; char *comm; };
struct q_bucket { uint32_t id; uint64_t bucket, a, b, c; char *comm; };
struct q_stack { int64_t id; uint32_t pid; size_t first, n; };
struct q_kernel { uint32_t pid; uint64_t addr; char *name; };
struct q_kv { char *key, *value; };
struct q_gpu { uint32_t pid, flags; uint64_t stream, recorded_ns, done_ns; };
struct q_capture { uint32_t pid, recording; uint64_t t_ns; };

struct batch {
	struct vec calls, offcpu, procs, threads, busy, pages, comps, samples, stacks, frames,
		kernels, session, gpu, capture;
	uint64_t seq;       /* producer sequence number of the last row in it */
};

static size_t batch_rows(const struct batch *b)
{
	return b->calls.n + b->offcpu.n + b->procs.n + b->threads.n + b->busy.n + b->pages.n +
	       b->comps.n + b->samples.n + b->stacks.n + b->kernels.n + b->session.n + b->gpu.n +
	       b->capture.n;
}

static void batch_clear(struct batch *b)
{
	struct q_proc *p = b->procs.p;
	struct q_thread *t = b->threads.p;
	struct q_bucket *c = b->comps.p;
	struct frame_row *f = b->frames.p;
	struct q_kernel *k = b->kernels.p;
	struct q_kv *kv = b->session.p;

	for (size_t i = 0; i < b->procs.n; i++) {
		free((char *)p[i].r.comm);
		free((char *)p[i].r.exe);
		free((char *)p[i].r.cmdline);
	}
	for (size_t i = 0; i < b->threads.n; i++)
		free(t[i].comm);
	for (size_t i = 0; i < b->comps.n; i++)
		free(c[i].comm);
	for (size_t i = 0; i < b->frames.n; i++) {
		free((char *)f[i].symbol);
		free((char *)f[i].module);
		free((char *)f[i].file);
	}
	for (size_t i = 0; i < b->kernels.n; i++)
		free(k[i].name);
	for (size_t i = 0; i < b->session.n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	b->calls.n = b->offcpu.n = b->procs.n = b->threads.n = b->busy.n = b->pages.n = 0;
	b->comps.n = b->samples.n = b->stacks.n = b->frames.n = b->kernels.n = b->session.n = 0;
	b->gpu.n = b->capture.n = 0;
}

static void batch_free(struct batch *b)
{
	batch_clear(b);
	free(b->calls.p); free(b->offcpu.p); free(b->procs.p); free(b->threads.p);
	free(b->busy.p); free(b->pages.p); free(b->comps.p); free(b->samples.p);
	free(b->stacks.p); free(b->frames.p); free(b->kernels.p); free(b->session.p);
	free(b->gpu.p); free(b->capture.p);
}

/* --- losses --------------------------------------------------------------------- */

struct loss {
	char source[64];
	uint32_t pid;
	uint64_t count;
	int dirty;
};

/* --- the store ------------------------------------------------------------------ */

enum stmt {
	ST_CALL, ST_OFFCPU, ST_PROC, ST_THREAD, ST_BUSY, ST_PAGES, ST_COMP, ST_SAMPLE,
	ST_STACK, ST_FRAME, ST_KERNEL, ST_SESSION, ST_LOSS, ST_GPU, ST_CAPTURE, ST_BEGIN, ST_COMMIT, ST_N
};

static const char *const stmt_sql[ST_N] = {
	[ST_CALL] = "INSERT INTO call_blocks(pid,first_ns,last_ns,calls,data) VALUES(?,?,?,?,?)",
	[ST_OFFCPU] = "INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu) "
		      "VALUES(?,?,?,?,?,?,?,?)",
	[ST_PROC] = "INSERT INTO processes(pid,ppid,comm,exe,cmdline,start_ns,exit_ns,exit_code,"
		    "announced,made,dropped) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,coalesce(?10,0),coalesce(?11,0)) "
		    "ON CONFLICT(pid) DO UPDATE SET ppid=coalesce(excluded.ppid,ppid),"
		    "comm=coalesce(excluded.comm,comm),exe=coalesce(excluded.exe,exe),"
		    "cmdline=coalesce(excluded.cmdline,cmdline),start_ns=coalesce(start_ns,excluded.start_ns),"
		    "exit_ns=coalesce(excluded.exit_ns,exit_ns),exit_code=coalesce(excluded.exit_code,exit_code),"
		    "announced=max(announced,excluded.announced),made=max(made,excluded.made),"
		    "dropped=max(dropped,excluded.dropped)",
	[ST_THREAD] = "INSERT INTO threads(tid,pid,comm) VALUES(?1,?2,?3) ON CONFLICT(tid) DO UPDATE SET "
		      "pid=excluded.pid,comm=coalesce(excluded.comm,comm)",
	[ST_BUSY] = "INSERT INTO cpu_busy(cpu,bucket_ns,busy_ns) VALUES(?,?,?) ON CONFLICT DO UPDATE "
		    "SET busy_ns=busy_ns+excluded.busy_ns",
	[ST_PAGES] = "INSERT INTO page_allocs(pid,bucket_ns,pages,allocs,faults) VALUES(?,?,?,?,?) "
		     "ON CONFLICT DO UPDATE SET pages=pages+excluded.pages,allocs=allocs+excluded.allocs,"
		     "faults=faults+excluded.faults",
	[ST_COMP] = "INSERT INTO competitors(pid,comm,bucket_ns,cpu_ns,preemptions) VALUES(?,?,?,?,?) "
		    "ON CONFLICT DO UPDATE SET cpu_ns=cpu_ns+excluded.cpu_ns,"
		    "preemptions=preemptions+excluded.preemptions,comm=coalesce(comm,excluded.comm)",
	[ST_SAMPLE] = "INSERT INTO cpu_samples(pid,tid,ts_ns,cpu,stack_id) VALUES(?,?,?,?,?)",
	[ST_STACK] = "INSERT OR IGNORE INTO stacks(id,pid) VALUES(?,?)",
	[ST_FRAME] = "INSERT OR IGNORE INTO stack_frames(stack_id,depth,kind,ip,symbol,module,offset,"
		     "file,line) VALUES(?,?,?,?,?,?,?,?,?)",
	/* a kernel first defined without a name (its sender had no KERNEL
	 * record yet) takes the name a later definition brings */
	[ST_KERNEL] = "INSERT INTO kernels(pid,addr,name) VALUES(?,?,?) ON CONFLICT(pid,addr) DO UPDATE "
		      "SET name=excluded.name WHERE (kernels.name IS NULL OR kernels.name='') "
		      "AND excluded.name IS NOT NULL AND excluded.name<>''",
	[ST_SESSION] = "INSERT OR REPLACE INTO session(key,value) VALUES(?,?)",
	[ST_LOSS] = "INSERT OR REPLACE INTO losses(source,pid,count) VALUES(?,?,?)",
	[ST_GPU] = "INSERT INTO gpu_marks(pid,stream,recorded_ns,done_ns,flags) VALUES(?,?,?,?,?)",
	[ST_CAPTURE] = "INSERT INTO capture(pid,t_ns,recording) VALUES(?,?,?)",
	[ST_BEGIN] = "BEGIN",
	[ST_COMMIT] = "COMMIT",
};

/* The checkpointer runs when this many WAL frames (pages) were added since
 * its last pass, or CKPT_IDLE_FRAMES when the writer has nothing queued (a
 * burst is folded back soon after it ends, while a trickle of small commits
 * does not cost two fsyncs each). */
#define CKPT_FRAMES 4096
#define CKPT_IDLE_FRAMES 256
/* Past this many frames (1 GiB at 4 KiB pages) the writer stops and folds
 * the WAL back itself (RESTART): PASSIVE checkpoints never reset a WAL that
 * is written to without a pause, and the disk must not fill with it.  Lower
 * caps put the checkpoints back on the writer at full rate (256 MiB did in
 * tests/bench/collector.sh, whose 4 M calls make 350 MB). */
#define WAL_HARD_FRAMES (256 * 1024)

/* One pid's calls in a batch (write_calls). */
struct pid_chain {
	uint32_t pid, first, last;
};

struct store {
	sqlite3 *db;
	msgpack_sbuffer block;       /* the writer's call-block blob, reused */
	/* write_calls: each call's next of its pid, the pids of the batch, and
	 * one block's calls gathered (kept between batches) */
	uint32_t *chain;
	size_t chain_cap;
	struct pid_chain *heads;
	size_t nheads, heads_cap;
	struct ingero_cuda_call gather[INGERO_BLOCK_MAX_CALLS];
	sqlite3 *ckpt_db;            /* the checkpointer's own connection */
	pthread_t ckpt;
	pthread_cond_t ckpt_wake;
	int wal_frames;              /* frames in the WAL after the last commit */
	int ckpt_frames_done;        /* frames in the WAL at the checkpointer's last pass */
	int ckpt_asked, ckpt_started, ckpt_stop;
	uint64_t ckpt_last_end;      /* when the checkpointer's last pass ended */
	uint64_t calls_folded_at;    /* a pass that copied the whole WAL ended... */
	uint64_t calls_folded_of;    /* ...covering the calls commit of this time */
	uint64_t finished_at;        /* store_finish: calls committed and in the file */
	int finished;
	sqlite3_stmt *st[ST_N];
	struct store_opts o;

	pthread_t writer;
	pthread_mutex_t lock;
	pthread_cond_t wake;         /* writer: something to do */
	pthread_cond_t done;         /* producers: a batch was committed */
	struct batch pending, work;
	uint64_t seq, committed_seq;
	int stop, sync_wanted;

	struct loss *losses;
	size_t n_losses, cap_losses;
	int losses_dirty;

	uint64_t committed_calls, work_calls, calls_committed_at;
	uint64_t last_cap_check_ns;
	int failed;                  /* a write failed: said once on stderr */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "ingero-collector: sqlite: %s (%s)\n", err ? err : "?", sql);
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static int create_schema(sqlite3 *db)
{
	char sql[128];
	sqlite3_stmt *st;

	if (exec_sql(db, "BEGIN") || exec_sql(db, INGERO_SCHEMA_SQL))
		return -1;
	if (sqlite3_prepare_v2(db, "INSERT INTO apis(id,name,class) VALUES(?,?,?)", -1, &st, NULL))
		return -1;
	int bad = 0;   /* a file without its API names would be misread later */
#define ADD_API_(id, e, name, cls) \
	sqlite3_bind_int(st, 1, id); \
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC); \
	sqlite3_bind_text(st, 3, ingero_api_class_name(INGERO_CLASS_##cls), -1, SQLITE_STATIC); \
	bad |= sqlite3_step(st) != SQLITE_DONE; sqlite3_reset(st);
	INGERO_API_LIST(ADD_API_)
#undef ADD_API_
	sqlite3_finalize(st);
	if (bad)
		return -1;
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", INGERO_SCHEMA_VERSION);
	return exec_sql(db, sql) || exec_sql(db, "COMMIT") ? -1 : 0;
}

/* --- writing one batch ---------------------------------------------------------- */

static void step(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE && !s->failed) {
		s->failed = 1;
		fprintf(stderr, "ingero-collector: sqlite write failed: %s\n", sqlite3_errmsg(s->db));
	}
	sqlite3_reset(st);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_i64_or_null(sqlite3_stmt *st, int i, int64_t v, int known)
{
	if (known)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* One row of call_blocks for c[0..n), all of one pid. */
static void write_block(struct store *s, const struct ingero_cuda_call *c, size_t n)
{
	sqlite3_stmt *st = s->st[ST_CALL];
	int64_t lo, hi;

	if (ingero_block_encode(&s->block, c, n)) {
		if (!s->failed)
			fprintf(stderr, "ingero-collector: out of memory encoding CUDA calls\n");
		s->failed = 1;
		return;
	}
	/* signed, as SQLite compares: a start_ns >= 2^63 from a broken sender
	 * must not make a bound that hides the block's other calls */
	ingero_block_span(c, n, &lo, &hi);
	sqlite3_bind_int64(st, 1, c[0].pid);
	sqlite3_bind_int64(st, 2, lo);
	sqlite3_bind_int64(st, 3, hi);
	sqlite3_bind_int64(st, 4, (int64_t)n);
	sqlite3_bind_blob(st, 5, s->block.data, (int)s->block.size, SQLITE_STATIC);
	step(s, st);
}

/* Each run of one pid as blocks of up to INGERO_BLOCK_MAX_CALLS: the way
 * out when the chains below cannot be allocated. */
static void write_runs(struct store *s, const struct ingero_cuda_call *c, size_t count)
{
	for (size_t i = 0; i < count;) {
		size_t n = 1;

		while (i + n < count && n < INGERO_BLOCK_MAX_CALLS && c[i + n].pid == c[i].pid)
			n++;
		write_block(s, &c[i], n);
		i += n;
	}
}

/* Calls of several processes arrive interleaved, message by message, so a
 * run of one pid is one message (~30 calls with four DataLoader workers):
 * blocks cut at every change of pid carried tens of calls, not a thousand.
 * So each pid's calls of the batch are gathered, in arrival order, into
 * blocks of up to INGERO_BLOCK_MAX_CALLS: chain[i] links call i to the next
 * call of its pid, and `heads` holds each pid's first and last call.  One
 * pass; a pid is looked up once per run (the last one found is tried first). */
static void write_calls(struct store *s, const struct batch *b)
{
	const struct ingero_cuda_call *c = b->calls.p;
	size_t count = b->calls.n, k = 0;

	if (!count)
		return;
	if (count > UINT32_MAX) {   /* the chains hold 32-bit indexes */
		write_runs(s, c, count);
		return;
	}
	if (count > s->chain_cap) {
		uint32_t *p = realloc(s->chain, count * sizeof *p);

		if (!p) {
			write_runs(s, c, count);
			return;
		}
		s->chain = p;
		s->chain_cap = count;
	}
	s->nheads = 0;
	for (size_t i = 0; i < count; i++) {
		if (s->nheads && s->heads[k].pid == c[i].pid) {
			s->chain[s->heads[k].last] = (uint32_t)i;
			s->heads[k].last = (uint32_t)i;
			continue;
		}
		for (k = 0; k < s->nheads && s->heads[k].pid != c[i].pid; k++)
			;
		if (k < s->nheads) {
			s->chain[s->heads[k].last] = (uint32_t)i;
			s->heads[k].last = (uint32_t)i;
			continue;
		}
		if (k == s->heads_cap) {
			size_t cap = s->heads_cap ? 2 * s->heads_cap : 16;
			struct pid_chain *p = realloc(s->heads, cap * sizeof *p);

			if (!p) {
				write_runs(s, c, count);
				return;
			}
			s->heads = p;
			s->heads_cap = cap;
		}
		s->heads[k] = (struct pid_chain){ .pid = c[i].pid, .first = (uint32_t)i, .last = (uint32_t)i };
		s->nheads++;
	}
	for (k = 0; k < s->nheads; k++) {
		size_t n = 0;

		for (uint32_t i = s->heads[k].first;; i = s->chain[i]) {
			s->gather[n++] = c[i];
			if (n == INGERO_BLOCK_MAX_CALLS || i == s->heads[k].last) {
				write_block(s, s->gather, n);
				n = 0;
			}
			if (i == s->heads[k].last)
				break;
		}
	}
}

static void write_rows(struct store *s, const struct batch *b)
{
	sqlite3_stmt *st;

	write_calls(s, b);

	st = s->st[ST_OFFCPU];
	for (size_t i = 0; i < b->offcpu.n; i++) {
		const struct off_cpu_row *r = (const struct off_cpu_row *)b->offcpu.p + i;

		sqlite3_bind_int64(st, 1, r->pid);
		sqlite3_bind_int64(st, 2, r->tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
		sqlite3_bind_int64(st, 5, (int64_t)r->runnable_ns);
		sqlite3_bind_int(st, 6, r->preempted);
		sqlite3_bind_int64(st, 7, r->next_pid);
		sqlite3_bind_int(st, 8, (int)r->cpu);
		step(s, st);
	}

	st = s->st[ST_PROC];
	for (size_t i = 0; i < b->procs.n; i++) {
		const struct proc_row *r = &((const struct q_proc *)b->procs.p)[i].r;

		sqlite3_bind_int64(st, 1, r->pid);
		bind_i64_or_null(st, 2, r->ppid, r->ppid >= 0);
		bind_text_or_null(st, 3, r->comm);
		bind_text_or_null(st, 4, r->exe);
		bind_text_or_null(st, 5, r->cmdline);
		bind_i64_or_null(st, 6, r->start_ns, r->start_ns >= 0);
		bind_i64_or_null(st, 7, r->exit_ns, r->exit_ns >= 0);
		bind_i64_or_null(st, 8, r->exit_code, r->exit_code >= 0);
		sqlite3_bind_int(st, 9, r->announced);
		bind_i64_or_null(st, 10, r->made, r->made >= 0);
		bind_i64_or_null(st, 11, r->dropped, r->dropped >= 0);
		step(s, st);
	}

	st = s->st[ST_THREAD];
	for (size_t i = 0; i < b->threads.n; i++) {
		const struct q_thread *t = (const struct q_thread *)b->threads.p + i;

		sqlite3_bind_int64(st, 1, t->tid);
		sqlite3_bind_int64(st, 2, t->pid);
		bind_text_or_null(st, 3, t->comm);
		step(s, st);
	}

	st = s->st[ST_BUSY];
	for (size_t i = 0; i < b->busy.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->busy.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 3, (int64_t)r->a);
		step(s, st);
	}

	st = s->st[ST_PAGES];
	for (size_t i = 0; i < b->pages.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->pages.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 3, (int64_t)r->a);
		sqlite3_bind_int64(st, 4, (int64_t)r->b);
		sqlite3_bind_int64(st, 5, (int64_t)r->c);
		step(s, st);
	}

	st = s->st[ST_COMP];
	for (size_t i = 0; i < b->comps.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->comps.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		bind_text_or_null(st, 2, r->comm);
		sqlite3_bind_int64(st, 3, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 4, (int64_t)r->a);
		sqlite3_bind_int64(st, 5, (int64_t)r->b);
		step(s, st);
	}

	st = s->st[ST_SAMPLE];
	for (size_t i = 0; i < b->samples.n; i++) {
		const struct sample_row *r = (const struct sample_row *)b->samples.p + i;

		sqlite3_bind_int64(st, 1, r->pid);
		sqlite3_bind_int64(st, 2, r->tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->ts_ns);
		sqlite3_bind_int(st, 4, (int)r->cpu);
		bind_i64_or_null(st, 5, r->stack_id, r->stack_id != 0);
		step(s, st);
	}

	for (size_t i = 0; i < b->stacks.n; i++) {
		const struct q_stack *k = (const struct q_stack *)b->stacks.p + i;

		st = s->st[ST_STACK];
		sqlite3_bind_int64(st, 1, k->id);
		sqlite3_bind_int64(st, 2, k->pid);
		step(s, st);
		st = s->st[ST_FRAME];
		for (size_t j = 0; j < k->n; j++) {
			const struct frame_row *f = (const struct frame_row *)b->frames.p + k->first + j;

			sqlite3_bind_int64(st, 1, k->id);
			sqlite3_bind_int(st, 2, (int)f->depth);
			sqlite3_bind_text(st, 3, f->kind, -1, SQLITE_STATIC);
			bind_i64_or_null(st, 4, (int64_t)f->ip, f->ip != 0);
			bind_text_or_null(st, 5, f->symbol);
			bind_text_or_null(st, 6, f->module);
			bind_i64_or_null(st, 7, (int64_t)f->offset, f->ip != 0);
			bind_text_or_null(st, 8, f->file);
			bind_i64_or_null(st, 9, f->line, f->line >= 0);
			step(s, st);
		}
	}

	st = s->st[ST_KERNEL];
	for (size_t i = 0; i < b->kernels.n; i++) {
		const struct q_kernel *k = (const struct q_kernel *)b->kernels.p + i;

		sqlite3_bind_int64(st, 1, k->pid);
		sqlite3_bind_int64(st, 2, (int64_t)k->addr);
		bind_text_or_null(st, 3, k->name);
		step(s, st);
	}

	st = s->st[ST_GPU];
	for (size_t i = 0; i < b->gpu.n; i++) {
		const struct q_gpu *g = (const struct q_gpu *)b->gpu.p + i;

		sqlite3_bind_int64(st, 1, g->pid);
		sqlite3_bind_int64(st, 2, (int64_t)g->stream);
		sqlite3_bind_int64(st, 3, (int64_t)g->recorded_ns);
		sqlite3_bind_int64(st, 4, (int64_t)g->done_ns);
		sqlite3_bind_int64(st, 5, g->flags);
		step(s, st);
	}

	st = s->st[ST_CAPTURE];
	for (size_t i = 0; i < b->capture.n; i++) {
		const struct q_capture *c = (const struct q_capture *)b->capture.p + i;

		sqlite3_bind_int64(st, 1, c->pid);
		sqlite3_bind_int64(st, 2, (int64_t)c->t_ns);
		sqlite3_bind_int64(st, 3, c->recording);
		step(s, st);
	}

	st = s->st[ST_SESSION];
	for (size_t i = 0; i < b->session.n; i++) {
		const struct q_kv *kv = (const struct q_kv *)b->session.p + i;

		sqlite3_bind_text(st, 1, kv->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kv->value, -1, SQLITE_STATIC);
		step(s, st);
	}
}

/* Called with the lock held: write the changed loss counters. */
static void write_losses_locked(struct store *s)
{
	sqlite3_stmt *st = s->st[ST_LOSS];

	if (!s->losses_dirty)
		return;
	for (size_t i = 0; i < s->n_losses; i++) {
		struct loss *l = &s->losses[i];

		if (!l->dirty)
			continue;
		sqlite3_bind_text(st, 1, l->source, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, l->pid);
		sqlite3_bind_int64(st, 3, (int64_t)l->count);
		step(s, st);
		l->dirty = 0;
	}
	s->losses_dirty = 0;
}

/* A read of our own file failed (a damaged page, an I/O error): said once,
 * like a failed write. */
static void read_failed(struct store *s, int rc)
{
	if (!s->failed)
		fprintf(stderr, "ingero-collector: sqlite read failed: %s\n", sqlite3_errstr(rc));
	s->failed = 1;
}

static uint64_t live_bytes(struct store *s)
{
	sqlite3_stmt *st;
	int64_t pages = 0, free_pages = 0, page_size = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT * FROM pragma_page_count, pragma_freelist_count, "
				      "pragma_page_size", -1, &st, NULL) == SQLITE_OK) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			pages = sqlite3_column_int64(st, 0);
			free_pages = sqlite3_column_int64(st, 1);
			page_size = sqlite3_column_int64(st, 2);
		} else {
			read_failed(s, rc);
		}
		sqlite3_finalize(st);
	}
	return (uint64_t)((pages - free_pages) * page_size);
}

/* --max-size: drop the oldest tenth of each event table until it fits.
 * What is counted is events: a call block counts its calls. */
static void enforce_cap(struct store *s, int force)
{
	static const char *const tables[] = { "call_blocks", "off_cpu", "cpu_samples", "gpu_marks" };
	static const char *const events[] = { "sum(calls)", "count(*)", "count(*)", "count(*)" };
	uint64_t now = mono_ns(), dropped = 0;

	if (!s->o.max_bytes || (!force && now - s->last_cap_check_ns < 200000000ull))
		return;
	s->last_cap_check_ns = now;
	for (int round = 0; round < 10 && live_bytes(s) > s->o.max_bytes; round++) {
		exec_sql(s->db, "BEGIN");
		for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
			char oldest[256], sql[512];
			sqlite3_stmt *st;

			snprintf(oldest, sizeof oldest, "SELECT rowid FROM %s ORDER BY rowid "
				 "LIMIT (SELECT count(*) / 10 + 1 FROM %s)", tables[t], tables[t]);
			snprintf(sql, sizeof sql, "SELECT coalesce(%s, 0) FROM %s WHERE rowid IN (%s)",
				 events[t], tables[t], oldest);
			if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
				continue;
			int rc = sqlite3_step(st);
			int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
			sqlite3_finalize(st);
			if (rc != SQLITE_ROW) {   /* rows it cannot count are not dropped: every loss is counted */
				read_failed(s, rc);
				continue;
			}
			snprintf(sql, sizeof sql, "DELETE FROM %s WHERE rowid IN (%s)", tables[t], oldest);
			if (exec_sql(s->db, sql) == 0)
				dropped += (uint64_t)n;
		}
		exec_sql(s->db, "COMMIT");
	}
	if (dropped) {
		store_loss_add(s, INGERO_LOSS_SIZE_CAP, 0, dropped);
		pthread_mutex_lock(&s->lock);
		exec_sql(s->db, "BEGIN");
		write_losses_locked(s);
		exec_sql(s->db, "COMMIT");
		pthread_mutex_unlock(&s->lock);
	}
}

static void ckpt_poke_locked(struct store *s);

static void *writer_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct timespec until;
		uint64_t seq;
		int stop;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)s->o.flush_ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!s->stop && !s->sync_wanted && s->pending.calls.n < s->o.max_pending_calls / 4 &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
		stop = s->stop;
		s->sync_wanted = 0;
		if (batch_rows(&s->pending) == 0 && !s->losses_dirty) {
			s->committed_seq = s->seq;
			pthread_cond_broadcast(&s->done);
			if (stop)
				break;
			continue;
		}
		/* swap: producers fill the other batch while we write this one */
		struct batch tmp = s->work;
		s->work = s->pending;
		s->pending = tmp;
		seq = s->seq;
		pthread_cond_broadcast(&s->done);   /* room for waiting producers */
		pthread_mutex_unlock(&s->lock);

		s->work_calls = s->work.calls.n;
		step(s, s->st[ST_BEGIN]);
		write_rows(s, &s->work);
		pthread_mutex_lock(&s->lock);
		write_losses_locked(s);
		pthread_mutex_unlock(&s->lock);
		step(s, s->st[ST_COMMIT]);
		batch_clear(&s->work);
		enforce_cap(s, stop);

		if (s->wal_frames > WAL_HARD_FRAMES)
			sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);

		pthread_mutex_lock(&s->lock);
		s->committed_calls += s->work_calls;
		if (s->work_calls)
			s->calls_committed_at = mono_ns();
		s->committed_seq = seq;
		ckpt_poke_locked(s);
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	enforce_cap(s, 1);   /* the file as left must fit */
	return NULL;
}

/* --- the checkpointer --------------------------------------------------------------- */

/* After each commit: how big the WAL is.  Only the writer thread commits
 * (sometimes with the lock held), and only it reads wal_frames: no lock. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct store *s = arg;

	(void)db;
	(void)name;
	s->wal_frames = frames;
	return SQLITE_OK;
}

/* Called with the lock held after a commit: wake the checkpointer when enough
 * was added, or when the writer has nothing queued (fold the burst back now). */
static void ckpt_poke_locked(struct store *s)
{
	int fresh;

	if (s->wal_frames < s->ckpt_frames_done)
		s->ckpt_frames_done = 0;   /* the writer restarted the WAL from its start */
	fresh = s->wal_frames - s->ckpt_frames_done;
	if (fresh >= CKPT_FRAMES || (fresh >= CKPT_IDLE_FRAMES && batch_rows(&s->pending) == 0)) {
		s->ckpt_asked = 1;
		pthread_cond_signal(&s->ckpt_wake);
	}
}

/* PASSIVE checkpoints only: they take no lock the writer needs, so the writer
 * keeps appending while the WAL is copied into the file.  The WAL restarts
 * from its beginning on the first commit after a pass that copied all of it. */
static void *ckpt_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		int log = 0, done = 0, rc;
		uint64_t covers;

		while (!s->ckpt_asked && !s->ckpt_stop)
			pthread_cond_wait(&s->ckpt_wake, &s->lock);
		if (!s->ckpt_asked)
			break;
		s->ckpt_asked = 0;
		covers = s->calls_committed_at;   /* committed before this pass reads the WAL */
		pthread_mutex_unlock(&s->lock);
		rc = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
		pthread_mutex_lock(&s->lock);
		s->ckpt_last_end = mono_ns();
		if (rc == SQLITE_OK) {
			s->ckpt_frames_done = log;
			if (log == done && covers > s->calls_folded_of) {
				s->calls_folded_of = covers;
				s->calls_folded_at = s->ckpt_last_end;
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* --- public API ------------------------------------------------------------------- */

/* A stale -wal next to a new file would be replayed into it: remove all three. */
/* Stop the checkpointer (if it started) and close its connection. */
static void ckpt_shutdown(struct store *s)
{
	if (s->ckpt_started) {
		pthread_mutex_lock(&s->lock);
		s->ckpt_stop = 1;
		pthread_cond_signal(&s->ckpt_wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->ckpt, NULL);
	}
	sqlite3_close(s->ckpt_db);
	s->ckpt_db = NULL;
}

static void remove_db(const char *path)
{
	char side[4096];

	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

struct store *store_open(const char *path, const struct store_opts *o)
{
	struct store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (o)
		s->o = *o;
	msgpack_sbuffer_init(&s->block);
	if (!s->o.flush_ms)
		s->o.flush_ms = 50;
	if (!s->o.max_pending_calls)
		s->o.max_pending_calls = 4u << 20;
	/* no global allocation statistics: they take a mutex on every malloc */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	remove_db(path);   /* one trace per file: a previous run's file is replaced */
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "ingero-collector: cannot create %s: %s\n", path,
			s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	if (exec_sql(s->db, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; "
			    "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; "
			    "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=0") ||
	    create_schema(s->db))
		goto fail;
	for (int i = 0; i < ST_N; i++) {
		int rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);

		if (rc != SQLITE_OK) {
			fprintf(stderr, "ingero-collector: sqlite: %s\n", sqlite3_errmsg(s->db));
			goto fail;
		}
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->done, NULL);
	pthread_cond_init(&s->ckpt_wake, NULL);
	/* PASSIVE passes take no lock the writer's transactions need; only its
	 * RESTART past WAL_HARD_FRAMES waits for the checkpointer (and readers),
	 * and at most a second: then it gives up and retries after a later commit */
	sqlite3_busy_timeout(s->db, 1000);
	if (sqlite3_open_v2(path, &s->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) ||
	    exec_sql(s->ckpt_db, "PRAGMA synchronous=NORMAL") ||
	    pthread_create(&s->ckpt, NULL, ckpt_main, s)) {
		/* no checkpointer: the writer checkpoints itself, as SQLite does by default */
		sqlite3_close(s->ckpt_db);
		s->ckpt_db = NULL;
		sqlite3_wal_autocheckpoint(s->db, CKPT_FRAMES);
	} else {
		s->ckpt_started = 1;
		sqlite3_wal_hook(s->db, wal_hook, s);
	}
	if (pthread_create(&s->writer, NULL, writer_main, s)) {
		fprintf(stderr, "ingero-collector: cannot start the writer thread\n");
		ckpt_shutdown(s);
		goto fail;
	}
	return s;
fail:
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	msgpack_sbuffer_destroy(&s->block);
	free(s);
	return NULL;
}

void store_sync(struct store *s)
{
	uint64_t want;

	pthread_mutex_lock(&s->lock);
	want = s->seq;
	s->sync_wanted = 1;
	pthread_cond_signal(&s->wake);
	while (s->committed_seq < want || s->losses_dirty) {
		s->sync_wanted = 1;
		pthread_cond_signal(&s->wake);
		pthread_cond_wait(&s->done, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
}

uint64_t store_finish(struct store *s)
{
	uint64_t t0, end;

	if (s->finished)
		return s->finished_at;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->writer, NULL);
	ckpt_shutdown(s);
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	/* fold the WAL back so the file stands alone */
	t0 = mono_ns();
	sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_close(s->db);
	/* When were the calls committed and in the file?  When the checkpointer
	 * folded back a WAL holding the last of them; else the time this close
	 * spent folding, after the later of the last commit and the
	 * checkpointer's last pass (the work still owed then). */
	if (s->calls_folded_of && s->calls_folded_of == s->calls_committed_at)
		end = s->calls_folded_at;
	else
		end = (s->calls_committed_at > s->ckpt_last_end ? s->calls_committed_at : s->ckpt_last_end) +
		      (mono_ns() - t0);
	pthread_mutex_lock(&s->lock);
	s->finished = 1;
	s->finished_at = end;
	pthread_mutex_unlock(&s->lock);
	return end;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	store_finish(s);
	batch_free(&s->pending);
	batch_free(&s->work);
	free(s->losses);
	free(s->chain);
	free(s->heads);
	msgpack_sbuffer_destroy(&s->block);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->done);
	pthread_cond_destroy(&s->ckpt_wake);
	free(s);
}

/* Producers: lock, append, bump the sequence. */
#define PRODUCE(s, code) do { \
	pthread_mutex_lock(&(s)->lock); \
	code; \
	(s)->seq++; \
	pthread_mutex_unlock(&(s)->lock); \
} while (0)

void store_calls(struct store *s, const struct ingero_cuda_call *c, size_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->pending.calls.n >= s->o.max_pending_calls && !s->stop) {
		pthread_cond_signal(&s->wake);
		pthread_cond_wait(&s->done, &s->lock);
	}
	memcpy(vec_push(&s->pending.calls, sizeof(*c), n), c, n * sizeof(*c));
	s->seq++;
	if (s->pending.calls.n >= s->o.max_pending_calls / 4)
		pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

void store_off_cpu(struct store *s, const struct off_cpu_row *r)
{
	PRODUCE(s, *(struct off_cpu_row *)vec_push(&s->pending.offcpu, sizeof(*r), 1) = *r);
}

void store_process(struct store *s, const struct proc_row *r)
{
	struct proc_row c = *r;

	c.comm = xstrdup(r->comm);
	c.exe = xstrdup(r->exe);
	c.cmdline = xstrdup(r->cmdline);
	PRODUCE(s, ((struct q_proc *)vec_push(&s->pending.procs, sizeof(struct q_proc), 1))->r = c);
}

void store_thread(struct store *s, uint32_t tid, uint32_t pid, const char *comm)
{
	struct q_thread t = { tid, pid, xstrdup(comm) };

	PRODUCE(s, *(struct q_thread *)vec_push(&s->pending.threads, sizeof(t), 1) = t);
}

void store_cpu_busy(struct store *s, uint32_t cpu, uint64_t bucket_ns, uint64_t busy_ns)
{
	struct q_bucket b = { .id = cpu, .bucket = bucket_ns, .a = busy_ns };

	PRODUCE(s, *(struct q_bucket *)vec_push(&s->pending.busy, sizeof(b), 1) = b);
}

void store_page_allocs(struct store *s, uint32_t pid, uint64_t bucket_ns,
		       uint64_t pages, uint64_t allocs, uint64_t faults)
{
	struct q_bucket b = { .id = pid, .bucket = bucket_ns, .a = pages, .b = allocs, .c = faults };

	PRODUCE(s, *(struct q_bucket *)vec_push(&s->pending.pages, sizeof(b), 1) = b);
}

void store_competitor(struct store *s, uint32_t pid, const char *comm, uint64_t bucket_ns,
		      uint64_t cpu_ns, uint64_t preemptions)
{
	struct q_bucket b = { .id = pid, .bucket = bucket_ns, .a = cpu_ns, .b = preemptions,
			      .comm = xstrdup(comm) };

	PRODUCE(s, *(struct q_bucket *)vec_push(&s->pending.comps, sizeof(b), 1) = b);
}

void store_sample(struct store *s, const struct sample_row *r)
{
	PRODUCE(s, *(struct sample_row *)vec_push(&s->pending.samples, sizeof(*r), 1) = *r);
}

void store_stack(struct store *s, int64_t id, uint32_t pid, const struct frame_row *f, size_t n)
{
	struct frame_row *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!copy)
		abort();
	for (size_t i = 0; i < n; i++) {
		copy[i] = f[i];
		copy[i].symbol = xstrdup(f[i].symbol);
		copy[i].module = xstrdup(f[i].module);
		copy[i].file = xstrdup(f[i].file);
	}
	pthread_mutex_lock(&s->lock);
	struct q_stack *k = vec_push(&s->pending.stacks, sizeof(*k), 1);
	k->id = id;
	k->pid = pid;
	k->first = s->pending.frames.n;
	k->n = n;
	if (n)
		memcpy(vec_push(&s->pending.frames, sizeof(*copy), n), copy, n * sizeof(*copy));
	s->seq++;
	pthread_mutex_unlock(&s->lock);
	free(copy);
}

void store_kernel(struct store *s, uint32_t pid, uint64_t addr, const char *name, size_t len)
{
	struct q_kernel k = { pid, addr, strndup(name, len) };

	PRODUCE(s, *(struct q_kernel *)vec_push(&s->pending.kernels, sizeof(k), 1) = k);
}

void store_gpu_mark(struct store *s, uint32_t pid, const struct ingero_wire_gpu *g)
{
	struct q_gpu q = { pid, g->flags, g->stream, g->recorded_ns, g->done_ns };

	PRODUCE(s, *(struct q_gpu *)vec_push(&s->pending.gpu, sizeof(q), 1) = q);
}

void store_capture(struct store *s, uint32_t pid, uint64_t t_ns, uint32_t recording)
{
	struct q_capture q = { pid, recording, t_ns };

	PRODUCE(s, *(struct q_capture *)vec_push(&s->pending.capture, sizeof(q), 1) = q);
}

void store_session(struct store *s, const char *key, const char *value)
{
	struct q_kv kv = { strdup(key), strdup(value ? value : "") };

	PRODUCE(s, *(struct q_kv *)vec_push(&s->pending.session, sizeof(kv), 1) = kv);
}

static struct loss *loss_slot_locked(struct store *s, const char *source, uint32_t pid)
{
	for (size_t i = 0; i < s->n_losses; i++)
		if (s->losses[i].pid == pid && strcmp(s->losses[i].source, source) == 0)
			return &s->losses[i];
	if (s->n_losses == s->cap_losses) {
		size_t cap = s->cap_losses ? s->cap_losses * 2 : 32;
		struct loss *p = realloc(s->losses, cap * sizeof(*p));

		if (!p)
			abort();
		s->losses = p;
		s->cap_losses = cap;
	}
	struct loss *l = &s->losses[s->n_losses++];
	memset(l, 0, sizeof(*l));
	l->dirty = s->losses_dirty = 1;   /* a zero row says the source was watched */
	snprintf(l->source, sizeof l->source, "%s", source);
	l->pid = pid;
	return l;
}

void store_loss_add(struct store *s, const char *source, uint32_t pid, uint64_t delta)
{
	pthread_mutex_lock(&s->lock);
	struct loss *l = loss_slot_locked(s, source, pid);
	if (delta) {
		l->count += delta;
		l->dirty = s->losses_dirty = 1;
	}
	pthread_mutex_unlock(&s->lock);
}

void store_loss_max(struct store *s, const char *source, uint32_t pid, uint64_t value)
{
	pthread_mutex_lock(&s->lock);
	struct loss *l = loss_slot_locked(s, source, pid);
	if (value > l->count) {
		l->count = value;
		l->dirty = s->losses_dirty = 1;
	}
	pthread_mutex_unlock(&s->lock);
}

uint64_t store_loss_get(struct store *s, const char *source, uint32_t pid)
{
	uint64_t v = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_losses; i++)
		if (s->losses[i].pid == pid && strcmp(s->losses[i].source, source) == 0)
			v = s->losses[i].count;
	pthread_mutex_unlock(&s->lock);
	return v;
}

uint64_t store_committed_calls(struct store *s)
{
	uint64_t v;

	pthread_mutex_lock(&s->lock);
	v = s->committed_calls;
	pthread_mutex_unlock(&s->lock);
	return v;
}

uint64_t store_calls_committed_at(struct store *s)
{
	uint64_t v;

	pthread_mutex_lock(&s->lock);
	v = s->calls_committed_at;
	pthread_mutex_unlock(&s->lock);
	return v;
}
