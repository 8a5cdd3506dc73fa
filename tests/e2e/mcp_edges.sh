#!/bin/sh
# mcp_edges.sh — the MCP server's edges found by probing it as an outsider
# (issue 38), through the real server on raw lines:
#  * lengths are counted in characters (Unicode code points), as JSON
#    Schema's maxLength means: 60,000 "é" in run_sql's sql (120,000 bytes)
#    were refused as "longer than 100000 characters";
#  * a REAL reads back exactly (9007199254740993.0 came back as
#    9.00719925474099e+15, 1/3 with 15 digits); ±infinity, which JSON cannot
#    hold, is said (the string "Infinity" plus non_finite_reals naming the
#    cell) instead of a silent null; a TEXT with a NUL comes back whole
#    (\u0000), not cut; a NUL escaped in an argument is refused, not cut;
#  * integer ranges are written as integers ("1..2147483647", not
#    "2.14748e+09");
#  * a window is a decimal number with an optional unit: "0x10" was read as
#    16 s; hex, inf, nan, exponents, spaces and trailing junk are one clear
#    tool error;
#  * run_sql's temporary data (DISTINCT, ORDER BY, GROUP BY) stays in
#    memory under a cap (--sql-memory) instead of filling the disk: a
#    DISTINCT over generated rows stops with an error naming the cap, and
#    the server never opens a temporary file (SQLITE_TMPDIR is watched).
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
DB=$T/report.db
cp $B/examples/small_check_h200.db "$DB" || { nok "copy the example trace"; finish; }
mkdir -p "$T/sqltmp"

timeout 300 python3 - "$B/ingero-analyze" "$DB" "$T/sqltmp" <<'PY'
import json, math, os, sqlite3, sys, time
sys.path.insert(0, "tests/mcp")
from mcpserver import Server, ok, text, err_code, finish

server, db, sqltmp = sys.argv[1:4]
s = Server(server, db)
s.initialize()

def sql(q, **kw):
    r = s.tool("run_sql", dict(sql=q, **kw))
    return (r or {}).get("result", {"isError": None, "raw": r}), r

# ---- lengths in characters ----
q = "SELECT length('" + "é" * 59980 + "') AS n"
res, r = sql(q)
ok(res.get("isError") is False and res["structuredContent"]["rows"] == [[59980]],
   "run_sql: 60,000 characters of 'é' (120,000 bytes) are within maxLength 100000",
   text(res)[:120] or (r or {}).get("error"))
q = "SELECT 1 --" + "é" * (100000 - 11)
res, r = sql(q)
ok(res.get("isError") is False, "run_sql: exactly 100000 characters pass", (r or {}).get("error"))
r = s.tool("run_sql", {"sql": "SELECT 1 --" + "x" * (100001 - 11)})
ok(err_code(r) == -32602 and "longer than 100000 characters" in r["error"]["message"],
   "run_sql: 100001 characters are refused", r and r.get("error"))
# a character outside the BMP is one character (UTF-16 would count two, UTF-8 four)
r = s.tool("get_trace_stats", {"from": "\U0001F600" * 32})
ok(r and r.get("result", {}).get("isError") is True and "not a time" in text(r["result"]),
   "from: 32 emoji are within maxLength 32 (then not a time)", r)
r = s.tool("get_trace_stats", {"from": "\U0001F600" * 33})
ok(err_code(r) == -32602 and "longer than 32 characters" in r["error"]["message"], "from: 33 emoji are refused", r)
r = s.tool("get_stacks", {"api": "é" * 64})
ok(r and r.get("result", {}).get("isError") is True and "no calls of that API" in text(r["result"]),
   "get_stacks api: 64 'é' are within maxLength 64", r)
r = s.tool("get_stacks", {"api": "é" * 65})
ok(err_code(r) == -32602 and "longer than 64 characters" in r["error"]["message"], "get_stacks api: 65 'é' are refused", r)

# ---- REAL, infinity, NUL ----
q = ("SELECT 9007199254740993.0 AS big, 1.0/3 AS third, 0.1 AS tenth, 1e308*10 AS pinf, -1e308*10 AS ninf, "
     "'a' || char(0) || 'b' AS nul, 2.5 AS half, 1e-300 AS tiny, 123456789.123456789 AS f, -0.0 AS negzero, "
     "CAST(x'00' AS TEXT) AS lone_nul")
want = sqlite3.connect(":memory:").execute(q).fetchone()
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": q}})
raw = s.recv_raw()
r = json.loads(raw) if raw else {}
res = r.get("result", {})
row = (res.get("structuredContent") or {}).get("rows", [[]])[0]
ok(res.get("isError") is False and len(row) == len(want), "run_sql: the REAL row is answered", text(res)[:200])
if len(row) == len(want):
    for i, name in enumerate(["big", "third", "tenth", "half", "tiny", "f"]):
        j = [0, 1, 2, 6, 7, 8][i]
        ok(isinstance(row[j], (int, float)) and float(row[j]) == want[j],
           f"run_sql: REAL {name} reads back exactly", f"{row[j]!r} vs {want[j]!r}")
    ok(row[3] == "Infinity" and row[4] == "-Infinity", "run_sql: ±infinity are the strings Infinity/-Infinity", row[3:5])
    ok(row[5] == "a\x00b" and row[10] == "\x00", "run_sql: a TEXT holding a NUL comes back whole", repr(row[5]))
