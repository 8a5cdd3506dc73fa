#!/bin/sh
# analyzer_ranks.sh — explain across the ranks of a job (rules/chain_straggler.c):
# a data-parallel job of three ranks on the fake CUDA and NCCL libraries
# (tests/ranks/ranks.c), every process traced by one collector, where
#   slow      rank 1's one DataLoader worker runs a CPU-heavy transform (60 ms
#             of CPU a batch) and the others' input keeps up: rank 1 is the
#             straggler, last at every all-reduce, and its own cause is its loop
#             waiting for its worker (the single-rank analysis of rank 1 alone);
#   uneven    rank 1's batches are 16x the others' (no transform): the straggler
#             again, and the imbalance named as the data's;
#   balanced  the same job with every rank alike: no straggler finding;
#   gloo, gloo_balanced  slow and balanced over --backend gloo: no NCCL
#             call, the all-reduces host calls on "pt_gloo_runloop" threads as
#             PyTorch's ProcessGroupGloo makes them of CUDA tensors (a sync of
#             the copy out, the ranks' meeting, the copy back), and rank 0 with
#             one more of them (the module's broadcast, its root's part only):
#             what the H200's DDP-over-gloo traces showed (docs/gpu-runs.md 29),
#             where the ranks' unequal counts had left every collective unmatched;
#   gloo_uneven  uneven over gloo, the gradients gloo copies back far larger than
#             a batch: the data's imbalance still seen (those copies left out);
#   spawn_gloo, spawn_nccl  started as torch.multiprocessing.spawn starts ranks
#             (no RANK, WORLD_SIZE, LOCAL_RANK): the ranks told by what they do
#             (measure/ranks.c), numbered by start order or by NCCL's ranks;
#   parent_gloo  as Lightning's DDP starts them: the script rank 0, the others
#             its children.
# The job runs at nice -20 so that the workers' CPU work is theirs, not the
# shared machine's load.
# The Perfetto export of slow and gloo (one file of several ranks) draws each rank's collectives
# and links them by flows from the last rank to the others, rank 1 their source as often as
# explain says it was last (tests/helpers/perfetto_collectives.py).
# tests/run: alone (it judges who else ran on the CPUs: after the pool, on an idle machine)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
A=$B/ingero-analyze
export FAKECUDA_KERNEL_US=5000   # 4 kernels a step: 20 ms of GPU work

job() { # NAME ARGS...: traces the job into $T/NAME.db
	_n=$1; shift
	nice -n -20 "$B/ingero-collector" -q -o "$T/$_n.db" -- "$B/tests/ranks" --nproc 3 --workers 1 --rows 2048 \
		--batches 16 --truth "$T/$_n.truth" "$@" >"$T/$_n.out" 2>&1
	check_eq "$_n: the job and the collector exit 0" 0 $?
	"$A" explain --json "$T/$_n.db" >"$T/$_n.json" 2>"$T/$_n.err"
	check_eq "$_n: explain --json exits 0" 0 $?
	"$A" explain --width 1000 "$T/$_n.db" >"$T/$_n.txt" 2>>"$T/$_n.err"
}
rank_pid() { sed -n "s/^pid=\([0-9]*\) .*role=rank$2 .*/\1/p" "$T/$1.truth"; }
# j NAME PYTHON-EXPRESSION (d: the explain --json document)
j() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$T/$1.json"; }
# matched NAME: where its collectives came from, how many, and whether rank 1 was last at 13+ of them
matched() { j "$1" "d['ranks']['collectives_source'], d['ranks']['collectives'], d['ranks']['arrivals'][1]['last'] >= 13" | tr -d "(),'"; }

job slow --slow-rank 1 --slow-transform-ms 60
check_eq "slow: the first finding is the straggler's, HIGH" "rank_straggler HIGH" "$(j slow "d['chains'][0]['kind'], d['chains'][0]['severity']")"
check_eq "slow: rank 1 is the straggler" 1 "$(j slow "d['ranks']['straggler']['rank']")"
# (rank 1 last at 13+ of the 15, as for gloo below: one run in 60 on the idle dev VM had another
# rank last at one all-reduce — 3 ranks, their workers and the collector on 2 CPUs)
check_eq "slow: named in the summary" 1 "$(j slow "d['chains'][0]['summary']" | grep -Ec '^rank 1 arrives last at (8[7-9]|9[0-9]|100)% of 15 ncclAllReduce')"
check_eq "slow: its own cause, from its own analysis: waiting for its DataLoader worker" gaps_waiting_workers \
	"$(j slow "d['ranks']['straggler']['cause']['kind']")"
check_eq "slow: that cause in the finding, with its fixes for rank 1" "1 1" \
	"$(j slow "int('rank 1 on its own' in d['chains'][0]['root_cause'].lower() and 'waiting for workers' in d['chains'][0]['root_cause']), int(d['chains'][0]['fixes'][0].startswith('Rank 1: '))")"
