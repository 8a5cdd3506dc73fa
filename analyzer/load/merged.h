/*
 * merged.h — a merged report.db: several nodes' traces of one job in one
 * file of the current schema (`ingero-analyze merge`, cli/cmd_merge.c),
 * written node by node here and read back node by node here.
 *
 * The layout (docs/schema.md, "Merged files"): every table holds every
 * node's rows, on node 0's clock (node K's times moved by the offset the
 * job's loader found, rules/nodes.h); node K's pids and tids are K ×
 * INGERO_NODE_PID_STRIDE + its own (node_processes says each process's
 * node and own pid), its CPUs follow the nodes' before it, its frames and
 * (where two nodes' ids met) stacks have ids of the merged file, its
 * machine-wide losses have pid K × INGERO_NODE_PID_STRIDE.  The session
 * holds node 0's keys (start and end spanning every node, cpus all of
 * them), merged_nodes, and each node's own session under "node.K." with
 * what the merge did to it under "node.K.merge." (its file, the offsets
 * applied and what remains uncertain, its bases, its schema version and
 * what of the current schema it lacked).
 *
 * Read back, node K is a report.db of its own again (ia_merged_split):
 * its rows moved back onto its own clock and ids, its session, its
 * version — what the job's loader then reads as it reads a node's file,
 * so that explain and export of a merged file are those of its nodes.
 */
#ifndef IA_MERGED_H
#define IA_MERGED_H

#include "load/trace.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* One node as the job's loader put it on node 0's clock. */
struct ia_merge_node {
	const char *path;            /* the report.db copied */
	const char *name;            /* the name recorded for it (its file as the user gave it) */
	int64_t shift_ns;            /* added to its times: anchor_offset_ns + correction_ns */
	int64_t anchor_offset_ns, correction_ns;
	size_t collectives_used;     /* 0: not refined, the uncertainty unknown */
	uint64_t uncertainty_ns;
	int cpus;                    /* its session's, 0 unknown */
};

/* The empty merged file in `out` (writable, SQLITE_OPEN_URI).  0, or -1. */
int ia_merged_create(sqlite3 *out, char *err, size_t errlen);
/* Node k (0, 1, ... in order) copied in.  0, or -1 with one line. */
int ia_merged_add(sqlite3 *out, size_t k, const struct ia_merge_node *n, char *err, size_t errlen);
/* After the last of nn nodes: the merged file's own session keys. */
int ia_merged_finish(sqlite3 *out, size_t nn, char *err, size_t errlen);

/* The nodes a file holds: 0 when it is no merged file, -1 unreadable. */
int ia_merged_nodes(sqlite3 *db);
/* Node k of the merged file at path (open as db) into a new report.db at
 * out_path; its original file's name into file.  0, or -1 with one line. */
int ia_merged_split(sqlite3 *db, const char *path, size_t k, const char *out_path, char *file, size_t filelen,
		    char *err, size_t errlen);

/* How a view names process pid of a trace loaded whole: in a merged file
 * "node N (host) · pid P" (P its own pid on its node), else "pid P"; and
 * that own pid alone (pid itself outside a merged file). */
const char *ia_merged_proc_name(const struct ia_trace *t, int pid, char *buf, size_t n);
int ia_merged_own_pid(const struct ia_trace *t, int pid);

#endif
