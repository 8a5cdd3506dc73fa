#!/bin/sh
# nccl_collectives.sh — NCCL calls timed by the preload library (schema
# version 7, table collectives) in a data-parallel job of three ranks on the
# fake CUDA and NCCL libraries (tests/ranks/ranks.c, launched as torchrun
# launches: an agent and its ranks), all traced by one collector: every
# all-reduce of every rank against the job's truth, one communicator
# identity shared by the ranks, sequence numbers 0..B-1, rank, size, bytes
# and stream, GPU marks around each (after the stream's first), the agent
# and the ranks' launcher variables; and the same in CUDA-only mode
# (--no-bpf: variables read at the HELLO).
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
TRUTH=$T/truth.txt
B_=8

FAKECUDA_KERNEL_US=500 "$B/ingero-collector" -o "$DB" -- "$B/tests/ranks" --nproc 3 --slow-rank 2 \
	--batches $B_ --truth "$TRUTH" >"$T/out.txt" 2>"$T/err.txt"
check_eq "collector exits with the job's code" 0 $?
check_eq "truth: an agent, 3 ranks" "1 3" "$(grep -c role=agent "$TRUTH") $(grep -c 'role=rank' "$TRUTH")"
for r in 0 1 2; do
	pid=$(sed -n "s/^pid=\([0-9]*\) .*role=rank$r .*/\1/p" "$TRUTH")
	n=$(sed -n "s/.*role=rank$r nccl=\([0-9]*\).*/\1/p" "$TRUTH")
	check_eq "rank $r: every all-reduce it made" "$n" "$(q "SELECT count(*) FROM collectives WHERE pid=$pid AND op='ncclAllReduce'")"
	check_eq "rank $r: sequence numbers 0..$((B_ - 1)), rank $r of 3, 4 MiB each" "0 $((B_ - 1)) $B_ 1 1 1" \
		"$(q "SELECT min(seq), max(seq), count(DISTINCT seq), min(rank = $r), min(nranks = 3), min(bytes = 4194304)
			FROM collectives WHERE pid=$pid AND op='ncclAllReduce'" | tr '|' ' ')"
	check_eq "rank $r: on its training stream (the one its copies use)" 1 \
		"$(q "SELECT count(DISTINCT c.stream) FROM collectives c WHERE c.pid=$pid AND c.op='ncclAllReduce'
			AND c.stream IN (SELECT stream FROM cuda_calls WHERE pid=$pid AND api=3)")"
	check_eq "rank $r: its communicator made and destroyed" "1 1" \
		"$(q "SELECT sum(op='ncclCommInitRank'), sum(op='ncclCommDestroy') FROM collectives WHERE pid=$pid" | tr '|' ' ')"
	check_ge "rank $r: GPU marks before and after the all-reduces (all but the stream's first)" \
		"$(q "SELECT count(*) FROM collectives WHERE pid=$pid AND op='ncclAllReduce' AND flags & 6 = 6")" $((B_ - 2))
	check_eq "rank $r: each marked all-reduce has its marks on its stream inside the call" 0 \
		"$(q "SELECT count(*) FROM collectives c WHERE c.pid=$pid AND c.flags & 6 = 6 AND (SELECT count(*) FROM gpu_marks g
			WHERE g.pid=c.pid AND g.stream=c.stream AND g.recorded_ns BETWEEN c.start_ns AND c.start_ns + c.dur_ns) < 2")"
	check_eq "rank $r: its launcher variables" "$r $r 3 ranks-test" \
		"$(q "SELECT group_concat(value, ' ') FROM (SELECT value FROM process_env WHERE pid=$pid
			AND key IN ('RANK','LOCAL_RANK','WORLD_SIZE','TORCHELASTIC_RUN_ID') ORDER BY key='TORCHELASTIC_RUN_ID', key='WORLD_SIZE', key='LOCAL_RANK', key)")"
done
check_eq "one communicator identity, the same on every rank" 1 "$(q "SELECT count(DISTINCT comm_id) FROM collectives WHERE op='ncclAllReduce'")"
check_eq "every (communicator, seq) has all 3 ranks" "$B_ 3" \
	"$(q "SELECT count(*), min(n) FROM (SELECT count(DISTINCT rank) AS n FROM collectives WHERE op='ncclAllReduce' GROUP BY comm_id, seq)" | tr '|' ' ')"
check_eq "nothing lost" 0 "$(q "SELECT coalesce(sum(count),0) FROM losses WHERE source LIKE 'preload_%'")"
check_eq "the ranks' DataLoader workers inherit no variables of their own" 0 \
	"$(q "SELECT count(*) FROM process_env WHERE pid IN (SELECT pid FROM processes WHERE ppid IN (SELECT pid FROM processes
		WHERE pid IN (SELECT pid FROM process_env WHERE key='RANK')))")"

# CUDA-only mode: no exec records; the variables are read when a rank says HELLO
rm -f "$DB" "$DB-wal" "$DB-shm" "$TRUTH"
"$B/ingero-collector" --no-bpf -o "$DB" -- "$B/tests/ranks" --nproc 2 --batches 3 --truth "$TRUTH" >"$T/out2.txt" 2>"$T/err2.txt"
check_eq "cuda-only: collector exits 0" 0 $?
check_eq "cuda-only: both ranks' RANK" "0 1" "$(q "SELECT group_concat(value, ' ') FROM (SELECT value FROM process_env WHERE key='RANK'
	AND pid IN (SELECT pid FROM collectives) ORDER BY value)")"
check_eq "cuda-only: 3 all-reduces each" "3 3" "$(q "SELECT group_concat(n, ' ') FROM (SELECT count(*) n FROM collectives WHERE op='ncclAllReduce' GROUP BY pid)")"
finish
