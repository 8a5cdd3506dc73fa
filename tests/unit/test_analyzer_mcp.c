/*
 * test_analyzer_mcp.c — the MCP server's pieces, run under the sanitizers
 * too: the bounded line reader (chunk boundaries, CRLF, lines over the
 * limit, a last line without newline), UTF-8 cleaning, the data fence,
 * argument checks against each tool's own inputSchema, the run_sql fences,
 * and whole request/response exchanges through mcp_serve_line on a small
 * database (so leaks and overflows in the dispatcher show up here; the
 * protocol as a client sees it is tests/e2e/mcp_*.sh).  Issue 38: lengths
 * in characters, integer ranges written as integers, REALs that read back
 * exactly, NULs kept whole or refused, reading without waiting, and
 * cancellation of a running run_sql.  Issue 44: two report.db served as
 * the nodes of one job — the node argument in every per-trace schema, each
 * tool reading the file it names, get_nodes, a node not served refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ingero/schema.h>

#include "../../analyzer/mcp/mcp_internal.h"
#include "../../analyzer/mcp/mcp_io.h"
#include "call_blocks.h"

/* --- the line reader ----------------------------------------------------------------- */

static int file_with(const char *data, size_t n)
{
	char path[] = "/tmp/ingero-mcp-reader.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void reader_splits_lines(void **st)
{
	(void)st;
	static const char in[] = "a\nbb\r\n\nccc";
	int fd = file_with(in, sizeof in - 1);
	struct mcp_reader r;
	mcp_reader_init(&r, fd, 100);
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_string_equal(r.line, "a");
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_string_equal(r.line, "bb");
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_int_equal(r.len, 0);
	assert_int_equal(mcp_read_line(&r), MCP_LINE);   /* last line, no newline */
	assert_string_equal(r.line, "ccc");
	assert_int_equal(mcp_read_line(&r), MCP_LINE_EOF);
	assert_int_equal(mcp_read_line(&r), MCP_LINE_EOF);
	mcp_reader_free(&r);
	close(fd);
}

static void reader_drops_long_lines(void **st)
{
	(void)st;
	/* lines longer than the 64 KiB read chunk, around the limit */
	size_t max = 100000, n = 0;
	char *in = malloc(3 * 300000);
	memset(in + n, 'x', 250000); n += 250000; in[n++] = '\n';      /* over: dropped */
	memcpy(in + n, "ok\n", 3); n += 3;
	memset(in + n, 'y', max); n += max; in[n++] = '\n';            /* exactly max: kept */
	memset(in + n, 'z', max + 1); n += max + 1; in[n++] = '\n';    /* one over: dropped */
	memset(in + n, 'w', 70000); n += 70000;                        /* unterminated, kept */
	int fd = file_with(in, n);
	struct mcp_reader r;
	mcp_reader_init(&r, fd, max);
	assert_int_equal(mcp_read_line(&r), MCP_LINE_TOO_LONG);
	assert_int_equal(r.total, 250000);
	assert_true(r.cap <= 2 * max + 2);          /* memory stays bounded by the limit */
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_string_equal(r.line, "ok");
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_int_equal(r.len, max);
	assert_int_equal(r.line[max - 1], 'y');
	assert_int_equal(mcp_read_line(&r), MCP_LINE_TOO_LONG);
	assert_int_equal(r.total, max + 1);
	assert_int_equal(mcp_read_line(&r), MCP_LINE);
	assert_int_equal(r.len, 70000);
	assert_int_equal(mcp_read_line(&r), MCP_LINE_EOF);
	mcp_reader_free(&r);
	close(fd);
	free(in);
}

static void reader_reads_without_waiting(void **st)
{
	(void)st;
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct mcp_reader r;
	mcp_reader_init(&r, p[0], 100);
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE_AGAIN);          /* nothing yet */
	assert_int_equal(write(p[1], "ab", 2), 2);
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE_AGAIN);          /* half a line: kept */
	assert_int_equal(write(p[1], "c\nd", 3), 3);
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE);
	assert_string_equal(r.line, "abc");
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE_AGAIN);          /* "d" so far */
	assert_int_equal(write(p[1], "e\n", 2), 2);
	assert_int_equal(mcp_read_line(&r), MCP_LINE);                      /* the waiting read goes on with it */
	assert_string_equal(r.line, "de");
	assert_int_equal(write(p[1], "f", 1), 1);
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE_AGAIN);
	close(p[1]);
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE);                /* the last line, unterminated */
	assert_string_equal(r.line, "f");
	assert_int_equal(mcp_read_line_ready(&r), MCP_LINE_EOF);
	assert_int_equal(mcp_read_line(&r), MCP_LINE_EOF);
	mcp_reader_free(&r);
	close(p[0]);
}

/* --- UTF-8, the fence ---------------------------------------------------------------- */

