/*
 * calls_vtab.c — cuda_calls as an eponymous virtual table over call_blocks
 * (calls_vtab.h says what for).
 *
 * Constraints the blocks can answer are pushed down: start_ns bounds pick
 * blocks by first_ns/last_ns, pid = picks blocks by their pid, rowid bounds
 * pick block ids (rowid = block id * INGERO_BLOCK_MAX_CALLS + index).  None
 * is marked omitted: SQLite checks each row again, so a bound only has to
 * be conservative.
 */
#ifdef INGERO_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ingero/call_block.h>

#include "load/calls_vtab.h"

enum {
	COL_PID, COL_TID, COL_API, COL_START, COL_DUR, COL_STREAM, COL_BYTES, COL_DIR,
	COL_FLAGS, COL_RET, COL_STACK, COL_KERNEL, COL_GX, COL_GY, COL_GZ, COL_BX, COL_BY, COL_BZ
};

/* idxNum bits, and the order their values come in argv.  An EQ bounds
 * both sides of its column with one value, which argv carries once: the
 * *_EQ bit says the upper side takes the lower side's value. */
enum { B_START_LO = 1, B_START_HI = 2, B_PID = 4, B_ROWID_LO = 8, B_ROWID_HI = 16, B_N = 5,
       B_START_EQ = 32, B_ROWID_EQ = 64 };

struct table {
	sqlite3_vtab base;
	sqlite3 *db;
	char schema[64];   /* whose call_blocks: "main", or the argument of CREATE VIRTUAL TABLE */
};

struct cursor {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *st;
	sqlite3_int64 block;
	size_t i, n;
	int eof;
	struct ingero_cuda_call calls[INGERO_BLOCK_MAX_CALLS];
};

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		   sqlite3_vtab **out, char **err)
{
	(void)aux; (void)err;
	/* "CREATE VIRTUAL TABLE temp.x USING cuda_calls(other)" reads the
	 * call_blocks of the database attached as "other"; the eponymous
	 * cuda_calls reads main's */
	const char *schema = argc > 3 ? argv[3] : "main";
	size_t len = strlen(schema);
	if (len >= 2 && (schema[0] == '\'' || schema[0] == '"') && schema[len - 1] == schema[0]) {
		schema++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof ((struct table *)0)->schema) {
		*err = sqlite3_mprintf("cuda_calls: give the schema name of an attached report, e.g. cuda_calls(other)");
		return SQLITE_ERROR;
	}
	int rc = sqlite3_declare_vtab(db, IA_CUDA_CALLS_SQL);
	if (rc != SQLITE_OK)
		return rc;
	struct table *t = sqlite3_malloc(sizeof *t);
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof *t);
	t->db = db;
	memcpy(t->schema, schema, len);
	t->schema[len] = 0;
	*out = &t->base;
	return SQLITE_OK;
}

static int disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static int best_index(sqlite3_vtab *v, sqlite3_index_info *ix)
{
	(void)v;
	int slot[B_N];
	int bits = 0;
	double cost = 1e7;

	for (int k = 0; k < B_N; k++)
		slot[k] = -1;
	for (int i = 0; i < ix->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ix->aConstraint[i];
		int lo = c->op == SQLITE_INDEX_CONSTRAINT_EQ || c->op == SQLITE_INDEX_CONSTRAINT_GT ||
			 c->op == SQLITE_INDEX_CONSTRAINT_GE;
		int hi = c->op == SQLITE_INDEX_CONSTRAINT_EQ || c->op == SQLITE_INDEX_CONSTRAINT_LT ||
			 c->op == SQLITE_INDEX_CONSTRAINT_LE;
		int b = 0;

		if (!c->usable)
			continue;
		if (c->iColumn == COL_START)
			b = lo ? B_START_LO : hi ? B_START_HI : 0;
		else if (c->iColumn == -1)
			b = lo ? B_ROWID_LO : hi ? B_ROWID_HI : 0;
		else if (c->iColumn == COL_PID && c->op == SQLITE_INDEX_CONSTRAINT_EQ)
			b = B_PID;
		/* an EQ bounds both sides: its second side is taken below */
		for (int pass = 0; pass < 2 && b; pass++) {
			int k = __builtin_ctz((unsigned)b);
			if (!(bits & b)) {
				bits |= b;
				slot[k] = i;
			}
			if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || b == B_PID)
				break;
			b = b == B_START_LO ? B_START_HI : b == B_ROWID_LO ? B_ROWID_HI : 0;
		}
	}
	/* An EQ on both sides of one column: its value comes once, for the
	 * lower side; the upper side reads it there. */
	for (int k = 0; k + 1 < B_N; k++)
		if (slot[k] >= 0 && slot[k] == slot[k + 1]) {
			bits |= (1 << k) == B_START_LO ? B_START_EQ : B_ROWID_EQ;
			slot[k + 1] = -1;
		}
	int arg = 1;
	for (int k = 0; k < B_N; k++)
		if (slot[k] >= 0)
			ix->aConstraintUsage[slot[k]].argvIndex = arg++;
	if (bits & (B_START_LO | B_START_HI))
		cost /= 100;
	if (bits & B_PID)
		cost /= 4;
	if (bits & (B_ROWID_LO | B_ROWID_HI))
		cost /= 1000;
	/* both sides of one column: a range (or one value), narrower than either */
	if ((bits & (B_START_LO | B_START_HI)) == (B_START_LO | B_START_HI) ||
	    (bits & (B_ROWID_LO | B_ROWID_HI)) == (B_ROWID_LO | B_ROWID_HI))
		cost /= 10;
	ix->idxNum = bits;
	ix->estimatedCost = cost;
	return SQLITE_OK;
}

