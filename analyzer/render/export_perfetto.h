/*
 * export_perfetto.h — the Perfetto (Chrome trace-event JSON) view of a
 * trace: every CUDA call and off-CPU interval of the selected threads, the
 * GPU track, the CPU and page-allocation counters, and the collectives
 * (measure/collective_list.h): a track in each process that made some, and
 * flows from the rank that arrived last to the ranks that waited for it.
 * Several nodes' traces of one job (export A.db B.db ...) go into one
 * file, each node's events written as one file's are, moved onto node 0's
 * clock.
 */
#ifndef IA_EXPORT_PERFETTO_H
#define IA_EXPORT_PERFETTO_H

#include "measure/collective_list.h"
#include "measure/ranks.h"
#include "rules/chains.h"

#include <ingero/schema.h>

#include <stdint.h>

#include <stdio.h>

/* Streams the whole document to f (errors surface at fclose/ferror).
 * coll: the trace's collectives (built with shift 0), NULL or empty for
 * none: then nothing of them is written, not even their metadata. */
void ia_perfetto_write(FILE *f, const struct ia_analysis *a, const struct ia_coll_list *coll);

/* Node n's process of pid P is pid n * this + P in the file (Linux pids are
 * below 2^22), so two nodes' equal pids stay two processes — the pid a
 * merged report.db gives it (schema.h); thread ids are kept (a thread is
 * its process's pid and tid). */
#define IA_PERFETTO_NODE_PIDS INGERO_NODE_PID_STRIDE

/* One node of a job, for ia_perfetto_write_nodes: its analysis, what puts
 * its times on node 0's clock, and what otherData states of it
 * (rules/nodes.h's figures: anchor offset, the collectives' refinement). */
struct ia_perfetto_node {
	const struct ia_analysis *a;
	const struct ia_ranks *rk;     /* its ranks, for the process names; NULL none */
	const char *label;             /* "node 1 (host)": the prefix of its processes' names */
	const char *path, *host, *boot;
	int64_t shift_ns;              /* added to each of its times: anchor_offset_ns + correction_ns */
	int64_t anchor_offset_ns, correction_ns;
	uint64_t anchor_unc_ns;        /* its anchor's, 0 unknown */
	size_t collectives_used;       /* 0: not refined, the uncertainty unknown (null) */
	uint64_t uncertainty_ns;       /* what remains after the refinement */
};

/* n[0] the reference; every node's processes named "node K (host) · rank R
 * · comm [role] (pid P)", sorted by node; otherData.nodes[] states each
 * node's file, host, boot id, offset applied and remaining uncertainty.
 * coll: the job's collectives, built from the nodes in this order with
 * their shift_ns (on node 0's clock), NULL or empty for none. */
void ia_perfetto_write_nodes(FILE *f, const struct ia_perfetto_node *n, size_t nn, const struct ia_coll_list *coll);

#endif
