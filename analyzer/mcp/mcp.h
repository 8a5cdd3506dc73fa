/*
 * mcp.h — `ingero-analyze mcp report.db`: a Model Context Protocol server
 * over stdio, so that an AI assistant can investigate a trace (or a job's
 * nodes, one report.db each) with the analyzer's own functions
 * (docs/mcp.md).
 */
#ifndef IA_MCP_H
#define IA_MCP_H

/* argv[0] is "mcp".  Serves until standard input ends; returns an exit code
 * (0 after a clean end of input, 1 when the database cannot be opened or
 * standard output breaks, 2 on bad usage). */
int ia_cmd_mcp(int argc, char **argv);

#endif
