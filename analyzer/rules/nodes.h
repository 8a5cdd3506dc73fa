/*
 * nodes.h — several report.db, one a node of the same job, loaded and put
 * on node 0's clock: what `explain A.db B.db ...` (cli/cmd_explain_nodes.c),
 * `export A.db B.db ...` (cli/cmd_export.c) and `mcp A.db B.db ...`
 * (mcp/mcp_nodes.c) all read, so that the three apply the same offsets.
 * It sits below the front ends (rules/) so that each of them can call it.
 *
 * Each file is loaded whole, as one file is.  Its times are its node's
 * CLOCK_MONOTONIC: they go onto node 0's timeline by the clock anchors the
 * collectors stored (session clock_anchor_*: realtime − monotonic of each
 * node, each read to within its stated uncertainty), then the NCCL
 * collectives refine that (measure/collectives.h: ia_job_analyze_nodes
 * in rules/chain_straggler.h).  A window or a process is per file: the
 * front ends refuse one with several files.
 *
 * A merged report.db (`ingero-analyze merge`, load/merged.h) counts as its
 * nodes: each is read back into a report.db of its own under $TMPDIR
 * (removed by ia_nodes_free) and loaded as a node's file is, so that the
 * merged file's explain and export are those of the files it was merged
 * from.
 */
#ifndef IA_NODES_H
#define IA_NODES_H

#include "measure/ranks.h"
#include "rules/chain_straggler.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define IA_MAX_NODES 16

struct ia_node {
	const char *path;          /* its report.db as given, or the name a merged file recorded */
	const char *merged;        /* the merged file it was read from, NULL none */
	const char *file;          /* the file loaded: path, or its part of merged read back (tmp) */
	char *name, *tmp;          /* path and file of a merged file's part (tmp removed by ia_nodes_free) */
	sqlite3 *db;
	struct ia_trace t;
	struct ia_ranks rk;
	int loaded, ranked;
	int64_t anchor;            /* realtime − monotonic of its clock */
	uint64_t anchor_unc;       /* its anchor's uncertainty, ns; 0 unknown */
	const char *host, *boot;   /* session host and boot_id, NULL unknown */
};

struct ia_nodes {
	struct ia_node nd[IA_MAX_NODES];
	size_t nn;
	struct ia_job *job;        /* fit[n]: the collectives' refinement of node n */
};

/* paths[0..n-1] (1 to IA_MAX_NODES, a merged file counting as its nodes;
 * kept, not copied): loads each whole, aligns them and analyses the job.
 * flags: IA_NODES_CAUSE, the straggler's own cause too (explain's and
 * MCP's, not export's); IA_NODES_UNIQUE, two nodes of the same trace
 * refused (ia_nodes_duplicate: merge's).  0, or -1 with a one-line reason
 * (the file's own error for a file that cannot be read), IA_NODES_USAGE
 * for what the user gave (more than IA_MAX_NODES nodes, the same trace
 * twice); free with ia_nodes_free either way. */
#define IA_NODES_USAGE (-2)
enum { IA_NODES_CAUSE = 1, IA_NODES_UNIQUE = 2 };
int ia_nodes_load(struct ia_nodes *ns, const char *const *paths, size_t n, int flags, char *err, size_t errlen);

/* 1 with the reason in err when two of the loaded nodes are the same
 * trace (one host, boot id and start: a file given twice, or a copy of
 * it; two collectors on one machine started apart), else 0.  merge
 * refuses them (IA_NODES_UNIQUE); explain, export and MCP read them
 * (tests serve a copy as a second node). */
int ia_nodes_duplicate(const struct ia_nodes *ns, char *err, size_t errlen);

/* The nodes the merged file at path holds; 0 when it is no merged file
 * (or cannot be read: loading it says why). */
int ia_nodes_merged(const char *path);
void ia_nodes_free(struct ia_nodes *ns);

/* What puts node i's times on node 0's clock: its anchor's offset from
 * node 0's, plus the collectives' correction (0 for node 0). */
int64_t ia_nodes_anchor_offset(const struct ia_nodes *ns, size_t i);
int64_t ia_nodes_shift(const struct ia_nodes *ns, size_t i);

/* explain --json's "nodes": [{node, file, merged_file (a merged file's
 * node only), host, boot_id, anchor_offset_ns, anchor_uncertainty_ns,
 * correction_ns, collectives_used, uncertainty_ns (null for node 0 and a
 * node no collective refined)}]. */
cJSON *ia_nodes_json(const struct ia_nodes *ns);

#endif
