#!/bin/sh
# gpu_dataloader.sh — the project's main evidence, run on the H200 machine
# from the repository root as root (docs/gpu-runs.md):
#   1. the design's DataLoader benchmark, each configuration untraced then
#      traced with ingero-run, explain of each trace;
#   2. overhead: a launch-heavy training loop, traced vs untraced, alternated;
#   3. cross-check: uprobes on libcudart/libcuda count launches, copies and
#      syncs in the same run as the preload library + collector;
#   4. turns: the same loop, an untraced reference and traced variants taking
#      turns chunk by chunk (ROUNDS rounds of CHUNKS chunks), so that the
#      machine's drift between whole runs cancels out; with PAIRS=N, N pairs
#      of an A/A round and a round of each variant (turns_paired), which also
#      cancels the offset each pair of processes carries; with TOGGLE=N, N
#      processes per variant each against itself, recording and paused in
#      turns (INGERO_CAPTURE=cudaProfilerApi), which cancels it altogether;
#   5. stackcost: what one call stack costs in PyTorch: the loop with a stack
#      on every launch (no budget, then the default budget) against none;
#   6. pyframes: the DataLoader case (4 workers) traced: how many of each
#      process's on-CPU samples carry Python frames, the functions they name,
#      and what explain makes of them;
#   7. patterns: examples/starve_patterns.py's five faults (torch.compile,
#      empty_cache, a GIL-holding thread, fsync every step, GradScaler with an
#      unfused optimizer), traced and explained.
#
#   [PARTS="matrix overhead xcheck stackcost turns pyframes patterns"] [ROUNDS=4 CHUNKS=60 TURNS="full ..."] \
#     sh tests/bench/gpu_dataloader.sh BUNDLE_DIR OUT_DIR [ROWS] [PAIRS]
# BUNDLE_DIR: `make bundle` output (it carries preload_uprobe_count and
# preload_count.bpf.o).  PARTS picks sections, so that each device call ends
# inside its time limit.  Prints key=value lines; traces and explains go to OUT_DIR.
set -u
D=$(cd "$1" && pwd); OUT=$2; ROWS=${3:-3000000}; PAIRS=${4:-5}
PARTS=${PARTS:-matrix overhead xcheck stackcost turns pyframes patterns}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
PY=${PY:-python3}
RUN="$D/ingero-run"
log() { echo "$*" | tee -a "$OUT/summary.txt" ${SUMMARY:+"$SUMMARY"}; }

