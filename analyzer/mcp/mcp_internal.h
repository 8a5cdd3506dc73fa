/*
 * mcp_internal.h — what the MCP server's files share: the server state, the
 * JSON-RPC error codes, the tool and prompt registries, and the builders of
 * tool results.
 *
 *   mcp.c          command line, read loop (reading on while a request
 *                  runs: pings, cancellation), JSON-RPC dispatch, lifecycle
 *   mcp_io.c       the stdio transport (bounded line reader, UTF-8-safe writer)
 *   mcp_json.c     a line made a message: lone surrogate escapes, ids
 *                  echoed as sent, escaped NULs
 *   mcp_schema.c   checks tool arguments against each tool's inputSchema
 *   mcp_result.c   tool results: text with traced strings fenced as data,
 *                  plus structuredContent
 *   mcp_cap.c      the byte cap on a tool result
 *   mcp_view.c     the trace for a call's window, cached, with the analyzer's results
 *   mcp_tools.c    the tool table and calls: each calls the analyzer's modules
 *   mcp_stacks.c   get_stacks
 *   mcp_ranks.c    get_ranks
 *   mcp_nodes.c    several report.db (one a node of one job): the files,
 *                  the node argument, get_nodes and the job across them
 *   mcp_sql.c      run_sql: a read-only, time- and row-limited SQL sandbox
 *   mcp_sql_functions.c  the SQL functions run_sql allows
 *   mcp_prompts.c  the `investigate` prompt
 */
#ifndef IA_MCP_INTERNAL_H
#define IA_MCP_INTERNAL_H

#include "rules/chains.h"
#include "measure/per_process.h"
#include "measure/stats.h"
#include "load/trace.h"
#include "rules/nodes.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

/* JSON-RPC 2.0 error codes. */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

#define MCP_PROTOCOL_LATEST "2025-06-18"
#define MCP_DEFAULT_MAX_MESSAGE (4u << 20)

struct mcp_sql;
struct mcp_reader;
struct mcp_pending;

/* One loaded view of the trace (a file and a filter) and what was computed on it.
 * The server keeps the last one: an assistant asks several questions about
 * the same window in a row.  Light questions (stats, per-process) need
 * only stats + per-process; the others need explain's whole analysis
 * (ia_analyze), which contains those two, so once it exists the light
 * results are freed and taken from it: nothing is computed twice. */
struct mcp_view {
	int loaded;
	size_t file;                  /* which of the server's files */
	struct ia_filter filter;
	struct ia_trace t;
	int have_light, have_analysis;
	struct ia_stats stats;        /* light */
	struct ia_per_process pp;     /* light */
	struct ia_analysis an;        /* full */
};

/* One report.db served: the one file, or node i of a job of several. */
struct mcp_file {
	const char *path;
	sqlite3 *db;                  /* validated by ia_db_open, read-only */
	struct mcp_sql *sql;          /* run_sql's own connection, opened on first use */
	char name[96];                /* what get_nodes calls it (mcp_nodes.c) */
};

struct mcp_job;

struct mcp_server {
	struct mcp_file files[IA_MAX_NODES];
	size_t nfiles;
	size_t node;                  /* the file the running tool call reads: its node argument, else 0 */
	struct mcp_job *job;          /* several files: the job across them, built on first use (mcp_nodes.c) */
	const char *protocol;         /* negotiated revision, NULL before initialize */
	int initialized;              /* initialize answered */
	int client_ready;             /* notifications/initialized received */
	size_t max_message;
	long sql_timeout_ms;
	long long sql_heap;           /* run_sql's memory cap in bytes (--sql-memory) */
	struct mcp_view view;
	/* Reading on while a request runs (mcp.c: mcp_poll_input) */
	struct mcp_reader *in;        /* stdin; NULL when the caller hands in lines (tests, fuzzer) */
	FILE *out;                    /* where the replies made meanwhile go */
	struct mcp_pending *pending, *pending_last;   /* lines read meanwhile, served in order after */
	size_t pending_bytes;
	int in_failed, out_failed;
	int line_has_nul;             /* the message being served escapes a NUL in a string */
	const cJSON *running_id;      /* the request being served; NULL between requests */
	const char *running_method;
	int cancelled;                /* a notifications/cancelled named running_id */
	unsigned long long polled_ns; /* when the input was last looked at */
};

/* ---- the server (mcp.c) ---- */
/* Opens and validates the database; keeps max_message and sql_timeout_ms
 * when set.  -1 with a one-line reason. */
int mcp_server_open(struct mcp_server *s, const char *path, char *err, size_t errlen);
/* The same for n files (1 to IA_MAX_NODES), one a node of one job (kept,
 * not copied); n == 1 is mcp_server_open. */
int mcp_server_open_files(struct mcp_server *s, const char *const *paths, size_t n, char *err, size_t errlen);
void mcp_server_close(struct mcp_server *s);
/* Serves the messages on fd until it ends: reads each line, answers on
 * out.  0 when the input ended, -1 when reading it or writing out failed
 * (logged). */
