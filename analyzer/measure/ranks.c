/*
 * ranks.c — ranks, their processes and the agent, from the launcher
 * variables the collector stored (ranks.h).
 *
 * process_env is small (a few rows per process of a job), read whole.  A
 * process inherits its parent's values when it has none of its own;
 * inheritance follows trace.procs' parent links, guarded against cycles
 * (a damaged file) by a depth limit.
 */
#include "measure/ranks.h"

#include "base/json_out.h"
#include "load/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ia_rank_role_name(enum ia_rank_role r)
{
	switch (r) {
	case IA_RANK_AGENT: return "agent";
	case IA_RANK_PROCESS: return "rank";
	case IA_RANK_CHILD: return "rank child";
	case IA_RANK_WRAPPER: return "rank launcher";
	default: return "none";
	}
}

/* What one process's own rows say (-1 / "" where they say nothing). */
struct own {
	int has;
	int rank, local_rank, world_size, local_world_size, group_rank;
	char run_id[128], addr[128], port[24];
};

static int to_int(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v >= 0 && v < 1 << 24 ? (int)v : -1;
}

static void own_set(struct own *o, const char *key, const char *val)
{
	int v = to_int(val);
	o->has = 1;
	/* torchrun's names first; the MPI and Slurm ones stand in only when it set none */
	if (!strcmp(key, "RANK"))
		o->rank = v;
	else if ((!strcmp(key, "OMPI_COMM_WORLD_RANK") || !strcmp(key, "PMI_RANK") || !strcmp(key, "PMIX_RANK") ||
		  !strcmp(key, "SLURM_PROCID")) && o->rank < 0)
		o->rank = v;
	else if (!strcmp(key, "LOCAL_RANK"))
		o->local_rank = v;
	else if ((!strcmp(key, "OMPI_COMM_WORLD_LOCAL_RANK") || !strcmp(key, "SLURM_LOCALID")) && o->local_rank < 0)
		o->local_rank = v;
	else if (!strcmp(key, "WORLD_SIZE"))
		o->world_size = v;
	else if ((!strcmp(key, "OMPI_COMM_WORLD_SIZE") || !strcmp(key, "PMI_SIZE") || !strcmp(key, "SLURM_NTASKS")) &&
		 o->world_size < 0)
		o->world_size = v;
	else if (!strcmp(key, "LOCAL_WORLD_SIZE") || (!strcmp(key, "OMPI_COMM_WORLD_LOCAL_SIZE") && o->local_world_size < 0))
		o->local_world_size = v;
	else if (!strcmp(key, "GROUP_RANK") || (!strcmp(key, "NODE_RANK") && o->group_rank < 0))
		o->group_rank = v;
	else if (!strcmp(key, "TORCHELASTIC_RUN_ID"))
		snprintf(o->run_id, sizeof o->run_id, "%s", val);
	else if (!strcmp(key, "MASTER_ADDR"))
		snprintf(o->addr, sizeof o->addr, "%s", val);
	else if (!strcmp(key, "MASTER_PORT"))
		snprintf(o->port, sizeof o->port, "%s", val);
}

static int load_own(const struct ia_trace *t, struct own *own, char *err, size_t errlen)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		memset(&own[i], 0, sizeof own[i]);
		own[i].rank = own[i].local_rank = own[i].world_size = own[i].local_world_size = own[i].group_rank = -1;
	}
	int has = ia_db_has_table(t->db, "process_env");
	if (has <= 0) {
		if (has < 0)
			snprintf(err, errlen, "%s is corrupted: %s", ia_db_path(), sqlite3_errmsg(t->db));
		return has;
	}
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT pid, key, value FROM process_env", err, errlen);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = ia_proc_index(t, sqlite3_column_int(st, 0));
		const char *k = (const char *)sqlite3_column_text(st, 1), *v = (const char *)sqlite3_column_text(st, 2);
		if (p >= 0 && k && v)
			own_set(&own[p], k, v);
	}
	rc = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

/* The process whose values p has: itself, else its nearest ancestor with some. */
static int env_source(const struct ia_trace *t, const struct own *own, int p)
{
	for (int depth = 0; p >= 0 && depth < 4096; depth++, p = t->procs[p].parent)
		if (own[p].has)
			return p;
	return -1;
}

