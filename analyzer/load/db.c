/*
 * db.c — open a report.db read-only and refuse anything that is not one.
 *
 * Checks run cheapest first: the file exists and is a regular file; it is
 * not empty; its 100-byte header says "SQLite format 3"; the file is at
 * least as long as the header's page count says (a truncated copy is caught
 * here, before SQLite reads garbage) — unless a WAL lies beside it: then
 * SQLite reads the newest pages, page 1 among them, from the WAL, and a
 * file whose last checkpoint did not finish (a full disk) may be shorter
 * than its own header says while the two together are whole; the schema
 * version is
 * 1 to INGERO_SCHEMA_VERSION; every table of its schema exists (gpu_marks
 * only from version 3: older files have no measured GPU time).  Every
 * connection gets the cuda_calls virtual table (calls_vtab.h), and none can
 * load extensions, register FTS3 tokenizers or trust the file's schema.  Corruption deeper
 * in the file surfaces from sqlite3_step() and is reported by
 * ia_db_step_error() as one line.
 */
#include "load/db.h"
#include "load/calls_vtab.h"

#include <ingero/schema.h>

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char db_path[4096];
static int wal_read, writer_alive;   /* about the file ia_db_open() opened */
static int by_writer;   /* ia_db_opened_by_writer(): this process writes the files it opens */
static atomic_int input_bad;   /* an error so far was the file's fault (ia_db_input_bad); set from scan threads too */

const char *ia_db_path(void)
{
	return db_path;
}

/* The last entry is where the CUDA calls are: version 2 stores blocks
 * (call_block.h), version 1 one row per call.  Stack frames: version 8
 * stores each distinct frame once (the table frames; stack_frames is a
 * view over it and the stacks' lists), older versions a row per frame of
 * every stack (the table stack_frames) — either layout is read (frames.h
 * tells them apart by their tables, as here). */
static const char *const required_tables[] = {
	"session", "apis", "processes", "threads", "off_cpu", "page_allocs",
	"cpu_busy", "competitors", "stacks", "stack_frames", "kernels", "cpu_samples", "losses",
	"call_blocks",
};
#define N_REQUIRED (sizeof required_tables / sizeof required_tables[0])

/* 1 when the file has the table (or its stand-in), 0, -1 unreadable;
 * *name the one to name when missing. */
static int has_required(sqlite3 *db, int ver, size_t i, const char **name)
{
	*name = ver == 1 && i == N_REQUIRED - 1 ? "cuda_calls" : required_tables[i];
	if (strcmp(*name, "stack_frames"))
		return ia_db_has_table(db, *name);
	int rows = ia_db_has_table(db, "stack_frames");
	if (rows)
		return rows;
	if (ver >= 8)
		*name = "frames";
	return ia_db_has_table(db, "frames");
}

static int check_header(const char *path, off_t size, int wal, char *err, size_t errlen)
{
	unsigned char h[100];
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	size_t n = fread(h, 1, sizeof h, f);
	fclose(f);
	if (n < sizeof h || memcmp(h, "SQLite format 3", 16) != 0) {
		snprintf(err, errlen, "%s: not an Ingero report (not an SQLite database)", path);
		return -1;
	}
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
	/* The in-header size is valid only when the change counters agree
	 * (SQLite's own rule); older writers leave it stale. */
	int valid = memcmp(h + 24, h + 92, 4) == 0 && pages > 0;
	if (valid && !wal && (uint64_t)size < (uint64_t)page * pages) {
		snprintf(err, errlen, "%s: truncated: %lld bytes, the header says %llu",
			 path, (long long)size, (unsigned long long)page * pages);
		return -1;
	}
	return 0;
}

/* Opens PATH read-only, no checks: immutable=1 only when no WAL is beside
 * the file (with a WAL present, committed data may live only there, and
 * immutable would ignore it).  The main connection is FULLMUTEX (analysis
 * phases on two threads may query it at once); a scan's own connection is
 * NOMUTEX: one thread uses it, and SQLite's per-call mutex costs ~15 % of a
 * 10M-row scan. */
static int has_wal(const char *path)
{
	char walp[4200];
	struct stat wst;
	snprintf(walp, sizeof walp, "%s-wal", path);
	return stat(walp, &wst) == 0 && wst.st_size > 0;
}

/* Whether a collector holds the file's lock (it is still writing it):
 * asked before SQLite opens the file, since closing any descriptor of a
 * file drops the process's fcntl locks on it, SQLite's too. */
static int locked_by_writer(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), held = 0;
	if (fd < 0)
		return 0;
	held = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

char *ia_db_uri(const char *path)
{
	int wal = has_wal(path);
	/* The URI needs the path percent-encoded ('?', '#' and '%' are special). */
	size_t plen = strlen(path);
	char *enc = malloc(plen * 3 + 64);
	if (!enc)
		return NULL;
	size_t o = (size_t)sprintf(enc, "file:");
	for (size_t i = 0; i < plen; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f)
			o += (size_t)sprintf(enc + o, "%%%02X", c);
		else
			enc[o++] = (char)c;
	}
	sprintf(enc + o, "?mode=ro%s", wal ? "" : "&immutable=1");
	return enc;
}

