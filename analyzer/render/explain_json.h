/*
 * explain_json.h — the explain --json document (contract of issue 5): the
 * one machine-readable form of an analysis, which `explain --json`, the MCP
 * server and the gate read.
 */
#ifndef IA_EXPLAIN_JSON_H
#define IA_EXPLAIN_JSON_H

#include "rules/chains.h"

#include <cjson/cJSON.h>

cJSON *ia_explain_json(const struct ia_analysis *a);

#endif
