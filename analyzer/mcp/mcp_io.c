/*
 * mcp_io.c — the stdio transport (see mcp_io.h).
 *
 * The reader does its own buffering on the file descriptor instead of
 * getline(): getline() grows its buffer to the whole line, so one huge
 * message would cost its full size in memory before we could refuse it.
 * Here a line is copied into `line` only while it fits in `max`; past that
 * the bytes are counted and dropped, and the caller answers with an error
 * and goes on with the next line.  A NUL byte inside a line is kept (the
 * JSON parser then rejects the message as malformed; nothing is silently
 * cut at the NUL).
 */
#include "mcp/mcp_io.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void mcp_reader_init(struct mcp_reader *r, int fd, size_t max)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
	r->max = max;
}

void mcp_reader_free(struct mcp_reader *r)
{
	free(r->line);
	r->line = NULL;
	r->cap = r->len = 0;
}

/* Appends n bytes to the line while it stays within max; counts them always. */
static int keep(struct mcp_reader *r, const char *p, size_t n)
{
	size_t before = r->total;
	r->total += n;
	if (before > r->max)
		return 0;                      /* already too long: drop */
	if (r->total > r->max)
		return 0;                      /* becomes too long now: drop (len stays short) */
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		char *q = realloc(r->line, cap);
		if (!q)
			return -1;
		r->line = q;
		r->cap = cap;
	}
	memcpy(r->line + r->len, p, n);
	r->len += n;
	r->line[r->len] = 0;
	return 0;
}

static enum mcp_read_status finish(struct mcp_reader *r)
{
	if (r->total > r->max) {
		r->len = 0;
		if (r->line)
			r->line[0] = 0;
		return MCP_LINE_TOO_LONG;
	}
	if (!r->line && keep(r, "", 0) < 0)    /* an empty line still gets a buffer */
		return MCP_LINE_ERROR;
	if (r->len && r->line[r->len - 1] == '\r')
		r->line[--r->len] = 0;
	return MCP_LINE;
}

/* The next line; without `wait`, MCP_LINE_AGAIN instead of blocking when
 * no byte is ready, with the part already read kept in line/len/total. */
static enum mcp_read_status read_line(struct mcp_reader *r, int wait)
{
	if (!r->partial) {
		r->len = 0;
		r->total = 0;
		if (r->line)
			r->line[0] = 0;
	}
	for (;;) {
		if (r->pos == r->end) {
			if (r->eof) {
				if (!r->partial)
					return MCP_LINE_EOF;
				r->partial = 0;
				return finish(r);
			}
			if (!wait) {
				struct pollfd p = { .fd = r->fd, .events = POLLIN };
				int n = poll(&p, 1, 0);
				if (n < 0 && errno != EINTR)
					return MCP_LINE_ERROR;
				if (n <= 0)
					return MCP_LINE_AGAIN;   /* POLLHUP/POLLERR: read() says which */
			}
			ssize_t n = read(r->fd, r->chunk, sizeof r->chunk);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return MCP_LINE_ERROR;
			}
			r->pos = 0;
			r->end = (size_t)n;
			if (n == 0) {
				r->eof = 1;
				continue;
			}
		}
		r->partial = 1;
		char *s = r->chunk + r->pos;
		size_t avail = r->end - r->pos;
		char *nl = memchr(s, '\n', avail);
		size_t n = nl ? (size_t)(nl - s) : avail;
		if (keep(r, s, n) < 0)
			return MCP_LINE_ERROR;
		r->pos += n + (nl ? 1 : 0);
		if (nl) {
			r->partial = 0;
			return finish(r);
		}
	}
}

enum mcp_read_status mcp_read_line(struct mcp_reader *r)
{
	return read_line(r, 1);
}

enum mcp_read_status mcp_read_line_ready(struct mcp_reader *r)
{
	return read_line(r, 0);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t len;
	unsigned min, cp;
	if ((c & 0xe0) == 0xc0) { len = 2; min = 0x80; cp = c & 0x1f; }
	else if ((c & 0xf0) == 0xe0) { len = 3; min = 0x800; cp = c & 0x0f; }
	else if ((c & 0xf8) == 0xf0) { len = 4; min = 0x10000; cp = c & 0x07; }
	else return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

char *mcp_utf8_clean(const char *s, size_t len, size_t *outlen)
{
	/* worst case: every byte becomes the 3-byte U+FFFD */
	char *o = malloc(len * 3 + 1);
	if (!o)
		return NULL;
	size_t w = 0;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		size_t k = utf8_seq(u + i, len - i);
		if (k) {
			memcpy(o + w, u + i, k);
			w += k;
			i += k;
		} else {
			memcpy(o + w, "\xef\xbf\xbd", 3);
			w += 3;
			i++;
		}
	}
	o[w] = 0;
	if (outlen)
		*outlen = w;
	return o;
}

size_t mcp_utf8_chars(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;
	for (size_t i = 0; i < len; n++) {
		size_t k = utf8_seq(u + i, len - i);
		i += k ? k : 1;
	}
	return n;
}

int mcp_write(FILE *out, const cJSON *msg)
{
	char *s = cJSON_PrintUnformatted(msg);
	if (!s)
		return -1;
	size_t n = strlen(s);
	const char *p = s;
	char *clean = NULL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80) {   /* only then is a check needed */
			clean = mcp_utf8_clean(s, n, &n);
			if (!clean) {
				free(s);
				return -1;
			}
			p = clean;
			break;
		}
	int rc = fwrite(p, 1, n, out) != n || fputc('\n', out) == EOF || fflush(out) != 0 ? -1 : 0;
	free(clean);
	free(s);
	return rc;
}
