/*
 * ranks.h — the processes of a distributed job as roles: which process is
 * rank N (its launcher's RANK, LOCAL_RANK, WORLD_SIZE, ... from the
 * process_env table, schema version 7), which processes belong to a rank
 * (its DataLoader workers and other children), and the launcher's agent
 * (torchrun's elastic agent: the parent of ranks that is no rank itself).
 *
 * A job started without them (torch.multiprocessing.spawn hands each rank
 * its number as an argument) has its ranks told by what they do: sibling
 * processes that each drive the GPU and take part in collectives (NCCL
 * calls, PyTorch's gloo threads), numbered by their NCCL communicator or
 * else by the order they started (mp.spawn's); `inferred` says so.
 *
 * A process without variables of its own (a fork child: the collector reads
 * the environment at exec, proc_env.c) has its parent's.  Of the processes
 * that carry one RANK value, the rank's process is the one with the most
 * CUDA calls (the topmost when none made any): a shell wrapper above it is
 * the rank's launcher, what lies below it the rank's children.  A trace
 * with no such variables (before version 7, or a program not launched as a
 * job) has no ranks: every figure here is then absent, nothing printed.
 */
#ifndef IA_RANKS_H
#define IA_RANKS_H

#include "load/trace.h"

#include <cjson/cJSON.h>

enum ia_rank_role {
	IA_RANK_NONE = 0,     /* not part of a rank, nor the agent */
	IA_RANK_AGENT,        /* the launcher above the ranks (torchrun's agent) */
	IA_RANK_PROCESS,      /* rank N itself */
	IA_RANK_CHILD,        /* a descendant of rank N (DataLoader worker, compile worker, ...) */
	IA_RANK_WRAPPER,      /* carries rank N's variables above its process (a shell that started it) */
};
const char *ia_rank_role_name(enum ia_rank_role r);

struct ia_rank_proc {
	enum ia_rank_role role;
	int rank;                  /* RANK (or OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID), -1 none */
	int local_rank, world_size, local_world_size, group_rank;   /* -1 unknown */
	int own_env;               /* its variables were read from it, not inherited */
};

struct ia_rank {
	int rank;
	uint32_t proc;             /* index into trace.procs of the rank's process */
	int local_rank, group_rank;
	uint32_t nchildren;        /* traced descendants */
};

struct ia_ranks {
	struct ia_rank_proc *p;    /* [trace.nprocs] */
	struct ia_rank *r;         /* by rank number */
	size_t nranks;
	int world_size;            /* WORLD_SIZE the ranks carry, -1 unknown or disagreeing */
	int agent;                 /* proc index of the agent, -1 none */
	char run_id[128];          /* TORCHELASTIC_RUN_ID, "" none */
	char master[160];          /* MASTER_ADDR:MASTER_PORT, "" none */
	const char *inferred;      /* no launcher variables: how the ranks were told ("the order they
	                              started in", ...), NULL when the variables said */
};

/* 0 (r->nranks 0 when the trace has no ranks), or -1 with a reason. */
int ia_ranks_compute(const struct ia_trace *t, struct ia_ranks *r, char *err, size_t errlen);
void ia_ranks_free(struct ia_ranks *r);
/* How many ranks share pid's machine (its LOCAL_WORLD_SIZE, or Open MPI's
 * local size), 1 where it does not say or cannot be read: the CPUs a rank's
 * DataLoader workers may take are that share of them. */
int ia_local_ranks(const struct ia_trace *t, int pid);
/* The rank whose process is proc index p, or NULL. */
const struct ia_rank *ia_rank_of_proc(const struct ia_ranks *r, uint32_t p);

/* Adds "rank", "rank_role" (and "local_rank") to a process's JSON object
 * when the trace has ranks; nothing otherwise. */
void ia_ranks_json_proc(const struct ia_ranks *r, uint32_t p, cJSON *o);
/* {"world_size", "run_id", "master", "agent_pid", "ranks":[{rank, pid, local_rank, children}]}, NULL without ranks. */
cJSON *ia_ranks_json(const struct ia_trace *t, const struct ia_ranks *r);

#endif