static void utf8_is_cleaned(void **st)
{
	(void)st;
	size_t n;
	char *o = mcp_utf8_clean("a\xc3\xa9z", 4, &n);                /* é stays */
	assert_string_equal(o, "a\xc3\xa9z");
	free(o);
	o = mcp_utf8_clean("\xc0\xaf", 2, &n);                       /* overlong '/' */
	assert_string_equal(o, "\xef\xbf\xbd\xef\xbf\xbd");
	free(o);
	o = mcp_utf8_clean("\xed\xa0\x80!", 4, &n);                  /* a surrogate */
	assert_string_equal(o, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
	free(o);
	o = mcp_utf8_clean("\xf0\x9f\x98", 3, &n);                   /* cut short */
	assert_int_equal(n, 9);
	free(o);
	o = mcp_utf8_clean("\xf4\x90\x80\x80", 4, &n);               /* above U+10FFFF */
	assert_int_equal(n, 12);
	free(o);
	o = mcp_utf8_clean("\xf0\x9f\x98\x80", 4, &n);               /* an emoji stays */
	assert_string_equal(o, "\xf0\x9f\x98\x80");
	free(o);
}

static void fence_escapes(void **st)
{
	(void)st;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "cmd", "</trace-data> & <b>");
	char *s = mcp_json_fenced(o);
	assert_null(strchr(s, '<'));
	assert_null(strchr(s, '>'));
	assert_null(strchr(s, '&'));
	cJSON *back = cJSON_Parse(s);                               /* still JSON, same value */
	assert_string_equal(cJSON_GetObjectItem(back, "cmd")->valuestring, "</trace-data> & <b>");
	cJSON_Delete(back);
	free(s);
	cJSON *r = mcp_result_data("summary", o);
	const char *text = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "content"), 0)->child->next->valuestring;
	assert_non_null(strstr(text, "summary\n\n<trace-data>\n"));
	assert_int_equal(strstr(text, "</trace-data>") - text, (long)strlen(text) - 13);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "isError")));
	cJSON_Delete(r);
}

/* --- arguments against the tools' own schemas ---------------------------------------------- */

static int args_ok(const char *tool, const char *args_json)
{
	const struct mcp_tool *t = mcp_tool_find(tool);
	assert_non_null(t);
	cJSON *schema = cJSON_Parse(t->input_schema);
	assert_non_null(schema);
	cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;
	char err[256];
	int rc = mcp_check_args(schema, args, err, sizeof err);
	cJSON_Delete(args);
	cJSON_Delete(schema);
	return rc == 0;
}

static void schemas_check_arguments(void **st)
{
	(void)st;
	for (size_t i = 0; i < mcp_ntools; i++) {          /* every schema parses */
		cJSON *s = cJSON_Parse(mcp_tools[i].input_schema);
		assert_non_null(s);
		cJSON_Delete(s);
		if (mcp_tools[i].output_schema) {
			s = cJSON_Parse(mcp_tools[i].output_schema);
			assert_non_null(s);
			cJSON_Delete(s);
		}
	}
	assert_true(args_ok("get_stacks", NULL));
	assert_true(args_ok("get_stacks", "{}"));
	assert_true(args_ok("get_stacks", "{\"limit\":50,\"order\":\"ratio_to_p50\",\"api\":\"cudaMemcpy\"}"));
	assert_false(args_ok("get_stacks", "{\"limit\":51}"));
	assert_false(args_ok("get_stacks", "{\"limit\":0}"));
	assert_false(args_ok("get_stacks", "{\"limit\":2.5}"));
	assert_false(args_ok("get_stacks", "{\"limit\":\"3\"}"));
	assert_false(args_ok("get_stacks", "{\"order\":\"x\"}"));
	assert_false(args_ok("get_stacks", "{\"nope\":1}"));
	assert_false(args_ok("get_stacks", "[]"));
	assert_false(args_ok("run_sql", "{}"));
	assert_true(args_ok("run_sql", "{\"sql\":\"SELECT 1\"}"));
	assert_false(args_ok("run_sql", "{\"sql\":null}"));
	assert_false(args_ok("get_trace_stats", "{\"pid\":0}"));
	assert_false(args_ok("get_trace_stats", "{\"from\":true}"));
	assert_true(args_ok("get_trace_stats", "{\"from\":\"1s\",\"to\":\"2s\",\"pid\":42}"));
}

/* The reason mcp_check_args gives for args against a schema (text). */
static const char *why_not(const char *schema_json, const char *args_json)
{
	static char err[256];
	cJSON *schema = cJSON_Parse(schema_json), *args = cJSON_Parse(args_json);
	assert_non_null(schema);
	assert_non_null(args);
	err[0] = 0;
	if (mcp_check_args(schema, args, err, sizeof err) == 0)
		strcpy(err, "ok");
	cJSON_Delete(args);
	cJSON_Delete(schema);
	return err;
}

/* A JSON string of n copies of the UTF-8 character c, as an argument. */
static char *repeated(const char *name, const char *c, size_t n)
{
	size_t cl = strlen(c);
	char *o = malloc(n * cl + strlen(name) + 16), *w = o;
	w += sprintf(w, "{\"%s\":\"", name);
	for (size_t i = 0; i < n; i++, w += cl)
		memcpy(w, c, cl);
	strcpy(w, "\"}");
	return o;
}

