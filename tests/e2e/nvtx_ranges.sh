#!/bin/sh
# nvtx_ranges.sh — a program's NVTX ranges (tests/helpers/nvtx_ranges.c: two
# NVTX v3 copies loading their tool as NVTX does) recorded by the preload
# library as NVTX's tool (ingero-run names it in NVTX_INJECTION64_PATH),
# stored in nvtx_ranges (schema 11) and set against the GPU's idle time by
# explain: every range of the program's truth, nesting, marks, a range
# ended on another thread, wide and registered names, a named domain left
# out, the ranges nested past 16 counted lost; the Perfetto export's NVTX
# tracks; a tool named already by the
# environment is left alone; an older trace says nothing of ranges.
. tests/lib.sh
. tests/helpers/collector_e2e.sh
STEPS=6

FAKECUDA_KERNEL_US=5000 "$B/ingero-collector" --no-bpf -o "$DB" -- "$B/tests/nvtx_ranges" $STEPS >"$T/out.txt" 2>"$T/err.txt"
check_eq "collector and program exit 0" 0 $?
check_eq "both NVTX copies took the tool; a named domain got a handle; a pop with nothing pushed says -2" \
	"copies=1,1 nccl_domain=named empty_pop=-2" "$(sed 's/ child=.*//' "$T/out.txt")"
CHILD=$(sed -n 's/.* child=\([0-9]*\).*/\1/p' "$T/out.txt")
PID=$(q "SELECT pid FROM processes WHERE comm='nvtx_ranges' ORDER BY start_ns LIMIT 1")
check_eq "step, data, compute: $STEPS pushed ranges each, at depths 0, 1, 1" "compute 1 $STEPS|data 1 $STEPS|step 0 $STEPS" \
	"$(q "SELECT name, min(depth), count(*) FROM nvtx_ranges WHERE kind='push' AND name IN ('step','data','compute')
		AND depth = max(depth, 0) GROUP BY name ORDER BY name" | tr '|' ' ' | paste -sd'|')"
check_eq "every data and compute range inside a step range of its thread" $((2 * STEPS)) \
	"$(q "SELECT count(*) FROM nvtx_ranges i WHERE i.name IN ('data','compute') AND EXISTS (SELECT 1 FROM nvtx_ranges o
		WHERE o.name='step' AND o.tid=i.tid AND o.start_ns <= i.start_ns AND i.end_ns <= o.end_ns)")"
check_eq "each data range holds its 20 ms sleep, each compute its 5 ms kernel" "1 1" \
	"$(q "SELECT min(end_ns - start_ns) >= 20000000 FROM nvtx_ranges WHERE name='data'") $(q "SELECT min(end_ns - start_ns) >= 5000000 FROM nvtx_ranges WHERE name='compute'")"
check_eq "the mark: one, at one instant, after the steps" "mark 1 1" \
	"$(q "SELECT kind, count(*), min(start_ns = end_ns AND start_ns > (SELECT max(end_ns) FROM nvtx_ranges WHERE name='step'))
		FROM nvtx_ranges WHERE name='epoch end'" | tr '|' ' ')"
check_eq "the started range: ended by another thread 30 ms on, the starting thread's" "start 1 1 $PID" \
	"$(q "SELECT kind, count(*), min(end_ns - start_ns >= 30000000), tid FROM nvtx_ranges WHERE name='prefetch'" | tr '|' ' ')"
check_eq "a wide name as UTF-8 (7 characters, 8 bytes), a registered one" "1 7 8|1" \
	"$(q "SELECT count(*), length(name), length(CAST(name AS BLOB)) FROM nvtx_ranges WHERE name='données'
		UNION ALL SELECT count(*), NULL, NULL FROM nvtx_ranges WHERE name='registered'" | sed 's/||$//' | tr '|' ' ' | paste -sd'|' | sed 's/ $//')"
check_eq "the named domain's range left out" 0 "$(q "SELECT count(*) FROM nvtx_ranges WHERE name LIKE 'nccl%'")"
check_eq "nested 20 deep: the 16 outermost recorded at depths 0-15" "16 0 15 nest00 nest15" \
	"$(q "SELECT count(*), min(depth), max(depth), min(name), max(name) FROM nvtx_ranges WHERE name GLOB 'nest*'" | tr '|' ' ')"