static int open_cursor(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
	(void)v;
	struct cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->eof = 1;
	*out = &c->base;
	return SQLITE_OK;
}

static int close_cursor(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	sqlite3_finalize(c->st);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* rc, with the connection's message as the table's: SQLite would
 * otherwise report only the code ("SQL logic error"). */
static int inner_error(struct cursor *c, int rc)
{
	sqlite3_vtab *v = c->base.pVtab;

	sqlite3_free(v->zErrMsg);
	v->zErrMsg = sqlite3_mprintf("cuda_calls: %s", sqlite3_errmsg(((struct table *)v)->db));
	return rc;
}

/* The current call_blocks row cannot be shown: an error that names it
 * ("call block ID: why"). */
static int corrupt(struct cursor *c, const char *why)
{
	sqlite3_vtab *v = c->base.pVtab;

	sqlite3_free(v->zErrMsg);
	if (!strncmp(why, "call block: ", 12))   /* the decoder's prefix: the block is named here */
		why += 12;
	v->zErrMsg = sqlite3_mprintf("call block %lld: %s", (long long)c->block, why);
	return SQLITE_CORRUPT_VTAB;
}

/* The next block with calls in it, or eof. */
static int next_block(struct cursor *c)
{
	char err[160];
	int rc;

	c->i = c->n = 0;
	while ((rc = sqlite3_step(c->st)) == SQLITE_ROW) {
		c->block = sqlite3_column_int64(c->st, 0);
		uint32_t pid = (uint32_t)sqlite3_column_int64(c->st, 1);
		sqlite3_int64 calls = sqlite3_column_int64(c->st, 2);
		const void *data = sqlite3_column_blob(c->st, 3);
		size_t len = (size_t)sqlite3_column_bytes(c->st, 3);
		/* rowids are id * INGERO_BLOCK_MAX_CALLS + index: an id that has
		 * none (only a hand-edited file has one) would overflow, and the
		 * rowid bounds in vt_filter count from id 0 */
		if (c->block < 0 || c->block > INT64_MAX / INGERO_BLOCK_MAX_CALLS) {
			snprintf(err, sizeof err, "id out of range (0 to %lld)",
				 (long long)(INT64_MAX / INGERO_BLOCK_MAX_CALLS));
			return corrupt(c, err);
		}
		if (ingero_block_decode(data, len, pid, c->calls, &c->n, err, sizeof err))
			return corrupt(c, err);
		if (calls != (sqlite3_int64)c->n)   /* the analyzer's scan sizes by it */
			return corrupt(c, "its calls column says another number of calls");
		if (c->n)
			return SQLITE_OK;
	}
	c->eof = 1;
	return rc == SQLITE_DONE ? SQLITE_OK : inner_error(c, rc);
}

/* A bound as an integer, rounded outwards; 0 when it is no number (SQLite
 * still applies the constraint itself). */
static int bound(sqlite3_value *v, int upper, sqlite3_int64 *out)
{
	switch (sqlite3_value_numeric_type(v)) {
	case SQLITE_INTEGER:
		*out = sqlite3_value_int64(v);
		return 1;
	case SQLITE_FLOAT: {
		double d = upper ? ceil(sqlite3_value_double(v)) : floor(sqlite3_value_double(v));
		if (d >= 9.2e18 || d <= -9.2e18)
			return 0;
		*out = (sqlite3_int64)d;
		return 1;
	}
	default:
		return 0;
	}
}

static int vt_filter(sqlite3_vtab_cursor *cur, int bits, const char *idx, int argc, sqlite3_value **argv)
{
	(void)idx;
	struct cursor *c = (struct cursor *)cur;
	static const char *const where[B_N] = {
		" AND last_ns >= ?", " AND first_ns <= ?", " AND pid = ?", " AND id >= ?", " AND id <= ?",
	};
	char sql[384];
	sqlite3_int64 val[B_N];
	sqlite3_value *arg[B_N] = { NULL };
	int use[B_N] = { 0 }, a = 0;

	sqlite3_snprintf(sizeof sql, sql, "SELECT id, pid, calls, data FROM \"%w\".call_blocks WHERE 1",
			 ((struct table *)cur->pVtab)->schema);
	for (int k = 0; k < B_N; k++) {
		if (!(bits & (1 << k)))
			continue;
		if (((1 << k) == B_START_HI && (bits & B_START_EQ)) || ((1 << k) == B_ROWID_HI && (bits & B_ROWID_EQ)))
			arg[k] = arg[k - 1];
		else if (a < argc)
			arg[k] = argv[a++];
		if (!arg[k])
			continue;
		int upper = (1 << k) == B_START_HI || (1 << k) == B_ROWID_HI;
		use[k] = bound(arg[k], upper, &val[k]);
		if (use[k] && (1 << k) == B_ROWID_LO)
			val[k] = val[k] < 0 ? 0 : val[k] / INGERO_BLOCK_MAX_CALLS;
		if (use[k] && (1 << k) == B_ROWID_HI) {
			if (val[k] < 0)   /* no call has a negative rowid */
				val[k] = -1;
			else
				val[k] /= INGERO_BLOCK_MAX_CALLS;
		}
		if (use[k])
			strcat(sql, where[k]);
	}
	strcat(sql, " ORDER BY id");
	sqlite3_finalize(c->st);
	c->st = NULL;
	c->eof = 0;
	c->n = c->i = 0;
	int rc = sqlite3_prepare_v2(((struct table *)cur->pVtab)->db, sql, -1, &c->st, NULL);
	if (rc != SQLITE_OK) {
		c->eof = 1;
		return inner_error(c, rc);
	}
	a = 1;
	for (int k = 0; k < B_N; k++)
		if (use[k])
			sqlite3_bind_int64(c->st, a++, val[k]);
	return next_block(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct cursor *c = (struct cursor *)cur;
	if (++c->i < c->n)
		return SQLITE_OK;
	return next_block(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct cursor *c = (const struct cursor *)cur;
	const struct ingero_cuda_call *x = &c->calls[c->i];
	int launch = x->grid[0] | x->grid[1] | x->grid[2] | x->block[0] | x->block[1] | x->block[2];
	uint64_t v;

	switch (col) {
	case COL_PID:    v = x->pid; break;
	case COL_TID:    v = x->tid; break;
	case COL_API:    v = x->api; break;
	case COL_START:  v = x->start_ns; break;
	case COL_DUR:    v = x->dur_ns; break;
	case COL_STREAM: v = x->stream; break;
	case COL_BYTES:  v = x->bytes; break;
	case COL_DIR:    v = x->dir; break;
	case COL_FLAGS:  v = x->flags; break;
	case COL_RET:    sqlite3_result_int(ctx, x->ret); return SQLITE_OK;
	/* NULL where version 1 stored NULL: no stack, no kernel, not a launch */
	case COL_STACK:  if (!x->stack_id) goto null; v = x->stack_id; break;
	case COL_KERNEL: if (!x->kernel) goto null; v = x->kernel; break;
	case COL_GX: case COL_GY: case COL_GZ:
		if (!launch) goto null;
		v = x->grid[col - COL_GX];
		break;
	case COL_BX: case COL_BY: case COL_BZ:
		if (!launch) goto null;
		v = x->block[col - COL_BX];
		break;
	default:
		goto null;
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)v);
	return SQLITE_OK;
null:
	sqlite3_result_null(ctx);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out)
{
	const struct cursor *c = (const struct cursor *)cur;
	*out = c->block * INGERO_BLOCK_MAX_CALLS + (sqlite3_int64)c->i;
	return SQLITE_OK;
}

/* Writes fail here, with the reason, instead of at prepare time with
 * SQLite's "may not be modified": a connection with an authorizer (MCP
 * run_sql) then refuses a write to cuda_calls as it refuses one to any
 * table, and the sqlite3 shell says where the calls really are. */
static int vt_update(sqlite3_vtab *v, int argc, sqlite3_value **argv, sqlite3_int64 *rowid)
{
	(void)argc; (void)argv; (void)rowid;
	sqlite3_free(v->zErrMsg);
	v->zErrMsg = sqlite3_mprintf("cuda_calls is read-only (the calls are stored in call_blocks)");
	return SQLITE_READONLY;
}

static sqlite3_module calls_module = {
	.iVersion = 0,
	/* xCreate == xConnect: cuda_calls exists in every connection (eponymous,
	 * main's calls), and CREATE VIRTUAL TABLE temp.x USING cuda_calls(other)
	 * gives an attached report's (nothing is stored: temp lives with the
	 * connection) */
	.xCreate = vt_connect,
	.xDestroy = disconnect,
	.xConnect = vt_connect,
	.xBestIndex = best_index,
	.xDisconnect = disconnect,
	.xOpen = open_cursor,
	.xClose = close_cursor,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
	.xUpdate = vt_update,
};

int ia_calls_vtab_register(sqlite3 *db)
{
	return sqlite3_create_module_v2(db, "cuda_calls", &calls_module, NULL, NULL);
}

#ifdef INGERO_SQLITE_EXTENSION
int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	(void)err;
	SQLITE_EXTENSION_INIT2(api);
	return ia_calls_vtab_register(db);
}
#endif