check_eq "slow: not the data" False "$(j slow "d['ranks']['straggler']['data_imbalance']")"
check_eq "slow: from the NCCL calls, every rank's 15 all-reduces (the first, the start-ups', left out), rank 1 last at 13+" \
	"nccl 15 True" "$(matched slow)"
check_eq "slow: ranks 0 and 2 wait, rank 1 does not" "1 0 1" \
	"$(j slow "' '.join(str(int(a['wait_share'] > 0.3)) for a in d['ranks']['arrivals'])")"
check_eq "slow: the rest is rank 1's own analysis (its process the main one)" "$(rank_pid slow 1)" \
	"$(j slow "[p['pid'] for p in d['processes'] if p['role'] == 'main'][0]")"
check_eq "slow: text: the job, the finding, rank 1 on its own" "1 1 1" \
	"$(grep -c '^Job: 3 ranks of world size 3 (run id ranks-test)' "$T/slow.txt") $(grep -c '^\[HIGH\] rank 1 arrives last' "$T/slow.txt") $(grep -c '^Rank 1 on its own' "$T/slow.txt")"
"$A" export --format perfetto -o "$T/slow.pf.json" "$T/slow.db"
check_eq "slow: export exits 0" 0 $?
python3 tests/helpers/perfetto_collectives.py "slow: export" "$T/slow.pf.json" "$T/slow.json" 1 "$T/slow.db"
r0=$(rank_pid slow 0)
"$A" explain --json -p "$r0" "$T/slow.db" >"$T/p.json"
check_eq "slow: -p rank 0 is rank 0 alone: no job, no straggler finding" "0 0" \
	"$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(int('ranks' in d), sum(c['kind'] == 'rank_straggler' for c in d['chains']))" "$T/p.json")"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_ranks"}}' | "$A" mcp "$T/slow.db" >"$T/mcp.out" 2>"$T/mcp.err"
check_eq "slow: MCP get_ranks: rank 1 the straggler, its cause, the finding" "1 gaps_waiting_workers rank_straggler" \
	"$(python3 -c "
import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m.get('id') == 1:
        s = m['result']['structuredContent']
        print(s['straggler']['rank'], s['straggler']['cause']['kind'], s['finding']['kind'])" "$T/mcp.out")"

# (16x, not 8x: 8x was ~10 ms a batch more for rank 1, and on a loaded 2-CPU machine the others
# came last by a hair at a third of the all-reduces — too few of 15 to prove it, CI saw it; 16x is
# 70-120 ms, rank 1 last at every one in 10 of 10 runs, 4 of them beside two busy loops)
job uneven --slow-rank 1 --slow-transform-ms 0 --slow-rows 32768
check_eq "uneven: rank 1 the straggler, the imbalance the data's" "rank_straggler 1 True" \
	"$(j uneven "d['chains'][0]['kind'], d['ranks']['straggler']['rank'], d['ranks']['straggler']['data_imbalance']" | tr -d "(),'")"
check_eq "uneven: said, with the fix" "1 1" \
	"$(j uneven "int('the imbalance is in the data' in d['chains'][0]['root_cause']), int(any('shard by size' in f for f in d['chains'][0]['fixes']))")"

# two ranks, not three: three ranks and their workers on this 2-CPU machine under load starve one
# rank for real (a straggler by CPU contention, rightly named: 3 of 4 runs of the loaded dev VM)
job balanced --nproc 2
check_eq "balanced: no straggler finding" 0 "$(j balanced "sum(c['kind'] == 'rank_straggler' for c in d['chains'])")"
check_eq "balanced: said so" "True None None 15" "$(j balanced "d['ranks']['balanced'], d['ranks']['straggler'], d['ranks']['suspect'], d['ranks']['collectives']" | tr -d "(),'")"
check_eq "balanced: text says so" 1 "$(grep -c '^The ranks are balanced: no rank arrives last at the ncclAllReduce more often than chance' "$T/balanced.txt")"
job gloo --backend gloo --slow-rank 1 --slow-transform-ms 60
check_eq "gloo: the first finding is the straggler's, rank 1, its cause its worker" "rank_straggler 1 gaps_waiting_workers" \
	"$(j gloo "d['chains'][0]['kind'], d['ranks']['straggler']['rank'], d['ranks']['straggler']['cause']['kind']" | tr -d "(),'")"
got=$(matched gloo)
check_eq "gloo: from gloo's threads, every rank's 15 all-reduces (rank 0's broadcast and the first left out), rank 1 last at 13+" \
	"gloo 15 True" "$got"