int mcp_serve(struct mcp_server *s, int fd, FILE *out);
/* One received line in, at most one line out.  -1 when out is gone. */
int mcp_serve_line(struct mcp_server *s, const char *line, size_t len, FILE *out);
/* While a request runs: reads what has arrived on s->in without waiting
 * (at most every 2 ms), answers pings, acts on notifications/cancelled and
 * keeps other lines for later; `ended`: the request has just ended (read
 * now, keep pings in turn).  Returns 1 when the running request should
 * stop (cancelled, or the client is gone). */
int mcp_poll_input(struct mcp_server *s, int ended);

/* ---- tools (mcp_tools.c) ---- */
/* What a tool reads when several files are served (one file: that file). */
enum mcp_scope {
	MCP_PER_FILE,       /* one file: takes "node" (default 0) */
	MCP_FILE_OR_JOB,    /* get_ranks: the job across the files, or with "node" that file alone */
	MCP_JOB,            /* get_nodes: offered only with several files */
};
struct mcp_tool {
	const char *name, *title, *description;
	const char *input_schema;     /* JSON text */
	const char *output_schema;    /* JSON text, NULL = none */
	/* Returns a CallToolResult (content + structuredContent, or isError). */
	cJSON *(*call)(struct mcp_server *s, const cJSON *args);
	enum mcp_scope scope;
};
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;
const struct mcp_tool *mcp_tool_find(const char *name);
/* Whether the server offers t (get_nodes: only with several files). */
int mcp_tool_offered(const struct mcp_server *s, const struct mcp_tool *t);
/* {"name","title","description","inputSchema","outputSchema","annotations"}:
 * with several files, the schema and description say "node" too. */
cJSON *mcp_tool_describe(const struct mcp_server *s, const struct mcp_tool *t);
/* The inputSchema tools/list shows and tools/call checks (NULL: a bug). */
cJSON *mcp_tool_input_schema(const struct mcp_server *s, const struct mcp_tool *t);
/* get_stacks (mcp_stacks.c) */
cJSON *mcp_tool_stacks(struct mcp_server *s, const cJSON *args);
/* get_ranks (mcp_ranks.c) */
cJSON *mcp_tool_ranks(struct mcp_server *s, const cJSON *args);
/* get_ranks' summary line for a job of nranks ranks on nnodes traces (1:
 * the one file's words). */
void mcp_ranks_summary(char *sum, size_t n, const struct ia_job *j, size_t nranks, size_t nnodes);

/* ---- several files, one a node of one job (mcp_nodes.c) ---- */
/* After the files opened: each one's name (its host when every node's is
 * known and unique, else its file's base name when unique, else its path). */
void mcp_nodes_name(struct mcp_server *s);
/* Sets s->node from args' "node" (an index, a name get_nodes lists, or the
 * path as given); 0 when absent.  -1 with a one-line reason. */
int mcp_node_select(struct mcp_server *s, const cJSON *args, char *err, size_t errlen);
/* When several files are served: adds "node" to a tool's inputSchema
 * (parsed), puts the sentence its description gains in more, returns 1;
 * else 0, the schema as it is. */
int mcp_nodes_schema(const struct mcp_server *s, const struct mcp_tool *t, cJSON *schema, char *more, size_t morelen);
/* get_nodes */
cJSON *mcp_tool_nodes(struct mcp_server *s, const cJSON *args);
/* get_ranks without "node" when several files are served: the job across them. */
cJSON *mcp_job_ranks(struct mcp_server *s, const cJSON *args);
void mcp_job_free(struct mcp_job *j);

/* ---- the view for a call's window (mcp_view.c) ---- */
enum { MCP_NEED_LIGHT = 1, MCP_NEED_ANALYSIS = 2 };
/* Loads (or reuses) the trace for args' from/to/since/pid with what `need`
 * asks computed; NULL with *fail set to a tool error. */
struct mcp_view *mcp_view_for(struct mcp_server *s, const cJSON *args, int need, cJSON **fail);
void mcp_view_free(struct mcp_view *v);
const struct ia_stats *mcp_view_stats(const struct mcp_view *v);
const struct ia_per_process *mcp_view_pp(const struct mcp_view *v);
/* from/to/since/pid of args into f; -1 with the reason on a bad value. */
int mcp_window_args(const cJSON *args, struct ia_filter *f, char *err, size_t errlen);
/* {"first_rel_ns","last_rel_ns","from_rel_ns","to_rel_ns","pid"}: what an answer covers. */
cJSON *mcp_window_json(const struct ia_trace *t);

/* ---- arguments (mcp_schema.c) ---- */
/* Checks args (an object or NULL) against a JSON Schema of the subset the
 * tools use (object; properties of type string/integer/number/boolean with
 * enum, minimum, maximum; required; additionalProperties false).  0 when it
 * conforms; else -1 with a one-line reason. */
int mcp_check_args(const cJSON *schema, const cJSON *args, char *err, size_t errlen);

/* ---- JSON input that cJSON alone gets wrong (mcp_json.c) ---- */
/* The message on a received line, with everything below applied; NULL
 * with a one-line parse error in why (why "" for a blank line).
 * *has_nul: a string in it escapes a NUL. */
