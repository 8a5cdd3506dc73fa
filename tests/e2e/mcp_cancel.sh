#!/bin/sh
# mcp_cancel.sh — one slow query does not hold the session (issue 38).
# Requests were served one at a time and notifications/cancelled was
# ignored, so a run_sql counting to 1e9 held every later request (a ping
# included) until its time limit.  Now, through the real server:
#  * a ping sent while a query runs is answered at once, before the query;
#  * notifications/cancelled for the running query stops it (the server's
#    CPU time stops growing) and the query never answers (MCP 2025-06-18,
#    cancellation: "SHOULD NOT send a response for the cancelled request");
#    the next requests are answered at once;
#  * a cancelled request still waiting behind another is dropped unanswered;
#  * ids are matched as the client wrote them (a string id, an integer
#    past 2^53); a cancel for an unknown or finished request changes nothing;
#  * a query that is not cancelled still answers, after the ping.
. tests/lib.sh

timeout 300 python3 - "$B/ingero-analyze" "$B/examples/small_check_h200.db" <<'PY'
import json, sys, time
sys.path.insert(0, "tests/mcp")
from mcpserver import Server, ok, text, err_code, finish

server, db = sys.argv[1:3]
SLOW = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 1000000000) SELECT count(*) FROM r"

def cpu_seconds(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / 100.0   # utime + stime, in clock ticks of 1/100 s

def busy(pid, need=0.15, within=8):
    """Whether the process uses `need` s of CPU within `within` s (a loaded machine gives it less)."""
    c0, t0 = cpu_seconds(pid), time.time()
    while time.time() - t0 < within:
        time.sleep(0.2)
        if cpu_seconds(pid) - c0 >= need:
            return True
    return False

s = Server(server, db)
s.initialize()
answered = []   # every reply seen, to check at the end that no cancelled id was answered

def recv(timeout):
    r = s.recv(timeout)
    if r is not None:
        answered.append(r)
    return r

def cancel(rid):
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid, "reason": "test"}})

# ---- a ping while the query runs, then cancel it ----
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": SLOW, "timeout_ms": 60000}}, id=100)
time.sleep(0.5)
t0 = time.time()
s.request("ping", id=101)
r = recv(5)
ok(r is not None and r.get("id") == 101 and r.get("result") == {}, "a ping during a running query is answered at once",
   r if r is None else json.dumps(r)[:200])
ok(time.time() - t0 < 5, "within 5 s", f"{time.time() - t0:.1f} s")
ok(busy(s.p.pid), "the query is still running (the server is busy)")
cancel(100)
t0 = time.time()
s.request("ping", id=102)
r = recv(5)
ok(r is not None and r.get("id") == 102, "a ping after the cancel is answered", r)
s.request("tools/list", id=103)
r = recv(10)
ok(r is not None and r.get("id") == 103 and len(r.get("result", {}).get("tools", [])) == 8,
   "tools/list after the cancel is answered at once (the query no longer holds the session)",
   r if r is None else json.dumps(r)[:200])
time.sleep(0.3)
busy0 = cpu_seconds(s.p.pid)
time.sleep(1)
ok(cpu_seconds(s.p.pid) - busy0 < 0.1, "the cancelled query stopped (no CPU used while idle)",
   f"{cpu_seconds(s.p.pid) - busy0:.2f} s of CPU in 1 s")

# ---- a queued request cancelled before it starts, with string and big ids ----
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": SLOW, "timeout_ms": 60000}}, id="slow-\u00e9")
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": "SELECT 42"}}, id=104)
time.sleep(0.3)
cancel(104)                   # waiting behind the slow one: dropped
cancel(999999)                # unknown: ignored
# the running one, its id written another way: raw UTF-8 where the request had \u00e9
s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-é"}}')
s.request("ping", id=105)
r = recv(10)
ok(r is not None and r.get("id") == 105, "after cancelling the running and the queued request the ping answers", r)
r = recv(1.5)
ok(r is None, "and nothing else", r)
s.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"run_sql","arguments":'
       '{"sql":"' + SLOW + '","timeout_ms":60000}}}')
time.sleep(0.3)
# 2^53: the same double as 9007199254740993, another id
s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740992}}')
time.sleep(0.3)
ok(busy(s.p.pid), "a cancel naming 9007199254740992 leaves request 9007199254740993 running")
s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}')
s.request("ping", id=106)
r = recv(10)
ok(r is not None and r.get("id") == 106, "an id past 2^53 is cancelled by its exact digits", r)

# ---- a query that is not cancelled answers, after the ping sent during it ----
MEDIUM = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 3000000) SELECT count(*) FROM r"
s.request("tools/call", {"name": "run_sql", "arguments": {"sql": MEDIUM, "timeout_ms": 60000}}, id=107)
s.request("ping", id=108)
first, second = recv(30), recv(60)
ok(first is not None and first.get("id") == 108, "a ping during a query is answered before the query", first)
ok(second is not None and second.get("id") == 107 and second["result"]["structuredContent"]["rows"] == [[3000000]],
   "and the query answers after it, with its result", second if second is None else json.dumps(second)[:200])
cancel(107)                   # finished: ignored
r = s.call("ping", id=109)
ok(r is not None and r.get("id") == 109, "a cancel for a finished request changes nothing")
answered.append(r)

rc, rest = s.close()
answered += rest
ok(rc == 0, "the server ends normally when its input ends", rc)
ids = [x.get("id") for x in answered]
ok(not {100, 104, "slow-\u00e9", 9007199254740993} & set(i for i in ids if i is not None),
   "no cancelled request was ever answered", ids)
ok(all("error" not in x for x in answered), "no error was sent", [x for x in answered if "error" in x][:2])
finish()
PY
check_eq "cancellation driver exits 0" 0 "$?"
finish