static void lengths_are_characters(void **st)
{
	(void)st;
	assert_int_equal(mcp_utf8_chars("", 0), 0);
	assert_int_equal(mcp_utf8_chars("abc", 3), 3);
	assert_int_equal(mcp_utf8_chars("\xc3\xa9", 2), 1);                 /* é */
	assert_int_equal(mcp_utf8_chars("\xf0\x9f\x98\x80", 4), 1);         /* an emoji: one, not two UTF-16 units */
	assert_int_equal(mcp_utf8_chars("\x80\x80\x80", 3), 3);             /* stray bytes count one each */
	assert_int_equal(mcp_utf8_chars("\xf0\x9f\x98", 3), 3);             /* cut short */
	static const struct { const char *tool, *arg, *c; size_t n; int ok; } cases[] = {
		{ "run_sql", "sql", "\xc3\xa9", 60000, 1 },      /* 120,000 bytes: within maxLength 100000 */
		{ "run_sql", "sql", "\xc3\xa9", 100000, 1 },
		{ "run_sql", "sql", "x", 100001, 0 },
		{ "get_trace_stats", "from", "\xf0\x9f\x98\x80", 32, 1 },
		{ "get_trace_stats", "from", "\xf0\x9f\x98\x80", 33, 0 },
		{ "get_trace_stats", "since", "\xc3\xa9", 32, 1 },
		{ "get_timeline", "to", "\xc3\xa9", 33, 0 },
		{ "get_stacks", "api", "\xc3\xa9", 64, 1 },
		{ "get_stacks", "api", "\xc3\xa9", 65, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *args = repeated(cases[i].arg, cases[i].c, cases[i].n);
		if (args_ok(cases[i].tool, args) != cases[i].ok)
			fail_msg("%s %s: %zu characters %s", cases[i].tool, cases[i].arg, cases[i].n,
				 cases[i].ok ? "refused" : "accepted");
		free(args);
	}
	/* minLength, the same count */
	static const char sch[] = "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"minLength\":2,"
		"\"maxLength\":3}}}";
	assert_string_equal(why_not(sch, "{\"s\":\"\xc3\xa9\"}"), "argument 's' is shorter than 2 characters");
	assert_string_equal(why_not(sch, "{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}"), "ok");
	assert_string_equal(why_not(sch, "{\"s\":\"abcd\"}"), "argument 's' is longer than 3 characters");
}

static void ranges_are_written_as_their_type(void **st)
{
	(void)st;
	const struct mcp_tool *t = mcp_tool_find("get_trace_stats");
	assert_string_equal(why_not(t->input_schema, "{\"pid\":3000000000}"),
			    "argument 'pid' is out of range (1..2147483647)");
	assert_string_equal(why_not(t->input_schema, "{\"pid\":0}"), "argument 'pid' is out of range (1..2147483647)");
	assert_string_equal(why_not(mcp_tool_find("run_sql")->input_schema, "{\"sql\":\"x\",\"timeout_ms\":60001}"),
			    "argument 'timeout_ms' is out of range (1..60000)");
	/* every integer argument of every tool: an integer range, no exponent */
	for (size_t i = 0; i < mcp_ntools; i++) {
		cJSON *schema = cJSON_Parse(mcp_tools[i].input_schema);
		const cJSON *prop;
		cJSON_ArrayForEach(prop, cJSON_GetObjectItem(schema, "properties")) {
			const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(prop, "type"));
			if (!type || strcmp(type, "integer"))
				continue;
			char args[160], want[160];
			double mx = cJSON_GetObjectItem(prop, "maximum")->valuedouble;
			double mn = cJSON_GetObjectItem(prop, "minimum")->valuedouble;
			snprintf(args, sizeof args, "{\"sql\":\"x\",\"%s\":%.0f}", prop->string, mx + 1);
			snprintf(want, sizeof want, "argument '%s' is out of range (%.0f..%.0f)", prop->string, mn, mx);
			cJSON *a = cJSON_Parse(args);
			if (strcmp(mcp_tools[i].name, "run_sql"))
				cJSON_DeleteItemFromObject(a, "sql");
			char err[256];
			assert_int_equal(mcp_check_args(schema, a, err, sizeof err), -1);
			if (strcmp(err, want))
				fail_msg("%s: %s (wanted %s)", mcp_tools[i].name, err, want);
			cJSON_Delete(a);
		}
		cJSON_Delete(schema);
	}
	/* numbers keep their fractions; a bound on one side says which */
	assert_string_equal(why_not("{\"properties\":{\"x\":{\"type\":\"number\",\"minimum\":0.1,\"maximum\":2.5}}}",
				    "{\"x\":3}"), "argument 'x' is out of range (0.1..2.5)");
	assert_string_equal(why_not("{\"properties\":{\"x\":{\"type\":\"integer\",\"minimum\":1}}}", "{\"x\":0}"),
			    "argument 'x' is out of range (at least 1)");
	assert_string_equal(why_not("{\"properties\":{\"x\":{\"type\":\"integer\",\"maximum\":9}}}", "{\"x\":10}"),
			    "argument 'x' is out of range (at most 9)");
}

/* --- REALs, NULs, ids ------------------------------------------------------------------ */

static void reals_read_back_exactly(void **st)
{
	(void)st;
	static const struct { double v; const char *text; } cases[] = {
		{ 9007199254740993.0, "9007199254740992" }, { 0.1, "0.1" }, { 1.0 / 3, "0.3333333333333333" },
		{ 2.5, "2.5" }, { 1e-300, "1e-300" }, { 123456789.123456789, "123456789.12345679" },
		{ -0.0, "-0" }, { 1e21, "1e+21" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int special = 1;
		cJSON *j = mcp_sql_real_json(cases[i].v, &special);
		assert_true(cJSON_IsRaw(j));
		assert_int_equal(special, 0);
		assert_string_equal(j->valuestring, cases[i].text);
		cJSON_Delete(j);
	}
	/* any finite double: the text reads back as the same double */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		double v;
		memcpy(&v, &x, sizeof v);
		if (!isfinite(v))
			continue;
		int special;
		cJSON *j = mcp_sql_real_json(v, &special);
		if (strtod(j->valuestring, NULL) != v)
			fail_msg("%.17g printed as %s", v, j->valuestring);
		assert_true(strlen(j->valuestring) <= 24);
		cJSON_Delete(j);
	}
	static const struct { double v; const char *s; } specials[] = {
		{ HUGE_VAL, "Infinity" }, { -HUGE_VAL, "-Infinity" }, { NAN, "NaN" },
	};
	for (size_t i = 0; i < 3; i++) {
		int special = 0;
		cJSON *j = mcp_sql_real_json(specials[i].v, &special);
		assert_int_equal(special, 1);
		assert_string_equal(cJSON_GetStringValue(j), specials[i].s);
		cJSON_Delete(j);
	}
}

