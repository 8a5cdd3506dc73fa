/*
 * display.c — long names made short for a terminal (display.h).
 */
#include "render/display.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATE_KEEP 12    /* template arguments this short stay */
#define MANGLED_MAX 48      /* a mangled name longer than this is cut ... */
#define MANGLED_KEEP 40     /* ... to this many characters */

char *ia_display_user_dir(const char *command, const char *const *paths, size_t npaths)
{
	if (!command)
		return NULL;
	/* the first argument that names a Python script */
	const char *p = command, *script = NULL;
	size_t slen = 0;
	while (*p && !script) {
		while (*p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		if (e - p > 3 && !strncmp(e - 3, ".py", 3)) {
			script = p;
			slen = (size_t)(e - p);
		}
		p = e;
	}
	if (!script)
		return NULL;
	const char *base = script;
	for (const char *q = script; q < script + slen; q++)
		if (*q == '/')
			base = q + 1;
	size_t blen = (size_t)(script + slen - base);
	for (size_t i = 0; i < npaths; i++) {
		const char *x = paths[i];
		if (!x || x[0] != '/')
			continue;
		const char *colon = strrchr(x, ':');
		size_t xl = colon ? (size_t)(colon - x) : strlen(x);
		if (xl > blen && x[xl - blen - 1] == '/' && !strncmp(x + xl - blen, base, blen)) {
			size_t dl = xl - blen;   /* with its '/' */
			char *d = malloc(dl + 1);
			if (d) {
				memcpy(d, x, dl);
				d[dl] = 0;
			}
			return d;
		}
	}
	return NULL;
}

static int path_start(const char *t, size_t i)
{
	return t[i] == '/' && (i == 0 || strchr(" \t\n([,'\"=", t[i - 1]));
}

static size_t path_end(const char *t, size_t len, size_t i)
{
	while (i < len && !strchr(" \t\n),;]'\"", t[i]))
		i++;
	return i;
}

/* Where a shortened path starts inside [a, b), or a when it stays whole. */
static size_t short_path(const char *t, size_t a, size_t b, const char *user_dir)
{
	size_t n = b - a;
	if (user_dir) {
		size_t ul = strlen(user_dir);
		if (ul < n && !strncmp(t + a, user_dir, ul))
			return a + ul;
	}
	static const char *const pkgs[] = { "/site-packages/", "/dist-packages/" };
	for (size_t k = 0; k < 2; k++) {
		const char *hit = memmem(t + a, n, pkgs[k], strlen(pkgs[k]));
		if (hit && (size_t)(hit - t) + strlen(pkgs[k]) < b)
			return (size_t)(hit - t) + strlen(pkgs[k]);
	}
	const char *lib = memmem(t + a, n, "/lib/python3", 12);   /* the standard library's folder */
	if (lib)
		return (size_t)(lib - t) + 5;
	return a;
}

/* The '>' closing the '<' at i on its line, or 0 when none. */
static size_t template_end(const char *t, size_t len, size_t i)
{
	int depth = 0;
	for (size_t k = i; k < len && k < i + 2000 && t[k] != '\n'; k++) {
		if (t[k] == '<')
			depth++;
		else if (t[k] == '>' && --depth == 0)
			return k;
	}
	return 0;
}

char *ia_display_text(const char *text, size_t len, const char *user_dir, size_t *out_len)
{
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	if (!f)
		return NULL;
	size_t i = 0;
	while (i < len) {
		char c = text[i];
		if (path_start(text, i)) {
			size_t e = path_end(text, len, i), s = short_path(text, i, e, user_dir);
			fwrite(text + s, 1, e - s, f);
			i = e;
			continue;
		}
		if (c == '_' && i + 2 < len && text[i + 1] == 'Z' && (i == 0 || strchr(" \t\n(", text[i - 1]))) {
			size_t e = i;
			while (e < len && !strchr(" \t\n)", text[e]))
				e++;
			if (e - i > MANGLED_MAX) {
				fwrite(text + i, 1, MANGLED_KEEP, f);
				fputs("…", f);
			} else {
				fwrite(text + i, 1, e - i, f);
			}
			i = e;
			continue;
		}
		if (c == '<' && i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_')) {
			size_t e = template_end(text, len, i);
			if (!e) {   /* cut before its end ("...", as a long name is): collapse to that */
				const char *dots = memmem(text + i, len - i, "...", 3);
				const char *nl = memchr(text + i, '\n', len - i);
				if (dots && (!nl || dots < nl))
					e = (size_t)(dots - text) + 2;
			}
			if (e && e - i - 1 > TEMPLATE_KEEP) {
				fputs("<…>", f);
				i = e + 1;
				continue;
			}
		}
		fputc(c, f);
		i++;
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	*out_len = olen;
	return out;
}

char *ia_display_user_dir_of(const struct ia_analysis *a)
{
	const char **paths = calloc(a->nchains + 1, sizeof *paths);
	if (!paths)
		return NULL;
	for (size_t i = 0; i < a->nchains; i++)
		paths[i] = a->chains[i].source;
	char *d = ia_display_user_dir(a->t->command, paths, a->nchains);
	free(paths);
	return d;
}

int ia_display_write(FILE *out, struct ia_wrap *w, int width, const char *user_dir)
{
	size_t len = 0, slen = 0;
	char *raw = ia_wrap_take(w, &len);
	if (!raw)
		return -1;
	char *s = ia_display_text(raw, len, user_dir, &slen);
	ia_wrap_write(out, s ? s : raw, s ? slen : len, width);
	free(s);
	free(raw);
	return ferror(out) ? -1 : 0;
}
