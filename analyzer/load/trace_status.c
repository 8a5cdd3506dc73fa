/*
 * trace_status.c — what a view says first about a trace that is not whole.
 *
 * The collector writes session.end_mono_ns when it closes the trace
 * (collector/session.c), and session.store_error with the end of the
 * evidence when a write fails and recording stops (collector/store_fail.c).
 * A trace without either was cut: its collector was killed (SIGKILL, a
 * crash, the machine), or still runs — then it holds the file's lock
 * (collector/output.c, db.c asks).  The time given is the end written, or
 * else the last evidence: what the program did after it is not in the
 * trace, and no view must pass that silence for a quiet program.  A file
 * read together with a WAL that no collector writes any more had its last
 * checkpoint cut short (killed, or a full disk): SQLite reads the two as
 * one, and the view says so (copy both, or the copy is another trace).
 */
#include "load/trace_status.h"
#include "load/trace.h"

#include "load/db.h"
#include "base/json_out.h"
#include "base/util.h"

#include <string.h>

static const char *reason(const struct ia_trace_status *s)
{
	switch (s->end) {
	case IA_END_NONE: return "killed?";
	case IA_END_STILL_WRITING: return "still_writing";
	case IA_END_WRITE_FAILED: return "write_failed";
	default: return "no_evidence";
	}
}

int ia_trace_incomplete(const struct ia_trace *t, char *buf, size_t size)
{
	const struct ia_trace_status *s = &t->status;
	char at[32];
	ia_fmt_dur(at, sizeof at, s->stopped_at - t->t0);
	switch (s->end) {
	case IA_END_NONE:
		snprintf(buf, size, "incomplete: the collector stopped at %s (killed?): the trace has no end, "
			 "and what the program did after is not in it%s", at,
			 s->no_evidence ? "; no evidence was recorded" : "");
		return 1;
	case IA_END_STILL_WRITING:
		snprintf(buf, size, "incomplete: a collector is still writing it (evidence up to %s)", at);
		return 1;
	case IA_END_WRITE_FAILED:
		snprintf(buf, size, "incomplete: recording stopped at %s: a write failed (%s); what came after "
			 "is counted in losses, not stored", at, s->why);
		return 1;
	default:
		if (!s->no_evidence)
			return 0;
		snprintf(buf, size, "incomplete: no evidence was recorded (the collector stopped at %s)", at);
		return 1;
	}
}

void ia_trace_status_print(FILE *f, const struct ia_trace *t)
{
	char line[512];
	if (ia_trace_incomplete(t, line, sizeof line))
		fprintf(f, "I%s.\n", line + 1);
	if (t->status.wal)
		fprintf(f, "Read with %s-wal: the collector's last checkpoint did not finish (keep the two "
			"together).\n", ia_db_path());
}

void ia_trace_status_json(cJSON *obj, const struct ia_trace *t)
{
	char line[512];
	if (ia_trace_incomplete(t, line, sizeof line)) {
		cJSON *o = cJSON_AddObjectToObject(obj, "incomplete");
		cJSON_AddStringToObject(o, "reason", reason(&t->status));
		ia_json_u64(o, "stopped_at_rel_ns", t->status.stopped_at - t->t0);
		cJSON_AddStringToObject(o, "text", line);
	}
	if (t->status.wal)
		cJSON_AddBoolToObject(obj, "read_with_wal", 1);
}