static void nul_escapes_and_ids(void **st)
{
	(void)st;
	static const char *const with[] = { "\"\\u0000\"", "{\"a\":\"x\\u0000y\"}", "[\"\\n\", \"\\u0000\"]" };
	static const char *const without[] = { "\"\\\\u0000\"", "\"\\u0001\"", "{\"a\":1}", "\\u0000" };
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(mcp_json_has_nul_escape(with[i], strlen(with[i])), 1);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(mcp_json_has_nul_escape(without[i], strlen(without[i])), 0);
	static const struct { const char *a, *b; int eq; } ids[] = {
		{ "5", "5", 1 }, { "5", "5.0", 1 }, { "5", "\"5\"", 0 }, { "\"\\u00e9\"", "\"\xc3\xa9\"", 1 },
		{ "9007199254740993", "9007199254740993", 1 }, { "9007199254740993", "9007199254740992", 0 },
		{ "\"\\ud800\"", "\"\\ud800\"", 1 }, { "\"a\"", "\"b\"", 0 },
	};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		cJSON *a = cJSON_CreateRaw(ids[i].a), *b = cJSON_CreateRaw(ids[i].b);
		if (mcp_json_ids_equal(a, b) != ids[i].eq)
			fail_msg("%s vs %s", ids[i].a, ids[i].b);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	cJSON *n = cJSON_CreateNumber(7), *r = cJSON_CreateRaw("7"), *sv = cJSON_CreateString("7");
	assert_true(mcp_json_ids_equal(n, r));
	assert_false(mcp_json_ids_equal(n, sv));
	cJSON_Delete(n);
	cJSON_Delete(r);
	cJSON_Delete(sv);
}

/* --- a small database ----------------------------------------------------------------- */

static char dbpath[64];

static void make_db(void)
{
	strcpy(dbpath, "/tmp/ingero-mcp-unit.XXXXXX");
	int fd = mkstemp(dbpath);
	assert_true(fd >= 0);
	close(fd);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	char *e = NULL;
	int rc = sqlite3_exec(db, TB_SCHEMA_SQL
		"INSERT INTO session VALUES('command','python3 train.py'),('start_mono_ns','1000000000'),('cpus','4');"
		"INSERT INTO apis VALUES(13,'cudaStreamSynchronize','sync'),(3,'cudaMemcpyAsync','copy');"
		"INSERT INTO processes(pid,ppid,comm,cmdline,start_ns) VALUES(10,1,'python3','python3 train.py',1000000000);"
		"INSERT INTO threads VALUES(10,10,'python3');"
		"INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu) VALUES(10,10,1200100000,1200800000,1200700000,0,0,1);"
		"INSERT INTO cpu_busy VALUES(0,1000000000,90000000),(0,1100000000,100000000),(1,1200000000,50000000);"
		"INSERT INTO page_allocs VALUES(10,1000000000,64,4,1);"
		"INSERT INTO competitors(pid,comm,bucket_ns,cpu_ns,preemptions) VALUES(99,'make',1000000000,20000000,3);"
		"INSERT INTO stacks(id,pid) VALUES(7,10);"
		"INSERT INTO stack_frames VALUES(7,0,'native',1,'cudaStreamSynchronize','libcudart.so.13',16,NULL,NULL),"
		" (7,0,'python',NULL,'train_loop',NULL,NULL,'train.py',57);",
		NULL, NULL, &e);
	if (rc != SQLITE_OK)
		fail_msg("%s", e);
	char err[256];
	if (tb_insert_mcp_calls(db, err, sizeof err) < 0)
		fail_msg("%s", err);
	sqlite3_close(db);
}

/* Sends one line, returns the reply (NULL when none) parsed. */
static cJSON *exchange(struct mcp_server *s, const char *line)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_int_equal(mcp_serve_line(s, line, strlen(line), out), 0);
	fclose(out);
	cJSON *r = len ? cJSON_Parse(buf) : NULL;
	if (len)
		assert_non_null(r);
	free(buf);
	return r;
}

static int error_code(const cJSON *r)
{
	const cJSON *e = cJSON_GetObjectItem(r, "error");
	return e ? cJSON_GetObjectItem(e, "code")->valueint : 0;
}

static const cJSON *result(const cJSON *r)
{
	const cJSON *x = cJSON_GetObjectItem(r, "result");
	assert_non_null(x);
	return x;
}

/* structuredContent of a successful tool result; fails with the tool's text otherwise. */
static const cJSON *structured(const cJSON *r)
{
	const cJSON *res = result(r);
	const cJSON *sc = cJSON_GetObjectItem(res, "structuredContent");
	if (!sc || cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")))
		fail_msg("tool error: %s", cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0)->child->next->valuestring);
	return sc;
}

