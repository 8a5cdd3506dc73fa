#!/bin/sh
# mcp_readme.sh — the README's MCP client snippets work as written.
#
# Takes the section "## Connect an AI assistant (MCP)" of README.md, reads
# the `mcpServers` JSON block and the `claude mcp add ... -- CMD ARGS` line,
# puts the test database where the snippet says /path/to/report.db and
# build/ on PATH (as `make install` would put ingero-analyze on it), runs
# each command the way a client would, and checks initialize, tools/list
# and a tool call.  If the README's snippet is edited into something that
# does not start a working server, this fails.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
"$B/tests/gen_reportdb" healthy "$DB" --steps 10 >/dev/null || { nok "gen_reportdb healthy"; finish; }
BIN=$(cd "$B" && pwd)

PATH="$BIN:$PATH" timeout 120 python3 - README.md "$DB" <<'EOF'
import json, os, re, shlex, subprocess, sys

readme, db = sys.argv[1:3]
failed = False
def ok(cond, what, extra=""):
    global failed
    print(("ok - " if cond else "not ok - ") + what + ("" if cond or not extra else f" ({extra})"), flush=True)
    failed |= not cond

text = open(readme).read()
m = re.search(r"^## Connect an AI assistant \(MCP\)\n(.*?)(?=^## |\Z)", text, re.S | re.M)
ok(m is not None, "README has the section 'Connect an AI assistant (MCP)'")
if not m:
    sys.exit(1)
sec = m.group(1)
blocks = re.findall(r"^```(\w*)\n(.*?)^```", sec, re.S | re.M)
cmds = []
for lang, body in blocks:
    if lang == "json":
        try:
            cfg = json.loads(body)
            srv = next(iter(cfg["mcpServers"].values()))
            cmds.append(("mcpServers JSON", [srv["command"], *srv.get("args", [])]))
        except Exception as e:
            ok(False, "the mcpServers JSON block parses", e)
    elif lang in ("sh", "bash", "console"):
        for line in body.splitlines():
            if line.strip().startswith("claude mcp add"):
                words = shlex.split(line)
                ok("--" in words, "the claude mcp add line separates the command with --")
                if "--" in words:
                    cmds.append(("claude mcp add", words[words.index("--") + 1:]))
ok(len(cmds) == 2, "both snippets found (mcpServers JSON, claude mcp add)", [c[0] for c in cmds])

for name, argv in cmds:
    ok("/path/to/report.db" in argv, f"{name}: the snippet names /path/to/report.db", argv)
    argv = [db if a == "/path/to/report.db" else a for a in argv]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "readme", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_trace_stats", "arguments": {}}},
    ]
    try:
        out, err = p.communicate("".join(json.dumps(x) + "\n" for x in msgs).encode(), timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    lines = [json.loads(l) for l in out.decode().splitlines() if l.strip()]
    byid = {x.get("id"): x for x in lines}
    init = byid.get(1, {}).get("result", {})
    ok(init.get("protocolVersion") == "2025-06-18" and init.get("serverInfo", {}).get("name") == "ingero-analyze",
       f"{name}: initialize answered by ingero-analyze", err.decode()[-300:])
    tools = [t["name"] for t in byid.get(2, {}).get("result", {}).get("tools", [])]
    ok("get_trace_stats" in tools and "run_sql" in tools, f"{name}: tools/list", tools)
    res = byid.get(3, {}).get("result", {})
    ok(res.get("isError") is False and res.get("structuredContent", {}).get("apis"), f"{name}: get_trace_stats answers")
    ok(len(lines) == 3 and p.returncode == 0, f"{name}: three replies, exit 0 at end of input", (len(lines), p.returncode))
sys.exit(1 if failed else 0)
EOF
rc=$?
check_eq "README snippet driver exits 0" 0 "$rc"
finish
