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
# investigation (checked after the export).
# `merge -o job.db a.db b.db` writes both into one report.db (issue 44) — tested with node 1's data
# moved 7 s ahead (as if its clock had booted 7 s earlier: every time column, the calls' too), so that
# the offset the merge applies is not near zero: every table's rows and losses the sum of both files',
# node 1's times moved by explain's offset exactly, its pids and tids apart and mapped back
# (node_processes), its frames and stacks resolving to the same frames as before (also where stack
# ids of the two files met), the k-th all-reduce of the 4 ranks returning together within the
# stated uncertainty; `explain job.db` tells the story `explain a.db b.db` tells, word for word
# but the files' names; two older corpus traces (versions 4 and 7) merged and read back the same;
# bad input (a file missing, damaged, given twice; one file; an output that exists) one line,
# non-zero, and nothing left at the output's name.
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
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
echo "# node 1: skew left $(j "d['nodes'][1]['anchor_offset_ns'] + d['nodes'][1]['correction_ns']") ns, stated uncertainty $(j "d['nodes'][1]['uncertainty_ns']") ns, anchors' $(j "max(d['nodes'][0]['anchor_uncertainty_ns'], d['nodes'][1]['anchor_uncertainty_ns'])") ns"
check_eq "the skew taken out within the stated uncertainty" True \
	"$(j "abs(d['nodes'][1]['anchor_offset_ns'] + d['nodes'][1]['correction_ns']) <= d['nodes'][1]['uncertainty_ns'] + 2 * max(d['nodes'][0]['anchor_uncertainty_ns'], d['nodes'][1]['anchor_uncertainty_ns'])")"
# The ranks' own spread: the k-th all-reduce's returns of a node's two ranks, one clock — what
# the machine's load adds (a rank woken 92 ms late beside a loaded make check): the clocks'
# alignment cannot be finer than that, and says so
own_spread() { # DB → the largest spread of a node's ranks' k-th all-reduce returns, ns
	sqlite3 -noheader "$1" "SELECT coalesce(max(s), 0) FROM (SELECT max(start_ns + dur_ns) - min(start_ns + dur_ns) AS s
		FROM collectives WHERE op = 'ncclAllReduce' AND seq > 0 GROUP BY comm_id, seq HAVING count(*) = 2)"
}
OWN=$(own_spread "$T/n0.db"); o1=$(own_spread "$T/n1.db"); [ "$o1" -gt "$OWN" ] && OWN=$o1
echo "# the ranks' own spread within a node: $OWN ns"
check_eq "the stated uncertainty is small (under 5 ms beyond the ranks' own spread within a node)" True \
	"$(j "d['nodes'][1]['uncertainty_ns'] < 5000000 + $OWN")"
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
# prints: node prefixes seen, pid collisions, offset and uncertainty as explain's (the all-reduces
# meeting in it: below, against the merged file's export)
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
PY
check_eq "export: both nodes' processes named by node" "prefixes [0, 1]" "$(grep '^prefixes' "$T/pf.check")"
check_eq "export: no pid of two nodes, every event's process named" "collisions 0 0" "$(grep '^collisions' "$T/pf.check")"
check_eq "export: every process sorted" "sorted True" "$(grep '^sorted' "$T/pf.check")"
check_eq "export: otherData states explain's offset and uncertainty, the host, boot id and file" \
	"offsets True True True True True True" "$(grep '^offsets' "$T/pf.check")"
grep -q '^offsets' "$T/pf.check" || cat "$T/pf.check" "$T/pf.err"
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