static void server_exchanges(void **st)
{
	(void)st;
	make_db();
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);

	cJSON *r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
			    "{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{}}}");
	assert_string_equal(cJSON_GetObjectItem(result(r), "protocolVersion")->valuestring, "2024-11-05");
	cJSON_Delete(r);
	assert_null(exchange(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
	assert_int_equal(s.client_ready, 1);

	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get_stacks\","
			 "\"arguments\":{\"api\":\"cudaStreamSynchronize\",\"limit\":1}}}");
	const cJSON *sc = structured(r);
	const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "calls"), 0);
	assert_int_equal(cJSON_GetObjectItem(c0, "dur_ns")->valuedouble, 900000);
	assert_int_equal(cJSON_GetObjectItem(c0, "runq_ns")->valuedouble, 100000);
	assert_int_equal(cJSON_GetObjectItem(c0, "blocked_ns")->valuedouble, 600000);
	assert_int_equal(cJSON_GetObjectItem(c0, "oncpu_ns")->valuedouble, 200000);
	assert_string_equal(cJSON_GetObjectItem(c0, "python_line")->valuestring, "train.py:57");
	const cJSON *py = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sc, "stacks"), "7"), "python");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(py, 0), "file")->valuestring, "train.py");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(py, 0), "line")->valueint, 57);
	cJSON_Delete(r);

	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"get_trace_stats\"}}");
	sc = structured(r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "apis")), 2);
	cJSON_Delete(r);
	/* same window again: served from the cached view */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"get_per_process_breakdown\",\"arguments\":{}}}");
	assert_int_equal(cJSON_GetObjectItem(structured(r), "main_pid")->valueint, 10);
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"get_causal_chains\",\"arguments\":{\"limit\":3}}}");
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(structured(r), "chains")));
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"get_gpu_idle\"}}");
	assert_non_null(cJSON_GetObjectItem(structured(r), "gpu_idle_pct"));
	/* the per-step breakdown rides along (issue 43): {steps: N, ...} */
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(structured(r), "step_breakdown"), "steps")));
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"get_timeline\",\"arguments\":{\"from\":\"150ms\",\"to\":\"250ms\"}}}");
	sc = structured(r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "events")), 2);   /* the slow sync, its switch */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "events"), 1), "reason")->valuestring,
			    "blocked");
	cJSON_Delete(r);
	/* a window */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"get_trace_stats\","
			 "\"arguments\":{\"from\":\"250ms\"}}}");
	sc = structured(r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sc, "apis")), 1);
	cJSON_Delete(r);

	static const char *const refused[] = {
		"DELETE FROM cuda_calls", "ATTACH ':memory:' AS m", "PRAGMA writable_schema=1",
		"VACUUM INTO '/tmp/ingero-mcp-unit-vacuum.db'", "SELECT 1; SELECT 2", "CREATE TEMP TABLE t(x)",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		char line[512];
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"run_sql\",\"arguments\":{\"sql\":\"%s\"}}}", refused[i]);
		r = exchange(&s, line);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(result(r), "isError")));
		cJSON_Delete(r);
	}
	assert_int_equal(access("/tmp/ingero-mcp-unit-vacuum.db", F_OK), -1);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run_sql\","
			 "\"arguments\":{\"sql\":\"SELECT count(*) FROM cuda_calls\"}}}");
	sc = structured(r);
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sc, "rows"), 0), 0)->valueint, 3);
	cJSON_Delete(r);

	/* errors */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"nope\"}");
	assert_int_equal(error_code(r), -32601);
	cJSON_Delete(r);
	r = exchange(&s, "{bad json");
	assert_int_equal(error_code(r), -32700);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
	cJSON_Delete(r);
	r = exchange(&s, "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":10,"
			 "\"method\":\"tools/list\"}]");   /* 2024-11-05 has batches */
	assert_int_equal(cJSON_GetArraySize(r), 2);
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"prompts/get\",\"params\":{\"name\":\"investigate\"}}");
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(result(r),
		"messages"), 0), "content"), "text")->valuestring, "get_causal_chains"));
	cJSON_Delete(r);

	mcp_server_close(&s);
	unlink(dbpath);
}

/* --- ids and lone surrogates (issue 14, item 2) ---------------------------------------- */

static void surrogates_are_replaced(void **st)
{
	(void)st;
	static const struct { const char *in, *out; } cases[] = {
		{ "\"\\ud800\"", "\"\\uFFFD\"" },                          /* lone high */
		{ "\"\\uDC00x\"", "\"\\uFFFDx\"" },                        /* lone low */
		{ "\"\\ud800\\ud800\\udc00\"", "\"\\uFFFD\\ud800\\udc00\"" },   /* high, then a pair */
		{ "\"a\\ud800\"", "\"a\\uFFFD\"" },
		{ "[\"\\\\\", \"\\udfff\"]", "[\"\\\\\", \"\\uFFFD\"]" },        /* after an escaped backslash */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *o = mcp_json_fix_surrogates(cases[i].in, strlen(cases[i].in));
		if (!o)
			fail_msg("case %zu: %s not rewritten", i, cases[i].in);
		assert_string_equal(o, cases[i].out);
		free(o);
	}
	static const char *const untouched[] = {
		"\"\\ud800\\udc00\"",          /* a proper pair */
		"\"\\\\ud800\"",                /* a backslash, then the text ud800 */
		"{\"a\":1}", "\"\\u00e9\\n\"",
		"\\ud800",                        /* outside any string: not JSON, left to cJSON */
	};
	for (size_t i = 0; i < sizeof untouched / sizeof *untouched; i++)
		assert_null(mcp_json_fix_surrogates(untouched[i], strlen(untouched[i])));
}

/* Sends one line; the reply's raw text (caller frees), "" when none. */
static char *exchange_raw(struct mcp_server *s, const char *line)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_int_equal(mcp_serve_line(s, line, strlen(line), out), 0);
	fclose(out);
	return buf;
}

