/*
 * mcp_json.c — a received line made a message (mcp_json_parse_line), with
 * what JSON allows and cJSON does not keep: lone UTF-16 surrogate escapes,
 * and request ids exactly as the client wrote them.
 *
 * Lone surrogates.  RFC 8259's grammar accepts any \uXXXX escape, so
 * "\ud800" alone is valid JSON text (the RFC only warns that what a
 * receiver makes of it is unpredictable); cJSON 1.7 refuses the whole
 * message, and a client whose request carried one waited for an answer
 * that never came.  Before parsing, each escape of a high surrogate not
 * followed by an escaped low one, and each low surrogate not preceded by a
 * high one, is rewritten in a copy of the line as \uFFFD (the replacement
 * character): the same six bytes, so every byte offset in the line (error
 * positions, the raw ids below) stays true.  Only escapes inside strings
 * are touched: the scan follows string boundaries and backslash pairs, so
 * a literal backslash followed by "ud800" is left alone.
 *
 * Bad escapes.  cJSON reads "\u" followed by anything but four hex digits
 * as U+0000 and cuts the string there, and takes a backslash before any
 * byte: a message it accepted so could echo an id that is not JSON.  Such a
 * message is not JSON (RFC 8259 allows \" \\ \/ \b \f \n \r \t and \uXXXX
 * only), so it is answered with a parse error naming the byte.
 *
 * Exact ids.  JSON-RPC wants the response's id to be the request's; cJSON
 * holds numbers as doubles and prints them with 15 significant digits when
 * that compares equal within a relative epsilon, so 9007199254740991 went
 * back as 9.00719925474099e+15, and integers past 2^53 cannot be held at
 * all.  So a numeric or string id is replaced, in the parsed message, by a
 * raw item holding the bytes the client sent (already validated by cJSON):
 * digits as written, a string with its own escapes (a lone surrogate in an
 * id goes back as the client wrote it, not as U+FFFD), except a string with
 * a raw control byte, which is left to cJSON to print escaped.  The cost is
 * a second parse of the members before "id".  The bytes are found with
 * cJSON as the lexer:
 * each member's key and value are parsed in turn with
 * cJSON_ParseWithLengthOpts, which says where each ends; only whitespace,
 * ':' and ',' are stepped over here.  Members are met in order and the
 * first "id" wins, as cJSON_GetObjectItemCaseSensitive picks the first.
 */
