/*
 * json_out.c — cJSON builders and the printer (see json_out.h).
 */
#include "base/json_out.h"

#include <ingero/utf8.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *ia_json_u64(cJSON *obj, const char *key, uint64_t v)
{
	/* cJSON prints doubles with %1.15g, which turns integers of 16+ digits
	 * into exponent notation; those go out as raw integer text instead. */
	if (v >= 100000000000000ull) {
		char buf[24];
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
		return cJSON_AddRawToObject(obj, key, buf);
	}
	return cJSON_AddNumberToObject(obj, key, (double)v);
}

cJSON *ia_json_num(cJSON *obj, const char *key, double v)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddNumberToObject(obj, key, v);
}

cJSON *ia_json_round(cJSON *obj, const char *key, double v, int digits)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(obj, key);
	double m = pow(10, digits);
	return cJSON_AddNumberToObject(obj, key, round(v * m) / m);
}

cJSON *ia_json_str(cJSON *obj, const char *key, const char *s)
{
	if (!s)
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddStringToObject(obj, key, s);
}

int ia_json_print(const cJSON *root, FILE *out, int pretty)
{
	char *s = pretty ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
	if (!s)
		return -1;
	int rc = fputs(s, out) < 0 || fputc('\n', out) == EOF ? -1 : 0;
	free(s);
	return rc;
}

void ia_json_write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	fputc('"', f);
	while (*s) {
		/* a run that needs no escaping goes out in one write (a Perfetto
		 * export writes millions of names: a write a character was a
		 * tenth of its time) */
		const unsigned char *run = s;
		int n;
		while (*s && *s != '"' && *s != '\\' && *s >= 0x20 && (n = ingero_utf8_len(s)))
			s += n;
		if (s > run)
			fwrite(run, 1, (size_t)(s - run), f);
		if (!*s)
			break;
		unsigned char c = *s++;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputs("\\ufffd", f);   /* not UTF-8 */
		}
	}
	fputc('"', f);
}
