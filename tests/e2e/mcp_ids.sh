#!/bin/sh
# mcp_ids.sh — every request with an id gets exactly one answer, carrying
# that id as the client wrote it (issue 14, item 2): integers near and past
# 2^53 (they came back as 9.00719925474099e+15), strings with escapes, and
# lone UTF-16 surrogate escapes, which JSON allows (RFC 8259's grammar) and
# which were answered with a parse error and id null — the client waited
# until its timeout.  Raw lines in, raw lines out, through the real server.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

timeout 120 python3 - "$B/ingero-analyze" $B/examples/small_check_h200.db <<'PY'
import json, subprocess, sys
server, db = sys.argv[1:3]
ids = ["9007199254740993", "9007199254740991", "-9007199254740993", "1234567890123456789012345", "1e3", "0",
       '"\\ud800"', '"a\\udc00"', '"\\ud83d\\ude00"', '"\\u00e9"', '"x\\"y"']
lines = [f'{{"jsonrpc":"2.0","id":{i},"method":"ping"}}' for i in ids]
# lone surrogates inside params, and a request whose id follows them
lines.append('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run_sql","arguments":'
             '{"sql":"SELECT \'\\ud800\' AS s"}},"id":424242424242424242}')
lines.append('{"jsonrpc":"2.0","id":"\\udbff","method":"tools/call","params":{"name":"get_trace_stats",'
             '"arguments":{"from":"\\udfff"}}}')
p = subprocess.run([server, "mcp", db], input="\n".join(lines).encode() + b"\n", capture_output=True, timeout=100)
out = p.stdout.decode().splitlines()
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else f" ({extra})"))
ok(len(out) == len(lines), f"{len(lines)} requests, as many answers", len(out))
for i, raw in enumerate(ids):
    want = f'{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}'
    ok(i < len(out) and out[i] == want, f"ping with id {raw}: the id comes back as sent", out[i] if i < len(out) else "none")
n = len(ids)
ok(n < len(out) and out[n].startswith('{"jsonrpc":"2.0","id":424242424242424242,"result":{') and
   json.loads(out[n])["result"]["isError"] is False, "a lone surrogate in the SQL: the query runs",
   out[n][:200] if n < len(out) else "none")
r = out[n + 1] if n + 1 < len(out) else ""
ok(r.startswith('{"jsonrpc":"2.0","id":"\\udbff",') and json.loads(r).get("result", {}).get("isError") is True,
   "a lone surrogate in the id and a bad argument: a tool error with that id", r[:200])
ok(p.returncode == 0, "the server ends normally", p.returncode)
PY