# ---- merge: both nodes in one file ----
S=7000000000
shift_db() { # DB NS: every CLOCK_MONOTONIC time of DB moved by NS (listed here, apart from the merge's own rules)
	"$B/tests/calls_edit" "$1" --shift "$2" >/dev/null || nok "calls_edit --shift $1"
	sqlite3 "$1" "UPDATE processes SET start_ns = start_ns + $2 WHERE start_ns; UPDATE processes SET exit_ns = exit_ns + $2 WHERE exit_ns;
		UPDATE off_cpu SET start_ns = start_ns + $2, end_ns = end_ns + $2, runnable_ns = runnable_ns + $2;
		UPDATE page_allocs SET bucket_ns = bucket_ns + $2; UPDATE cpu_busy SET bucket_ns = bucket_ns + $2;
		UPDATE competitors SET bucket_ns = bucket_ns + $2; UPDATE cpu_samples SET ts_ns = ts_ns + $2;
		UPDATE off_cpu_stacks SET start_ns = start_ns + $2; UPDATE capture SET t_ns = t_ns + $2;
		UPDATE gpu_marks SET recorded_ns = recorded_ns + $2, done_ns = done_ns + $2;
		UPDATE collectives SET start_ns = start_ns + $2;
		UPDATE session SET value = value + $2 WHERE key IN ('start_mono_ns', 'end_mono_ns', 'clock_anchor_mono_ns')"
}
cp "$T/n1.db" "$T/n1s.db"
shift_db "$T/n1s.db" $S
"$A" explain --json "$T/n0.db" "$T/n1s.db" >"$T/sep.json" 2>>"$T/job.err"
"$A" explain --width 1000 "$T/n0.db" "$T/n1s.db" >"$T/sep.txt" 2>>"$T/job.err"
"$A" merge -o "$T/job.db" "$T/n0.db" "$T/n1s.db" >"$T/merge.out" 2>"$T/merge.err"
check_eq "merge exits 0, quiet on stderr, its one line" "0 0 1" "$? $(wc -l <"$T/merge.err") $(grep -c '^.*job.db: 2 nodes on node 0.s clock; node 1 -7' "$T/merge.out")"
check_eq "nothing but job.db left beside it" "job.db" "$(ls "$T" | grep job.db)"
m() { sql -noheader "$T/job.db" "$1"; }
rows() { sql -noheader "$1" "SELECT count(*) FROM $2" 2>/dev/null || echo 0; }
bad=""
for t in processes threads call_blocks cuda_calls off_cpu page_allocs cpu_busy competitors kernels cpu_samples off_cpu_stacks \
	gpu_marks capture losses process_env collectives stacks frames stack_frames; do
	[ "$(rows "$T/job.db" $t)" -eq $(($(rows "$T/n0.db" $t) + $(rows "$T/n1s.db" $t))) ] || bad="$bad $t"
done
check_eq "every table's rows the sum of both files' (cuda_calls and stack_frames too)" "" "$bad"
check_ge "... of a trace with rows (calls)" "$(rows "$T/job.db" cuda_calls)" 300
sq() { sqlite3 "$1" "$2"; }
check_eq "losses: each source's sum both files' sums" \
	"$(sq "$T/n0.db" "ATTACH '$T/n1s.db' AS b; SELECT source, sum(c) FROM (SELECT source, count AS c FROM losses UNION ALL
		SELECT source, count FROM b.losses) GROUP BY 1 ORDER BY 1")" "$(m "SELECT source, sum(count) FROM losses GROUP BY 1 ORDER BY 1")"
check_eq "losses: node 1's machine-wide ones kept apart (pid 10000000)" \
	"$(sq "$T/n1s.db" "SELECT count(*) FROM losses WHERE pid = 0")" "$(m "SELECT count(*) FROM losses WHERE pid = 10000000")"
j2() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$T/sep.json"; }
ses() { sq "$1" "SELECT value FROM session WHERE key = '$2'"; }
check_eq "metadata: node 1's host, boot id and anchor kept, its file named; 2 nodes, 4 CPUs" \
	"$(ses "$T/n1s.db" host) $(ses "$T/n1s.db" boot_id) $(ses "$T/n1s.db" clock_anchor_realtime_ns) $T/n1s.db 2 4" \
	"$(ses "$T/job.db" node.1.host) $(ses "$T/job.db" node.1.boot_id) $(ses "$T/job.db" node.1.clock_anchor_realtime_ns) $(ses "$T/job.db" node.1.merge.file) $(ses "$T/job.db" merged_nodes) $(ses "$T/job.db" cpus)"
SH=$(ses "$T/job.db" node.1.merge.shift_ns)
check_eq "metadata: the offset applied and the uncertainty left are explain's" \
	"$(j2 "d['nodes'][1]['anchor_offset_ns'] + d['nodes'][1]['correction_ns'], d['nodes'][1]['uncertainty_ns']" | tr -d '(),')" \
	"$SH $(ses "$T/job.db" node.1.merge.uncertainty_ns)"
