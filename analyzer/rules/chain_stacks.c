/*
 * chain_stacks.c — what the rules say about the on-CPU samples in the gaps:
 * the most sampled stacks per role, the share that ran Python code, the
 * collation frames of batch assembly, and their JSON (see chain_build.h).
 */
#include "rules/chain_build.h"

#include "base/json_out.h"
#include "base/util.h"

#include <ingero/api.h>
#include <ingero/event.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ia_is_collation(const char *sym)
{
	/* torch.stack lands in at::native::structured_cat_out_cpu in PyTorch 2.x */
	return sym && (strstr(sym, "at::native::stack") || strstr(sym, "at::native::cat") ||
		       strstr(sym, "cat_out") || strstr(sym, "collate") || strstr(sym, "gather_rows"));
}

/* "at::native::stack 55% (collate.py:141), _PyEval_EvalFrameDefault 30%" for a role. */
/* Indexes of up to max stacks most sampled by a role, most first (stacks
 * are sorted by all roles' samples together); returns how many. */
int ia_role_top(const struct ia_gaps *g, enum ia_gap_role role, size_t *pick, int max)
{
	int n = 0;
	for (; n < max; n++) {
		size_t best = g->nstacks;
		for (size_t i = 0; i < g->nstacks; i++) {
			uint64_t c = ia_gap_stack_n(&g->stacks[i], role);
			int taken = 0;
			for (int k = 0; k < n; k++)
				taken |= pick[k] == i;
			if (c && !taken && (best == g->nstacks || c > ia_gap_stack_n(&g->stacks[best], role)))
				best = i;
		}
		if (best == g->nstacks)
			break;
		pick[n] = best;
	}
	return n;
}

const char *ia_role_user_line(const struct ia_gaps *g, enum ia_gap_role role, double *share)
{
	uint64_t total = ia_gap_samples(g, role), most = 0;
	const char *line = NULL;
	*share = 0;
	for (size_t i = 0; total && i < g->nstacks; i++) {
		const char *u = g->stacks[i].user_python;
		if (!u[0] || !ia_gap_stack_n(&g->stacks[i], role))
			continue;
		size_t k = 0;   /* (a line's sum once, at its first stack) */
		while (k < i && strcmp(g->stacks[k].user_python, u))
			k++;
		if (k < i)
			continue;
		uint64_t n = 0;
		for (size_t j = i; j < g->nstacks; j++)
			if (!strcmp(g->stacks[j].user_python, u))
				n += ia_gap_stack_n(&g->stacks[j], role);
		if (n > most) {
			most = n;
			line = u;
		}
	}
	if (line)
		*share = (double)most / (double)total;
	return line;
}

void ia_top_stacks(const struct ia_gaps *g, enum ia_gap_role role, char *buf, size_t len)
{
	uint64_t total = ia_gap_samples(g, role);
	size_t pick[3];
	buf[0] = 0;
	if (!total)
		return;
	int n = ia_role_top(g, role, pick, 3);
	for (int k = 0; k < n; k++) {
		const struct ia_gap_stack *st = &g->stacks[pick[k]];
		ia_addf(buf, len, "%s%s %.0f%%", k ? ", " : "", st->label, ia_pct(ia_gap_stack_n(st, role), total));
		if (st->python[0])
			ia_addf(buf, len, " (%s)", st->python);
	}
}

/* "build_batch at data.py:24", with ", called from train.py:50" when the
 * user's own line is another one. */
const char *ia_python_where(const struct ia_gap_stack *s, char *buf, size_t len)
{
	int called = s->user_python[0] && strcmp(s->user_python, s->python);
	snprintf(buf, len, "%s at %s%s%s", s->label, s->python, called ? ", called from " : "",
		 called ? s->user_python : "");
	return buf;
}

/* The most sampled stack of a role that ran Python code, or NULL. */
const struct ia_gap_stack *ia_stacks_python_top(const struct ia_gaps *g, enum ia_gap_role role)
{
	const struct ia_gap_stack *top = NULL;
	for (size_t i = 0; i < g->nstacks; i++) {
		uint64_t n = ia_gap_stack_n(&g->stacks[i], role);
		if (g->stacks[i].python_code && g->stacks[i].python[0] && n && (!top || n > ia_gap_stack_n(top, role)))
			top = &g->stacks[i];
	}
	return top;
}

#define COLLATION_MIN_SAMPLES 5

int ia_stacks_show_collation(const struct ia_gaps *g, enum ia_gap_role role)
{
	uint64_t total = ia_gap_samples(g, role), coll = 0;
	for (size_t i = 0; i < g->nstacks; i++)
		if (ia_is_collation(g->stacks[i].label) || ia_is_collation(g->stacks[i].python))
			coll += ia_gap_stack_n(&g->stacks[i], role);
	/* at least a fifth of the samples, and enough of them to say so: two
	 * of nine in a loop's short gaps are a DataLoader's collation that is
	 * there, not what the gaps are made of (c74 on one epoch) */
	return coll >= COLLATION_MIN_SAMPLES && coll * 5 >= total;
}

void ia_stacks_json(cJSON *ev, const struct ia_gaps *g, enum ia_gap_role role, const char *key)
{
	uint64_t total = ia_gap_samples(g, role);
	cJSON *arr = cJSON_AddArrayToObject(ev, key);
	size_t pick[5];
	int n = ia_role_top(g, role, pick, 5);
	for (int k = 0; k < n; k++) {
		const struct ia_gap_stack *st = &g->stacks[pick[k]];
		uint64_t c = ia_gap_stack_n(st, role);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "symbol", st->label);
		cJSON_AddBoolToObject(o, "python_code", st->python_code);   /* symbol is a Python function */
		ia_json_str(o, "python", st->python[0] ? st->python : NULL);
		ia_json_str(o, "user_line", st->user_python[0] ? st->user_python : NULL);
		ia_json_u64(o, "samples", c);
		ia_json_round(o, "share", total ? (double)c / (double)total : 0, 4);
		cJSON_AddItemToArray(arr, o);
	}
}

void ia_batch_level_fix(struct ia_chain *c)
{
	ia_chain_fix(c, "Do the per-item work per batch: a dataset with __getitems__(indices) (or a BatchSampler as the "
	       "sampler, batch_size=None) builds a whole batch with tensor operations instead of a Python loop per "
	       "item and the default collation; for data already in memory, index a pre-shuffled permutation "
	       "(perm = torch.randperm(N); batch = data[perm[i:i+B]])");
}
