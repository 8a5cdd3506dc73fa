/*
 * mcp_schema.c — tool arguments checked against the tool's own inputSchema.
 *
 * The schema a client sees in tools/list is the one enforced here, so the
 * two cannot drift apart.  Only the subset our tools use is understood:
 * an object whose properties are strings (with enum, minLength, maxLength),
 * integers or numbers (minimum, maximum) or booleans, or one of several of
 * those (a "type" array: get_ranks' "node", an index or a name); `required`;
 * and additionalProperties:false.  A schema keyword outside that subset is a
 * bug in our table, caught by the tests listing every tool.
 *
 * Lengths are counted as JSON Schema counts them: characters (Unicode code
 * points), not bytes — 60,000 "é" are 120,000 bytes and within a
 * maxLength of 100000 — and not UTF-16 units (an emoji is one).  Bounds go
 * into messages as the schema's type has them: an integer's range is
 * "1..2147483647", never "%g"'s "2.14748e+09".
 */
#include "mcp/mcp_internal.h"
#include "mcp/mcp_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *json_type(const cJSON *v)
{
	if (cJSON_IsString(v)) return "a string";
	if (cJSON_IsNumber(v)) return "a number";
	if (cJSON_IsBool(v)) return "a boolean";
	if (cJSON_IsNull(v)) return "null";
	if (cJSON_IsArray(v)) return "an array";
	if (cJSON_IsObject(v)) return "an object";
	return "invalid";
}

/* A schema bound as the message writes it: an integer's as an integer, a
 * number's in the shortest form that reads back as the same double; "" when
 * the schema has none. */
