/*
 * store_rows.c — one batch written through the prepared statements, in the
 * writer thread's transaction (store.c writer_main): CUDA calls as call
 * blocks, gathered by pid; stacks with their frames stored once
 * (store_frames.c); every other table's rows as they came; the changed
 * loss counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingero/call_block.h"
#include "ingero/nccl.h"
#include "store_internal.h"

const char *const store_stmt_sql[ST_N] = {
	[ST_CALL] = "INSERT INTO call_blocks(pid,first_ns,last_ns,calls,data) VALUES(?,?,?,?,?)",
	[ST_OFFCPU] = "INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu,syscall,waker_tid,waker_pid,"
		      "holder_pid,holder_ns,holder_tid) "
		      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
	[ST_COMP] = "INSERT INTO competitors(pid,comm,bucket_ns,cpu_ns,preemptions,held_ns) VALUES(?,?,?,?,?,?) "
		    "ON CONFLICT DO UPDATE SET cpu_ns=cpu_ns+excluded.cpu_ns,"
		    "preemptions=preemptions+excluded.preemptions,held_ns=held_ns+excluded.held_ns,"
		    "comm=coalesce(comm,excluded.comm)",
	[ST_SAMPLE] = "INSERT INTO cpu_samples(pid,tid,ts_ns,cpu,stack_id) VALUES(?,?,?,?,?)",
	/* a stack stored again (the same id) keeps its pid and lists and
	 * takes the lists of kinds it had none of (store_frames.c) */
	[ST_STACK] = "INSERT INTO stacks(id,pid,kernel,native,python) VALUES(?,?,?,?,?) ON CONFLICT(id) DO UPDATE "
		     "SET kernel=coalesce(kernel,excluded.kernel),native=coalesce(native,excluded.native),"
		     "python=coalesce(python,excluded.python)",
	[ST_FRAME] = "INSERT INTO frames(id,kind,ip,symbol,module,offset,file,line) VALUES(?,?,?,?,?,?,?,?)",
	/* a kernel first defined without a name (its sender had no KERNEL
	 * record yet) takes the name a later definition brings */
	[ST_KERNEL] = "INSERT INTO kernels(pid,addr,name) VALUES(?,?,?) ON CONFLICT(pid,addr) DO UPDATE "
		      "SET name=excluded.name WHERE (kernels.name IS NULL OR kernels.name='') "
		      "AND excluded.name IS NOT NULL AND excluded.name<>''",
	[ST_SESSION] = "INSERT OR REPLACE INTO session(key,value) VALUES(?,?)",
	[ST_LOSS] = "INSERT OR REPLACE INTO losses(source,pid,count) VALUES(?,?,?)",
	[ST_GPU] = "INSERT INTO gpu_marks(pid,stream,recorded_ns,done_ns,flags) VALUES(?,?,?,?,?)",
	[ST_CAPTURE] = "INSERT INTO capture(pid,t_ns,recording) VALUES(?,?,?)",
	[ST_BLOCK] = "INSERT INTO off_cpu_stacks(pid,tid,start_ns,stack_id,chance) VALUES(?,?,?,?,?)",
	[ST_ENV_CLEAR] = "DELETE FROM process_env WHERE pid=?",
	[ST_ENV] = "INSERT OR REPLACE INTO process_env(pid,key,value) VALUES(?,?,?)",
	[ST_COLL] = "INSERT INTO collectives(pid,tid,op,comm,comm_id,seq,rank,nranks,count,dtype,bytes,peer,"
		    "stream,start_ns,dur_ns,ret,flags) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_RANGE] = "INSERT INTO nvtx_ranges(pid,tid,start_ns,end_ns,depth,kind,name) VALUES(?,?,?,?,?,?,?)",
	[ST_BEGIN] = "BEGIN",
	[ST_COMMIT] = "COMMIT",
};

