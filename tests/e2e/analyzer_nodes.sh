#!/bin/sh
# analyzer_nodes.sh — several nodes' traces as one job: two collectors on this machine, each
# tracing one "node" of a job of 4 ranks, the second's clock anchor skewed by +5 s, rank 3 (on the
# second node) slow for a known cause (tests/helpers/two_nodes.sh makes them).  `ingero-analyze
# explain a.db b.db` puts both on one timeline by the anchors, refines it by the all-reduces'
# completions, states what remains — and the skew is taken out within that — and names rank 3 and
# its cause.  Each file alone says it holds 2 of the communicator's 4 ranks.  `export --format
# perfetto a.db b.db` writes both nodes into one trace with the same offsets: each node's processes
# named and numbered apart, node 1's times on node 0's clock (every rank's k-th all-reduce returns
# at one instant, the last rank's call: within the uncertainty, where unshifted 5 s apart), the
# offsets and what remains uncertain in otherData; and the collectives drawn: each rank's
# "collectives" track holds one slice per collective its node stored, with its args, and the
# k-th all-reduce's parts are linked by flows from the rank that arrived last to the others —
# rank 3 the source as often as explain says it is last.  `mcp a.db b.db` serves both as one
# investigation (checked at the end).
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/two_nodes.sh
T=$(tmpdir)
trap 'rm -rf "$T"; rm -f "/dev/shm/fakenccl-nodes-$$"' EXIT
A=$B/ingero-analyze
two_nodes "$T"
check_eq "both nodes' jobs and collectors exit 0" "0 0" "$TWO_NODES_RC"
check_eq "4 ranks ran, 2 a node" "4" "$(grep -c 'role=rank[0-3] ' "$T/truth")"
check_eq "node 1's anchor skewed by 5 s (+ the real difference, microseconds)" 1 \
	"$(sqlite3 "$T/n0.db" "ATTACH '$T/n1.db' AS b; SELECT abs(((SELECT value FROM b.session WHERE key='clock_anchor_realtime_ns')
		- (SELECT value FROM b.session WHERE key='clock_anchor_mono_ns')) - ((SELECT value FROM session WHERE key='clock_anchor_realtime_ns')
		- (SELECT value FROM session WHERE key='clock_anchor_mono_ns')) - 5000000000) < 50000000")"

"$A" explain --json "$T/n0.db" "$T/n1.db" >"$T/job.json" 2>"$T/job.err"
check_eq "explain of both exits 0" 0 $?
"$A" explain --width 1000 "$T/n0.db" "$T/n1.db" >"$T/job.txt" 2>>"$T/job.err"
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$T/job.json"; }
check_eq "the skew taken out within the stated uncertainty" True \
	"$(j "abs(d['nodes'][1]['anchor_offset_ns'] + d['nodes'][1]['correction_ns']) <= d['nodes'][1]['uncertainty_ns'] + 2 * max(d['nodes'][0]['anchor_uncertainty_ns'], d['nodes'][1]['anchor_uncertainty_ns'])")"
check_eq "the stated uncertainty is small (under 5 ms)" True "$(j "d['nodes'][1]['uncertainty_ns'] < 5000000")"
check_eq "refined by the all-reduces (15 and 16 matched)" True "$(j "d['nodes'][1]['collectives_used'] >= 15")"
check_eq "4 ranks, rank 3 the straggler, on node 1, first finding" "4 3 1 rank_straggler" \
	"$(j "len(d['ranks']['arrivals']), d['ranks']['straggler']['rank'], d['ranks']['straggler']['node'], d['chains'][0]['kind']" | tr -d "(),'")"
check_eq "its own cause: waiting for its DataLoader worker" gaps_waiting_workers "$(j "d['ranks']['straggler']['cause']['kind']")"
check_eq "ranks 0-2 wait" "ranks 0-2 wait" "$(j "d['chains'][0]['summary']" | grep -o 'ranks 0-2 wait')"
check_eq "text: the nodes, the job, rank 3 on its own" "1 1 1" \
	"$(grep -c '^  node 1: .*by the clock anchors.*remaining uncertainty' "$T/job.txt") $(grep -c '^Job: 4 ranks on 2 nodes' "$T/job.txt") $(grep -c '^Rank 3 on its own (node 1' "$T/job.txt")"
