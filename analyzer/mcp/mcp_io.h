/*
 * mcp_io.h — the MCP stdio transport: newline-delimited JSON-RPC messages.
 *
 * Reading: lines of any length arrive, but only the first `max` bytes of a
 * line are kept; the rest is read and thrown away up to the newline, so a
 * client that sends 10 MB (or 10 GB) costs at most `max` bytes of memory and
 * the next message is read normally.  A line can also be read without
 * waiting (mcp_read_line_ready: what the server does while a request runs,
 * mcp.c); a line that has only partly arrived is kept and completed by the
 * next call of either kind.  Writing: one message per line, always
 * valid UTF-8 (bytes from traced programs that are not UTF-8 become U+FFFD),
 * flushed at once.
 */
#ifndef IA_MCP_IO_H
#define IA_MCP_IO_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

struct mcp_reader {
	int fd;
	size_t max;            /* longest line kept, in bytes */
	char chunk[65536];     /* bytes read from fd, not consumed yet */
	size_t pos, end;
	char *line;            /* the current line, NUL-terminated */
	size_t len, cap;
	size_t total;          /* length of the current line as sent (may exceed max) */
	int partial;           /* a line is under way: line/len/total hold its start */
	int eof;
};

enum mcp_read_status {
	MCP_LINE,              /* line/len hold a message */
	MCP_LINE_TOO_LONG,     /* a line over max was read and dropped; total says how long */
	MCP_LINE_EOF,          /* input ended (a last unterminated line is returned first) */
	MCP_LINE_ERROR,        /* read(2) failed (errno set) or out of memory */
	MCP_LINE_AGAIN,        /* mcp_read_line_ready only: no whole line has arrived yet */
};

void mcp_reader_init(struct mcp_reader *r, int fd, size_t max);
void mcp_reader_free(struct mcp_reader *r);
/* Next line without its "\n" (and without a trailing "\r"). */
enum mcp_read_status mcp_read_line(struct mcp_reader *r);
/* The same without waiting: MCP_LINE_AGAIN when the next line has not
 * arrived whole (what did arrive is kept for the next call). */
enum mcp_read_status mcp_read_line_ready(struct mcp_reader *r);

/* Writes msg as one line and flushes; -1 when the output is gone. */
int mcp_write(FILE *out, const cJSON *msg);

/* Replaces every invalid UTF-8 sequence of s[0..len) by U+FFFD; returns a
 * new NUL-terminated string (or NULL on OOM).  Exposed for the tests. */
char *mcp_utf8_clean(const char *s, size_t len, size_t *outlen);

/* Characters in s[0..len): Unicode code points, as JSON Schema's maxLength
 * and minLength count them (not bytes, not UTF-16 units); a byte that
 * starts no valid UTF-8 sequence counts as one (it goes out as U+FFFD). */
size_t mcp_utf8_chars(const char *s, size_t len);

#endif
