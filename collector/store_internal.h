/*
 * store_internal.h — what the report.db writer's files share (store.c,
 * store_batch.c, store_rows.c, store_frames.c, store_cap.c, store_ckpt.c,
 * store_fail.c); not for the rest of the collector, which uses store.h.
 */
#ifndef INGERO_COLLECTOR_STORE_INTERNAL_H
#define INGERO_COLLECTOR_STORE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <msgpack.h>
#include <sqlite3.h>

#include "ingero/call_block.h"
#include "ingero/u64map.h"
#include "ingero/wire_decode.h"
#include "store.h"

/* --- growable arrays ------------------------------------------------------------ */

struct vec {
	void *p;
	size_t n, cap;
};

void *vec_push(struct vec *v, size_t elem, size_t count);

/* --- queued rows ---------------------------------------------------------------- */

struct q_proc { struct proc_row r; };
struct q_thread { uint32_t tid, pid; char *comm; };
struct q_bucket { uint32_t id; uint64_t bucket, a, b, c; char *comm; };
struct q_stack { int64_t id; uint32_t pid; size_t first, n; };
struct q_kernel { uint32_t pid; uint64_t addr; char *name; };
struct q_kv { char *key, *value; };
struct q_gpu { uint32_t pid, flags; uint64_t stream, recorded_ns, done_ns; };
struct q_capture { uint32_t pid, recording; uint64_t t_ns; };
struct q_env { uint32_t pid; size_t len; char *kv; };
struct q_range { uint32_t pid, tid, depth, kind; uint64_t start_ns, end_ns; char *name; };

struct batch {
	struct vec calls, offcpu, procs, threads, busy, pages, comps, samples, stacks, frames,
		kernels, session, gpu, capture, env, coll, range;
	uint64_t seq;       /* producer sequence number of the last row in it */
};

size_t batch_rows(const struct batch *b);
void batch_clear(struct batch *b);
void batch_free(struct batch *b);

/* --- frames stored once (store_frames.c) ----------------------------------------- */

#define STORE_FRAME_KINDS 3      /* kernel, native, python: a list column of stacks each */
#define STORE_MAX_DEPTH 1024     /* deeper frames of a kind are not stored */

struct stored_frame;

/* The frames written to this database: index + 1 = id (store_frames.c). */
struct frame_set {
	struct u64map by_hash;       /* hash of a frame's columns -> index + 1 of the latest */
	struct stored_frame *f;
	size_t n, cap;
	char *list[STORE_FRAME_KINDS];   /* a stack's lists as written, reused */
	size_t list_cap[STORE_FRAME_KINDS];
	int64_t at[STORE_MAX_DEPTH];     /* one kind's frame ids by depth */
};

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
	ST_STACK, ST_FRAME, ST_KERNEL, ST_SESSION, ST_LOSS, ST_GPU, ST_CAPTURE, ST_BLOCK, ST_ENV_CLEAR, ST_ENV, ST_COLL, ST_RANGE, ST_BEGIN, ST_COMMIT, ST_N
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
	struct frame_set frames;     /* the writer's: every frame in this file */
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
	int txn_rc;                  /* the first error that undoes the transaction in progress */
	/* store_fail.c: a write failed (why, when): recording stopped */
	int broken;
	char broken_why[128];
	uint64_t broken_at, not_stored_calls;
	char *reserve_path;          /* the room set aside for saying so; NULL once used */
};

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* store.c */
int store_exec_sql(sqlite3 *db, const char *sql);

/* store_rows.c: the statements, and one batch written through them */
extern const char *const store_stmt_sql[ST_N];
void store_step(struct store *s, sqlite3_stmt *st);
void store_write_rows(struct store *s, const struct batch *b);
/* called with the lock held: the changed loss counters */
void store_write_losses_locked(struct store *s);

/* store_frames.c: one stack, its new frames and its row of stacks (the
 * writer's transaction) */
void store_write_stack(struct store *s, const struct q_stack *k, const struct frame_row *f);
void store_frames_free(struct frame_set *fs);

/* store_cap.c: --max-size */
void store_enforce_cap(struct store *s, int force);

/* store_fail.c: a failed write */
int store_reserve_make(struct store *s, const char *path);   /* 0, or -1 (said) */
void store_reserve_drop(struct store *s);
int store_rc_fatal(int rc);                    /* an error that stops recording */
/* the writer's transaction for b failed: roll back, count, stop recording */
void store_break(struct store *s, const struct batch *b);
void store_drop_batch(struct store *s, const struct batch *b);   /* counted, not written */
void store_final_losses(struct store *s);      /* the counters once more, at the end */

/* store_ckpt.c: the checkpointer */
void store_ckpt_start(struct store *s, const char *path);
void store_ckpt_poke_locked(struct store *s);
void store_ckpt_shutdown(struct store *s);

#endif
