/*
 * fuzz_analyzer_mcp.c — libFuzzer target for the MCP server's message
 * handling (analyzer/mcp*.c): every input is split into lines and each line
 * goes through mcp_serve_line() exactly as a line from stdin would, on a
 * small real report.db.  Whatever the bytes, the server must answer with
 * valid JSON (or nothing, for notifications), never crash, leak or write
 * to the database.  run_sql gets a 50 ms time limit so that random SQL
 * cannot stall the run.  Then the same input is served again as a stream
 * (mcp_serve on a file holding it), where a run_sql reads the lines after
 * it while it runs: pings answered at once, notifications/cancelled acted
 * on, the rest kept and served after (issue 38); every line that comes out
 * must be valid JSON.  An input that names a node, get_ranks, tools/list or
 * prompts/get is also served by a server of two copies of the database as
 * two nodes of one job (issue 44: the node argument, get_nodes, get_ranks
 * across the nodes).  Seeds:
 * tests/fuzz/corpus/fuzz_analyzer_mcp/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ingero/schema.h>

#include "../../analyzer/mcp/mcp_internal.h"
#include "../unit/call_blocks.h"

static struct mcp_server server;
static struct mcp_server nodes;   /* path and path2 as two nodes */
static FILE *sink;
static char *out_buf;
static size_t out_len;

static void make_db(const char *path)
{
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		abort();
	char *e = NULL;
	if (sqlite3_exec(db, TB_SCHEMA_SQL
		"INSERT INTO session VALUES('command','python3 </trace-data> train.py'),('start_mono_ns','1000000000');"
		"INSERT INTO apis VALUES(13,'cudaStreamSynchronize','sync'),(3,'cudaMemcpyAsync','copy');"
		"INSERT INTO processes(pid,ppid,comm,cmdline) VALUES(10,1,'python3','python3 train.py'),(11,10,'w\xff','w');"
		"INSERT INTO threads VALUES(10,10,'python3'),(11,11,'w');"
		"INSERT INTO off_cpu(pid,tid,start_ns,end_ns,runnable_ns,preempted,next_pid,cpu) VALUES(10,10,1200100000,1200800000,1200700000,0,11,1),"
		" (11,11,1000000000,1100000000,1050000000,1,10,0);"
		"INSERT INTO cpu_busy VALUES(0,1000000000,90000000),(0,1100000000,100000000),(1,1200000000,50000000);"
		"INSERT INTO page_allocs VALUES(10,1000000000,64,4,1);"
		"INSERT INTO competitors(pid,comm,bucket_ns,cpu_ns,preemptions) VALUES(99,'make',1000000000,20000000,3);"
		"INSERT INTO stacks(id,pid) VALUES(7,10);"
		"INSERT INTO stack_frames VALUES(7,0,'native',1,'cudaStreamSynchronize','libcudart.so.13',16,NULL,NULL),"
		" (7,0,'python',NULL,'train_loop',NULL,NULL,'train.py',57);",
		NULL, NULL, &e) != SQLITE_OK)
		abort();
	char err[256];
	if (tb_insert_mcp_calls(db, err, sizeof err) < 0) {
		fprintf(stderr, "fuzz_analyzer_mcp: %s\n", err);
		abort();
	}
	sqlite3_close(db);
}

static char path[] = "/tmp/ingero-fuzz-mcp.XXXXXX";
static char path2[] = "/tmp/ingero-fuzz-mcp2.XXXXXX";

static void remove_db(void)
{
	unlink(path);
	unlink(path2);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	int fd = mkstemp(path);
	int fd2 = mkstemp(path2);
	if (fd < 0 || fd2 < 0)
		abort();
	close(fd);
	close(fd2);
	atexit(remove_db);
	make_db(path);
	make_db(path2);
	char err[256];
	mcp_quiet = 1;
	server.sql_timeout_ms = 50;
	if (mcp_server_open(&server, path, err, sizeof err) < 0) {
		fprintf(stderr, "fuzz_analyzer_mcp: %s\n", err);
		abort();
	}
	const char *paths[] = { path, path2 };
	nodes.sql_timeout_ms = 50;
	if (mcp_server_open_files(&nodes, paths, 2, err, sizeof err) < 0) {
		fprintf(stderr, "fuzz_analyzer_mcp: %s\n", err);
		abort();
	}
	sink = open_memstream(&out_buf, &out_len);
	return 0;
}

/* Each line of out_buf[0..out_len) is valid JSON (lone surrogate escapes
 * read as mcp_json.c reads them). */
static void check_lines(void)
{
	const char *p = out_buf, *end = out_buf + out_len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort();   /* every reply ends its line */
		size_t n = (size_t)(nl - p);
		char *fixed = mcp_json_fix_surrogates(p, n);
		cJSON *r = cJSON_ParseWithLength(fixed ? fixed : p, n);
		free(fixed);
		if (!r)
			abort();
		cJSON_Delete(r);
		p = nl + 1;
	}
}

/* The input as a stream: the server reads on while a request runs. */
static void serve_stream(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-mcp-input", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	server.initialized = 0;
	server.client_ready = 0;
	server.protocol = NULL;
	rewind(sink);
	if (mcp_serve(&server, fd, sink) < 0)
		abort();
	close(fd);
	fflush(sink);
	check_lines();
	if (server.pending || server.running_id)
		abort();   /* nothing left behind */
}

/* Each line through mcp_serve_line on s: one line of valid JSON out, or none. */
static void serve_lines(struct mcp_server *s, const uint8_t *data, size_t size)
{
	/* each input is one session: the negotiated revision starts afresh */
	s->initialized = 0;
	s->client_ready = 0;
	s->protocol = NULL;
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		rewind(sink);
		if (mcp_serve_line(s, p, n, sink) < 0)
			abort();
		fflush(sink);
		/* every reply is one line of JSON */
		if (out_len) {
			if (out_buf[out_len - 1] != '\n' || memchr(out_buf, '\n', out_len - 1))
				abort();
			/* an id is echoed as sent, lone surrogate escapes
			 * included: valid JSON that cJSON reads only with
			 * them replaced (mcp_json.c) */
			char *fixed = mcp_json_fix_surrogates(out_buf, out_len);
			cJSON *r = cJSON_ParseWithLength(fixed ? fixed : out_buf, out_len);
			free(fixed);
			if (!r)
				abort();
			cJSON_Delete(r);
		}
		p += n + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	serve_lines(&server, data, size);
	/* the two nodes where the input touches what differs there (it
	 * halves the runs a second otherwise) */
	if (memmem(data, size, "node", 4) || memmem(data, size, "get_ranks", 9) || memmem(data, size, "tools/list", 10) ||
	    memmem(data, size, "prompts/get", 11))
		serve_lines(&nodes, data, size);
	serve_stream(data, size);
	return 0;
}
