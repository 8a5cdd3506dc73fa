/*
 * wrap.c — fitting lines to a width (wrap.h).
 */
#include "base/wrap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int width_set;

void ia_width_set(int width)
{
	width_set = width;
}

int ia_width_given(void)
{
	return width_set > 0;
}

int ia_width_for(FILE *f)
{
	if (width_set > 0)
		return width_set;
	struct winsize ws;
	int fd = fileno(f);
	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= IA_WIDTH_MIN)
		return ws.ws_col;
	return IA_WIDTH_DEFAULT;
}

static int is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t ia_text_width(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += !is_cont((unsigned char)s[i]);
	return n;
}

/* Bytes of s (len) that fit in cols characters, never inside a UTF-8 sequence. */
static size_t bytes_for(const char *s, size_t len, size_t cols)
{
	size_t i = 0, n = 0;
	while (i < len) {
		if (!is_cont((unsigned char)s[i])) {
			if (n == cols)
				break;
			n++;
		}
		i++;
	}
	return i;
}

/* Where a continuation starts: under the text, past a leading tag
 * ("[HOST] ") or number ("12. "), else two past the leading spaces. */
static size_t hang_of(const char *s, size_t len, size_t max)
{
	size_t i = 0;
	while (i < len && s[i] == ' ')
		i++;
	size_t lead = i, h = lead + 2;
	if (i < len && s[i] == '[') {
		size_t j = i + 1;
		while (j < len && j - i < 16 && s[j] != ']' && s[j] != ' ')
			j++;
		if (j + 1 < len && s[j] == ']' && s[j + 1] == ' ')
			h = j + 2;
	} else if (i < len && s[i] >= '0' && s[i] <= '9') {
		size_t j = i;
		while (j < len && s[j] >= '0' && s[j] <= '9')
			j++;
		if (j + 1 < len && s[j] == '.' && s[j + 1] == ' ')
			h = j + 2;
	}
	return h > max / 2 ? lead < max / 2 ? lead : 0 : h;
}

static void wrap_line(FILE *f, const char *s, size_t len, size_t width)
{
	if (ia_text_width(s, len) <= width) {
		fwrite(s, 1, len, f);
		fputc('\n', f);
		return;
	}
	size_t hang = hang_of(s, len, width);
	size_t pos = 0, indent = 0;
	int first = 1;
	while (pos < len) {
		size_t room = width - indent;
		if (!first) {
			while (pos < len && s[pos] == ' ')
				pos++;
			if (pos == len)
				break;
		}
		size_t rest = len - pos, take;
		if (ia_text_width(s + pos, rest) <= room) {
			take = rest;
		} else {
			size_t fit = bytes_for(s + pos, rest, room);
			/* the last space inside what fits (after the indent of a first line) */
			size_t cut = fit;
			while (cut > 0 && s[pos + cut] != ' ')
				cut--;
			size_t lead = 0;
			while (first && lead < fit && s[pos + lead] == ' ')
				lead++;
			take = cut > lead ? cut : fit;   /* no space to cut at: cut the word */
		}
		if (!first)
			fprintf(f, "%*s", (int)indent, "");
		size_t end = take;
		while (end > 0 && s[pos + end - 1] == ' ')
			end--;
		fwrite(s + pos, 1, end, f);
		fputc('\n', f);
		pos += take;
		first = 0;
		indent = hang;
	}
}

void ia_wrap_write(FILE *f, const char *text, size_t len, int width)
{
	size_t w = width < IA_WIDTH_MIN ? IA_WIDTH_MIN : (size_t)width;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - text) : len;
		wrap_line(f, text + i, e - i, w);
		i = e + 1;
	}
}

struct ia_wrap {
	FILE *f;
	char *buf;
	size_t len;
};

struct ia_wrap *ia_wrap_begin(void)
{
	struct ia_wrap *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->f = open_memstream(&w->buf, &w->len);
	if (!w->f) {
		free(w);
		return NULL;
	}
	return w;
}

FILE *ia_wrap_file(struct ia_wrap *w)
{
	return w->f;
}

int ia_wrap_end(struct ia_wrap *w, FILE *out, int width)
{
	if (!w)
		return 0;
	int rc = fclose(w->f) == 0 ? 0 : -1;
	if (rc == 0)
		ia_wrap_write(out, w->buf, w->len, width);
	free(w->buf);
	free(w);
	return rc == 0 && !ferror(out) ? 0 : -1;
}

char *ia_wrap_take(struct ia_wrap *w, size_t *len)
{
	if (!w)
		return NULL;
	char *buf = NULL;
	if (fclose(w->f) == 0) {
		buf = w->buf;
		*len = w->len;
	} else {
		free(w->buf);
	}
	free(w);
	return buf;
}