static int is_ancestor(const struct ia_trace *t, int a, int p)
{
	for (int depth = 0; p >= 0 && depth < 4096; depth++) {
		p = t->procs[p].parent;
		if (p == a)
			return 1;
	}
	return 0;
}

/* --- a job without launcher variables ------------------------------------------------ */

/* torch.multiprocessing.spawn (mp.spawn(train, nprocs=N)) starts a job's
 * ranks as children of the user's script and hands each its rank as an
 * argument: no RANK, WORLD_SIZE or LOCAL_RANK reaches their environment.
 * Such ranks are told by what they do: sibling processes that each drive
 * the GPU and each take part in collectives — NCCL calls (their
 * communicator's rank is the rank: the largest communicator's) or
 * PyTorch's gloo threads (pt_gloo_*), numbered then in the order they
 * started, which is mp.spawn's order of ranks.  At least two, all of one
 * parent, or the parent too where it is one of them (Lightning's DDP
 * starts ranks 1..N-1 from rank 0's script); their values are filled in as
 * a launcher's would be. */
static int nccl_ranks(const struct ia_trace *t, int *nccl, int *nranks, char *err, size_t errlen)
{
	int has = ia_db_has_table(t->db, "collectives");
	if (has <= 0) {
		if (has < 0)
			snprintf(err, errlen, "%s is corrupted: %s", ia_db_path(), sqlite3_errmsg(t->db));
		return has;
	}
	sqlite3_stmt *st = ia_db_prepare(t->db, "SELECT pid, rank, nranks FROM collectives WHERE rank >= 0 AND nranks > 1 "
					 "GROUP BY pid, comm_id, rank, nranks", err, errlen);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = ia_proc_index(t, sqlite3_column_int(st, 0)), n = sqlite3_column_int(st, 2);
		if (p >= 0 && n > nranks[p]) {
			nccl[p] = sqlite3_column_int(st, 1);
			nranks[p] = n;
		}
	}
	rc = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	return rc;
}