check_eq "lost: the 4 nested deeper, and the 6 started ranges evicted after the last range (sent as it stopped)" 10 \
	"$(q "SELECT count FROM losses WHERE source='preload_nvtx_ranges_dropped' AND pid=$PID")"
FORKED=$(q "SELECT group_concat(pid) FROM nvtx_ranges WHERE name='forked'")
CHILD_RANGE=$(q "SELECT group_concat(pid) FROM nvtx_ranges WHERE name='child'")
CHILD_LOST=$(q "SELECT count(*) FROM losses WHERE pid=$CHILD AND source='preload_nvtx_ranges_dropped' AND count > 0")
check_eq "a range open across a fork: the parent's alone; the child's own under its pid; the parent's losses not the child's" \
	"$PID $CHILD 0" "$FORKED $CHILD_RANGE $CHILD_LOST"
check_eq "all of the program's ranges: 3 x $STEPS + prefetch, the mark, 2 named, 16 nested, forked, child" $((3 * STEPS + 22)) \
	"$(q "SELECT count(*) FROM nvtx_ranges")"

"$B/ingero-analyze" explain --width 200 "$DB" >"$T/explain.txt" 2>&1
check_eq "explain: the ranges' section (the main process's: not the child's range)" "1 0" "$(grep -c '^NVTX ranges of the main process: ' "$T/explain.txt") $(grep -c '^  child ' "$T/explain.txt")"
# the GPU idles while the program sleeps in 'data' and works in 'compute'
DATA_ALL=$(awk '$1 == "data" { sub("%", "", $NF); print $NF }' "$T/explain.txt")
COMP_ALL=$(awk '$1 == "compute" { sub("%", "", $NF); print $NF }' "$T/explain.txt")
check_ge "explain: 'data' holds at least 90% of the GPU's idle time" "${DATA_ALL:-0}" 90
check_le "explain: 'compute' at most 10%" "${COMP_ALL:-100}" 10
check_eq "explain: after the verdict, the range holding most of the idle — the most specific one, not the step around it" 1 \
	"$(grep -c "^In your NVTX ranges: [0-9]*% of the GPU's idle time fell inside 'data' ($STEPS ranges, median " "$T/explain.txt")"
check_eq "explain: step first (the most time)" step "$(sed -n '/^  range /{n;p;}' "$T/explain.txt" | awk '{print $1}')"
"$B/ingero-analyze" explain --json "$DB" >"$T/explain.json" 2>&1
check_eq "explain --json: the ranges, by name; where the idle is" "1 $STEPS 1" \
	"$(tr -d ' \n\t' <"$T/explain.json" | grep -c '"nvtx_ranges":{') $(tr -d ' \n\t' <"$T/explain.json" | grep -o '"name":"data","count":[0-9]*' | sed 's/.*://') $(tr -d ' \n\t' <"$T/explain.json" | grep -c '"idle_mostly_in":"data"')"

"$B/ingero-analyze" export --format perfetto -o "$T/trace.json" "$DB" 2>&1
check_eq "Perfetto: every range a slice on its thread's NVTX track, the started one an async pair, the mark an instant" \
	"$((3 * STEPS + 2 + 16 + 2)) 2 1 2" \
	"$(grep -o '"ph":"X","cat":"nvtx"' "$T/trace.json" | wc -l) $(grep -o '"ph":"[be]","cat":"nvtx"' "$T/trace.json" | wc -l) $(grep -o '"ph":"i","cat":"nvtx"' "$T/trace.json" | wc -l) $(grep -c '"name":"[0-9]* NVTX"' "$T/trace.json")"

# a tool named already (nsys sets NVTX_INJECTION64_PATH): left to it
rm -f "$DB" "$DB-wal" "$DB-shm"
NVTX_INJECTION64_PATH=/nonexistent/tool.so "$B/ingero-collector" --no-bpf -o "$DB" -- "$B/tests/nvtx_ranges" 1 >"$T/out2.txt" 2>"$T/err2.txt"
check_eq "another tool named: the program runs, its NVTX copies find no tool, no rows" "0 copies=-1,-1 0" \
	"$? $(cut -d' ' -f1 "$T/out2.txt") $(q "SELECT count(*) FROM nvtx_ranges")"

