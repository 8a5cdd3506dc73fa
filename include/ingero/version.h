/*
 * version.h — the one version of every Ingero program (--version, the MCP
 * server's serverInfo, session.collector_version).  The scripts and the man
 * pages repeat it; tests/e2e/cli_conventions.sh checks that they agree.
 */
#ifndef INGERO_VERSION_H
#define INGERO_VERSION_H

#define INGERO_VERSION "0.1.0"

#endif