static sqlite3 *open_ro(const char *path, int mutex_flag, char *err, size_t errlen)
{
	char *enc = ia_db_uri(path);
	if (!enc) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(enc, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | mutex_flag, NULL);
	free(enc);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_extended_result_codes(db, 1);
	/* The file may come from anyone, and run_sql (mcp_sql.c) lets an
	 * assistant write SQL on such a connection: no connection we open may
	 * load code, register a tokenizer pointer (the two-argument
	 * fts3_tokenizer() turns any integer into a function pointer that an
	 * FTS3 table then calls), let the schema's views or triggers call
	 * functions with side effects, or write to the file's structure. */
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if (ia_calls_vtab_register(db) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot register cuda_calls: %s", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

sqlite3 *ia_db_reopen(const char *path, char *err, size_t errlen)
{
	return open_ro(path, SQLITE_OPEN_NOMUTEX, err, errlen);
}

static sqlite3 *open_checked(const char *path, char *err, size_t errlen)
{
	/* SQLite's global memory statistics take a process-wide mutex on every
	 * allocation, which serialises the parallel scans (scan.c).  This has
	 * to precede SQLite's initialisation; later it is a harmless no-op. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	struct stat st;
	snprintf(db_path, sizeof db_path, "%s", path);
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return NULL;
	}
	if (st.st_size == 0) {
		snprintf(err, errlen, "%s: empty file, not an Ingero report", path);
		return NULL;
	}
	wal_read = has_wal(path);
	/* (asked once per file: a second open of the same file, the MCP
	 * server's, must not drop the first connection's locks) */
	static char asked[sizeof db_path];
	if (by_writer) {
		writer_alive = 1;   /* (a finished trace has its end: then this is not read) */
	} else {
		if (strcmp(asked, path)) {
			writer_alive = locked_by_writer(path);
			snprintf(asked, sizeof asked, "%s", path);
		}
		if (check_header(path, st.st_size, wal_read, err, errlen) < 0)
			return NULL;
	}

	sqlite3 *db = open_ro(path, SQLITE_OPEN_FULLMUTEX, err, errlen);
	if (!db)
		return NULL;

	sqlite3_stmt *st2 = NULL;
	int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st2, NULL);
	if (rc != SQLITE_OK || sqlite3_step(st2) != SQLITE_ROW) {
		snprintf(err, errlen, "%s: not an Ingero report (%s)", path, sqlite3_errmsg(db));
		sqlite3_finalize(st2);
		sqlite3_close(db);
		return NULL;
	}
	int ver = sqlite3_column_int(st2, 0);
	sqlite3_finalize(st2);
	if (ver == 0) {
		snprintf(err, errlen, "%s: not an Ingero report (no schema version)", path);
		sqlite3_close(db);
		return NULL;
	}
	if (ver < 1 || ver > INGERO_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s: schema version %d, this ingero-analyze reads versions 1 to %d",
			 path, ver, INGERO_SCHEMA_VERSION);
		sqlite3_close(db);
		return NULL;
	}
	for (size_t i = 0; i < N_REQUIRED; i++) {
		const char *table;
		int has = has_required(db, ver, i, &table);
		if (has < 0) {
			snprintf(err, errlen, "%s is corrupted: %s", path, sqlite3_errmsg(db));
			sqlite3_close(db);
			return NULL;
		}
		if (!has) {
			snprintf(err, errlen, "%s: not an Ingero report (table %s missing)", path, table);
			sqlite3_close(db);
			return NULL;
		}
	}
	return db;
}

sqlite3 *ia_db_open(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = open_checked(path, err, errlen);
	if (!db)
		input_bad = 1;   /* every refusal at open is about the file */
	return db;
}

void ia_db_close(sqlite3 *db)
{
	sqlite3_close(db);
}

int ia_db_has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return -1;
}

int ia_db_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

sqlite3_stmt *ia_db_prepare(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		ia_db_step_error(db, rc, err, errlen);
		return NULL;
	}
	return st;
}

int ia_db_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

void ia_db_step_error(sqlite3 *db, int rc, char *err, size_t errlen)
{
	int base = rc & 0xff;
	/* The main connection is shared by two analysis threads: by now the
	 * other may have reset its message.  Then SQLite's text for the code;
	 * the connection's mutex (none on a NOMUTEX one) keeps the message
	 * from changing while it is copied. */
	sqlite3_mutex *m = sqlite3_db_mutex(db);
	sqlite3_mutex_enter(m);
	const char *msg = sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	if (base == SQLITE_CORRUPT || base == SQLITE_NOTADB) {
		snprintf(err, errlen, "%s is corrupted: %s", db_path, msg);
		input_bad = 1;
	} else if (base == SQLITE_IOERR) {
		snprintf(err, errlen, "%s: read error (%s)", db_path, msg);
		input_bad = 1;
	} else {
		snprintf(err, errlen, "%s: %s", db_path, msg);
	}
	sqlite3_mutex_leave(m);
}

int ia_db_done(sqlite3_stmt *st, int rc, char *err, size_t errlen)
{
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	ia_db_step_error(sqlite3_db_handle(st), rc, err, errlen);
	return -1;
}

int ia_db_finish(sqlite3_stmt *st, int rc, char *err, size_t errlen)
{
	int r = -1;
	if (rc == SQLITE_NOMEM)
		snprintf(err, errlen, "out of memory");
	else
		r = ia_db_done(st, rc, err, errlen);
	sqlite3_finalize(st);
	return r;
}

/* "PATH<sep>" and the message: the input is bad */
static void bad_input(char *err, size_t errlen, const char *sep, const char *fmt, va_list ap)
{
	int w = snprintf(err, errlen, "%s%s", db_path, sep);
	if (w >= 0 && (size_t)w < errlen)
		vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
	input_bad = 1;
}

void ia_db_corrupt(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bad_input(err, errlen, " is corrupted: ", fmt, ap);
	va_end(ap);
}

void ia_db_bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bad_input(err, errlen, ": ", fmt, ap);
	va_end(ap);
}

void ia_db_blame_input(void)
{
	input_bad = 1;
}

int ia_db_input_bad(void)
{
	return input_bad;
}

int ia_db_wal_read(void)
{
	return wal_read;
}

int ia_db_writer_alive(void)
{
	return writer_alive;
}

void ia_db_opened_by_writer(void)
{
	by_writer = 1;
}
