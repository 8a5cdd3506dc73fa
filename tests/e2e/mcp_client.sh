#!/bin/sh
# mcp_client.sh — a real MCP client against `ingero-analyze mcp`: the
# official TypeScript SDK (@modelcontextprotocol/sdk, version pinned in
# tests/mcp/package.json) spawns the server over stdio, lists tools and
# prompts, calls every tool on a generated report.db and checks the answers
# against the database itself (tests/mcp/client.mjs).
#
# The SDK is installed from the npm registry into build/tests/mcp/ once and
# reused while tests/mcp/package.json is unchanged.  No node, no npm, or no
# registry is a failure, not a skip: this test is the proof that a real
# client works.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
SDK=$B/tests/mcp

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	nok "node and npm are needed for the MCP client test (Debian: apt-get install nodejs npm)"
	finish
fi
npm_pinned tests/mcp/package.json "$SDK" node_modules/@modelcontextprotocol/sdk/package.json \
	@modelcontextprotocol/sdk || finish
ok "MCP TypeScript SDK $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
	"$SDK/node_modules/@modelcontextprotocol/sdk/package.json" | head -n 1) in $SDK"
cp tests/mcp/client.mjs "$SDK/client.mjs"

DB=$T/report.db
"$B/tests/gen_reportdb" contention "$DB" --steps 40 >/dev/null || { nok "gen_reportdb contention"; finish; }

# An empty trace (every table emptied but the session: without one a file holds no trace at
# all, refused): every tool still answers, within its outputSchema.
EMPTY=$T/empty.db
cp "$DB" "$EMPTY"
sqlite3 "$EMPTY" "$(sqlite3 "$EMPTY" "SELECT 'DELETE FROM ' || name || ';' FROM sqlite_master WHERE type = 'table' AND name <> 'session'")" ||
	nok "empty the trace"

# The command line's answers: the MCP tools must give the same ones.
"$B/ingero-analyze" explain --json "$DB" >"$T/explain.json" || nok "explain --json"
"$B/ingero-analyze" stats --json "$DB" >"$T/stats.json" || nok "stats --json"
"$B/ingero-analyze" timeline --json --from 0.5 --to 0.6 --limit 50 "$DB" >"$T/timeline.json" || nok "timeline --json"

# What the answers must say, from the database (not from the analyzer).
"${PY_SQLITE:-python3}" - "$DB" "$T" >"$T/expect.json" <<'EOF'
import json, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.enable_load_extension(True)   # cuda_calls: the call blocks as rows
db.load_extension(os.environ["INGERO_SQLITE_EXT"])
q = lambda s, *a: db.execute(s, a).fetchone()[0]
start = int(q("SELECT value FROM session WHERE key = 'start_mono_ns'") or 0)
first = min(x for x in (q("SELECT min(start_ns) FROM cuda_calls"), q("SELECT min(start_ns) FROM off_cpu")) if x is not None)
t0 = start if start and start <= first else first
main = q("SELECT pid FROM cuda_calls GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
sync = "(SELECT id FROM apis WHERE name = 'cudaStreamSynchronize')"
print(json.dumps({
    "calls": q("SELECT count(*) FROM cuda_calls"),
    "calls_0_5_to_1s": q("SELECT count(*) FROM cuda_calls WHERE start_ns >= ? AND start_ns < ?",
                         t0 + 500000000, t0 + 1000000000),
    "syncs": q(f"SELECT count(*) FROM cuda_calls WHERE api = {sync}"),
    "sync_max_ns": q(f"SELECT max(dur_ns) FROM cuda_calls WHERE api = {sync}"),
    "processes": q("SELECT count(*) FROM processes"),
    "main_pid": main,
    "workers": q("SELECT count(*) FROM processes WHERE ppid = ?", main),
    "worker_pid": q("SELECT min(pid) FROM processes WHERE ppid = ?", main),
    "command": q("SELECT value FROM session WHERE key = 'command'"),
    "explain_json": sys.argv[2] + "/explain.json",
    "stats_json": sys.argv[2] + "/stats.json",
    "timeline_json": sys.argv[2] + "/timeline.json",
    "empty_db": sys.argv[2] + "/empty.db",
}))
EOF
[ -s "$T/expect.json" ] || { nok "expectations from the database"; finish; }

# Node prints the TAP lines; its exit status says whether any failed.
ANALYZE=$(cd "$B" && pwd)/ingero-analyze
(cd "$SDK" && timeout 120 node client.mjs "$ANALYZE" "$DB" "$T/expect.json")
rc=$?
check_eq "client.mjs exits 0" 0 "$rc"
finish
