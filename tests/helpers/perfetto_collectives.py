#!/usr/bin/env python3
"""perfetto_collectives.py — checks the collectives of a Perfetto export
(analyzer/render/export_perfetto.c) against the trace and explain; prints
TAP lines ("ok - NAME: ...").  Used by tests/e2e/analyzer_nodes.sh (two
nodes, NCCL) and analyzer_perfetto.sh (one file of several ranks, gloo).

usage: perfetto_collectives.py NAME EXPORT.json EXPLAIN.json STRAGGLER [DB ...]

  STRAGGLER  the rank explain names the straggler (-1: none expected)
  DB         the report.db files, in node order: each rank's slices are
             counted against the NCCL collectives its file stored (none
             given: a gloo job, whose collectives are read from its calls,
             each rank's slices at least the collectives explain matched)

A trace of one rank (explain has no job: a one-rank NCCL group): its one
track holds one slice a stored collective, none matched, no flow.

Checked, counts and contents only (no timing):
  * each rank's process has one "collectives (rank R)" track; its slices
    are as many as its node stored (NCCL), every one with its args (op,
    backend, communicator, seq, bytes, ranks, rank) and, matched, its
    lateness, wait and the rank that arrived last;
  * every flow is one "s" and one "f" (bound to its enclosing slice, "bp":
    "e"), the s inside the slice of the rank that arrived last, the f inside
    a slice of the same collective (communicator and seq) of a rank that
    waited; their number is otherData's and Σ (ranks matched − 1) over the
    collectives with a last rank;
  * the collectives every rank took part in are explain's plus the first
    (which explain leaves out: the ranks' start-ups), and each rank leads
    the flows of as many collectives as explain says it arrived last at
    (or one more: that first one) — the straggler most.
"""
import collections
import json
import re
import sqlite3
import sys

name, path, ex_path, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
dbs = sys.argv[5:]
NODE_PIDS = 10000000
COLL_TID = 999999000


def ok(what, cond, extra=""):
    print(("ok - " if cond else "not ok - ") + f"{name}: {what}" + ("" if cond or extra == "" else f" ({extra})"),
          flush=True)


d = json.load(open(path))
ex = json.load(open(ex_path))
ev = d["traceEvents"]
thr = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
tracks = {k: v for k, v in thr.items() if k[1] == COLL_TID}
slices = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X" and e.get("cat") == "collective":
        slices[(e["pid"], e["tid"])].append(e)
rank_of = {}
for k, v in tracks.items():
    m = re.fullmatch(r"collectives \(rank (\d+)\)", v)
    rank_of[k] = int(m.group(1)) if m else None
ranks = sorted(r for r in rank_of.values() if r is not None)
job = ex.get("ranks")
arrivals = job["arrivals"] if job else []
if job:
    ok("a collectives track for each rank, named by it", ranks == [a["rank"] for a in arrivals] and
       set(slices) <= set(tracks), (ranks, len(slices), len(tracks)))
else:
    ok("one collectives track", len(tracks) == 1 and set(slices) == set(tracks), list(tracks.values()))

# the slices: as many as stored, with their args
if dbs:
    ops = ("ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast", "ncclBcast", "ncclReduce")
    stored = {}
    for n, db in enumerate(dbs):
        c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        for pid, k in c.execute(f"SELECT pid, count(*) FROM collectives WHERE op IN {ops!r} GROUP BY pid"):
            stored[(n * NODE_PIDS if len(dbs) > 1 else 0) + pid] = k
        c.close()
    drawn = {k[0]: len(v) for k, v in slices.items()}
    ok(f"each rank's slices are the collectives its node stored ({sum(stored.values())})", drawn == stored
       and sum(stored.values()) == d["otherData"]["collectives"]["slices"], (sorted(drawn.items())[:4],
       sorted(stored.items())[:4]))
else:
    few = {rank_of[k]: len(v) for k, v in slices.items() if len(v) < job["collectives"] + 1}
    ok(f"each rank's slices hold at least explain's {ex['ranks']['collectives']} collectives and the first", not few, few)