static void ids_come_back_exactly(void **st)
{
	(void)st;
	make_db();
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);
	static const char *const ids[] = {
		"9007199254740993", "9007199254740991", "-9007199254740993", "18446744073709551617",
		"123456789012345678901234567890", "1234567890123456", "0", "-1", "1e3", "1.5",
		"\"\\ud800\"", "\"x\\udc00y\"", "\"\\u00e9\"", "\"plain\"",
	};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		char line[256], want[256];
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", ids[i]);
		snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", ids[i]);
		char *got = exchange_raw(&s, line);
		assert_string_equal(got, want);
		free(got);
	}
	/* an escaped key, spaces, the id after a nested "id" */
	char *got = exchange_raw(&s, "{ \"params\" : {\"id\":[1,{\"id\":2}]} , \"jsonrpc\":\"2.0\", \"\\u0069d\" : "
				 "9007199254740993 ,\"method\":\"ping\"}");
	assert_string_equal(got, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"result\":{}}\n");
	free(got);
	/* an escape JSON does not allow (cJSON would read "\u" + non-hex as
	 * U+0000 and echo the raw id): a parse error, never an id that is
	 * not JSON */
	static const char *const bad[] = { "\"\\u\"", "\"\\uzz00\"", "\"a\\x\"", "\"\\u12\"", "\"\\'\"" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char line[256];
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad[i]);
		cJSON *e = exchange(&s, line);
		assert_int_equal(error_code(e), -32700);
		assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "id")));
		cJSON_Delete(e);
	}
	static const char good[] = "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"", outside[] = "\\q \"\\q\"";
	assert_int_equal(mcp_json_bad_escape(good, strlen(good)), -1);
	assert_int_equal(mcp_json_bad_escape(outside, strlen(outside)), 4);   /* outside a string: not an escape */
	/* a lone surrogate in the params: answered, not a parse error */
	cJSON *r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{\"name\":\"run_sql\","
			    "\"arguments\":{\"sql\":\"SELECT 'a\\ud800b' AS s, '\\\\ud800' AS t\"}}}");
	assert_int_equal(error_code(r), 0);
	const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r), "rows"), 0);
	assert_string_equal(cJSON_GetArrayItem(row, 0)->valuestring, "a\xef\xbf\xbd" "b");
	assert_string_equal(cJSON_GetArrayItem(row, 1)->valuestring, "\\ud800");
	cJSON_Delete(r);
	/* a batch (2024-11-05): each id as sent */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
		     "{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{}}}");
	cJSON_Delete(r);
	got = exchange_raw(&s, "[{\"jsonrpc\":\"2.0\",\"id\":9007199254740995,\"method\":\"ping\"}, "
			   "{\"method\":\"ping\",\"jsonrpc\":\"2.0\",\"id\":\"\\udfff\"},{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]");
	assert_string_equal(got, "[{\"jsonrpc\":\"2.0\",\"id\":9007199254740995,\"result\":{}},"
			    "{\"jsonrpc\":\"2.0\",\"id\":\"\\udfff\",\"result\":{}}]\n");
	free(got);
	mcp_server_close(&s);
	unlink(dbpath);
}

/* --- values through run_sql, cancellation (issue 38) ------------------------------------- */

static void run_sql_values_whole(void **st)
{
	(void)st;
	make_db();
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);
	char *raw = exchange_raw(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
				 "\"run_sql\",\"arguments\":{\"sql\":\"SELECT 'a' || char(0) || 'b' || char(0), "
				 "9007199254740993.0, 1e308 * 10, -1e308 * 10, CAST(x'00' AS TEXT)\"}}}");
	assert_non_null(strstr(raw, "[[\"a\\u0000b\\u0000\",9007199254740992,\"Infinity\",\"-Infinity\",\"\\u0000\"]]"));
	cJSON *r = cJSON_Parse(raw);
	free(raw);
	const cJSON *sc = structured(r);
	const cJSON *nf = cJSON_GetObjectItem(sc, "non_finite_reals");
	assert_int_equal(cJSON_GetObjectItem(nf, "count")->valueint, 2);
	char *cells = cJSON_PrintUnformatted(cJSON_GetObjectItem(nf, "cells"));
	assert_string_equal(cells, "[[0,2],[0,3]]");
	free(cells);
	const char *text = cJSON_GetArrayItem(cJSON_GetObjectItem(result(r), "content"), 0)->child->next->valuestring;
	assert_non_null(strstr(text, "2 REAL values that JSON cannot hold"));
	cJSON_Delete(r);
	/* a NUL escaped in an argument: refused, not run on a string cut at it */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run_sql\","
		     "\"arguments\":{\"sql\":\"SELECT 1\\u0000; SELECT 2\"}}}");
	assert_int_equal(error_code(r), -32602);
	assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, 2);
	cJSON_Delete(r);
	assert_null(exchange(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":{\"a\":\"\\u0000\"}}"));
	/* temporary data is capped in memory (the server's own process: a
	 * lower cap than the default, so that the test is quick) */
	mcp_sql_close(s.files[0].sql);
	s.files[0].sql = NULL;
	s.sql_heap = 16ll << 20;
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_sql\","
		     "\"arguments\":{\"timeout_ms\":60000,\"sql\":\"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
		     "FROM r LIMIT 3000000) SELECT count(*) FROM (SELECT DISTINCT printf('%040d', x) FROM r)\"}}}");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(result(r), "isError")));
	assert_non_null(strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(result(r), "content"), 0)->child->next->valuestring,
			       "more than 16 MiB of memory"));
	cJSON_Delete(r);
	mcp_server_close(&s);
	unlink(dbpath);
}

static void cancelled_while_running(void **st)
{
	(void)st;
	make_db();
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);
	/* what the client sends while request 5 runs, all there before it starts */
	static const char meanwhile[] =
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}\n"
		"not json\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":8}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"5\"}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"a\":\"\\u0000\"}}\n"
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5}}\n"
		"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\n";
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], meanwhile, sizeof meanwhile - 1), (ssize_t)sizeof meanwhile - 1);
	struct mcp_reader rd;
	mcp_reader_init(&rd, p[0], 4096);
	char *side = NULL;
	size_t side_len = 0;
	s.in = &rd;
	s.out = open_memstream(&side, &side_len);
	/* counts to 1e9 unless stopped: the cancel (id 5, not "5") stops it */
	char *raw = exchange_raw(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
				 "\"run_sql\",\"arguments\":{\"timeout_ms\":60000,\"sql\":\"WITH RECURSIVE r(x) AS "
				 "(SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 1000000000) SELECT count(*) FROM r\"}}}");
	assert_string_equal(raw, "");                        /* cancelled: no answer */
	free(raw);
	fflush(s.out);
	/* ping 7 was answered while it ran; reading stopped at the cancel */
	assert_string_equal(side, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
	/* kept for after, in order: "not json" and ping 9 (escaping a NUL: not
	 * answered at once); tools/list 8 was cancelled while it waited */
	static const char ping9[] = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"a\":\"\\u0000\"}}";
	assert_int_equal(s.pending_bytes, strlen("not json") + strlen(ping9));
	assert_int_equal(mcp_read_line(&rd), MCP_LINE);       /* ping 10: still to be read */
	assert_non_null(strstr(rd.line, "\"id\":10"));
	/* the next request is served normally, and nothing is cancelled any more */
	cJSON *r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"run_sql\","
			    "\"arguments\":{\"sql\":\"SELECT 42\"}}}");
	assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r), "rows"), 0), 0)->valueint, 42);
	cJSON_Delete(r);
	fclose(s.out);
	free(side);
	s.in = NULL;
	s.out = NULL;
	mcp_server_close(&s);                                 /* frees what was kept */
	mcp_reader_free(&rd);
	close(p[0]);
	close(p[1]);
	unlink(dbpath);
}

