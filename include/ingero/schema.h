/*
 * schema.h — the report.db format, version INGERO_SCHEMA_VERSION.
 *
 * The collector creates a database from INGERO_SCHEMA_SQL and sets
 * PRAGMA user_version; the analyzer reads this version, version 10 (no
 * nvtx_ranges: the program's NVTX ranges are not known), version 9 (no
 * off_cpu.holder_tid: which thread of the holder's process it was is not
 * known), version 8 (no
 * off_cpu.holder_pid/holder_ns or competitors.held_ns: whom a woken thread
 * waited behind for a CPU is not known) and versions 7 to 1,
 * whose stacks' frames are rows of the table stack_frames (a frame stored
 * once per stack that has it, not once) — version 7 itself, version 6 (no
 * off_cpu.waker_tid/waker_pid: who ended a thread's sleep is not known; no
 * process_env or collectives: no ranks, no NCCL calls), version 5 (no
 * off_cpu_stacks: where a thread blocked is not known), version 4 (no
 * off_cpu.syscall: what a thread blocked in is not known), version 3 (no
 * capture: recorded throughout), version 2 (no
 * gpu_marks: GPU time only as estimated from host calls) and version 1
 * (whose cuda_calls was a table of one row per call) and refuses any other.  CUDA
 * calls are stored in blocks (call_block.h); the cuda_calls virtual table
 * shows them as rows.  Every
 * timestamp is CLOCK_MONOTONIC ns; every pid/tid is in the root pid
 * namespace.  docs/schema.md explains each table for users; a change here
 * bumps the version and updates that page.
 */
#ifndef INGERO_SCHEMA_H
#define INGERO_SCHEMA_H

#define INGERO_SCHEMA_VERSION 11

/* A stack's frames as rows, as versions 1 to 7 stored them (the sqlite3
 * shell, run_sql, people's scripts): each frame id of the stack's lists
 * (stacks.kernel, .native, .python: JSON arrays, innermost first) joined
 * to its row of frames, depth = the position in the list.  The joins are
 * forced in this order (CROSS JOIN): a stack by its primary key, then its
 * kinds, then its frames by theirs — rows come as the old table's primary
 * key (stack_id, kind, depth) ordered them, and WHERE stack_id = ? reads
 * one row of stacks. */
#define INGERO_STACK_FRAMES_VIEW_SQL \
"CREATE VIEW stack_frames(stack_id, depth, kind, ip, symbol, module, offset, file, line) AS\n" \
"  SELECT s.id, j.key, k.value, f.ip, f.symbol, f.module, f.offset, f.file, f.line\n" \
"  FROM stacks s CROSS JOIN json_each('[\"kernel\",\"native\",\"python\"]') k\n" \
"  CROSS JOIN json_each(CASE k.key WHEN 0 THEN s.kernel WHEN 1 THEN s.native ELSE s.python END) j\n" \
"  CROSS JOIN frames f WHERE f.id = j.value;\n"

