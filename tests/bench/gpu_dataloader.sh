#!/bin/sh
# gpu_dataloader.sh — the project's main evidence, run on the H200 machine
# from the repository root as root (docs/gpu-runs.md):
#   1. the design's DataLoader benchmark, each configuration untraced then
#      traced with ingero-run, explain of each trace;
#   2. overhead: a launch-heavy training loop, traced vs untraced, alternated;
#   3. cross-check: uprobes on libcudart/libcuda count launches, copies and
#      syncs in the same run as the preload library + collector.
#
#   [PARTS="matrix overhead xcheck"] sh tests/bench/gpu_dataloader.sh BUNDLE_DIR OUT_DIR [ROWS] [PAIRS]
# BUNDLE_DIR: `make bundle` output (it carries preload_uprobe_count and
# preload_count.bpf.o).  PARTS picks sections, so that each device call ends
# inside its time limit.  Prints key=value lines; traces and explains go to OUT_DIR.
set -u
D=$(cd "$1" && pwd); OUT=$2; ROWS=${3:-3000000}; PAIRS=${4:-5}
PARTS=${PARTS:-matrix overhead xcheck}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
PY=python3
RUN="$D/ingero-run"
log() { echo "$*" | tee -a "$OUT/summary.txt" ${SUMMARY:+"$SUMMARY"}; }

# --- 1. the DataLoader benchmark ------------------------------------------------------
bench() { # name, args...
	name=$1; shift
	u=$($PY examples/dataloader_starve.py --rows "$ROWS" "$@" 2>&1 | tail -n 1)
	"$RUN" -q -o "$OUT/$name.db" -- $PY examples/dataloader_starve.py --rows "$ROWS" "$@" \
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
		b=$("$RUN" -q -o "$OUT/ovh.db" -- $PY examples/train_overhead.py --steps 3000 2>/dev/null | ovh)
	else
		b=$("$RUN" -q -o "$OUT/ovh.db" -- $PY examples/train_overhead.py --steps 3000 2>/dev/null | ovh)
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
part xcheck || exit 0
. tests/bench/cuda_probes.sh
"$D/preload_uprobe_count" "$D/preload_count.bpf.o" $probes -- \
	"$D/ingero-collector" -o "$OUT/xcheck.db" -- $PY examples/small_check.py --steps 50 --workers 4 \
	>"$OUT/xcheck.txt" 2>&1
grep '^uprobe' "$OUT/xcheck.txt" | tee -a "$OUT/summary.txt"
"$D/ingero-analyze" stats "$OUT/xcheck.db" | tee -a "$OUT/summary.txt"