/* --- the byte cap on a result (issue 14, item 3) ---------------------------------------- */

/* Two files served as two nodes: node 1 holds one process more. */
static void several_nodes(void **st)
{
	(void)st;
	make_db();
	char a[64], b[64];
	strcpy(a, dbpath);
	make_db();
	strcpy(b, dbpath);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(b, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO processes(pid,ppid,comm,cmdline,start_ns) "
				      "VALUES(20,10,'w','w',1000000000)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	const char *paths[] = { a, b };
	assert_int_equal(mcp_server_open_files(&s, paths, 2, err, sizeof err), 0);
	/* named by their files' base names (no host in these sessions) */
	assert_string_equal(s.files[0].name, strrchr(a, '/') + 1);
	assert_string_equal(s.files[1].name, strrchr(b, '/') + 1);

	/* tools/list: get_nodes offered, "node" in every per-trace schema, said in the description */
	cJSON *r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	const cJSON *t;
	int nodes_tool = 0, with_node = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(result(r), "tools")) {
		const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
		const cJSON *node = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"),
									   "properties"), "node");
		if (!strcmp(name, "get_nodes")) {
			nodes_tool = 1;
			assert_null(node);
			continue;
		}
		assert_non_null(node);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(node, "type")), 2);
		assert_non_null(strstr(cJSON_GetObjectItem(t, "description")->valuestring, "Here 2 report.db are served"));
		with_node++;
	}
	assert_true(nodes_tool);
	assert_int_equal(with_node, (int)mcp_ntools - 1);
	cJSON_Delete(r);

	/* each tool reads the file its node names: an index, a name, the path as given; node 0 without */
	static const char *const count = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"run_sql\",\"arguments\":{\"sql\":\"SELECT count(*) FROM processes\"%s}}}";
	char line[512], arg[160];
	const char *nodes[] = { "", ",\"node\":0", ",\"node\":1", ",\"node\":\"%s\"", ",\"node\":\"%s\"" };
	const char *names[] = { NULL, NULL, NULL, s.files[1].name, b };
	const int want[] = { 1, 1, 2, 2, 2 };
	for (size_t i = 0; i < 5; i++) {
		snprintf(arg, sizeof arg, nodes[i], names[i]);
		snprintf(line, sizeof line, count, arg);
		r = exchange(&s, line);
		assert_int_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r), "rows"), 0), 0)->valueint,
				 want[i]);
		cJSON_Delete(r);
	}
	/* the cached view is one file's: node 1's, then node 0's again */
	static const char *const pp = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"get_per_process_breakdown\",\"arguments\":{%s}}}";
	const char *pa[] = { "\"node\":1", "", "\"node\":1" };
	const int np[] = { 2, 1, 2 };
	for (size_t i = 0; i < 3; i++) {
		snprintf(line, sizeof line, pp, pa[i]);
		r = exchange(&s, line);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(structured(r), "processes")), np[i]);
		cJSON_Delete(r);
	}

	/* a node not served: one JSON-RPC error naming it, and the server goes on */
	static const char *const bad[][2] = {
		{ "2", "get_gpu_idle: no node 2: 2 nodes are served, 0 to 1 (get_nodes lists them with their names)" },
		{ "-1", "get_gpu_idle: no node -1: 2 nodes are served, 0 to 1 (get_nodes lists them with their names)" },
		{ "\"nope\"", "get_gpu_idle: no node named \"nope\": 2 nodes are served, 0 to 1, by index or by the name "
			      "get_nodes lists" },
		{ "true", "get_gpu_idle: argument 'node' must be an integer or a string, not a boolean" },
		{ "0.5", "get_gpu_idle: argument 'node' must be an integer, not a fraction" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"get_gpu_idle\",\"arguments\":{\"node\":%s}}}", bad[i][0]);
		r = exchange(&s, line);
		assert_int_equal(error_code(r), -32602);
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "message")->valuestring, bad[i][1]);
		cJSON_Delete(r);
		r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");
		assert_non_null(result(r));
		cJSON_Delete(r);
	}

	/* get_nodes: both files, node 0 the reference; no ranks in these traces */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"get_nodes\"}}");
	const cJSON *arr = cJSON_GetObjectItem(structured(r), "nodes");
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	for (int i = 0; i < 2; i++) {
		const cJSON *n = cJSON_GetArrayItem(arr, i);
		assert_int_equal(cJSON_GetObjectItem(n, "node")->valueint, i);
		assert_string_equal(cJSON_GetObjectItem(n, "file")->valuestring, i ? b : a);
		assert_string_equal(cJSON_GetObjectItem(n, "name")->valuestring, s.files[i].name);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(n, "ranks")), 0);
	}
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 0), "offset_applied_ns")->valueint, 0);
	cJSON_Delete(r);
	/* get_ranks across the nodes: no job here, said; no window across them; with node, that file */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"get_ranks\"}}");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(structured(r), "straggler")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(structured(r), "nodes")), 2);
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"get_ranks\","
		     "\"arguments\":{\"from\":\"1s\"}}}");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(result(r), "isError")));
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"get_ranks\","
		     "\"arguments\":{\"node\":1,\"from\":\"1s\"}}}");
	assert_null(cJSON_GetObjectItem(structured(r), "nodes"));
	cJSON_Delete(r);
	/* the prompt says how to begin with the job */
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"prompts/get\",\"params\":{\"name\":\"investigate\"}}");
	const cJSON *msg = cJSON_GetArrayItem(cJSON_GetObjectItem(result(r), "messages"), 0);
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(msg, "content"), "text")->valuestring,
			       "Begin with the job: get_nodes"));
	cJSON_Delete(r);
	mcp_server_close(&s);
	unlink(a);
	unlink(b);

	/* one file: no node anywhere, no get_nodes */
	make_db();
	memset(&s, 0, sizeof s);
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	int n = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(result(r), "tools")) {
		assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "inputSchema"), "properties"), "node"));
		assert_null(strstr(cJSON_GetObjectItem(t, "description")->valuestring, "report.db are served"));
		n++;
	}
	assert_int_equal(n, (int)mcp_ntools - 1);
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get_nodes\"}}");
	assert_int_equal(error_code(r), -32602);
	cJSON_Delete(r);
	r = exchange(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"get_gpu_idle\","
		     "\"arguments\":{\"node\":0}}}");
	assert_int_equal(error_code(r), -32602);
	cJSON_Delete(r);
	mcp_server_close(&s);
	unlink(dbpath);
}