#define INGERO_SCHEMA_SQL \
"CREATE TABLE session(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;\n" \
"CREATE TABLE apis(id INTEGER PRIMARY KEY, name TEXT NOT NULL, class TEXT NOT NULL);\n" \
"CREATE TABLE processes(pid INTEGER PRIMARY KEY, ppid INTEGER, comm TEXT, exe TEXT,\n" \
"  cmdline TEXT, start_ns INTEGER, exit_ns INTEGER, exit_code INTEGER,\n" \
"  announced INTEGER NOT NULL DEFAULT 0, made INTEGER NOT NULL DEFAULT 0,\n" \
"  dropped INTEGER NOT NULL DEFAULT 0);\n" \
"CREATE TABLE threads(tid INTEGER PRIMARY KEY, pid INTEGER NOT NULL, comm TEXT);\n" \
"CREATE TABLE call_blocks(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,\n" \
"  first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL, calls INTEGER NOT NULL,\n" \
"  data BLOB NOT NULL);\n" \
"CREATE INDEX call_blocks_by_time ON call_blocks(first_ns);\n" \
"CREATE TABLE off_cpu(pid INTEGER NOT NULL, tid INTEGER NOT NULL, start_ns INTEGER NOT NULL,\n" \
"  end_ns INTEGER NOT NULL, runnable_ns INTEGER NOT NULL, preempted INTEGER NOT NULL,\n" \
"  next_pid INTEGER, cpu INTEGER, syscall INTEGER, waker_tid INTEGER, waker_pid INTEGER,\n" \
"  holder_pid INTEGER, holder_ns INTEGER, holder_tid INTEGER);\n" \
"CREATE INDEX off_cpu_by_tid ON off_cpu(tid, start_ns);\n" \
"CREATE INDEX off_cpu_by_time ON off_cpu(start_ns);\n" \
"CREATE TABLE page_allocs(pid INTEGER NOT NULL, bucket_ns INTEGER NOT NULL,\n" \
"  pages INTEGER NOT NULL, allocs INTEGER NOT NULL, faults INTEGER NOT NULL DEFAULT 0,\n" \
"  PRIMARY KEY(pid, bucket_ns)) WITHOUT ROWID;\n" \
"CREATE TABLE cpu_busy(cpu INTEGER NOT NULL, bucket_ns INTEGER NOT NULL,\n" \
"  busy_ns INTEGER NOT NULL, PRIMARY KEY(cpu, bucket_ns)) WITHOUT ROWID;\n" \
"CREATE TABLE competitors(pid INTEGER NOT NULL, comm TEXT, bucket_ns INTEGER NOT NULL,\n" \
"  cpu_ns INTEGER NOT NULL, preemptions INTEGER NOT NULL, held_ns INTEGER NOT NULL DEFAULT 0,\n" \
"  PRIMARY KEY(pid, bucket_ns)) WITHOUT ROWID;\n" \
"CREATE TABLE frames(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, ip INTEGER, symbol TEXT,\n" \
"  module TEXT, offset INTEGER, file TEXT, line INTEGER);\n" \
"CREATE TABLE stacks(id INTEGER PRIMARY KEY, pid INTEGER, kernel TEXT, native TEXT, python TEXT);\n" \
INGERO_STACK_FRAMES_VIEW_SQL \
"CREATE TABLE kernels(pid INTEGER NOT NULL, addr INTEGER NOT NULL, name TEXT,\n" \
"  PRIMARY KEY(pid, addr)) WITHOUT ROWID;\n" \
"CREATE TABLE cpu_samples(pid INTEGER NOT NULL, tid INTEGER NOT NULL, ts_ns INTEGER NOT NULL,\n" \
"  cpu INTEGER, stack_id INTEGER);\n" \
"CREATE INDEX cpu_samples_by_time ON cpu_samples(ts_ns);\n" \
"CREATE TABLE off_cpu_stacks(pid INTEGER NOT NULL, tid INTEGER NOT NULL, start_ns INTEGER NOT NULL,\n" \
"  stack_id INTEGER, chance REAL NOT NULL);\n" \
"CREATE INDEX off_cpu_stacks_by_tid ON off_cpu_stacks(tid, start_ns);\n" \
"CREATE TABLE gpu_marks(pid INTEGER NOT NULL, stream INTEGER NOT NULL,\n" \
"  recorded_ns INTEGER NOT NULL, done_ns INTEGER NOT NULL, flags INTEGER NOT NULL);\n" \
"CREATE INDEX gpu_marks_by_time ON gpu_marks(done_ns);\n" \
"CREATE TABLE capture(pid INTEGER NOT NULL, t_ns INTEGER NOT NULL, recording INTEGER NOT NULL);\n" \
"CREATE TABLE losses(source TEXT NOT NULL, pid INTEGER NOT NULL DEFAULT 0,\n" \
"  count INTEGER NOT NULL, PRIMARY KEY(source, pid)) WITHOUT ROWID;\n" \
"CREATE TABLE process_env(pid INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,\n" \
"  PRIMARY KEY(pid, key)) WITHOUT ROWID;\n" \
"CREATE TABLE collectives(pid INTEGER NOT NULL, tid INTEGER NOT NULL, op TEXT NOT NULL,\n" \
"  comm INTEGER, comm_id INTEGER, seq INTEGER, rank INTEGER, nranks INTEGER, count INTEGER,\n" \
"  dtype INTEGER, bytes INTEGER, peer INTEGER, stream INTEGER, start_ns INTEGER NOT NULL,\n" \
"  dur_ns INTEGER NOT NULL, ret INTEGER, flags INTEGER NOT NULL DEFAULT 0);\n" \
"CREATE INDEX collectives_by_comm ON collectives(comm_id, seq);\n" \
"CREATE TABLE nvtx_ranges(pid INTEGER NOT NULL, tid INTEGER NOT NULL, start_ns INTEGER NOT NULL,\n" \
"  end_ns INTEGER NOT NULL, depth INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL);\n"

