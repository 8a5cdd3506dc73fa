/*
 * nodes.h — several report.db, one a node of the same job, loaded and put
 * on node 0's clock: what `explain A.db B.db ...` (cmd_explain_nodes.c)
 * and `export A.db B.db ...` (cmd_export.c) both read, so that the two
 * apply the same offsets.
 *
 * Each file is loaded whole, as one file is.  Its times are its node's
 * CLOCK_MONOTONIC: they go onto node 0's timeline by the clock anchors the
 * collectors stored (session clock_anchor_*: realtime − monotonic of each
 * node, each read to within its stated uncertainty), then the NCCL
 * collectives refine that (measure/collectives.h: ia_job_analyze_nodes
 * in rules/chain_straggler.h).  A window (--from, --to, --since) or -p is
 * per file and refused.
 *
 * A merged report.db (`ingero-analyze merge`, load/merged.h) counts as its
 * nodes: each is read back into a report.db of its own under $TMPDIR
 * (removed by ia_nodes_free) and loaded as a node's file is, so that the
 * merged file's explain and export are those of the files it was merged
 * from.  The same trace given twice (one host, boot and start) is refused.
 */
#ifndef IA_NODES_H
#define IA_NODES_H

#include "cli/cli.h"
#include "measure/ranks.h"
#include "rules/chain_straggler.h"

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

/* Whether c's files are read as several nodes: more than one, or one
 * merged file read whole (no -p or window: those read the merged file as
 * one trace, its pids and CPUs as the merge numbered them). */
int ia_nodes_wanted(const struct ia_cli *c);

/* c->db_path and c->more_db: loads each, aligns them and analyses the job
 * (with cause, the straggler's own cause too: explain's, not export's).
 * IA_EXIT_OK, or IA_EXIT_USAGE / IA_EXIT_ERROR with the error line printed;
 * free with ia_nodes_free either way. */
int ia_nodes_load(const struct ia_cli *c, struct ia_nodes *ns, int cause);
void ia_nodes_free(struct ia_nodes *ns);

/* What puts node i's times on node 0's clock: its anchor's offset from
 * node 0's, plus the collectives' correction (0 for node 0). */
int64_t ia_nodes_anchor_offset(const struct ia_nodes *ns, size_t i);
int64_t ia_nodes_shift(const struct ia_nodes *ns, size_t i);

#endif