static void results_are_capped(void **st)
{
	(void)st;
	make_db();
	struct mcp_server s;
	memset(&s, 0, sizeof s);
	char err[256];
	assert_int_equal(mcp_server_open(&s, dbpath, err, sizeof err), 0);
	/* 5,000 rows of 200-digit strings: about 1 MB of values */
	static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"run_sql\",\"arguments\":{\"max_rows\":5000,\"sql\":\"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
		"SELECT x + 1 FROM r LIMIT 5000) SELECT x, printf('%0200d', x) AS pad FROM r\"}}}";
	char *raw = exchange_raw(&s, line);
	assert_true(strlen(raw) <= MCP_RESULT_MAX_BYTES + 64);   /* + the JSON-RPC envelope */
	cJSON *r = cJSON_Parse(raw);
	free(raw);
	const cJSON *sc = structured(r);
	const cJSON *rows = cJSON_GetObjectItem(sc, "rows");
	int kept = cJSON_GetArraySize(rows);
	assert_true(kept > 100 && kept < 5000);
	/* whole rows, the first ones, in order: nothing cut inside a value */
	for (int i = 0; i < kept; i++) {
		const cJSON *row = cJSON_GetArrayItem(rows, i);
		assert_int_equal(cJSON_GetArrayItem(row, 0)->valueint, i + 1);
		assert_int_equal(strlen(cJSON_GetArrayItem(row, 1)->valuestring), 200);
		assert_int_equal(atoi(cJSON_GetArrayItem(row, 1)->valuestring), i + 1);
	}
	const cJSON *rt = cJSON_GetObjectItem(sc, "result_truncated");
	assert_non_null(rt);
	assert_int_equal(cJSON_GetObjectItem(rt, "limit_bytes")->valueint, MCP_RESULT_MAX_BYTES);
	int rows_read = cJSON_GetObjectItem(cJSON_GetObjectItem(rt, "left_out"), "rows")->valueint + kept;
	assert_true(rows_read <= 5000);   /* what run_sql read before its own 1 MiB cap */
	assert_int_equal(cJSON_GetObjectItem(sc, "row_count")->valueint, kept);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(sc, "truncated")));
	const char *text = cJSON_GetArrayItem(cJSON_GetObjectItem(result(r), "content"), 0)->child->next->valuestring;
	assert_non_null(strstr(text, "Result cut to 256 KiB"));
	cJSON_Delete(r);

	/* a lower cap: every tool result stays under it, cut or not */
	mcp_result_max_bytes = 6000;
	static const char *const calls[] = { "get_trace_stats", "get_per_process_breakdown", "get_causal_chains",
					     "get_gpu_idle", "get_stacks", "get_timeline", "get_ranks" };
	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		char l[256];
		snprintf(l, sizeof l, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
			 "{\"name\":\"%s\"}}", calls[i]);
		raw = exchange_raw(&s, l);
		if (strlen(raw) > 6000 + 64)
			fail_msg("%s: %zu bytes", calls[i], strlen(raw));
		r = cJSON_Parse(raw);
		assert_non_null(r);
		free(raw);
		cJSON_Delete(r);
	}
	raw = exchange_raw(&s, line);
	assert_true(strlen(raw) <= 6000 + 64);
	free(raw);
	mcp_result_max_bytes = MCP_RESULT_MAX_BYTES;
	mcp_server_close(&s);
	unlink(dbpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reader_splits_lines),
		cmocka_unit_test(reader_drops_long_lines),
		cmocka_unit_test(reader_reads_without_waiting),
		cmocka_unit_test(utf8_is_cleaned),
		cmocka_unit_test(fence_escapes),
		cmocka_unit_test(schemas_check_arguments),
		cmocka_unit_test(lengths_are_characters),
		cmocka_unit_test(ranges_are_written_as_their_type),
		cmocka_unit_test(reals_read_back_exactly),
		cmocka_unit_test(nul_escapes_and_ids),
		cmocka_unit_test(server_exchanges),
		cmocka_unit_test(surrogates_are_replaced),
		cmocka_unit_test(ids_come_back_exactly),
		cmocka_unit_test(results_are_capped),
		cmocka_unit_test(run_sql_values_whole),
		cmocka_unit_test(cancelled_while_running),
		cmocka_unit_test(several_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
