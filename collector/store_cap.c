/*
 * store_cap.c — --max-size: the writer deletes the oldest tenth of each
 * event table until the live pages fit, and counts what it deleted
 * (losses 'size_cap_rows': a call block counts its calls).  Stacks and
 * frames are never deleted: events refer to them, stacks refer to frames
 * by ids the writer keeps (store_frames.c), and they are small.
 */
#include <stdio.h>

#include "ingero/schema.h"
#include "store_internal.h"

/* A read of our own file failed (a damaged page, an I/O error): said once,
 * like a failed write. */
static void read_failed(struct store *s, int rc)
{
	if (!s->failed)
		fprintf(stderr, "ingero-collector: sqlite read failed: %s\n", sqlite3_errstr(rc));
	s->failed = 1;
}

static uint64_t live_bytes(struct store *s)
{
	sqlite3_stmt *st;
	int64_t pages = 0, free_pages = 0, page_size = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT * FROM pragma_page_count, pragma_freelist_count, "
				      "pragma_page_size", -1, &st, NULL) == SQLITE_OK) {
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			pages = sqlite3_column_int64(st, 0);
			free_pages = sqlite3_column_int64(st, 1);
			page_size = sqlite3_column_int64(st, 2);
		} else {
			read_failed(s, rc);
		}
		sqlite3_finalize(st);
	}
	return (uint64_t)((pages - free_pages) * page_size);
}

void store_enforce_cap(struct store *s, int force)
{
	static const char *const tables[] = { "call_blocks", "off_cpu", "cpu_samples", "gpu_marks", "nvtx_ranges" };
	static const char *const events[] = { "sum(calls)", "count(*)", "count(*)", "count(*)", "count(*)" };
	uint64_t now = mono_ns(), dropped = 0;

	if (!s->o.max_bytes || s->broken || (!force && now - s->last_cap_check_ns < 200000000ull))
		return;
	s->last_cap_check_ns = now;
	for (int round = 0; round < 10 && live_bytes(s) > s->o.max_bytes; round++) {
		store_exec_sql(s->db, "BEGIN");
		for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
			char oldest[256], sql[512];
			sqlite3_stmt *st;

			snprintf(oldest, sizeof oldest, "SELECT rowid FROM %s ORDER BY rowid "
				 "LIMIT (SELECT count(*) / 10 + 1 FROM %s)", tables[t], tables[t]);
			snprintf(sql, sizeof sql, "SELECT coalesce(%s, 0) FROM %s WHERE rowid IN (%s)",
				 events[t], tables[t], oldest);
			if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
				continue;
			int rc = sqlite3_step(st);
			int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
			sqlite3_finalize(st);
			if (rc != SQLITE_ROW) {   /* rows it cannot count are not dropped: every loss is counted */
				read_failed(s, rc);
				continue;
			}
			snprintf(sql, sizeof sql, "DELETE FROM %s WHERE rowid IN (%s)", tables[t], oldest);
			if (store_exec_sql(s->db, sql) == 0)
				dropped += (uint64_t)n;
		}
		store_exec_sql(s->db, "COMMIT");
	}
	if (dropped) {
		store_loss_add(s, INGERO_LOSS_SIZE_CAP, 0, dropped);
		pthread_mutex_lock(&s->lock);
		store_exec_sql(s->db, "BEGIN");
		store_write_losses_locked(s);
		store_exec_sql(s->db, "COMMIT");
		pthread_mutex_unlock(&s->lock);
	}
}
