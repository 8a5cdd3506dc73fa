#!/bin/sh
# mcp_real.sh — the MCP server on a trace recorded for real: the starve
# workload (forked workers, fake CUDA) through libingero_preload.so and
# ingero-collector with eBPF, then an MCP session that asks what a user's
# assistant would ask.  The answers must match the database and the
# workload's own truth (its main process, its worker count).  Needs root
# (eBPF), like foundation.sh.
. tests/lib.sh
if ! is_root; then skip "MCP on a real trace needs root for eBPF"; finish; fi

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
export INGERO_ENDPOINT="ipc://$T/ingero.sock"
timeout 120 "$B/ingero-collector" -o "$DB" -- "$B/tests/starve" --mode workers --workers 3 --batches 20 \
	--truth "$T/truth.txt" >/dev/null 2>"$T/err.txt"
rc=$?
check_eq "collector traced the workload" 0 "$rc"
[ "$rc" -eq 0 ] || { sed 's/^/# /' "$T/err.txt" | tail -n 10; finish; }
main_pid=$(sed -n 's/^pid=\([0-9]*\) .*role=main.*/\1/p' "$T/truth.txt")
calls=$(q "SELECT count(*) FROM cuda_calls")

timeout 120 python3 - "$B/ingero-analyze" "$DB" "$main_pid" "$calls" <<'EOF'
import json, subprocess, sys
server, db, main_pid, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
failed = False
def ok(cond, what, extra=""):
    global failed
    print(("ok - " if cond else "not ok - ") + what + ("" if cond or not extra else f" ({extra})"), flush=True)
    failed |= not cond
msgs = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "real", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_trace_stats"}},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_per_process_breakdown"}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_causal_chains"}},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_gpu_idle"}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_stacks", "arguments": {"limit": 5}}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "get_timeline", "arguments": {"limit": 20}}},
    {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
     "params": {"name": "run_sql", "arguments": {"sql": "SELECT count(*) FROM cuda_calls"}}},
]
p = subprocess.run([server, "mcp", db], input="".join(json.dumps(m) + "\n" for m in msgs).encode(),
                   capture_output=True, timeout=100)
r = {x["id"]: x for x in map(json.loads, p.stdout.decode().splitlines())}
res = {i: r.get(i, {}).get("result", {}) for i in range(8)}
sc = {i: res[i].get("structuredContent") or {} for i in range(1, 8)}
for i in range(1, 8):
    ok(res[i].get("isError") is False, f"tool call {msgs[i + 1]['params']['name']} answers", str(res[i])[:300])
ok(sum(a["count"] for a in sc[1].get("apis", [])) == calls, "get_trace_stats counts every stored call")
ok(sc[2].get("main_pid") == main_pid and sc[2].get("workers") == 3, "per-process finds the main process and 3 workers",
   (sc[2].get("main_pid"), sc[2].get("workers")))
chains = sc[3].get("chains", [])
ok(any(c["severity"] in ("HIGH", "MEDIUM") for c in chains), "a starving run gives a HIGH or MEDIUM chain",
   [(c["severity"], c["kind"]) for c in chains])
lo, hi = sc[4].get("gpu_idle_pct", {}).get("low"), sc[4].get("gpu_idle_pct", {}).get("high")
ok(isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and 0 <= lo <= hi <= 100, "GPU idle bounds", (lo, hi))
ok(len(sc[5].get("calls", [])) == 5 and all(c["pid"] > 0 for c in sc[5]["calls"]), "get_stacks: 5 slowest calls")
ok(len(sc[6].get("events", [])) == 20, "get_timeline: 20 events")
ok(sc[7].get("rows") == [[calls]], "run_sql agrees")
ok(p.returncode == 0, "server exits 0", p.stderr.decode()[-300:])
sys.exit(1 if failed else 0)
EOF
check_eq "MCP session on the real trace" 0 $?
finish