static void bound(char *buf, size_t len, const cJSON *b, int integer)
{
	buf[0] = 0;
	if (!cJSON_IsNumber(b))
		return;
	double d = b->valuedouble;
	if (integer || (d == floor(d) && fabs(d) < 9007199254740992.0)) {
		snprintf(buf, len, "%.0f", d);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

static int check_typed(const char *name, const char *type, const cJSON *prop, const cJSON *v,
		       char *err, size_t errlen)
{
	if (!strcmp(type, "string")) {
		if (!cJSON_IsString(v)) {
			snprintf(err, errlen, "argument '%s' must be a string, not %s", name, json_type(v));
			return -1;
		}
		const cJSON *ml = cJSON_GetObjectItemCaseSensitive(prop, "maxLength");
		const cJSON *nl = cJSON_GetObjectItemCaseSensitive(prop, "minLength");
		if (cJSON_IsNumber(ml) || cJSON_IsNumber(nl)) {
			size_t chars = mcp_utf8_chars(v->valuestring, strlen(v->valuestring));
			if (cJSON_IsNumber(ml) && (double)chars > ml->valuedouble) {
				snprintf(err, errlen, "argument '%s' is longer than %.0f characters", name, ml->valuedouble);
				return -1;
			}
			if (cJSON_IsNumber(nl) && (double)chars < nl->valuedouble) {
				snprintf(err, errlen, "argument '%s' is shorter than %.0f characters", name, nl->valuedouble);
				return -1;
			}
		}
		const cJSON *en = cJSON_GetObjectItemCaseSensitive(prop, "enum");
		if (cJSON_IsArray(en)) {
			const cJSON *e;
			cJSON_ArrayForEach(e, en)
				if (cJSON_IsString(e) && !strcmp(e->valuestring, v->valuestring))
					return 0;
			snprintf(err, errlen, "argument '%s' must be one of the values its schema lists", name);
			return -1;
		}
		return 0;
	}
	if (!strcmp(type, "integer") || !strcmp(type, "number")) {
		int integer = type[0] == 'i';
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
		    (integer && v->valuedouble != floor(v->valuedouble))) {
			snprintf(err, errlen, "argument '%s' must be %s, not %s", name,
				 integer ? "an integer" : "a number",
				 cJSON_IsNumber(v) ? "a fraction" : json_type(v));
			return -1;
		}
		const cJSON *mn = cJSON_GetObjectItemCaseSensitive(prop, "minimum");
		const cJSON *mx = cJSON_GetObjectItemCaseSensitive(prop, "maximum");
		if ((cJSON_IsNumber(mn) && v->valuedouble < mn->valuedouble) ||
		    (cJSON_IsNumber(mx) && v->valuedouble > mx->valuedouble)) {
			char lo[32] = "", hi[32] = "";
			bound(lo, sizeof lo, mn, integer);
			bound(hi, sizeof hi, mx, integer);
			if (lo[0] && hi[0])
				snprintf(err, errlen, "argument '%s' is out of range (%s..%s)", name, lo, hi);
			else
				snprintf(err, errlen, "argument '%s' is out of range (%s %s)", name,
					 lo[0] ? "at least" : "at most", lo[0] ? lo : hi);
			return -1;
		}
		return 0;
	}
	if (!strcmp(type, "boolean")) {
		if (!cJSON_IsBool(v)) {
			snprintf(err, errlen, "argument '%s' must be a boolean, not %s", name, json_type(v));
			return -1;
		}
		return 0;
	}
	return 0;
}

/* Whether v is of the JSON kind a schema type names (an integer's
 * fraction is then check_typed's to refuse). */
static int kind_of(const char *type, const cJSON *v)
{
	if (!strcmp(type, "string"))
		return cJSON_IsString(v);
	if (!strcmp(type, "integer") || !strcmp(type, "number"))
		return cJSON_IsNumber(v);
	if (!strcmp(type, "boolean"))
		return cJSON_IsBool(v);
	return 0;
}

static const char *type_words(const char *type)
{
	if (!strcmp(type, "integer")) return "an integer";
	if (!strcmp(type, "number")) return "a number";
	if (!strcmp(type, "string")) return "a string";
	if (!strcmp(type, "boolean")) return "a boolean";
	return "?";
}

static int check_one(const char *name, const cJSON *prop, const cJSON *v, char *err, size_t errlen)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(prop, "type");
	if (cJSON_IsString(type))
		return check_typed(name, type->valuestring, prop, v, err, errlen);
	if (!cJSON_IsArray(type))
		return 0;
	/* one of several types: the one of v's kind decides */
	const cJSON *t;
	cJSON_ArrayForEach(t, type)
		if (cJSON_IsString(t) && kind_of(t->valuestring, v))
			return check_typed(name, t->valuestring, prop, v, err, errlen);
	int w = snprintf(err, errlen, "argument '%s' must be", name);
	int i = 0, n = cJSON_GetArraySize(type);
	cJSON_ArrayForEach(t, type) {
		if (w > 0 && (size_t)w < errlen)
			w += snprintf(err + w, errlen - (size_t)w, "%s %s", i == 0 ? "" : i == n - 1 ? " or" : ",",
				      cJSON_IsString(t) ? type_words(t->valuestring) : "?");
		i++;
	}
	if (w > 0 && (size_t)w < errlen)
		snprintf(err + w, errlen - (size_t)w, ", not %s", json_type(v));
	return -1;
}

int mcp_check_args(const cJSON *schema, const cJSON *args, char *err, size_t errlen)
{
	if (args && !cJSON_IsObject(args)) {
		snprintf(err, errlen, "arguments must be an object, not %s", json_type(args));
		return -1;
	}
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
	const cJSON *r;
	cJSON_ArrayForEach(r, req) {
		if (cJSON_IsString(r) && !cJSON_GetObjectItemCaseSensitive(args, r->valuestring)) {
			snprintf(err, errlen, "missing required argument '%s'", r->valuestring);
			return -1;
		}
	}
	const cJSON *addl = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		const cJSON *prop = cJSON_GetObjectItemCaseSensitive(props, a->string);
		if (!prop) {
			if (cJSON_IsFalse(addl)) {
				/* the name came from the client; keep it short in the message */
				snprintf(err, errlen, "unknown argument '%.64s'", a->string);
				return -1;
			}
			continue;
		}
		if (check_one(a->string, prop, a, err, errlen) < 0)
			return -1;
	}
	return 0;
}