# set empty, the variable turns recording off (NVTX's dlopen("") would find us in the global scope)
rm -f "$DB" "$DB-wal" "$DB-shm"
NVTX_INJECTION64_PATH= "$B/ingero-collector" --no-bpf -o "$DB" -- "$B/tests/nvtx_ranges" 1 >"$T/out3.txt" 2>"$T/err3.txt"
check_eq "set empty: the program runs, no rows" "0 0" "$? $(q "SELECT count(*) FROM nvtx_ranges")"

# the analyzer against a real trace's gaps: the example made a version 11 file by hand — a range
# over the whole trace holds all the GPU's idle time (the gaps' sum explain --json states), two
# emit_nvtx operator ranges are one name, a worker's range is not the main process's
cp "$B/examples/small_check_h200.db" "$T/ex.db"
MAIN=$(sql -noheader "$T/ex.db" "SELECT pid FROM processes ORDER BY start_ns LIMIT 1")
WORKER=$(sql -noheader "$T/ex.db" "SELECT pid FROM processes WHERE ppid=$MAIN LIMIT 1")
sql "$T/ex.db" "CREATE TABLE nvtx_ranges(pid INTEGER NOT NULL, tid INTEGER NOT NULL, start_ns INTEGER NOT NULL,
	end_ns INTEGER NOT NULL, depth INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL); PRAGMA user_version=11;
	INSERT INTO nvtx_ranges SELECT $MAIN, $MAIN, min(start_ns), max(exit_ns), 0, 'push', 'all' FROM processes;
	INSERT INTO nvtx_ranges SELECT $MAIN, $MAIN, min(start_ns), min(start_ns) + 1000, 1, 'push', 'aten::mm, seq = 1, op_id = 2' FROM processes;
	INSERT INTO nvtx_ranges SELECT $MAIN, $MAIN, min(start_ns) + 2000, min(start_ns) + 5000, 1, 'push', 'aten::mm, op_id = 7, sizes = [[2, 3]]' FROM processes;
	INSERT INTO nvtx_ranges SELECT $WORKER, $WORKER, min(start_ns), max(exit_ns), 0, 'push', 'worker' FROM processes;"
"$B/ingero-analyze" explain --json "$T/ex.db" | tr -d ' \n\t' >"$T/ex.json"
GAP_NS=$(grep -o '"gap_ns":[0-9]*' "$T/ex.json" | head -1 | cut -d: -f2)
check_eq "a range over the whole trace: all the GPU's idle time (the gaps' sum), 100% of it" "${GAP_NS:-none} ${GAP_NS:-none}" \
	"$(grep -o '"name":"all",[^}]*"gpu_idle_ns":[0-9]*' "$T/ex.json" | sed 's/.*://') $(grep -o '"marks":[0-9]*,"gpu_idle_ns":[0-9]*' "$T/ex.json" | sed 's/.*://')"
check_eq "emit_nvtx's call numbers cut: one name, 2 ranges, the lower middle as median; the worker's range not the main's" \
	'"name":"aten::mm","count":2,"total_ns":4000,"p50_ns":1000 0' \
	"$(grep -o '"name":"aten::mm","count":[0-9]*,"total_ns":[0-9]*,"p50_ns":[0-9]*' "$T/ex.json") $(grep -c '"name":"worker"' "$T/ex.json")"

# a trace of version 10 (no nvtx_ranges) says nothing of ranges
"$B/ingero-analyze" explain "$B/examples/small_check_h200.db" >"$T/old.txt" 2>&1
check_eq "an older trace: no ranges section" 0 "$(grep -c '^NVTX' "$T/old.txt")"
"$B/ingero-analyze" explain --json "$B/examples/small_check_h200.db" >"$T/old.json" 2>&1
check_eq "an older trace: no nvtx_ranges in --json" 0 "$(tr -d ' \n\t' <"$T/old.json" | grep -c '"nvtx_ranges":')"
finish