check "the offset takes the 7 s out (within 50 ms)" test "$(((SH + S) / 50000000))" -eq 0
# node 1's rows (pid >= 10^7) against n1s.db's: pids based, times moved by the offset exactly
L=10000000
bad=""
for tc in "off_cpu tid start_ns" "off_cpu pid end_ns" "cpu_samples tid ts_ns" "gpu_marks pid done_ns" "collectives tid start_ns" \
	"cuda_calls tid start_ns" "call_blocks pid last_ns" "page_allocs pid bucket_ns" "processes pid start_ns" "off_cpu_stacks tid start_ns"; do
	set -- $tc
	a=$(sql -noheader "$T/n1s.db" "SELECT count(*), min($2) + $L, max($2) + $L, min($3) + $SH, max($3) + $SH FROM $1")
	b=$(m "SELECT count(*), min($2), max($2), min($3), max($3) FROM $1 WHERE pid >= $L")
	[ "$a" = "$b" ] || { bad="$bad $1.$3"; echo "# $1: $a against $b"; }
done
check_eq "node 1's rows: pids and tids + 10^7, times + the offset, in every table tried" "" "$bad"
check_eq "pids: node_processes maps each back to its node and own pid" \
	"$(sq "$T/n0.db" "SELECT group_concat(pid) FROM (SELECT pid FROM processes ORDER BY pid)") $(sq "$T/n1s.db" "SELECT group_concat(pid) FROM (SELECT pid FROM processes ORDER BY pid)")" \
	"$(m "SELECT group_concat(node_pid) FROM (SELECT node_pid FROM node_processes WHERE node = 0 ORDER BY pid)") $(m "SELECT group_concat(node_pid) FROM (SELECT node_pid FROM node_processes WHERE node = 1 ORDER BY pid)")"
check_eq "pids of the two nodes apart" "0" "$(m "SELECT count(*) FROM node_processes a JOIN node_processes b ON a.pid = b.pid AND a.node <> b.node")"
# frames: what each table's rows reach through their stacks, per node, the same frames as before
frames_reached() { # DB WHERE: per table, the frames its rows' stacks resolve to, counted
	for t in cuda_calls cpu_samples off_cpu_stacks; do
		sql -noheader "$1" "SELECT '$t', f.kind, f.depth, f.symbol, f.module, f.file, f.line, count(*) FROM $t r
			JOIN stack_frames f ON f.stack_id = r.stack_id WHERE $2 GROUP BY 2, 3, 4, 5, 6, 7 ORDER BY 2, 3, 4, 5, 6, 7"
	done
}
frames_reached "$T/n0.db" 1 >"$T/f0"; frames_reached "$T/n1s.db" 1 >"$T/f1"
frames_reached "$T/job.db" "r.pid < $L" >"$T/fm0"; frames_reached "$T/job.db" "r.pid >= $L" >"$T/fm1"
check_ge "stacks' frames reached from the rows" "$(wc -l <"$T/f1")" 20
check "frames: node 0's rows reach the same frames in the merged file" cmp -s "$T/f0" "$T/fm0"
check "frames: node 1's rows reach the same frames in the merged file" cmp -s "$T/f1" "$T/fm1"
check_eq "frames: every id a stack lists is a frame" 0 "$(m "SELECT count(*) FROM stacks s, json_each(coalesce(s.native, '[]')) j
	WHERE j.value NOT IN (SELECT id FROM frames)")"