need = ("op", "backend", "communicator", "seq", "bytes", "ranks", "rank", "ranks_matched", "arrival", "completion")
matched_need = ("late_vs_first_ns", "wait_ns", "last")
allsl = [e for v in slices.values() for e in v]
bad = [e for e in allsl if any(k not in e["args"] for k in need)
       or (e["args"]["ranks_matched"] > 1 and any(k not in e["args"] for k in matched_need))]
ok(f"every slice ({len(allsl)}) carries its args", allsl and not bad, bad[:1])
backend = {e["args"]["backend"] for e in allsl}
if not job:
    fl = [e for e in ev if e["ph"] in ("s", "t", "f")]
    ok("one rank: none matched, no flow, nccl", not fl and all(e["args"]["ranks_matched"] == 1 for e in allsl)
       and backend == {"nccl"} and d["otherData"]["collectives"]["flows"] == 0, (len(fl), backend))
    sys.exit(0)
ok("one backend, as explain's", backend == {job["collectives_source"]}, backend)


def key(e):
    return (e["args"]["communicator"], e["args"]["seq"])


groups = collections.defaultdict(list)
for e in allsl:
    if e["args"]["ranks_matched"] > 1:
        groups[key(e)].append(e)
full = {k: v for k, v in groups.items() if len(v) == len(ranks) and all(e["args"]["ranks_matched"] == len(ranks) for e in v)}
ok(f"the collectives of every rank are explain's {ex['ranks']['collectives']} and the first",
   len(full) == job["collectives"] + 1, len(full))
lead = collections.Counter()
ties = 0
expect_pairs = 0
for k, v in groups.items():
    last = [e for e in v if e["args"].get("arrived_last")]
    if last:
        expect_pairs += len(v) - 1
    if k in full:
        if last:
            lead[rank_of[(last[0]["pid"], COLL_TID)]] += 1
        else:
            ties += 1

# the flows
fl = collections.defaultdict(list)
for e in ev:
    if e["ph"] in ("s", "t", "f") and e.get("cat") == "collective":
        fl[e["id"]].append(e)


def inside(e):
    """The slices of e's track holding e's ts, innermost (shortest) first."""
    return sorted((s for s in slices.get((e["pid"], e["tid"]), []) if s["ts"] < e["ts"] < s["ts"] + s["dur"]),
                  key=lambda s: s["dur"])


wrong = []
for i, pair in fl.items():
    s = [e for e in pair if e["ph"] == "s"]
    f = [e for e in pair if e["ph"] == "f"]
    if len(s) != 1 or len(f) != 1 or len(pair) != 2 or f[0].get("bp") != "e" or s[0]["name"] != f[0]["name"]:
        wrong.append(("shape", i))
        continue
    a, b = inside(s[0]), inside(f[0])
    if not a or not b or not a[0]["args"].get("arrived_last") or b[0]["args"].get("arrived_last") \
            or key(a[0]) != key(b[0]) or s[0]["name"] != "waited for " + a[0]["args"]["last"]:
        wrong.append(("binding", i, a[:1], b[:1]))
ok("every flow runs from the last rank's slice to a waiting rank's slice of the same collective", fl and not wrong,
   wrong[:2])
flows = d["otherData"].get("collectives", {}).get("flows")
ok(f"flow pairs: {len(fl)} = otherData's = the waiting parts of the collectives with a last rank",
   len(fl) == flows == expect_pairs, (len(fl), flows, expect_pairs))
exl = {a["rank"]: a["last"] for a in arrivals}
diff = {r: lead[r] - exl[r] for r in exl}
ok("each rank leads the flows of as many collectives as explain says it was last at (+1: the first)",
   all(x in (0, 1) for x in diff.values()) and sum(diff.values()) + ties - job.get("ties", 0) <= 1,
   (dict(lead), exl, ties))
top = max(lead, key=lambda r: lead[r]) if lead else None
if want >= 0:
    ok(f"rank {want}, explain's straggler, is the flows' source most often ({lead[want]} of {len(full) - ties})",
       top == want and job["straggler"]["rank"] == want, (dict(lead), job.get("straggler")))
print(f"# {name}: collectives led per rank {dict(sorted(lead.items()))}, ties {ties}, explain's last {exl}")
