/*
 * calls_edit.c — changes CUDA calls in a version-2 report.db, for tests that
 * need a variant of a generated trace (a slower API, a longer last call,
 * calls stored backwards).  cuda_calls is a read-only view of call_blocks,
 * so SQL cannot do it: every block is decoded, changed and encoded again
 * (include/ingero/call_block.h), in one transaction.
 *
 *   calls_edit DB [--api NAME | --last] (--dur NS | --dur-mul K)
 *   calls_edit DB --reverse
 *   calls_edit DB --shift NS
 *
 * --api NAME   only the calls of that API (apis.name)
 * --last       only the calls starting last (the greatest start_ns)
 * --dur NS     set their dur_ns;  --dur-mul K  multiply it by K
 * --reverse    store the calls of each block in the opposite order
 * --shift NS   move every call by NS (signed), the blocks' first_ns and
 *              last_ns with them: a trace as a clock NS ahead took it
 * Prints how many calls it changed.
 */
#include <ingero/call_block.h>

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
static struct ingero_cuda_call calls[INGERO_BLOCK_MAX_CALLS];

static void die(const char *what)
{
	fprintf(stderr, "calls_edit: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static sqlite3_stmt *prep(const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	return st;
}

/* Decodes the block the statement's row holds (id, pid, data) into calls[]. */
static size_t decode(sqlite3_stmt *st)
{
	char err[160];
	size_t n;
	if (ingero_block_decode(sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2),
				(uint32_t)sqlite3_column_int64(st, 1), calls, &n, err, sizeof err)) {
		fprintf(stderr, "calls_edit: call_blocks row %lld: %s\n", (long long)sqlite3_column_int64(st, 0), err);
		exit(1);
	}
	return n;
}

static int usage(void)
{
	fprintf(stderr, "usage: calls_edit DB [--api NAME | --last] (--dur NS | --dur-mul K) | DB --reverse | DB --shift NS\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *api_name = NULL;
	int last = 0, reverse = 0, have_dur = 0, have_shift = 0;
	int64_t shift = 0;
	uint64_t dur = 0, mul = 0;

	if (argc < 3)
		return usage();
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--last"))
			last = 1;
		else if (!strcmp(argv[i], "--reverse"))
			reverse = 1;
		else if (!strcmp(argv[i], "--api") && i + 1 < argc)
			api_name = argv[++i];
		else if (!strcmp(argv[i], "--dur") && i + 1 < argc)
			dur = strtoull(argv[++i], NULL, 0), have_dur = 1;
		else if (!strcmp(argv[i], "--shift") && i + 1 < argc)
			shift = strtoll(argv[++i], NULL, 0), have_shift = 1;
		else if (!strcmp(argv[i], "--dur-mul") && i + 1 < argc)
			mul = strtoull(argv[++i], NULL, 0);
		else
			return usage();
	}
	if (have_shift ? (reverse || api_name || last || have_dur || mul)
		       : reverse ? (api_name || last || have_dur || mul) : (have_dur == !!mul || (api_name && last)))
		return usage();
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die(argv[1]);

	int api = -1;
	if (api_name) {
		sqlite3_stmt *st = prep("SELECT id FROM apis WHERE name = ?1");
		sqlite3_bind_text(st, 1, api_name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW) {
			fprintf(stderr, "calls_edit: no API named %s\n", api_name);
			return 1;
		}
		api = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	uint64_t latest = 0;
	if (last) {
		sqlite3_stmt *st = prep("SELECT max(last_ns) FROM call_blocks");
		if (sqlite3_step(st) != SQLITE_ROW)
			die("max(last_ns)");
		latest = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}

	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		die("BEGIN");
	/* one block at a time, each read by a fresh statement: no row is
	 * updated under a running SELECT */
	sqlite3_stmt *rd = prep("SELECT id, pid, data FROM call_blocks WHERE id > ?1 ORDER BY id LIMIT 1");
	sqlite3_stmt *wr = prep("UPDATE call_blocks SET data = ?1, first_ns = first_ns + ?3, last_ns = last_ns + ?3 "
				"WHERE id = ?2");
	msgpack_sbuffer blob;
	msgpack_sbuffer_init(&blob);
	uint64_t changed = 0;
	sqlite3_int64 id = INT64_MIN;
	int rc;
	for (;;) {
		sqlite3_reset(rd);
		sqlite3_bind_int64(rd, 1, id);
		if ((rc = sqlite3_step(rd)) != SQLITE_ROW)
			break;
		id = sqlite3_column_int64(rd, 0);
		size_t n = decode(rd), hit = 0;
		for (size_t i = 0; i < n; i++) {
			struct ingero_cuda_call *c = &calls[i];
			if (have_shift) {
				c->start_ns = (uint64_t)((int64_t)c->start_ns + shift);
				hit++;
				continue;
			}
			if (reverse) {
				if (i < n / 2) {
					struct ingero_cuda_call t = *c;
					*c = calls[n - 1 - i];
					calls[n - 1 - i] = t;
				}
				hit++;
				continue;
			}
			if ((api >= 0 && c->api != api) || (last && c->start_ns != latest))
				continue;
			c->dur_ns = mul ? c->dur_ns * mul : dur;
			hit++;
		}
		if (!hit)
			continue;
		if (ingero_block_encode(&blob, calls, n)) {
			fprintf(stderr, "calls_edit: out of memory\n");
			return 1;
		}
		sqlite3_bind_blob(wr, 1, blob.data, (int)blob.size, SQLITE_STATIC);
		sqlite3_bind_int64(wr, 2, id);
		sqlite3_bind_int64(wr, 3, shift);
		if (sqlite3_step(wr) != SQLITE_DONE)
			die("UPDATE call_blocks");
		sqlite3_reset(wr);
		changed += hit;
	}
	if (rc != SQLITE_DONE)
		die("reading call_blocks");
	sqlite3_finalize(rd);
	sqlite3_finalize(wr);
	msgpack_sbuffer_destroy(&blob);
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		die("COMMIT");
	if (sqlite3_close(db) != SQLITE_OK)
		die("close");
	printf("%llu\n", (unsigned long long)changed);
	return 0;
}
