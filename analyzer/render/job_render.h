/*
 * job_render.h — a job of several ranks in explain's views: the ranks and
 * their waits at the collectives, the straggler's finding first, then the
 * straggler's own analysis (chain_straggler.h); a balanced job says so.
 */
#ifndef IA_JOB_RENDER_H
#define IA_JOB_RENDER_H

#include "rules/chain_straggler.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* The "Job:" section and, with a straggler, its finding. */
void ia_job_print(FILE *f, const struct ia_trace *t, const struct ia_job *j);
/* The analysis explain shows: the straggler's own when there is one, else a's. */
const struct ia_analysis *ia_job_shown(const struct ia_analysis *a);
/* explain --json: the shown analysis's document, with the straggler's
 * finding first in "chains" (counted in severity_counts) and "ranks". */
cJSON *ia_job_explain_json(const struct ia_analysis *a);

#endif