ok(b"9007199254740992" in (raw or b"") and b"e+15" not in raw, "run_sql: the REAL's 16 digits are in the reply, no e+15")
nf = (res.get("structuredContent") or {}).get("non_finite_reals", {})
ok(nf.get("count") == 2 and nf.get("cells") == [[0, 3], [0, 4]] and "Infinity" in nf.get("note", ""),
   "run_sql: non_finite_reals names the cells that hold infinity", nf)
ok("Infinity" in text(res).split("\n")[0], "run_sql: the summary says so", text(res).split("\n")[0])
# the text copy is the same data
fenced = text(res).split("<trace-data>\n", 1)[1].split("\n", 1)[1].rsplit("\n</trace-data>", 1)[0]
ok(json.loads(fenced) == res.get("structuredContent"), "run_sql: the fenced text holds the same values")
# a NUL escaped in an argument would be cut by the JSON parser: refused, not cut
s.send('{"jsonrpc":"2.0","id":"nul","method":"tools/call","params":{"name":"run_sql","arguments":'
       '{"sql":"SELECT 1\\u0000 AS cut_here"}}}')
r = s.recv()
ok(err_code(r) == -32602 and r.get("id") == "nul" and "U+0000" in r["error"]["message"],
   "run_sql: an sql argument holding \\u0000 is refused (-32602), not run cut short", r)

# ---- integer ranges as integers ----
for name, args, rng in [("get_trace_stats", {"pid": 3000000000}, "(1..2147483647)"),
                        ("run_sql", {"sql": "SELECT 1", "timeout_ms": 60001}, "(1..60000)"),
                        ("get_timeline", {"limit": 5001}, "(1..5000)"),
                        ("get_stacks", {"limit": 0}, "(1..50)")]:
    r = s.tool(name, args)
    m = (r or {}).get("error", {}).get("message", "")
    ok(err_code(r) == -32602 and rng in m and "e+" not in m, f"{name} {args}: the range is written {rng}", m)

# ---- windows: a decimal number, an optional unit ----
for v in ["0x10", "0X10", "inf", "Infinity", "nan", "1e3", "1E3", " 5", "5 ", "5 s", "+5", "5sx", "5 parsecs",
          "-1", "-0", "1.2.3", ".", "s", "", "0x1p4", "5S", "1,5", "٣", "5\u00a0s", "5s5"]:
    r = s.tool("get_trace_stats", {"from": v})
    t = text((r or {}).get("result"))
    ok(r and r.get("result", {}).get("isError") is True and t.startswith("argument 'from' is not a time"),
       f"from {v!r}: one clear tool error", t[:160] or r)
for v, ns in [("0.25", 250000000), ("250ms", 250000000), (".25", 250000000), ("250000us", 250000000),
              ("250000000ns", 250000000), ("0.25s", 250000000), ("0.0000000005", 1), ("0", 0)]:
    r = s.tool("get_trace_stats", {"from": v})
    w = (r or {}).get("result", {}).get("structuredContent", {}).get("window", {})
    ok(w.get("from_rel_ns") == ns, f"from {v!r} is {ns} ns", text((r or {}).get("result"))[:160])
r = s.tool("get_trace_stats", {"since": "0"})
ok(r and r["result"].get("isError") is True and "since" in text(r["result"]), "since '0': a tool error")
rc, rest = s.close()
ok(rc == 0 and rest == [], "the server ends normally, nothing left unanswered", (rc, rest[:2]))

# ---- temporary storage: in memory, capped, never on disk ----
env = dict(os.environ, SQLITE_TMPDIR=sqltmp, TMPDIR=sqltmp)
s = Server(server, db, "--sql-memory", "64", env=env)
s.initialize()
q = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 10000000) "
     "SELECT count(*) FROM (SELECT DISTINCT printf('%040d', x) FROM r)")
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": q, "timeout_ms": 60000}})
seen, biggest, reply, t0 = set(), 0, None, time.time()
fd_dir = f"/proc/{s.p.pid}/fd"
while reply is None and time.time() - t0 < 60:
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
            if target.startswith(sqltmp):
                seen.add(target)
                biggest = max(biggest, os.stat(os.path.join(fd_dir, fd)).st_size)
        except OSError:
            pass
    reply = s.recv(0.05)
took = time.time() - t0
res = (reply or {}).get("result", {})
ok(res.get("isError") is True and "64 MiB" in text(res) and "memory" in text(res),
   "run_sql: a DISTINCT over 10M generated rows stops at the 64 MiB cap, and says so", text(res)[:300] or reply)
ok(not seen, "run_sql: no temporary file was opened", f"{sorted(seen)[:3]}, largest {biggest} bytes")
ok(took < 40, "run_sql: stopped long before its 60 s limit", f"{took:.1f} s")
res, r = sql("SELECT count(DISTINCT x % 1000) FROM (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r "
             "LIMIT 100000) SELECT x FROM r)")
ok(res.get("isError") is False and res["structuredContent"]["rows"] == [[1000]], "run_sql: a small DISTINCT still runs",
   text(res)[:200])
rc, rest = s.close()
ok(rc == 0, "the server ends normally", rc)
finish()
PY
check_eq "edges driver exits 0" 0 "$?"
finish