#include "mcp/mcp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The code unit of the escape "\uXXXX" at s (6 bytes available), or -1. */
static long escape_at(const char *s, const char *end)
{
	if (end - s < 6 || s[0] != '\\' || s[1] != 'u')
		return -1;
	long v = 0;
	for (int i = 2; i < 6; i++) {
		int h = hexval(s[i]);
		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

/* The next backslash inside a string at or after p, or end; *in_string
 * carries whether p is inside one (the scan follows string boundaries). */
static const char *next_escape(const char *p, const char *end, int *in_string)
{
	for (; p < end; p++) {
		if (!*in_string)
			*in_string = *p == '"';
		else if (*p == '"')
			*in_string = 0;
		else if (*p == '\\')
			return p;
	}
	return end;
}

long mcp_json_bad_escape(const char *line, size_t len)
{
	const char *end = line + len;
	int in_string = 0;
	for (const char *p = next_escape(line, end, &in_string); p < end; p = next_escape(p + 1, end, &in_string)) {
		if (p + 1 < end && p[1] && strchr("\"\\/bfnrt", p[1])) {
			p++;
			continue;
		}
		if (escape_at(p, end) < 0)
			return p - line;
		p += 5;
	}
	return -1;
}

static int is_high(long u) { return u >= 0xd800 && u <= 0xdbff; }
static int is_low(long u) { return u >= 0xdc00 && u <= 0xdfff; }

char *mcp_json_fix_surrogates(const char *line, size_t len)
{
	char *copy = NULL;
	const char *end = line + len;
	int in_string = 0;
	for (const char *p = next_escape(line, end, &in_string); p < end; p = next_escape(p + 1, end, &in_string)) {
		long u = escape_at(p, end);
		if (u < 0) {
			p++;               /* \" \\ \n ...: skip the escaped byte */
			continue;
		}
		long next = escape_at(p + 6, end);
		if (is_high(u) && is_low(next)) {
			p += 11;           /* a proper pair */
			continue;
		}
		if (is_high(u) || is_low(u)) {
			if (!copy) {
				copy = malloc(len + 1);
				if (!copy)
					return NULL;
				memcpy(copy, line, len);
				copy[len] = 0;
			}
			memcpy(copy + (p - line), "\\uFFFD", 6);
		}
		p += 5;
	}
	return copy;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The value's extent of the first member named `name` of the object at
 * [p, end): 0 with *vs and *ve set, -1 when absent. */
static int member_extent(const char *p, const char *end, const char *name, const char **vs, const char **ve)
{
	p = skip_ws(p, end);
	if (p == end || *p != '{')
		return -1;
	p++;
	for (;;) {
		p = skip_ws(p, end);
		const char *kend = NULL;
		cJSON *key = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &kend, 0);
		if (!cJSON_IsString(key)) {   /* '}' (no more members) or not an object */
			cJSON_Delete(key);
			return -1;
		}
		int match = !strcmp(key->valuestring, name);
		cJSON_Delete(key);
		p = skip_ws(kend, end);
		if (p == end || *p != ':')
			return -1;
		p = skip_ws(p + 1, end);
		const char *vend = NULL;
		cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &vend, 0);
		if (!v)
			return -1;
		cJSON_Delete(v);
		if (match) {
			*vs = p;
			*ve = vend;
			return 0;
		}
		p = skip_ws(vend, end);
		if (p == end || *p != ',')
			return -1;
		p++;
	}
}

/* Whether msg's id is taken from the text (see the top). */
static int wants_raw(const cJSON *msg)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	return cJSON_IsNumber(id) || cJSON_IsString(id);
}

/* msg (an object) parsed from [p, end) of `orig`'s layout: its member
 * `name` becomes the raw bytes of `orig` at the same place. */
static void keep_raw(cJSON *msg, const char *name, const char *p, const char *end, const char *orig,
		     const char *text)
{
	const char *vs, *ve;
	if (member_extent(p, end, name, &vs, &ve) < 0)
		return;
	size_t n = (size_t)(ve - vs);
	const char *o = orig + (vs - text);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)o[i] < 0x20)
			return;   /* a raw control byte in a string id: keep cJSON's escaped form */
	char *raw = malloc(n + 1);
	if (!raw)
		return;
	memcpy(raw, o, n);
	raw[n] = 0;
	cJSON *item = cJSON_CreateRaw(raw);
	free(raw);
	if (item)
		cJSON_ReplaceItemInObjectCaseSensitive(msg, name, item);
}

/* A notifications/cancelled (msg parsed from [p, end)): its params.requestId
 * as the client wrote it. */
static void keep_raw_request_id(cJSON *msg, const char *p, const char *end, const char *orig, const char *text)
{
	const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "method"));
	cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const cJSON *rid = cJSON_GetObjectItemCaseSensitive(params, "requestId");
	if (!method || strcmp(method, "notifications/cancelled") || !(cJSON_IsNumber(rid) || cJSON_IsString(rid)))
		return;
	const char *vs, *ve;
	if (member_extent(p, end, "params", &vs, &ve) == 0)
		keep_raw(params, "requestId", vs, ve, orig, text);
}

void mcp_json_keep_raw_ids(cJSON *msg, const char *text, const char *orig, size_t len)
{
	const char *end = text + len;
	if (cJSON_IsObject(msg)) {
		if (wants_raw(msg))
			keep_raw(msg, "id", text, end, orig, text);
		keep_raw_request_id(msg, text, end, orig, text);
		return;
	}
	if (!cJSON_IsArray(msg))
		return;
	int any = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, msg)
		any |= wants_raw(m);
	if (!any)
		return;
	/* a batch: find each element's extent, in order */
	const char *p = skip_ws(text, end);
	if (p == end || *p != '[')
		return;
	p++;
	cJSON *el;
	cJSON_ArrayForEach(el, msg) {
		p = skip_ws(p, end);
		const char *vend = NULL;
		cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &vend, 0);
		if (!v)
			return;
		cJSON_Delete(v);
		if (cJSON_IsObject(el) && wants_raw(el))
			keep_raw(el, "id", p, vend, orig, text);
		p = skip_ws(vend, end);
		if (p < end && *p == ',')
			p++;
	}
}