cJSON *mcp_json_parse_line(const char *line, size_t len, char *why, size_t whylen, int *has_nul);
/* A copy of line (NUL-terminated, same length) with every lone UTF-16
 * surrogate escape inside a string rewritten as \uFFFD; NULL when there
 * is none (or no memory: cJSON then refuses the line as before). */
char *mcp_json_fix_surrogates(const char *line, size_t len);
/* Offset of the first escape inside a string that JSON does not allow
 * (a backslash before another byte than " \ / b f n r t u, or \u without
 * four hex digits), or -1. */
long mcp_json_bad_escape(const char *line, size_t len);
/* In msg (an object, or a batch array) parsed from text, replaces each
 * numeric or string id by a raw item with orig's bytes at the same place
 * (orig: the line before mcp_json_fix_surrogates): echoed exactly as the
 * client sent them. */
void mcp_json_keep_raw_ids(cJSON *msg, const char *text, const char *orig, size_t len);
/* Whether a string in line escapes a NUL (\u0000), which cJSON would cut at. */
int mcp_json_has_nul_escape(const char *line, size_t len);
/* Whether two ids (number, string or raw as kept above) name the same
 * request: the same bytes, or the same string, or the same number where a
 * double holds it exactly (below 2^53). */
int mcp_json_ids_equal(const cJSON *a, const cJSON *b);

/* ---- results (mcp_result.c) ---- */
/* A successful result: `summary` (plain text written by us, no traced
 * strings), then `data` printed as JSON inside a fenced block that tells
 * the reader its strings were recorded from the traced program; `data` also
 * becomes structuredContent (ownership taken). */
cJSON *mcp_result_data(const char *summary, cJSON *data);
/* The byte cap on a whole tool result (mcp_cap.c); a variable so that
 * tests can lower it. */
#define MCP_RESULT_MAX_BYTES (256u << 10)
extern size_t mcp_result_max_bytes;
/* Cuts data's largest top-level arrays at whole entries from their ends
 * until measure(summary, data) is within the cap, and records what was
 * left out in data (result_truncated, and its truncated/more/row_count).
 * 0: it fit; 1: cut, with a sentence for the summary in note; -1: still
 * too big with every array empty. */
int mcp_result_cap(cJSON *data, size_t (*measure)(const char *summary, const cJSON *data),
		   const char *summary, char *note, size_t notelen);
/* A tool execution error: {"content":[{"type":"text","text":msg}],"isError":true}. */
cJSON *mcp_result_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints JSON with '<', '>' and '&' escaped as \u003c… so that no string
 * inside can close the data fence.  Caller frees. */
char *mcp_json_fenced(const cJSON *data);

/* ---- run_sql (mcp_sql.c) ---- */
/* heap_max: SQLite's memory while a statement runs, temporary data
 * included (<= 0: MCP_SQL_HEAP_DEFAULT). */
struct mcp_sql *mcp_sql_open(const char *path, long long heap_max, char *err, size_t errlen);
void mcp_sql_close(struct mcp_sql *q);
/* While a statement runs, cancelled(ud) is asked now and then (from
 * SQLite's progress handler); nonzero stops it with "cancelled by the
 * client". */
void mcp_sql_on_progress(struct mcp_sql *q, int (*cancelled)(void *), void *ud);
/* A REAL as JSON: a raw number in the shortest form that reads back as v
 * (15, 16 or 17 digits), or for infinity and NaN the string "Infinity",
 * "-Infinity" or "NaN" with *special set. */
cJSON *mcp_sql_real_json(double v, int *special);
/* Runs one read-only statement.  Returns {"columns","rows","row_count",
 * "truncated","elapsed_ms"}, or NULL with a one-line reason. */
cJSON *mcp_sql_run(struct mcp_sql *q, const char *sql, long max_rows, long timeout_ms,
		   char *err, size_t errlen);
/* Whether run_sql may call the SQL function NAME (mcp_sql_functions.c:
 * an allow-list of pure functions; NULL is not allowed). */
int mcp_sql_function_allowed(const char *name);
/* run_sql's description: what it allows, plus the schema (schema.h). */
const char *mcp_sql_description(void);
#define MCP_SQL_MAX_ROWS_DEFAULT 200
#define MCP_SQL_MAX_ROWS_LIMIT 5000
#define MCP_SQL_MAX_BYTES (1u << 20)   /* result text cap */
#define MCP_SQL_HEAP_DEFAULT (512ll << 20)

/* ---- prompts (mcp_prompts.c) ---- */
cJSON *mcp_prompts_list(void);
/* The prompt's GetPromptResult, or NULL with a JSON-RPC error code and message. */
cJSON *mcp_prompt_get(const struct mcp_server *s, const char *name, const cJSON *args,
		      int *code, char *err, size_t errlen);

/* stderr log line, prefixed "ingero-analyze mcp: "; none when mcp_quiet (the fuzzer) */
extern int mcp_quiet;
void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
