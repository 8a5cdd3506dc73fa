/*
 * mcp_cap.c — the byte cap on a tool result.
 *
 * A timeline of 5,000 events or run_sql's 5,000 rows printed 0.5-2 MB,
 * more than an assistant's context can take in one piece and more than
 * some clients accept in one message.  So a whole tools/call result — the
 * summary, the data in the text content and again as structuredContent —
 * is held to MCP_RESULT_MAX_BYTES of JSON (mcp_internal.h).
 *
 * What is too big is cut at whole entries, never inside a value: the
 * largest top-level array of the data (events, rows, calls, ...) loses
 * entries from its end until the result fits; each round estimates how
 * many from the bytes per entry and measures again, so a result never goes
 * out over the cap.  The data then carries
 *   "result_truncated": {"limit_bytes": N, "left_out": {"events": K, ...},
 *                        "advice": "..."}
 * and the tools' own flags agree with it: "truncated" (run_sql) is true,
 * "more" (get_timeline) is 1, "row_count" counts the rows sent.  The
 * summary line says the same in words.  A result that is still too big
 * with its arrays empty (no tool makes one today) becomes a tool error.
 */
#include "mcp/mcp_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t mcp_result_max_bytes = MCP_RESULT_MAX_BYTES;

/* Room kept for result_truncated and the summary's added sentence. */
#define NOTE_RESERVE 2048

static size_t printed_len(const cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	size_t n = s ? strlen(s) : 0;
	free(s);
	return n;
}

/* The largest non-empty array among data's members, and its printed size. */
static cJSON *largest_array(cJSON *data, size_t *len)
{
	cJSON *best = NULL, *m;
	*len = 0;
	cJSON_ArrayForEach(m, data) {
		if (!cJSON_IsArray(m) || !m->child)
			continue;
		size_t n = printed_len(m);
		if (n > *len) {
			*len = n;
			best = m;
		}
	}
	return best;
}

static void add_count(cJSON *obj, const char *name, double k)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (c)
		cJSON_SetNumberValue(c, c->valuedouble + k);
	else
		cJSON_AddNumberToObject(obj, name, k);
}

/* The tools' own "there is more" fields, set to agree with the cut. */
static void flag_more(cJSON *data, const cJSON *left_out)
{
	cJSON *t = cJSON_GetObjectItemCaseSensitive(data, "truncated");
	if (cJSON_IsBool(t))
		cJSON_ReplaceItemInObjectCaseSensitive(data, "truncated", cJSON_CreateTrue());
	cJSON *more = cJSON_GetObjectItemCaseSensitive(data, "more");
	if (cJSON_IsNumber(more))
		cJSON_SetNumberValue(more, 1);
	cJSON *rc = cJSON_GetObjectItemCaseSensitive(data, "row_count");
	if (cJSON_IsNumber(rc) && cJSON_GetObjectItemCaseSensitive(left_out, "rows"))
		cJSON_SetNumberValue(rc, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(data, "rows")));
}

int mcp_result_cap(cJSON *data, size_t (*measure)(const char *, const cJSON *), const char *summary,
		   char *note, size_t notelen)
{
	note[0] = 0;
	size_t max = mcp_result_max_bytes;
	size_t target = max > 2 * NOTE_RESERVE ? max - NOTE_RESERVE : max / 2;
	size_t total = measure(summary, data);
	if (total <= max)
		return 0;
	cJSON *left_out = cJSON_CreateObject();
	while (total > target) {
		size_t alen;
		cJSON *arr = largest_array(data, &alen);
		if (!arr)
			break;
		size_t dlen = printed_len(data);
		/* each byte of data costs total/dlen bytes of result (it is
		 * there twice, and the text copy is escaped once more) */
		double ratio = dlen ? (double)total / (double)dlen : 1;
		double over = (double)(total - target);
		double freed = 0;
		double k = 0;
		while (arr->child && freed * ratio < over) {
			cJSON *last = arr->child->prev;   /* cJSON keeps the last entry there */
			cJSON_DetachItemViaPointer(arr, last);
			freed += (double)printed_len(last) + 1;
			cJSON_Delete(last);
			k++;
		}
		add_count(left_out, arr->string ? arr->string : "entries", k);
		total = measure(summary, data);
	}
	/* the words first: they go in the summary and in the data */
	int w = snprintf(note, notelen, "Result cut to %zu KiB (whole entries, from the end):", max >> 10);
	const cJSON *c;
	cJSON_ArrayForEach(c, left_out)
		w += snprintf(note + w, notelen > (size_t)w ? notelen - (size_t)w : 0, "%s %.0f %s left out",
			      c == left_out->child ? "" : ",", c->valuedouble, c->string);
	snprintf(note + w, notelen > (size_t)w ? notelen - (size_t)w : 0,
		 ". Narrow the window (from/to), lower limit or max_rows, or add WHERE/LIMIT to the SQL.");
	flag_more(data, left_out);
	cJSON *rt = cJSON_AddObjectToObject(data, "result_truncated");
	cJSON_AddNumberToObject(rt, "limit_bytes", (double)max);
	cJSON_AddItemToObject(rt, "left_out", left_out);
	cJSON_AddStringToObject(rt, "advice", "narrow the window (from/to), lower limit or max_rows, "
				"or add WHERE/LIMIT to the SQL");
	return total > target ? -1 : 1;
}