# the k-th all-reduce (the first, the ranks' start-ups meeting, left out as explain leaves it) returns
# together on every rank in the merged file; 7 s apart in the two files as they were.  Judged by
# the median over the all-reduces: a clock misaligned moves every one of them, while a rank woken
# late beside a loaded make check moves one (the worst of ~15 all-reduces of 4 ranks once read
# 7.9 ms where a node's two ranks had spread 0.8 ms at most: more ranks, a later straggler)
spreads() { sql -noheader "$1" "SELECT max(start_ns + dur_ns) - min(start_ns + dur_ns) FROM ($2)
	WHERE op = 'ncclAllReduce' AND seq > 0 GROUP BY comm_id, seq HAVING count(*) = 4" | sort -n; }
spreads "$T/job.db" "SELECT * FROM collectives" >"$T/spreads"
sp=$(awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "none" }' "$T/spreads")
echo "# the 4 ranks' k-th all-reduce returns in the merged file: median $sp ns, worst $(tail -n 1 "$T/spreads") ns, $(wc -l <"$T/spreads") all-reduces"
check_ge "all-reduces that all 4 ranks returned from, in the merged file" "$(wc -l <"$T/spreads")" 10
check "the 4 ranks' k-th all-reduce returns together in the merged file (median ${sp} ns; uncertainty + own spread + 5 ms)" \
	test "$sp" -le $(($(ses "$T/job.db" node.1.merge.uncertainty_ns) + OWN + 5000000))
check_ge "... 7 s apart as the files were" "$(sqlite3 "$T/n0.db" "ATTACH '$T/n1s.db' AS b; SELECT max(s) FROM (SELECT max(e) - min(e) AS s
	FROM (SELECT comm_id, seq, op, start_ns + dur_ns AS e FROM collectives UNION ALL SELECT comm_id, seq, op, start_ns + dur_ns FROM b.collectives)
	WHERE op = 'ncclAllReduce' AND seq > 0 GROUP BY comm_id, seq)")" 6000000000
# explain of the merged file is explain of the two
"$A" explain --json "$T/job.db" >"$T/mer.json" 2>"$T/mer.err"
check_eq "explain job.db exits 0, quiet on stderr" "0 0" "$? $(wc -l <"$T/mer.err")"
"$A" explain --width 1000 "$T/job.db" >"$T/mer.txt" 2>>"$T/mer.err"
python3 - "$T/sep.json" "$T/mer.json" >"$T/mer.check" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for n in b['nodes']:
    n.pop('merged_file')
print('same', [k for k in a if a[k] != b.get(k)], sorted(a) == sorted(b))
s, t = b['ranks']['straggler'], a['ranks']['straggler']
print('straggler', s['rank'], s['node'], s['cause']['kind'] == t['cause']['kind'], s['late_mean_ns'] == t['late_mean_ns'] > 0)
PY
check_eq "explain --json job.db: every part as explain of the two files (nodes but their file names)" "same [] True" "$(grep '^same' "$T/mer.check")"
check_eq "... rank 3 on node 1 the straggler, its own cause and how late as explain of the files says" "straggler 3 1 True True" \
	"$(grep '^straggler' "$T/mer.check")"
sed 's/^\(  node [01]: [^ ]*\)\.db in [^ ]*job\.db /\1.db /' "$T/mer.txt" >"$T/mer.cut"
check "explain job.db's text: explain a.db b.db's, but for the files' names" cmp -s "$T/sep.txt" "$T/mer.cut"
"$A" export --format perfetto -o "$T/mer.pf.json" "$T/job.db" 2>/dev/null
check_eq "export of job.db: its two nodes, the offsets applied" "0 2 $SH" "$? $(python3 -c "import json,sys; o=json.load(open(sys.argv[1]))['otherData']['nodes']; print(len(o), o[1]['offset_applied_ns'])" "$T/mer.pf.json")"
# The export of the two files shifts node 1 as the merge did: each rank's all_reduce slices (its
# arrival and completion, from the GPU marks) where the merged file's export puts them — and the
# merged file's all-reduces return together (checked above, from the calls).  (The host's view in
# the export, each rank's sync after the call, once started 5 ms late beside the pool: a rank
# woken by the fake NCCL waited for a CPU; the slices' ends, from marks read by a watcher, 20 ms.)
check_eq "export: node 1 shifted as in the merged file: 4 ranks' all_reduce slices where job.db's export puts them" \
	"slices 4 True True" "$(python3 - "$T/job.pf.json" "$T/mer.pf.json" <<'PY'
import json, re, sys
def slices(f):
    d = json.load(open(f))
    names = {e['pid']: e['args']['name'] for e in d['traceEvents'] if e['ph'] == 'M' and e['name'] == 'process_name'}
    out = {}
    for e in d['traceEvents']:
        if e['ph'] == 'X' and e.get('cat') == 'collective' and e['name'].startswith('all_reduce #'):
            out[(re.search(r'· rank (\d) · ', names[e['pid']]).group(1), e['name'])] = (e['ts'], e['dur'])
    return out
a, b = slices(sys.argv[1]), slices(sys.argv[2])
print('slices', len({r for r, _ in a}), len(a) >= 60, a == b)
PY
)"
for v in stats per-process; do
	"$A" $v "$T/job.db" >"$T/v.out" 2>&1
	check_eq "$v job.db: one trace of both nodes' processes" "0" "$?"