"$A" explain --width 1000 "$T/n0.db" >"$T/one.txt"
check_eq "one node's file alone: 2 of the communicator's 4 ranks, said; no balance verdict" "1 0" \
	"$(grep -c "These are 2 of the communicator's 4 ranks" "$T/one.txt") $(grep -c 'The ranks are balanced' "$T/one.txt")"
"$A" explain -p 1 "$T/n0.db" "$T/n1.db" >/dev/null 2>&1
check_eq "several files with -p: a usage error" 2 $?

"$A" export --format perfetto -o "$T/job.pf.json" "$T/n0.db" "$T/n1.db" 2>"$T/pf.err"
check_eq "export of both exits 0" 0 $?
# prints: node prefixes seen, pid collisions, offset and uncertainty as explain's, the all-reduces'
# spread over the ranks (worst, ms) against the stated uncertainty + 5 ms of the instant each rank's
# k-th ncclAllReduce call returned (the host's view: the start of the cudaStreamSynchronize that
# follows it), which the fake NCCL holds until the last rank has called
python3 - "$T/job.pf.json" "$T/job.json" >"$T/pf.check" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
x = json.load(open(sys.argv[2]))
names = {e['pid']: e['args']['name'] for e in d['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_name'}
node_of = {}
for pid, n in names.items():
    m = re.match(r'node (\d) \((.*?)\) · ', n)
    node_of[pid] = int(m.group(1)) if m else -1
print('prefixes', sorted(set(node_of.values())))
# a pid named by one node only, and its events' pids all named
print('collisions', sum(1 for pid in node_of if pid // 10000000 != node_of[pid]),
      len({e['pid'] for e in d['traceEvents']} - set(names)))
sort = {e['pid'] for e in d['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_sort_index'}
print('sorted', sort == set(names))
o, n1 = d['otherData']['nodes'], x['nodes'][1]
print('offsets', o[1]['offset_applied_ns'] == n1['anchor_offset_ns'] + n1['correction_ns'],
      o[1]['uncertainty_ns'] == n1['uncertainty_ns'], o[1]['host'] is not None, o[1]['boot_id'] is not None,
      o[1]['file'].endswith('n1.db'), o[0]['offset_applied_ns'] == 0)
ret = {}
for e in d['traceEvents']:
    if e['ph'] == 'X' and e['name'] == 'cudaStreamSynchronize':
        m = re.search(r'· rank (\d) · ', names[e['pid']])
        ret.setdefault(int(m.group(1)), []).append(e['ts'])
k = min(len(v) for v in ret.values())
spread = max(max(v[i] for v in ret.values()) - min(v[i] for v in ret.values()) for i in range(k)) / 1000
print('allreduce', sorted(ret), k >= 15, spread <= o[1]['uncertainty_ns'] / 1e6 + 5, round(spread, 3))
PY
check_eq "export: both nodes' processes named by node" "prefixes [0, 1]" "$(grep '^prefixes' "$T/pf.check")"
check_eq "export: no pid of two nodes, every event's process named" "collisions 0 0" "$(grep '^collisions' "$T/pf.check")"
check_eq "export: every process sorted" "sorted True" "$(grep '^sorted' "$T/pf.check")"
check_eq "export: otherData states explain's offset and uncertainty, the host, boot id and file" \
	"offsets True True True True True True" "$(grep '^offsets' "$T/pf.check")"
check_eq "export: node 1 shifted: the 4 ranks' k-th all-reduces return together (uncertainty + 5 ms)" \
	"allreduce [0, 1, 2, 3] True True" "$(grep '^allreduce' "$T/pf.check" | cut -d' ' -f1-7)"
grep -q '^allreduce' "$T/pf.check" || cat "$T/pf.check" "$T/pf.err"
# the collectives: each rank's track and slices against what its node stored, the flows from the
# last rank to the others against explain's arrivals (rank 3 the source most often)
python3 tests/helpers/perfetto_collectives.py "export" "$T/job.pf.json" "$T/job.json" 3 "$T/n0.db" "$T/n1.db"
"$A" export --format perfetto --from 1s -o "$T/x.json" "$T/n0.db" "$T/n1.db" 2>"$T/x.err"
check_eq "export of several files with --from: a usage error, one line" "2 1" "$? $(wc -l <"$T/x.err")"

# The MCP server of both files, driven over stdio (tests/mcp/mcpserver.py): the nodes as explain
# aligned them, the ranks and their pids per node (the truth's), get_ranks across the nodes equal to
# explain --json's cross-node answer (ranks, the rank_straggler finding, the straggler's own chains,
# figures and verdict) and to its text, per-trace tools reading the file node names, a node not
# served one JSON-RPC error with the next request still served; one file: no node, no get_nodes.
"$A" explain --json "$T/n1.db" >"$T/one1.json" 2>/dev/null
timeout 300 python3 - "$A" "$T/n0.db" "$T/n1.db" "$T/job.json" "$T/job.txt" "$T/one1.json" "$T/truth" <<'PY'
import json, re, sqlite3, sys
sys.path.insert(0, "tests/mcp")
from mcpserver import Server, ok, text, err_code, finish

A, n0, n1, job_json, job_txt, one1_json, truth = sys.argv[1:]
x, txt, one1 = json.load(open(job_json)), open(job_txt).read(), json.load(open(one1_json))
pid_of = {int(m.group(2)): int(m.group(1)) for m in re.finditer(r"pid=(\d+) ppid=\d+ role=rank(\d)", open(truth).read())}

s = Server(A, n0, more=(n1,))
r = s.initialize()
ok("get_nodes" in r["result"]["instructions"], "mcp: initialize says two nodes are served and where to begin")
tools = {t["name"]: t for t in s.call("tools/list")["result"]["tools"]}
ok("get_nodes" in tools and all("node" in t["inputSchema"]["properties"] for n, t in tools.items() if n != "get_nodes")
   and all("report.db are served" in t["description"] for n, t in tools.items() if n != "get_nodes"),
   "mcp tools/list: get_nodes, and node in every other tool's schema and description", sorted(tools))

res = s.tool("get_nodes", {})["result"]
nodes = res["structuredContent"]["nodes"]
ok([(n["node"], n["name"]) for n in nodes] == [(0, "n0.db"), (1, "n1.db")],
   "mcp get_nodes: two nodes, named by their files (both on this host)", [(n["node"], n["name"]) for n in nodes])
ok(all(n[k] == e[k] for n, e in zip(nodes, x["nodes"]) for k in e),
   "mcp get_nodes: explain's file, host, boot id, anchor offset, correction, remaining uncertainty", nodes)
ok([n["offset_applied_ns"] for n in nodes] == [0, x["nodes"][1]["anchor_offset_ns"] + x["nodes"][1]["correction_ns"]],
   "mcp get_nodes: the offset applied is explain's anchor offset plus correction")
ok({(n["node"], r["rank"]): r["pid"] for n in nodes for r in n["ranks"]} == {(k // 2, k): pid_of[k] for k in range(4)},
   "mcp get_nodes: ranks 0-1 on node 0, 2-3 on node 1, each with its pid (the job's truth)", nodes)
ok(nodes[0]["agent_pid"] == x["ranks"]["agent_pid"] and nodes[1]["agent_pid"] not in (None, nodes[0]["agent_pid"]),
   "mcp get_nodes: each node's agent")

res = s.tool("get_ranks", {}, timeout=120)["result"]
sc = res["structuredContent"]
ok({k: v for k, v in sc.items() if k not in ("finding", "straggler_analysis", "nodes")} == x["ranks"],
   "mcp get_ranks across the nodes = explain --json A B's ranks (who is last, how late, at what share, the wait imposed)")
ok((sc["straggler"]["rank"], sc["straggler"]["node"], sc["finding"]["kind"]) == (3, 1, "rank_straggler")
   and sc["finding"] == x["chains"][0], "mcp get_ranks: rank 3 on node 1, the rank_straggler finding = explain's first chain")
sa = sc.get("straggler_analysis", {})
ok((sa.get("rank"), sa.get("node"), sa.get("pid")) == (3, 1, pid_of[3]) and sa["chains"] == x["chains"][1:]
   and sa["figures"] == x["figures"] and sa["verdict"] == x["verdict"] and sa["gpu_idle_pct"] == x["gpu_idle_pct"],
   "mcp get_ranks: the straggler's own analysis = explain's (chains, figures, verdict, GPU idle)")
ok(sa["chains"] and sa["chains"][0]["kind"] == "gaps_waiting_workers", "mcp get_ranks: its own cause, waiting for its worker")
ok(sc["nodes"] == x["nodes"], "mcp get_ranks: explain's nodes")
own = txt.split("Rank 3 on its own (node 1", 1)[-1]
ok(("[HIGH] " + sc["finding"]["summary"]) in txt and sa["figures"]["headline"] in own
   and all(c["summary"] in own for c in sa["chains"]), "mcp get_ranks: the same text explain A B prints")
ok(text(res).startswith("get_ranks: 4 ranks on 2 nodes; the straggler is rank 3 (node 1): " + x["chains"][0]["summary"]),
   "mcp get_ranks: its summary names the straggler as explain does", text(res)[:300])
r = s.tool("get_ranks", {"from": "1s"})
ok(r["result"].get("isError") is True and "across the nodes there is no 'from'" in text(r["result"]),
   "mcp get_ranks: a window across the nodes is refused (one file's)", r)

r = s.tool("get_causal_chains", {"node": 1}, timeout=120)["result"]["structuredContent"]
ok(r["chains"] == one1["chains"] and r["figures"] == one1["figures"],
   "mcp get_causal_chains node 1 = explain --json of node 1's file alone")
cmd = lambda args: s.tool("get_trace_stats", args)["result"]["structuredContent"]["trace"]["command"]
ok("--node-rank 1 " in cmd({"node": "n1.db"}) and "--node-rank 1 " in cmd({"node": 1})
   and "--node-rank 0 " in cmd({}) and "--node-rank 0 " in cmd({"node": "n0.db"}),
   "mcp get_trace_stats reads node 1's trace with node 1 or \"n1.db\", node 0's without node")
idle = lambda args: s.tool("get_gpu_idle", args, timeout=120)["result"]["structuredContent"]
i1, i0 = idle({"node": 1}), idle({})
ok(i1 == idle({"node": "n1.db"}) and i1 != i0, "mcp get_gpu_idle: node 1's own answer, by index or name; node 0's without")
q = "SELECT pid FROM processes ORDER BY pid"
want = [[p] for (p,) in sqlite3.connect(n1).execute(q)]
r = s.tool("run_sql", {"sql": q, "node": 1})["result"]["structuredContent"]
ok(r["rows"] == want and r["rows"] != [[p] for (p,) in sqlite3.connect(n0).execute(q)],
   "mcp run_sql node 1 reads node 1's file", r["rows"])

for bad, msg in ((2, "get_stacks: no node 2: 2 nodes are served, 0 to 1 (get_nodes lists them with their names)"),
                 ("n9.db", 'get_stacks: no node named "n9.db": 2 nodes are served, 0 to 1, by index or by the name '
                           "get_nodes lists")):
    r = s.tool("get_stacks", {"node": bad})
    ok(err_code(r) == -32602 and r["error"]["message"] == msg, f"mcp: node {bad!r} not served: one JSON-RPC error", r)
    r = s.tool("get_trace_stats", {"node": 1})
    ok(r and r["result"].get("isError") is False, "mcp: ... and the next request is served")
rc, rest = s.close()
ok(rc == 0 and rest == [], "mcp: the server of two nodes ends normally", rc)

s = Server(A, n0)
s.initialize()
tools = s.call("tools/list")["result"]["tools"]
ok("get_nodes" not in [t["name"] for t in tools] and not any("node" in t["inputSchema"]["properties"] for t in tools),
   "mcp of one file: no get_nodes, no node argument")
ok(err_code(s.tool("get_trace_stats", {"node": 0})) == -32602, "mcp of one file: node is an unknown argument")
s.close()
finish()
PY
check_eq "the MCP driver of two nodes exits 0" 0 "$?"
finish
