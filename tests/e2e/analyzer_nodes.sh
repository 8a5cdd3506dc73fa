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
# rank 3 the source as often as explain says it is last.
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
finish