done
check_eq "per-process job.db: its ranks named by node, host and own pid" 1 \
	"$(grep -c "rank 3: node 1 (vm) · pid $(sq "$T/n1s.db" "SELECT pid FROM process_env WHERE key = 'RANK' AND value = '3'") " "$T/v.out")"

# stack ids that meet: node 1's calls' stack X and a sample stack's Y given ids node 0 has; the merge gives
# node 1's new ones, in the call blocks and the rows, and they still reach their own frames
cp "$T/n0.db" "$T/c0.db"; cp "$T/n1s.db" "$T/c1.db"
X=$(sql -noheader "$T/c1.db" "SELECT stack_id FROM cuda_calls WHERE stack_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
Y0=$(sq "$T/c0.db" "SELECT stack_id FROM cpu_samples WHERE stack_id IS NOT NULL LIMIT 1")
Y1=$(sq "$T/c1.db" "SELECT stack_id FROM cpu_samples WHERE stack_id IS NOT NULL AND stack_id <> $X LIMIT 1")
sq "$T/c0.db" "UPDATE stacks SET id = $X WHERE id = $Y0; UPDATE cpu_samples SET stack_id = $X WHERE stack_id = $Y0;
	UPDATE off_cpu_stacks SET stack_id = $X WHERE stack_id = $Y0"
Y=$(sq "$T/c0.db" "SELECT stack_id FROM cpu_samples WHERE stack_id NOT IN ($X) LIMIT 1")
sq "$T/c1.db" "UPDATE stacks SET id = $Y WHERE id = $Y1; UPDATE cpu_samples SET stack_id = $Y WHERE stack_id = $Y1;
	UPDATE off_cpu_stacks SET stack_id = $Y WHERE stack_id = $Y1"
check_eq "two stack ids the files share" 2 "$(sq "$T/c0.db" "ATTACH '$T/c1.db' AS b; SELECT count(*) FROM stacks JOIN b.stacks USING (id)")"
"$A" merge -o "$T/cj.db" "$T/c0.db" "$T/c1.db" >/dev/null 2>"$T/cj.err"
check_eq "merge of them exits 0" "0" "$?"
frames_reached "$T/c1.db" 1 >"$T/g1"; frames_reached "$T/cj.db" "r.pid >= $L" >"$T/gm1"
frames_reached "$T/c0.db" 1 >"$T/g0"; frames_reached "$T/cj.db" "r.pid < $L" >"$T/gm0"
check "... node 1's rows (its calls' blocks too) reach their own frames, node 0's theirs" cmp -s "$T/g1" "$T/gm1"
check "... node 0's unchanged" cmp -s "$T/g0" "$T/gm0"
check_eq "... every stack kept, under distinct ids" "$(($(rows "$T/c0.db" stacks) + $(rows "$T/c1.db" stacks)))" "$(rows "$T/cj.db" stacks)"

# bad input: one line on stderr, non-zero, nothing at the output's name
merge_fails() { # DESCRIPTION STATUS ARGS...: merge -o $T/bad.db ARGS fails so
	_d=$1; _s=$2; shift 2
	rm -f "$T/bad.db"
	"$A" merge "$@" >/dev/null 2>"$T/bad.err"
	check_eq "merge, $_d: exit $_s, one line, no output" "$_s 1 " "$? $(wc -l <"$T/bad.err") $(ls "$T" | grep '^bad\.db')"
}
head -c 100000 "$T/n1.db" >"$T/trunc.db"
cp "$T/n0.db" "$T/n0copy.db"
merge_fails "a file missing" 3 -o "$T/bad.db" "$T/n0.db" "$T/none.db"
merge_fails "a file truncated" 3 -o "$T/bad.db" "$T/n0.db" "$T/trunc.db"
merge_fails "a file not a report" 3 -o "$T/bad.db" "$T/n0.db" "$T/n0.out"
merge_fails "a file given twice" 2 -o "$T/bad.db" "$T/n0.db" "$T/n0.db"
merge_fails "a copy of a file with it (one host, boot and start)" 2 -o "$T/bad.db" "$T/n0.db" "$T/n0copy.db"
merge_fails "one file only" 2 -o "$T/bad.db" "$T/n0.db"
merge_fails "no -o" 2 "$T/n0.db" "$T/n1.db"
merge_fails "with -p" 2 -p 1 -o "$T/bad.db" "$T/n0.db" "$T/n1.db"
# node 0 as if booted 1 ms before its trace began, node 1's trace begun 1 s earlier than it says:
# node 1 began before node 0's clock did
cp "$T/n0.db" "$T/n0e.db"
shift_db "$T/n0e.db" $((1000000 - $(ses "$T/n0.db" start_mono_ns)))
cp "$T/n1s.db" "$T/n1e.db"
sq "$T/n1e.db" "UPDATE session SET value = value - 1000000000 WHERE key = 'start_mono_ns'"
merge_fails "node 1 begun before node 0's clock (node 0 booted later)" 2 -o "$T/bad.db" "$T/n0e.db" "$T/n1e.db"
check_eq "... no temporary file left" "" "$(ls "$T" | grep 'merge-')"
"$A" merge -o "$T/job.db" "$T/n0.db" "$T/n1.db" >/dev/null 2>"$T/ex.err"
check_eq "an output that exists without --force: exit 2, one line, the file untouched" "2 1 $(cksum <"$T/job.db")" \
	"$? $(wc -l <"$T/ex.err") $(cksum <"$T/job.db")"
"$A" merge --force -o "$T/job.db" "$T/n0.db" "$T/n1.db" >/dev/null 2>&1
check_eq "--force replaces it" "0 1" "$? $(m "SELECT count(*) FROM session WHERE key = 'node.1.merge.shift_ns' AND abs(value) < 50000000")"

# older versions: two corpus traces (schema 4 and 7), each frames of its own layout
if command -v xz >/dev/null && [ -f tests/corpus/c09_cupy_batched_fft.db.xz ] && [ -f tests/corpus/c46_cupy_short_host_loop.db.xz ]; then
	V4=$(corpus_db tests/corpus/c09_cupy_batched_fft.db.xz "$T/v4.db")
	V7=$(corpus_db tests/corpus/c46_cupy_short_host_loop.db.xz "$T/v7.db")
	"$A" merge -o "$T/old.db" "$V4" "$V7" >/dev/null 2>"$T/old.err"
	check_eq "versions 4 and 7 merged: exit 0, version $SCHEMA_VERSION, each node's version kept" "0 $SCHEMA_VERSION 4 7" \
		"$? $(sq "$T/old.db" "PRAGMA user_version") $(sq "$T/old.db" "SELECT value FROM session WHERE key GLOB 'node.?.merge.schema_version' ORDER BY key" | tr '\n' ' ' | sed 's/ $//')"
	bad=""
	for t in processes threads cuda_calls off_cpu cpu_busy cpu_samples stacks stack_frames losses; do
		[ "$(rows "$T/old.db" $t)" -eq $(($(rows "$V4" $t) + $(rows "$V7" $t))) ] || bad="$bad $t"
	done
	check_eq "versions 4 and 7: every table's rows the sum (stack_frames rows too)" "" "$bad"
	frames_reached "$V7" 1 >"$T/o7"; frames_reached "$T/old.db" "r.pid >= $L" >"$T/om7"
	check "... the version 7 node's rows reach the same frames" cmp -s "$T/o7" "$T/om7"
	"$A" explain --json "$V4" "$V7" >"$T/os.json" 2>/dev/null
	"$A" explain --json "$T/old.db" >"$T/om.json" 2>/dev/null
	check_eq "... explain of the merged file is explain of the two (each node read back as its version)" "[]" \
		"$(python3 -c "import json,sys; a,b=[json.load(open(f)) for f in sys.argv[1:]]; [n.pop('merged_file') for n in b['nodes']]; print([k for k in a if a[k] != b.get(k)])" "$T/os.json" "$T/om.json")"
else
	skip "merge of older versions: xz or the corpus traces missing"
fi
finish