# --- 1. the DataLoader benchmark ------------------------------------------------------
bench() { # name, args...
	name=$1; shift
	u=$($PY examples/dataloader_starve.py --rows "$ROWS" "$@" 2>&1 | tail -n 1)
	"$RUN" -q --force -o "$OUT/$name.db" -- $PY examples/dataloader_starve.py --rows "$ROWS" "$@" \
		>"$OUT/$name.run.txt" 2>&1
	rc=$?
	t=$(grep '^mode=' "$OUT/$name.run.txt" | tail -n 1)
	uw=$(echo "$u" | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
	tw=$(echo "$t" | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
	log "run=$name rc=$rc untraced_wall_s=$uw traced_wall_s=$tw"
	log "  untraced: $u"
	log "  traced:   $t"
	"$D/ingero-analyze" explain "$OUT/$name.db" >"$OUT/$name.explain.txt" 2>&1
	"$D/ingero-analyze" explain --json "$OUT/$name.db" >"$OUT/$name.explain.json" 2>&1
	"$D/ingero-analyze" per-process "$OUT/$name.db" >"$OUT/$name.procs.txt" 2>&1
}
if part matrix; then
	bench direct --mode direct
	bench nw0 --mode loader --workers 0
	bench nw4 --mode loader --workers 4
	bench nw15 --mode loader --workers 15
	bench nw4_pin --mode loader --workers 4 --pin
	bench nw4_persist --mode loader --workers 4 --persistent --epochs 2
fi
part overhead || PAIRS=0

# --- 2. overhead: alternate untraced / traced -------------------------------------------
i=0
ovh() { sed -n 's/.*wall_s=\([0-9.]*\) thread_cpu_s=\([0-9.]*\).*/\1 \2/p'; }
while [ $i -lt "$PAIRS" ]; do
	# ABBA: the order flips every pair, so a drift over the run cancels
	if [ $((i % 2)) -eq 0 ]; then
		a=$($PY examples/train_overhead.py --steps 3000 | ovh)
		b=$("$RUN" -q --force -o "$OUT/ovh.db" -- $PY examples/train_overhead.py --steps 3000 2>/dev/null | ovh)
	else
		b=$("$RUN" -q --force -o "$OUT/ovh.db" -- $PY examples/train_overhead.py --steps 3000 2>/dev/null | ovh)
		a=$($PY examples/train_overhead.py --steps 3000 | ovh)
	fi
	log "overhead_pair=$i untraced_s=${a% *} traced_s=${b% *} untraced_cpu_s=${a#* } traced_cpu_s=${b#* }"
	i=$((i + 1))
done
median() { sort -n | awk '{v[NR]=$1} END {m = (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m}'; }
if [ "$PAIRS" -gt 0 ]; then
	r=$(grep '^overhead_pair' "$OUT/summary.txt" | awk '{split($2,a,"=");split($3,b,"="); print b[2]/a[2]}' | median)
	c=$(grep '^overhead_pair' "$OUT/summary.txt" | awk '{split($4,a,"=");split($5,b,"="); if (a[2] > 0) print b[2]/a[2]}' | median)
	log "overhead_median_ratio=$r overhead_median_cpu_ratio=$c pairs=$PAIRS"
fi

# --- 3. cross-check with uprobes --------------------------------------------------------
if part xcheck; then
	. tests/bench/cuda_probes.sh
	"$D/preload_uprobe_count" "$D/preload_count.bpf.o" $probes -- \
		"$D/ingero-collector" -o "$OUT/xcheck.db" -- $PY examples/small_check.py --steps 50 --workers 4 \
		>"$OUT/xcheck.txt" 2>&1
	grep '^uprobe' "$OUT/xcheck.txt" | tee -a "$OUT/summary.txt"
	"$D/ingero-analyze" stats "$OUT/xcheck.db" | tee -a "$OUT/summary.txt"
fi

# --- 5. stackcost: one call stack in PyTorch --------------------------------------------
# CUDA-only (the stacks are the preload's); a stack on every launch makes
# their cost seconds, far above the run-to-run noise
if part stackcost; then
	sum_json() { tr -d ' \t' <"$1" | grep -o "\"$2\":[0-9]*" | sed 's/.*://' | awk '{ s += $1 } END { print s + 0 }'; }
	for v in none every_unlimited every_budget default; do
		case $v in
		none) set -- INGERO_LAUNCH_SAMPLE=0 INGERO_STACKS=none ;;
		every_unlimited) set -- INGERO_LAUNCH_SAMPLE=1 INGERO_STACK_BUDGET_PPM=1000000 ;;
		every_budget) set -- INGERO_LAUNCH_SAMPLE=1 ;;
		default) set -- INGERO_STACK_BUDGET_PPM=5000 ;;
		esac
		w=$(env "$@" "$RUN" -q --force --cuda-only -o "$OUT/sc_$v.db" -- $PY examples/train_overhead.py --steps 1000 \
			2>/dev/null | sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p')
		"$D/ingero-analyze" stats --json "$OUT/sc_$v.db" >"$OUT/sc_$v.json" 2>&1
		log "stackcost=$v wall_s=$w stacks=$(sum_json "$OUT/sc_$v.json" stacks) withheld=$(sum_json "$OUT/sc_$v.json" stacks_withheld) calls=$(sum_json "$OUT/sc_$v.json" cuda_calls)"
		eval "w_$v=\$w; s_$v=$(sum_json "$OUT/sc_$v.json" stacks)"
		rm -f "$OUT/sc_$v.db"*
	done
	# shellcheck disable=SC2154
	log "stack_us=$(echo "$w_every_unlimited $w_none $s_every_unlimited" | awk '{ if ($3 > 0) printf "%.1f", ($1 - $2) / $3 * 1e6; else print "-" }') every_budget_over_none=$(echo "$w_every_budget $w_none" | awk '{ printf "%.4f", $1 / $2 }')"
fi

# --- 6. pyframes: Python frames in the workers' samples --------------------------------
# (plain tables: python3's own sqlite3 reads them, no sqlite3 shell needed)
if part pyframes; then
	"$RUN" -q --force -o "$OUT/pyframes.db" -- $PY examples/dataloader_starve.py --rows "$ROWS" --mode loader --workers 4 \
		>"$OUT/pyframes.run.txt" 2>&1
	"$D/ingero-analyze" explain "$OUT/pyframes.db" >"$OUT/pyframes.explain.txt" 2>&1
	$PY - "$OUT/pyframes.db" <<'PYEOF' | tee -a "$OUT/summary.txt" ${SUMMARY:+"$SUMMARY"}
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchall()
for pid, n, py in q("""SELECT s.pid, count(*), sum(EXISTS (SELECT 1 FROM stack_frames f WHERE f.stack_id = s.stack_id
                     AND f.kind = 'python')) FROM cpu_samples s GROUP BY 1 ORDER BY 2 DESC LIMIT 8"""):
    print(f"pyframes_pid={pid} samples={n} with_python={py}")
for sym, file, line, n in q("""SELECT f.symbol, f.file, f.line, count(*) FROM cpu_samples s JOIN stack_frames f
                     ON f.stack_id = s.stack_id AND f.kind = 'python' AND f.depth = 0 GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 12"""):
    print(f"pyframes_top n={n} func={sym} at={file}:{line}")
print("pyframes_losses=" + str(q("SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'sample_python_frames'")[0][0]))
PYEOF
	grep -E '^\[|samples in the gaps|Source' "$OUT/pyframes.explain.txt" | head -n 12 | tee -a "$OUT/summary.txt"
fi

# --- 7. patterns: five other ways to starve, each traced; what explain names ----------
# (examples/starve_patterns.py: torch.compile, empty_cache every step, a Python thread
# holding the GIL, a checkpoint fsync'ed every step, GradScaler with an unfused AdamW;
# docs/chains.md says what to expect)
if part patterns; then
	for mode in compile empty_cache gil io amp; do
		"$RUN" -q --force -o "$OUT/pat_$mode.db" -- $PY examples/starve_patterns.py "$mode" >"$OUT/pat_$mode.run.txt" 2>&1
		log "pattern=$mode rc=$? $(grep '^mode=' "$OUT/pat_$mode.run.txt" | tail -n 1)"
		"$D/ingero-analyze" explain "$OUT/pat_$mode.db" >"$OUT/pat_$mode.explain.txt" 2>&1
		grep -E '^\[|^Lost|Root cause|Source' "$OUT/pat_$mode.explain.txt" | head -n 9 | cut -c1-400 |
			sed "s/^/  $mode: /" | tee -a "$OUT/summary.txt" ${SUMMARY:+"$SUMMARY"}
	done
fi

# --- 4. turns: variants and an untraced reference take turns, chunk by chunk -----------
# (tests/bench/turns_lib.sh says how and why); TURNS names the variants (default: full)
part turns || exit 0
ROUNDS=${ROUNDS:-4}; CHUNKS=${CHUNKS:-60}; TURNS=${TURNS:-full}
workload() { echo timeout 900 $PY examples/train_overhead.py --steps 300 --chunks "$CHUNKS" --turns "$@"; }
. tests/bench/turns_lib.sh
ANALYZE="$D/ingero-analyze"
# toggled chunks are short (TSTEPS steps, ~40 ms): the machine's speed drifts
# by 5-10 % between chunks of 0.4 s, less between neighbours closer in time
toggle_workload() { echo timeout 900 $PY examples/train_overhead.py --steps "${TSTEPS:-30}" --chunks "$CHUNKS" --toggle; }
turns_by_method "$OUT"
