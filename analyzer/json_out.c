/*
 * json_out.c — cJSON builders and the printer (see json_out.h).
 */
#include "json_out.h"

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