# (seen once, 2026-12-06: 14; not in the 84 runs after it: the trace is kept for a look)
[ "$got" = "gloo 15 True" ] || { cp "$T/gloo.db" "$B/tests/logs/analyzer_ranks.gloo.db" 2>/dev/null &&
	echo "# the trace kept: $B/tests/logs/analyzer_ranks.gloo.db"; }
check_eq "gloo: the ranks' host-to-device bytes are their batches' (16 at most), not gloo's copies back" True \
	"$(j gloo "all(a['h2d_bytes'] <= 16 * 2048 * 400 for a in d['ranks']['arrivals'])")"
check_eq "gloo: no NCCL call in the trace" 0 "$(sqlite3 "$T/gloo.db" 'SELECT count(*) FROM collectives' 2>/dev/null || echo 0)"
"$A" export --format perfetto -o "$T/gloo.pf.json" "$T/gloo.db"
check_eq "gloo: export exits 0" 0 $?
python3 tests/helpers/perfetto_collectives.py "gloo: export" "$T/gloo.pf.json" "$T/gloo.json" 1

# uneven data over gloo, the gradients (64 MiB a step, copied back by gloo's threads) far larger
# than a batch (rank 1's 13 MiB, the others' 0.8): the data's imbalance is seen past them
job gloo_uneven --backend gloo --grad-mb 64 --slow-rank 1 --slow-transform-ms 0 --slow-rows 32768
check_eq "gloo_uneven: rank 1 the straggler, the imbalance the data's" "rank_straggler 1 True" \
	"$(j gloo_uneven "d['chains'][0]['kind'], d['ranks']['straggler']['rank'], d['ranks']['straggler']['data_imbalance']" | tr -d "(),'")"

# (arrivals close together: the alignment's overlap rule at its tightest; whether the ranks read
# as balanced is the NCCL case's to say — on a 2-CPU machine 3 ranks and 3 busy workers are not
# always, with either backend)
job gloo_balanced --backend gloo
check_eq "gloo_balanced: every rank's 15 all-reduces matched" "gloo 15" \
	"$(j gloo_balanced "d['ranks']['collectives_source'], d['ranks']['collectives']" | tr -d "(),'")"

# started as torch.multiprocessing.spawn starts a job (--spawn): no RANK, WORLD_SIZE or LOCAL_RANK
# anywhere — the ranks are the launcher's children that drive the GPU and run gloo's threads,
# numbered in the order they started (mp.spawn's): the straggler and its cause all the same
job spawn_gloo --spawn --backend gloo --slow-rank 1 --slow-transform-ms 60
check_eq "spawn_gloo: no launcher variables in the trace" 0 \
	"$(sqlite3 "$T/spawn_gloo.db" "SELECT count(*) FROM process_env WHERE key IN ('RANK', 'WORLD_SIZE', 'LOCAL_RANK')")"
check_eq "spawn_gloo: 3 ranks told by their start order, rank 1 (the second started) the straggler, its cause its worker" \
	"the order they started in 3 $(rank_pid spawn_gloo 1) rank_straggler gaps_waiting_workers" \
	"$(j spawn_gloo "d['ranks']['inferred_from'], len(d['ranks']['ranks']), d['ranks']['straggler']['pid'], d['chains'][0]['kind'], d['ranks']['straggler']['cause']['kind']" | tr -d "(),'")"
check_eq "spawn_gloo: text: the job, started by its launcher, said inferred" 1 \
	"$(grep -c '^Job: 3 ranks of world size 3, started by pid [0-9]* (ranks) (no RANK variables, as under torch.multiprocessing.spawn' "$T/spawn_gloo.txt")"
# over NCCL the communicator's own rank numbers them
job spawn_nccl --spawn --nproc 2 --batches 8
check_eq "spawn_nccl: 2 ranks, numbered by their NCCL communicator, rank 0 and 1 the right processes" \
	"their NCCL communicators ranks 2 $(rank_pid spawn_nccl 0) $(rank_pid spawn_nccl 1)" \
	"$(j spawn_nccl "d['ranks']['inferred_from'], len(d['ranks']['ranks']), d['ranks']['ranks'][0]['pid'], d['ranks']['ranks'][1]['pid']" | tr -d "(),'")"
# Lightning's DDP starts ranks 1..N-1 from the script, which is rank 0 itself: the launcher is a rank
job parent_gloo --parent-rank --backend gloo --nproc 2 --batches 8
check_eq "parent_gloo: 2 ranks, rank 0 the launching script, rank 1 its child" \
	"the order they started in 2 $(rank_pid parent_gloo 0) $(rank_pid parent_gloo 1) gloo" \
	"$(j parent_gloo "d['ranks']['inferred_from'], len(d['ranks']['ranks']), d['ranks']['ranks'][0]['pid'], d['ranks']['ranks'][1]['pid'], d['ranks']['collectives_source']" | tr -d "(),'")"
rm -f /dev/shm/fakenccl-* 2>/dev/null
finish
