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
 *
 * Here: opening the file, the producers' API, the writer thread and the
 * losses; the queued rows in store_batch.c, writing them in store_rows.c,
 * stacks with their frames stored once in store_frames.c, --max-size in
 * store_cap.c, the checkpointer in store_ckpt.c.
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
#include "ingero/schema.h"
#include "ingero/utf8.h"
#include "store_internal.h"
#include <ingero/wire_decode.h>

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int store_exec_sql(sqlite3 *db, const char *sql)
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

	if (store_exec_sql(db, "BEGIN") || store_exec_sql(db, INGERO_SCHEMA_SQL))
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
	return store_exec_sql(db, sql) || store_exec_sql(db, "COMMIT") ? -1 : 0;
}

static void *writer_main(void *arg)
{
	struct store *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct timespec until;
		uint64_t seq;
		int stop, committed;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)s->o.flush_ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!s->stop && !s->sync_wanted && s->pending.calls.n < s->o.max_pending_calls / 4 &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
		stop = s->stop;
		s->sync_wanted = 0;
		/* (once recording stopped, the counters wait for the end) */
		if (batch_rows(&s->pending) == 0 && (!s->losses_dirty || s->broken)) {
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
		committed = 0;
		if (s->broken) {
			store_drop_batch(s, &s->work);
		} else {
			s->txn_rc = 0;
			store_step(s, s->st[ST_BEGIN]);
			store_write_rows(s, &s->work);
			pthread_mutex_lock(&s->lock);
			store_write_losses_locked(s);
			pthread_mutex_unlock(&s->lock);
			store_step(s, s->st[ST_COMMIT]);
			/* a fatal error, or a COMMIT that failed (the transaction still open) */
			if (s->txn_rc || !sqlite3_get_autocommit(s->db))
				store_break(s, &s->work);
			else
				committed = 1;
		}
		batch_clear(&s->work);
		store_enforce_cap(s, stop);

		if (committed && s->wal_frames > WAL_HARD_FRAMES)
			sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);

		pthread_mutex_lock(&s->lock);
		if (committed) {
			s->committed_calls += s->work_calls;
			if (s->work_calls)
				s->calls_committed_at = mono_ns();
		}
		s->committed_seq = seq;
		store_ckpt_poke_locked(s);
		pthread_cond_broadcast(&s->done);
	}
	pthread_mutex_unlock(&s->lock);
	if (s->broken)
		store_final_losses(s);   /* what was counted after the failure, if it fits */
	store_enforce_cap(s, 1);   /* the file as left must fit */
	return NULL;
}

/* --- public API ------------------------------------------------------------------- */

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
	/* 512k calls (48 MB, a writer's batch from 128k): 4M let a burst
	 * queue 384 MB of fresh memory, each page a fault on the intake
	 * thread (~60,000 of them in the ingest bench), in memory no cache
	 * keeps; the batches the writer takes stay as big */
	if (!s->o.max_pending_calls)
		s->o.max_pending_calls = 512u << 10;
	/* no global allocation statistics: they take a mutex on every malloc */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* the file is claimed, emptied and rid of a stale -wal by output.c */
	if (store_reserve_make(s, path))
		goto fail;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		fprintf(stderr, "ingero-collector: cannot create %s: %s\n", path,
			s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	if (store_exec_sql(s->db, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; "
			    "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; "
			    "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=0") ||
	    create_schema(s->db))
		goto fail;
	for (int i = 0; i < ST_N; i++) {
		int rc = sqlite3_prepare_v3(s->db, store_stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);

		if (rc != SQLITE_OK) {
			fprintf(stderr, "ingero-collector: sqlite: %s\n", sqlite3_errmsg(s->db));
			goto fail;
		}
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_cond_init(&s->done, NULL);
	pthread_cond_init(&s->ckpt_wake, NULL);
	store_ckpt_start(s, path);
	if (pthread_create(&s->writer, NULL, writer_main, s)) {
		fprintf(stderr, "ingero-collector: cannot start the writer thread\n");
		store_ckpt_shutdown(s);
		goto fail;
	}
	return s;
fail:
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	store_reserve_drop(s);
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
	while (s->committed_seq < want || (s->losses_dirty && !s->broken)) {
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
	store_ckpt_shutdown(s);
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	/* fold the WAL back so the file stands alone */
	t0 = mono_ns();
	sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_close(s->db);
	store_reserve_drop(s);
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
	store_frames_free(&s->frames);
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
		      uint64_t cpu_ns, uint64_t preemptions, uint64_t held_ns)
{
	struct q_bucket b = { .id = pid, .bucket = bucket_ns, .a = cpu_ns, .b = preemptions, .c = held_ns,
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

void store_process_env(struct store *s, uint32_t pid, const char *kv, size_t kv_len)
{
	struct q_env q = { pid, kv_len, malloc(kv_len ? kv_len : 1) };

	if (!q.kv)
		abort();
	memcpy(q.kv, kv, kv_len);
	PRODUCE(s, *(struct q_env *)vec_push(&s->pending.env, sizeof(q), 1) = q);
}

/* A name from the program's memory as UTF-8 text: a byte that does not
 * start a valid sequence, and control characters, become '?' (in place:
 * one byte for one), so every reader gets text. */
static char *clean_utf8(const char *p, size_t n)
{
	char *out = strndup(p ? p : "", n);
	unsigned char *s = (unsigned char *)out;
	while (s && *s) {
		int len = ingero_utf8_len(s);
		if (!len || *s < 0x20 || *s == 0x7f)
			*s++ = '?';
		else
			s += len;
	}
	return out;
}

void store_range(struct store *s, const struct ingero_wire_range *r)
{
	struct q_range q = { r->pid, r->tid, r->depth, r->kind, r->start_ns, r->start_ns + r->dur_ns,
			     clean_utf8(r->name.ptr, r->name.len) };

	PRODUCE(s, *(struct q_range *)vec_push(&s->pending.range, sizeof(q), 1) = q);
}

void store_collective(struct store *s, const struct ingero_wire_coll *c)
{
	PRODUCE(s, *(struct ingero_wire_coll *)vec_push(&s->pending.coll, sizeof(*c), 1) = *c);
}

void store_session(struct store *s, const char *key, const char *value)
{
	struct q_kv kv = { strdup(key), strdup(value ? value : "") };

	PRODUCE(s, *(struct q_kv *)vec_push(&s->pending.session, sizeof(kv), 1) = kv);
}

/* A loss row to write: a sequence number of its own, so that store_sync()
 * waits for the transaction that commits it (the writer marks the losses
 * clean when it writes them, before its COMMIT). */
static void losses_changed_locked(struct store *s, struct loss *l)
{
	l->dirty = s->losses_dirty = 1;
	s->seq++;
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
	losses_changed_locked(s, l);   /* a zero row says the source was watched */
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
		losses_changed_locked(s, l);
	}
	pthread_mutex_unlock(&s->lock);
}

void store_loss_max(struct store *s, const char *source, uint32_t pid, uint64_t value)
{
	pthread_mutex_lock(&s->lock);
	struct loss *l = loss_slot_locked(s, source, pid);
	if (value > l->count) {
		l->count = value;
		losses_changed_locked(s, l);
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
