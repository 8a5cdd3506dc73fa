#!/bin/sh
# mcp_cap.sh — a tool result is held to 256 KiB (issue 14, item 3): on a
# real trace, get_timeline with limit 5000 printed about 700 KB.  Now the
# answer stays under the cap, says in its data what was left out
# (result_truncated), and what it keeps is the start of the same timeline
# whole: the events equal the first ones of `timeline --json`, each intact.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

DB=$B/examples/dataloader_workers4.db
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
"$B/ingero-analyze" timeline --json --compact --limit 5000 "$DB" >"$T/timeline.json" ||
	{ nok "timeline --json"; finish; }
timeout 120 python3 - "$B/ingero-analyze" "$DB" "$T/timeline.json" <<'PY'
import json, subprocess, sys
server, db, full = sys.argv[1:4]
full = json.load(open(full))["events"]
req = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_timeline", "arguments": {"limit": 5000}}}
p = subprocess.run([server, "mcp", db], input=json.dumps(req).encode() + b"\n", capture_output=True, timeout=100)
line = p.stdout.decode().splitlines()[0]
def ok(cond, what, extra=""):
    print(("ok - " if cond else "not ok - ") + what + ("" if cond else f" ({extra})"))
# the data goes out twice (text and structuredContent): ~700 KiB uncut
ok(len(json.dumps(full)) > 300 * 1024, "the uncut timeline's events are over 300 KiB", len(json.dumps(full)))
ok(len(line) <= 256 * 1024 + 64, "the answer is within 256 KiB", len(line))
r = json.loads(line)["result"]
sc = r["structuredContent"]
rt = sc.get("result_truncated", {})
ev = sc.get("events", [])
ok(rt.get("limit_bytes") == 262144 and rt.get("left_out", {}).get("events", 0) + len(ev) == len(full),
   "result_truncated counts what was left out", rt)
ok(len(ev) > 100 and ev == full[:len(ev)], "the events kept are the timeline's first ones, whole", len(ev))
ok(sc.get("more") == 1, "more says there is more")
ok("Result cut to 256 KiB" in r["content"][0]["text"].split("\n")[0], "the summary line says it was cut")
ok(json.loads(r["content"][0]["text"].split("<trace-data>\n", 1)[1].split("\n", 1)[1].rsplit("\n</trace-data>", 1)[0]) == sc,
   "the text copy is the same data, valid JSON")
PY
finish