int mcp_json_has_nul_escape(const char *line, size_t len)
{
	const char *end = line + len;
	int in_string = 0;
	for (const char *p = next_escape(line, end, &in_string); p < end; p = next_escape(p + 1, end, &in_string)) {
		long u = escape_at(p, end);
		if (u == 0)
			return 1;
		p += u < 0 ? 1 : 5;   /* \" \\ \n ...: skip the escaped byte; \uXXXX: its digits */
	}
	return 0;
}

/* An id's JSON text: a raw item's bytes, else cJSON's printing.  Caller frees. */
static char *id_text(const cJSON *id)
{
	return cJSON_IsRaw(id) ? strdup(id->valuestring) : cJSON_PrintUnformatted(id);
}

/* The value of an id's text, lone surrogates read as U+FFFD (as the parser
 * read the message). */
static cJSON *id_value(const char *t)
{
	char *fixed = mcp_json_fix_surrogates(t, strlen(t));
	cJSON *v = cJSON_Parse(fixed ? fixed : t);
	free(fixed);
	return v;
}

int mcp_json_ids_equal(const cJSON *a, const cJSON *b)
{
	char *ta = id_text(a), *tb = id_text(b);
	int eq = ta && tb && !strcmp(ta, tb);
	if (!eq && ta && tb) {
		/* the same value written another way: "\u00e9" and "é", 1 and 1.0 */
		cJSON *va = id_value(ta), *vb = id_value(tb);
		if (cJSON_IsString(va) && cJSON_IsString(vb))
			eq = !strcmp(va->valuestring, vb->valuestring);
		else if (cJSON_IsNumber(va) && cJSON_IsNumber(vb))
			/* only where a double is exact: past 2^53 the digits decide */
			eq = va->valuedouble == vb->valuedouble && fabs(va->valuedouble) < 9007199254740992.0;
		cJSON_Delete(va);
		cJSON_Delete(vb);
	}
	free(ta);
	free(tb);
	return eq;
}

static int blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return 0;
	return 1;
}

cJSON *mcp_json_parse_line(const char *line, size_t len, char *why, size_t whylen, int *has_nul)
{
	why[0] = 0;
	*has_nul = 0;
	if (blank(line, len))
		return NULL;
	const char *end = NULL;
	/* A raw NUL is never valid JSON, and cJSON would cut a string at it:
	 * refuse the message rather than act on a silently shortened one. */
	const char *nul = memchr(line, 0, len);
	/* an escape JSON does not allow, which cJSON would read leniently */
	long bad = nul ? -1 : mcp_json_bad_escape(line, len);
	/* lone surrogate escapes are valid JSON that cJSON refuses: parse a
	 * copy where they read \uFFFD (same length) */
	char *fixed = nul || bad >= 0 ? NULL : mcp_json_fix_surrogates(line, len);
	const char *text = fixed ? fixed : line;
	cJSON *msg = nul || bad >= 0 ? NULL : cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (nul) {
		snprintf(why, whylen, "Parse error: not valid JSON (a NUL byte at byte %zu)", (size_t)(nul - line));
	} else if (bad >= 0) {
		snprintf(why, whylen, "Parse error: not valid JSON (an escape JSON does not allow at byte %ld)", bad);
	} else if (!msg || !blank(end, len - (size_t)(end - text))) {
		/* end: where parsing stopped, or where it failed (cJSON sets it
		 * either way; its global error pointer is not needed) */
		snprintf(why, whylen, "Parse error: not valid JSON (at byte %zu of %zu)", end ? (size_t)(end - text) : 0,
			 len);
		cJSON_Delete(msg);
		msg = NULL;
	} else {
		mcp_json_keep_raw_ids(msg, text, line, len);
		*has_nul = mcp_json_has_nul_escape(line, len);
	}
	free(fixed);
	return msg;
}
