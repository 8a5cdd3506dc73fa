/*
 * mcp_sql_functions.c — which SQL functions run_sql lets a statement call.
 *
 * An allow-list, not a deny-list: SQLite and its bundled extensions keep
 * adding functions, and some are not pure (load_extension() loads code,
 * fts3_tokenizer() returns and accepts raw pointers, the FTS and R-tree
 * helpers reach into their tables' internals).  A name that is not here is
 * refused by the authorizer (mcp_sql.c) with a line that names it, so a
 * function added by a newer SQLite stays off until someone reads it and
 * adds it.  What is here computes a value from its arguments (or reports
 * on the connection) and touches nothing else: the core scalar, aggregate
 * and window functions, date and time, math and JSON.  randomblob() and
 * zeroblob() are bounded by the connection's SQLITE_LIMIT_LENGTH.
 * Names of newer SQLite releases (unhex, concat, string_agg, ...) are
 * listed too: they are just as pure, and the list then needs no edit when
 * the library is upgraded.
 */
#include "mcp/mcp_internal.h"

#include <stdlib.h>
#include <strings.h>

/* sorted for bsearch (strcasecmp order: lower-case ASCII) */
static const char *const allowed[] = {
	"->", "->>",
	"abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg",
	"ceil", "ceiling", "changes", "char", "coalesce", "concat", "concat_ws", "cos", "cosh", "count",
	"cume_dist", "current_date", "current_time", "current_timestamp",
	"date", "datetime", "degrees", "dense_rank",
	"exp",
	"first_value", "floor", "format",
	"glob", "group_concat",
	"hex",
	"ifnull", "iif", "instr",
	"json", "json_array", "json_array_length", "json_extract", "json_group_array",
	"json_group_object", "json_insert", "json_object", "json_patch", "json_quote", "json_remove",
	"json_replace", "json_set", "json_type", "json_valid",
	"julianday",
	"lag", "last_insert_rowid", "last_value", "lead", "length", "like", "likelihood", "likely", "ln",
	"log", "log10", "log2", "lower", "ltrim",
	"max", "min", "mod",
	"nth_value", "ntile", "nullif",
	"octet_length",
	"percent_rank", "pi", "pow", "power", "printf",
	"quote",
	"radians", "random", "randomblob", "rank", "replace", "round", "row_number", "rtrim",
	"sign", "sin", "sinh", "soundex", "sqlite_compileoption_get", "sqlite_compileoption_used",
	"sqlite_source_id", "sqlite_version", "sqrt", "strftime", "string_agg", "substr", "substring",
	"subtype", "sum",
	"tan", "tanh", "time", "timediff", "total", "total_changes", "trim", "trunc", "typeof",
	"unhex", "unicode", "unixepoch", "unlikely", "upper",
	"zeroblob",
};

static int cmp(const void *key, const void *elem)
{
	return strcasecmp(key, *(const char *const *)elem);
}

int mcp_sql_function_allowed(const char *name)
{
	return name && bsearch(name, allowed, sizeof allowed / sizeof *allowed, sizeof *allowed, cmp) != NULL;
}