/* A merged report.db (`ingero-analyze merge`, docs/schema.md "Merged
 * files"): several nodes' traces in one file of this version, on node 0's
 * clock.  Node K's pids and tids are K * INGERO_NODE_PID_STRIDE + its own
 * (Linux pids are below 2^22), its CPUs follow the nodes before it, and
 * its session is kept under "node.K." with what the merge did under
 * "node.K.merge."; node_processes says each process's node and own pid. */
#define INGERO_NODE_PID_STRIDE 10000000
#define INGERO_MERGED_SCHEMA_SQL \
"CREATE TABLE node_processes(pid INTEGER PRIMARY KEY, node INTEGER NOT NULL, node_pid INTEGER NOT NULL);\n"

/* Well-known session keys (session.key). */
#define INGERO_SESSION_KEYS \
	"command", "start_wall_ns", "start_mono_ns", "end_mono_ns", "host", "kernel", \
	"cpus", "cpu_model", "mem_bytes", "gpu", "driver_version", "cuda_version", \
	"mode", "collector_version", "cuda_only_reason", "bucket_ns", "sample_hz", "endpoint", \
	"page_faults"

/* gpu_marks.flags (docs/schema.md): written by the preload library, read
 * by the analyzer. */
enum ingero_gpu_mark_flags {
	INGERO_GPU_MARK_WATCHER = 1u << 0,  /* recorded by the watcher (else by the calling thread) */
	INGERO_GPU_MARK_CLAMPED = 1u << 1,  /* GPU time disagreed with what the host saw: clamped */
	INGERO_GPU_MARK_COARSE = 1u << 2,   /* no GPU timestamp: done = when the watcher saw it */
};

/* Loss sources (losses.source). */
#define INGERO_LOSS_PRELOAD_DROPPED  "preload_dropped"   /* counted by the library, per pid */
#define INGERO_LOSS_MALFORMED        "malformed_message" /* rejected by the decoder */
#define INGERO_LOSS_SPOOFED          "spoofed_record"    /* record for a pid the sender may not speak for */
#define INGERO_LOSS_UNKNOWN_RECORD   "unknown_record"
#define INGERO_LOSS_RINGBUF_PREFIX   "bpf_ringbuf_"      /* + program name: reservation failures */
#define INGERO_LOSS_SIZE_CAP         "size_cap_rows"     /* oldest rows dropped by --max-size */
#define INGERO_LOSS_UNTRACED_SENDER  "untraced_sender"   /* records from outside the traced trees */
#define INGERO_LOSS_NO_MEMORY        "collector_no_memory" /* records of a message the collector had no memory to hold */
#define INGERO_LOSS_COUNTS_UNKNOWN  "preload_counts_unknown" /* per pid: 1 = its final counts never arrived */
#define INGERO_LOSS_GPU_MARKS       "gpu_marks_lost"    /* per pid: GPU marks recorded but not read back */
#define INGERO_LOSS_AFTER_OWNER      "preload_after_owner_exit" /* per pid: 1 = still running when its ring's owner stopped */
#define INGERO_LOSS_NOT_STORED_PREFIX "not_stored_"    /* + table (calls: CUDA calls): rows lost to a failed write */
#define INGERO_LOSS_DRAIN_LIMIT      "drain_limit_messages" /* messages still queued when the stop's drain limit came */
#define INGERO_LOSS_COLL_DROPPED     "preload_collectives_dropped" /* per pid: NCCL call records its ring had no room for */
#define INGERO_LOSS_RANGE_DROPPED    "preload_nvtx_ranges_dropped" /* per pid: NVTX ranges not recorded (ring full, nested deeper than 16, 64 started at once) */
#define INGERO_LOSS_ENV_UNREAD       "process_env_unread" /* per pid: 1 = gone before its launcher variables were read */

#endif
