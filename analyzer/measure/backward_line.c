/*
 * backward_line.c — the user's line that ran the backward pass (see
 * backward_line.h).
 */
#include "measure/backward_line.h"

#include "load/db.h"
#include "load/phase_rules.h"
#include "measure/lines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ia_is_autograd_thread(const char *comm)
{
	return comm && !strncmp(comm, "pt_autograd_", 12);
}

int ia_backward_line(const struct ia_trace *t, uint32_t tid, struct ia_stack_names *names, char *out, size_t n,
		     char *err, size_t errlen)
{
	out[0] = 0;
	int blocks = ia_db_has_table(t->db, "off_cpu_stacks");
	if (blocks < 0) {
		ia_db_step_error(t->db, sqlite3_errcode(t->db), err, errlen);
		return -1;
	}
	/* a stack is counted once per sample or sampled block: which line
	 * called backward, not for how long */
	sqlite3_stmt *st = ia_db_prepare(t->db, blocks ?
		"SELECT stack_id, COUNT(*) FROM (SELECT stack_id FROM cpu_samples WHERE tid = ?1 "
		"UNION ALL SELECT stack_id FROM off_cpu_stacks WHERE tid = ?1) GROUP BY stack_id" :
		"SELECT stack_id, COUNT(*) FROM cpu_samples WHERE tid = ?1 GROUP BY stack_id", err, errlen);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, tid);
	struct ia_gap_line *lines = NULL;
	size_t nlines = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t sid = (uint64_t)sqlite3_column_int64(st, 0);
		if (!sid || !(ia_stack_phase_hints(names, sid) & IA_HINT_BACKWARD))
			continue;
		const char *line = ia_stack_user_python(names, sid);
		struct ia_gap_line *l = line ? ia_line_slot(&lines, &nlines, &cap, line) : NULL;
		if (line && !l) {
			rc = SQLITE_NOMEM;
			break;
		}
		if (l)
			l->count += (uint64_t)sqlite3_column_int64(st, 1);
	}
	int ok = rc == SQLITE_DONE;
	if (!ok && rc == SQLITE_NOMEM)
		snprintf(err, errlen, "out of memory");
	else if (!ok)
		ia_db_step_error(t->db, rc, err, errlen);
	sqlite3_finalize(st);
	const struct ia_gap_line *best = NULL;
	for (size_t i = 0; ok && i < nlines; i++)
		if (!best || lines[i].count > best->count ||
		    (lines[i].count == best->count && strcmp(lines[i].line, best->line) < 0))
			best = &lines[i];
	if (best)
		snprintf(out, n, "%s", best->line);
	free(lines);
	return ok ? 0 : -1;
}
