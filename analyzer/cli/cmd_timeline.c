/*
 * cmd_timeline.c — `ingero-analyze timeline [--from T] [--to T]`: the
 * events of a window in time order (timeline.h), one line each, or --json.
 */
#include "load/trace_status.h"
#include "cli/cli.h"
#include "base/json_out.h"
#include "load/timeline.h"
#include "base/util.h"

#include <string.h>

static int print_event(const struct ia_tl_event *e, void *ctx)
{
	FILE *f = ctx;
	char d1[32], d2[32], b1[32];
	if (e->is_call) {
		fprintf(f, "+%.6fs %7d/%-7u %-15.15s CUDA %-24s %9s", (double)e->ts_rel / 1e9, e->pid, e->tid, e->comm,
			e->api_name, ia_fmt_dur(d1, sizeof d1, e->dur));
		if (e->copy)
			fprintf(f, " %s %s %s %.2f GB/s", ia_fmt_bytes(b1, sizeof b1, e->bytes), ia_tl_dir_name(e->dir),
				ia_tl_memory(e->flags), e->dur ? (double)e->bytes / (double)e->dur : 0);
		if (e->python)
			fprintf(f, "  [%s]", e->python);
	} else {
		fprintf(f, "+%.6fs %7d/%-7u %-15.15s OFF  %-24s %9s  waited for a CPU %s", (double)e->ts_rel / 1e9, e->pid,
			e->tid, e->comm, e->reason, ia_fmt_dur(d1, sizeof d1, e->dur), ia_fmt_dur(d2, sizeof d2, e->runq));
		if (e->next_pid)
			fprintf(f, "; CPU to pid %d", e->next_pid);
		if (e->syscall)
			fprintf(f, "; in %s", e->syscall);
		if (e->blocked_at)
			fprintf(f, " at %s", e->blocked_at);
	}
	fputc('\n', f);
	return 0;
}

struct both { FILE *f; long n; };

static int print_and_count(const struct ia_tl_event *e, void *ctx)
{
	struct both *b = ctx;
	b->n++;
	return print_event(e, b->f);
}

int ia_cmd_timeline(const struct ia_cli *c)
{
	struct ia_trace t;
	char err[512];
	if (ia_cli_load(c, &t, 0) < 0)
		return IA_EXIT_ERROR;
	int rc = IA_EXIT_OK;
	FILE *f = ia_cli_output(c, NULL);
	if (!f) {
		ia_cli_unload(&t);
		return IA_EXIT_ERROR;
	}
	if (c->json) {
		cJSON *root = ia_timeline_json(&t, c->limit, err, sizeof err);
		if (!root) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
		} else if (ia_json_print(root, f, c->pretty) < 0) {
			rc = IA_EXIT_ERROR;
		}
		cJSON_Delete(root);
	} else {
		struct both b = { f, 0 };
		int more;
		ia_trace_status_print(f, &t);
		if (ia_timeline_walk(&t, c->limit, print_and_count, &b, &more, err, sizeof err) < 0) {
			ia_err("%s", err);
			rc = IA_EXIT_ERROR;
		} else if (more) {
			fprintf(f, "... more events follow (--limit 0 shows all, --from/--to narrow the window)\n");
		} else if (!b.n) {
			fprintf(f, "(no events in this window)\n");
		}
	}
	if (ia_cli_close_output(c, f) < 0)
		rc = IA_EXIT_ERROR;
	ia_cli_unload(&t);
	return rc;
}