static int by_start(const void *a, const void *b, void *trace)
{
	const struct ia_trace *t = trace;
	const struct ia_proc *x = &t->procs[*(const int *)a], *y = &t->procs[*(const int *)b];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Fills own[] for the ranks it finds; their count (0: none), or -1. */
static int infer_ranks(const struct ia_trace *t, struct own *own, const char **how, char *err, size_t errlen)
{
	size_t n = t->nprocs;
	int *nccl = malloc((n + 1) * sizeof *nccl), *nr = calloc(n + 1, sizeof *nr), *gloo = calloc(n + 1, sizeof *gloo);
	int *cand = malloc((n + 1) * sizeof *cand), found = 0;
	if (!nccl || !nr || !gloo || !cand) {
		snprintf(err, errlen, "out of memory");
		found = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		nccl[i] = -1;
	if (nccl_ranks(t, nccl, nr, err, errlen) < 0) {
		found = -1;
		goto out;
	}
	for (size_t k = 0; k < t->nthreads; k++)
		if (!strncmp(t->threads[k].comm, "pt_gloo", 7))
			gloo[t->threads[k].proc] = 1;
	/* the parent with the most such children — itself one of them where
	 * it is such a process too (Lightning's DDP: the script is rank 0 and
	 * starts the others as its children) */
#define RANKLIKE(i) (t->procs[i].ncalls && (nccl[i] >= 0 || gloo[i]))
	int best_parent = -2, best = 0;
	for (size_t i = 0; i < n; i++) {
		if (!RANKLIKE(i))
			continue;
		int par = t->procs[i].parent, m = par >= 0 && RANKLIKE(par);
		for (size_t j = 0; j < n; j++)
			m += t->procs[j].parent == par && RANKLIKE(j);
		if (m > best) {
			best = m;
			best_parent = par;
		}
	}
	if (best < 2)
		goto out;
	size_t nc = 0;
	int all_nccl = 1;
	for (size_t i = 0; i < n; i++)
		if ((t->procs[i].parent == best_parent || (int)i == best_parent) && RANKLIKE(i)) {
			cand[nc++] = (int)i;
			all_nccl &= nccl[i] >= 0;
		}
#undef RANKLIKE
	/* NCCL's ranks where every process has one, each once; else the start order */
	for (size_t a = 0; all_nccl && a < nc; a++)
		for (size_t b = a + 1; b < nc; b++)
			if (nccl[cand[a]] == nccl[cand[b]])
				all_nccl = 0;
	if (!all_nccl) {
		qsort_r(cand, nc, sizeof *cand, by_start, (void *)t);
	}
	for (size_t k = 0; k < nc; k++) {
		struct own *o = &own[cand[k]];
		o->has = 1;
		o->rank = all_nccl ? nccl[cand[k]] : (int)k;
		o->local_rank = o->rank;
		o->world_size = o->local_world_size = all_nccl ? nr[cand[k]] : (int)nc;
	}
	*how = all_nccl ? "their NCCL communicator's ranks" : "the order they started in";
	found = (int)nc;
out:
	free(nccl);
	free(nr);
	free(gloo);
	free(cand);
	return found;
}

static int by_rank(const void *a, const void *b)
{
	const struct ia_rank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int ia_ranks_compute(const struct ia_trace *t, struct ia_ranks *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->agent = -1;
	r->world_size = -1;
	size_t n = t->nprocs;
	struct own *own = calloc(n + 1, sizeof *own);
	r->p = calloc(n + 1, sizeof *r->p);
	r->r = calloc(n + 1, sizeof *r->r);
	if (!own || !r->p || !r->r) {
		free(own);
		ia_ranks_free(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = load_own(t, own, err, errlen);
	int any = 0;
	for (size_t i = 0; rc >= 0 && i < n; i++)
		any |= own[i].rank >= 0;
	if (rc >= 0 && !any)
		rc = infer_ranks(t, own, &r->inferred, err, errlen);
	if (rc < 0) {
		free(own);
		ia_ranks_free(r);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int s = env_source(t, own, (int)i);
		struct ia_rank_proc *q = &r->p[i];
		q->rank = q->local_rank = q->world_size = q->local_world_size = q->group_rank = -1;
		if (s < 0)
			continue;
		q->own_env = s == (int)i;
		q->rank = own[s].rank;
		q->local_rank = own[s].local_rank;
		q->world_size = own[s].world_size;
		q->local_world_size = own[s].local_world_size;
		q->group_rank = own[s].group_rank;
	}
	/* each rank's process: the most CUDA calls among those carrying the value, else the topmost */
	for (size_t i = 0; i < n; i++) {
		int rk = r->p[i].rank;
		if (rk < 0)
			continue;
		size_t k;
		for (k = 0; k < r->nranks && r->r[k].rank != rk; k++)
			;
		if (k == r->nranks) {
			r->r[r->nranks++] = (struct ia_rank){ .rank = rk, .proc = (uint32_t)i };
			continue;
		}
		uint32_t cur = r->r[k].proc;
		if (t->procs[i].ncalls > t->procs[cur].ncalls ||
		    (t->procs[i].ncalls == t->procs[cur].ncalls && is_ancestor(t, (int)i, (int)cur)))
			r->r[k].proc = (uint32_t)i;
	}
	for (size_t k = 0; k < r->nranks; k++) {
		struct ia_rank *x = &r->r[k];
		x->local_rank = r->p[x->proc].local_rank;
		x->group_rank = r->p[x->proc].group_rank;
		int ws = r->p[x->proc].world_size;
		r->world_size = k == 0 ? ws : (r->world_size == ws ? ws : -1);
	}
	for (size_t i = 0; i < n; i++) {
		struct ia_rank_proc *q = &r->p[i];
		if (q->rank < 0)
			continue;
		const struct ia_rank *x = NULL;
		for (size_t k = 0; k < r->nranks; k++)
			if (r->r[k].rank == q->rank)
				x = &r->r[k];
		if (x->proc == i)
			q->role = IA_RANK_PROCESS;
		else if (is_ancestor(t, (int)x->proc, (int)i)) {
			q->role = IA_RANK_CHILD;
			((struct ia_rank *)x)->nchildren++;
		} else if (is_ancestor(t, (int)i, (int)x->proc))
			q->role = IA_RANK_WRAPPER;
	}
	/* the agent: the nearest ancestor of the ranks' topmost processes that is no rank's (torchrun) */
	for (size_t k = 0; k < r->nranks && r->agent < 0; k++) {
		int p = (int)r->r[k].proc;
		for (int depth = 0; p >= 0 && depth < 4096 && r->p[p].rank >= 0; depth++)
			p = t->procs[p].parent;
		if (p >= 0)
			r->agent = p;
	}
	if (r->agent >= 0)
		r->p[r->agent].role = IA_RANK_AGENT;
	if (r->nranks) {
		int src = env_source(t, own, (int)r->r[0].proc);
		if (src >= 0) {
			snprintf(r->run_id, sizeof r->run_id, "%s", own[src].run_id);
			if (own[src].addr[0])
				snprintf(r->master, sizeof r->master, "%s%s%s", own[src].addr, own[src].port[0] ? ":" : "",
					 own[src].port);
		}
		qsort(r->r, r->nranks, sizeof *r->r, by_rank);
	}
	free(own);
	return 0;
}

void ia_ranks_free(struct ia_ranks *r)
{
	free(r->p);
	free(r->r);
	memset(r, 0, sizeof *r);
	r->agent = -1;
}

const struct ia_rank *ia_rank_of_proc(const struct ia_ranks *r, uint32_t p)
{
	for (size_t k = 0; k < r->nranks; k++)
		if (r->r[k].proc == p)
			return &r->r[k];
	return NULL;
}

void ia_ranks_json_proc(const struct ia_ranks *r, uint32_t p, cJSON *o)
{
	if (!r || !r->nranks || !r->p)
		return;
	const struct ia_rank_proc *q = &r->p[p];
	if (q->role == IA_RANK_NONE)
		return;
	cJSON_AddStringToObject(o, "rank_role", ia_rank_role_name(q->role));
	if (q->rank >= 0)
		cJSON_AddNumberToObject(o, "rank", q->rank);
	if (q->local_rank >= 0 && q->role != IA_RANK_AGENT)
		cJSON_AddNumberToObject(o, "local_rank", q->local_rank);
}

cJSON *ia_ranks_json(const struct ia_trace *t, const struct ia_ranks *r)
{
	if (!r->nranks)
		return NULL;
	cJSON *o = cJSON_CreateObject();
	if (r->world_size >= 0)
		cJSON_AddNumberToObject(o, "world_size", r->world_size);
	else
		cJSON_AddNullToObject(o, "world_size");
	ia_json_str(o, "run_id", r->run_id[0] ? r->run_id : NULL);
	ia_json_str(o, "master", r->master[0] ? r->master : NULL);
	ia_json_str(o, "inferred_from", r->inferred);
	if (r->agent >= 0)
		cJSON_AddNumberToObject(o, "agent_pid", t->procs[r->agent].pid);
	else
		cJSON_AddNullToObject(o, "agent_pid");
	cJSON *arr = cJSON_AddArrayToObject(o, "ranks");
	for (size_t k = 0; k < r->nranks; k++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddNumberToObject(x, "rank", r->r[k].rank);
		cJSON_AddNumberToObject(x, "pid", t->procs[r->r[k].proc].pid);
		if (r->r[k].local_rank >= 0)
			cJSON_AddNumberToObject(x, "local_rank", r->r[k].local_rank);
		if (r->r[k].group_rank >= 0)
			cJSON_AddNumberToObject(x, "group_rank", r->r[k].group_rank);
		cJSON_AddNumberToObject(x, "children", r->r[k].nchildren);
		cJSON_AddItemToArray(arr, x);
	}
	return o;
}

int ia_local_ranks(const struct ia_trace *t, int pid)
{
	char err[200];
	int p = ia_proc_index(t, pid), n = 1;
	struct own *own = p >= 0 ? calloc(t->nprocs, sizeof *own) : NULL;
	if (own && load_own(t, own, err, sizeof err) == 0) {
		int s = env_source(t, own, p);   /* its values, or its launcher's, as its rank is found */
		if (s >= 0 && own[s].local_world_size > 1)
			n = own[s].local_world_size;
	}
	free(own);
	return n;
}
