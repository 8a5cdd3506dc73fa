/*
 * json_out.h — the one place the analyzer turns cJSON trees into text, plus
 * tiny builders that keep call sites short.  Every machine-readable output
 * (stats, explain, per-process, timeline --json) goes through here, so the
 * MCP server can take the same trees and print them its own way.
 */
#ifndef IA_JSON_OUT_H
#define IA_JSON_OUT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

/* Adds a number (integers up to 2^53 are exact). Returns the item. */
cJSON *ia_json_u64(cJSON *obj, const char *key, uint64_t v);
cJSON *ia_json_num(cJSON *obj, const char *key, double v);
/* Rounds to `digits` decimals before adding, so outputs are stable text. */
cJSON *ia_json_round(cJSON *obj, const char *key, double v, int digits);
/* String, or null when s is NULL. */
cJSON *ia_json_str(cJSON *obj, const char *key, const char *s);

/* Prints the tree with a final newline; returns 0, or -1 on failure (OOM, EPIPE). */
int ia_json_print(const cJSON *root, FILE *out, int pretty);


/* Writes s as a JSON string literal (quotes included) for hand-streamed
 * JSON: escapes quotes, backslashes and control characters, and replaces
 * bytes that are not valid UTF-8 with U+FFFD, so the output always parses. */
void ia_json_write_string(FILE *f, const char *s);

#endif
