#!/bin/sh
# analyzer_nodes.sh — several nodes' traces as one job: two collectors on this machine, each
# tracing one "node" of a job of 4 ranks (tests/ranks/ranks.c --nnodes 2: two agents of 2 ranks, one
# NCCL communicator), the second collector's clock anchor skewed by +5 s
# (INGERO_TEST_CLOCK_OFFSET_NS, tests only); rank 3, on the second node, is slow for a known cause
# (its one DataLoader worker's CPU-heavy transform).  `ingero-analyze explain a.db b.db` puts both on
# one timeline by the anchors, refines it by the all-reduces' completions, states what remains —
# and the skew is taken out within that — and names rank 3 and its cause.  Each file alone says it
# holds 2 of the communicator's 4 ranks.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
T=$(tmpdir)
ID=/fakenccl-nodes-$$
trap 'rm -rf "$T"; rm -f /dev/shm$ID' EXIT
A=$B/ingero-analyze
export FAKECUDA_KERNEL_US=5000 FAKENCCL_UNIQUE_ID=$ID
node() { # K [ENV...]: node K's agent under its own collector, in the background
	_k=$1; shift
	env INGERO_ENDPOINT="ipc://$T/n$_k.sock" "$@" nice -n -20 "$B/ingero-collector" -q -o "$T/n$_k.db" -- \
		"$B/tests/ranks" --nnodes 2 --node-rank "$_k" --nproc 2 --workers 1 --rows 2048 --batches 16 \
		--slow-rank 3 --slow-transform-ms 60 --truth "$T/truth" >"$T/n$_k.out" 2>&1 &
}
node 0
P0=$!
node 1 INGERO_TEST_CLOCK_OFFSET_NS=5000000000
P1=$!
wait $P0; r0=$?
wait $P1; r1=$?
check_eq "both nodes' jobs and collectors exit 0" "0 0" "$r0 $r1"
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
finish