void store_step(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
		sqlite3_reset(st);
		return;
	}
	rc = sqlite3_extended_errcode(s->db);
	if (store_rc_fatal(rc)) {   /* the transaction is lost: store_fail.c says so */
		if (!s->txn_rc)
			s->txn_rc = rc;
	} else if (!s->failed) {
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
	store_step(s, st);
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

/* One collectives row: what the call knew, NULL for what it did not (a -1
 * rank, an unknown communicator); bytes from the count and the type
 * (ncclReduceScatter's send buffer: count x nranks). */
static void bind_collective(struct store *s, sqlite3_stmt *st, const struct ingero_wire_coll *c)
{
	int kind = ingero_nccl_kind(c->op);
	int data = kind == INGERO_NCCL_COLLECTIVE || kind == INGERO_NCCL_P2P;
	unsigned esz = ingero_nccl_dtype_bytes(c->dtype);
	uint64_t bytes = c->count * esz;
	int known_comm = !(c->flags & INGERO_COLL_NO_COMM_SLOT) && kind != INGERO_NCCL_GROUP;

	if (c->op == INGERO_NCCL_REDUCE_SCATTER && c->nranks > 0)
		bytes *= (uint64_t)c->nranks;
	sqlite3_bind_int64(st, 1, c->pid);
	sqlite3_bind_int64(st, 2, c->tid);
	sqlite3_bind_text(st, 3, ingero_nccl_name(c->op), -1, SQLITE_STATIC);
	bind_i64_or_null(st, 4, (int64_t)c->comm, c->comm != 0);
	bind_i64_or_null(st, 5, (int64_t)c->comm_id, known_comm && c->comm_id != 0);
	bind_i64_or_null(st, 6, (int64_t)c->seq, known_comm && kind != INGERO_NCCL_COMM);
	bind_i64_or_null(st, 7, c->rank, c->rank >= 0);
	bind_i64_or_null(st, 8, c->nranks, c->nranks >= 0);
	bind_i64_or_null(st, 9, (int64_t)c->count, data);
	bind_i64_or_null(st, 10, c->dtype, data && c->dtype >= 0);
	bind_i64_or_null(st, 11, (int64_t)bytes, data && esz);
	bind_i64_or_null(st, 12, c->peer, c->peer >= 0 || c->op == INGERO_NCCL_COMM_SPLIT);
	bind_i64_or_null(st, 13, (int64_t)c->stream, c->stream != 0 || data);
	sqlite3_bind_int64(st, 14, (int64_t)c->start_ns);
	sqlite3_bind_int64(st, 15, (int64_t)c->dur_ns);
	sqlite3_bind_int64(st, 16, c->ret);
	sqlite3_bind_int64(st, 17, c->flags);
	store_step(s, st);
}

void store_write_rows(struct store *s, const struct batch *b)
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
		bind_i64_or_null(st, 9, r->syscall, r->syscall_known);
		bind_i64_or_null(st, 10, r->waker_tid, r->waker_tid != 0);
		bind_i64_or_null(st, 11, r->waker_pid, r->waker_tid != 0);
		sqlite3_bind_int64(st, 12, r->holder_pid);
		sqlite3_bind_int64(st, 13, (int64_t)r->holder_ns);
		sqlite3_bind_int64(st, 14, r->holder_tid);
		store_step(s, st);
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
		store_step(s, st);
	}

	st = s->st[ST_THREAD];
	for (size_t i = 0; i < b->threads.n; i++) {
		const struct q_thread *t = (const struct q_thread *)b->threads.p + i;

		sqlite3_bind_int64(st, 1, t->tid);
		sqlite3_bind_int64(st, 2, t->pid);
		bind_text_or_null(st, 3, t->comm);
		store_step(s, st);
	}

	st = s->st[ST_BUSY];
	for (size_t i = 0; i < b->busy.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->busy.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 3, (int64_t)r->a);
		store_step(s, st);
	}

	st = s->st[ST_PAGES];
	for (size_t i = 0; i < b->pages.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->pages.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 3, (int64_t)r->a);
		sqlite3_bind_int64(st, 4, (int64_t)r->b);
		sqlite3_bind_int64(st, 5, (int64_t)r->c);
		store_step(s, st);
	}

	st = s->st[ST_COMP];
	for (size_t i = 0; i < b->comps.n; i++) {
		const struct q_bucket *r = (const struct q_bucket *)b->comps.p + i;

		sqlite3_bind_int64(st, 1, r->id);
		bind_text_or_null(st, 2, r->comm);
		sqlite3_bind_int64(st, 3, (int64_t)r->bucket);
		sqlite3_bind_int64(st, 4, (int64_t)r->a);
		sqlite3_bind_int64(st, 5, (int64_t)r->b);
		sqlite3_bind_int64(st, 6, (int64_t)r->c);
		store_step(s, st);
	}

	for (size_t i = 0; i < b->samples.n; i++) {
		const struct sample_row *r = (const struct sample_row *)b->samples.p + i;

		st = s->st[r->blocked ? ST_BLOCK : ST_SAMPLE];
		sqlite3_bind_int64(st, 1, r->pid);
		sqlite3_bind_int64(st, 2, r->tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->ts_ns);
		if (r->blocked) {
			bind_i64_or_null(st, 4, r->stack_id, r->stack_id != 0);
			sqlite3_bind_double(st, 5, r->chance);
		} else {
			sqlite3_bind_int(st, 4, (int)r->cpu);
			bind_i64_or_null(st, 5, r->stack_id, r->stack_id != 0);
		}
		store_step(s, st);
	}

	for (size_t i = 0; i < b->stacks.n; i++) {
		const struct q_stack *k = (const struct q_stack *)b->stacks.p + i;

		store_write_stack(s, k, (const struct frame_row *)b->frames.p + k->first);
	}

	st = s->st[ST_KERNEL];
	for (size_t i = 0; i < b->kernels.n; i++) {
		const struct q_kernel *k = (const struct q_kernel *)b->kernels.p + i;

		sqlite3_bind_int64(st, 1, k->pid);
		sqlite3_bind_int64(st, 2, (int64_t)k->addr);
		bind_text_or_null(st, 3, k->name);
		store_step(s, st);
	}

	st = s->st[ST_GPU];
	for (size_t i = 0; i < b->gpu.n; i++) {
		const struct q_gpu *g = (const struct q_gpu *)b->gpu.p + i;

		sqlite3_bind_int64(st, 1, g->pid);
		sqlite3_bind_int64(st, 2, (int64_t)g->stream);
		sqlite3_bind_int64(st, 3, (int64_t)g->recorded_ns);
		sqlite3_bind_int64(st, 4, (int64_t)g->done_ns);
		sqlite3_bind_int64(st, 5, g->flags);
		store_step(s, st);
	}

	st = s->st[ST_CAPTURE];
	for (size_t i = 0; i < b->capture.n; i++) {
		const struct q_capture *c = (const struct q_capture *)b->capture.p + i;

		sqlite3_bind_int64(st, 1, c->pid);
		sqlite3_bind_int64(st, 2, (int64_t)c->t_ns);
		sqlite3_bind_int64(st, 3, c->recording);
		store_step(s, st);
	}

	for (size_t i = 0; i < b->env.n; i++) {
		const struct q_env *e = (const struct q_env *)b->env.p + i;

		sqlite3_bind_int64(s->st[ST_ENV_CLEAR], 1, e->pid);
		store_step(s, s->st[ST_ENV_CLEAR]);
		for (size_t o = 0; o < e->len;) {
			const char *k = e->kv + o, *v = k + strlen(k) + 1;

			o = (size_t)(v - e->kv) + strlen(v) + 1;
			sqlite3_bind_int64(s->st[ST_ENV], 1, e->pid);
			sqlite3_bind_text(s->st[ST_ENV], 2, k, -1, SQLITE_STATIC);
			sqlite3_bind_text(s->st[ST_ENV], 3, v, -1, SQLITE_STATIC);
			store_step(s, s->st[ST_ENV]);
		}
	}

	st = s->st[ST_COLL];
	for (size_t i = 0; i < b->coll.n; i++)
		bind_collective(s, st, (const struct ingero_wire_coll *)b->coll.p + i);

	st = s->st[ST_RANGE];
	for (size_t i = 0; i < b->range.n; i++) {
		const struct q_range *r = (const struct q_range *)b->range.p + i;

		sqlite3_bind_int64(st, 1, r->pid);
		sqlite3_bind_int64(st, 2, r->tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
		sqlite3_bind_int64(st, 5, r->depth);
		sqlite3_bind_text(st, 6, ingero_range_kind_name(r->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, r->name ? r->name : "", -1, SQLITE_STATIC);
		store_step(s, st);
	}

	st = s->st[ST_SESSION];
	for (size_t i = 0; i < b->session.n; i++) {
		const struct q_kv *kv = (const struct q_kv *)b->session.p + i;

		sqlite3_bind_text(st, 1, kv->key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, kv->value, -1, SQLITE_STATIC);
		store_step(s, st);
	}
}

void store_write_losses_locked(struct store *s)
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
		store_step(s, st);
		l->dirty = 0;
	}
	s->losses_dirty = 0;
}
