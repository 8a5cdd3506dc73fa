#!/bin/sh
# gpu_time_check.sh BUNDLE OUT — on the GPU machine: the measured GPU time
# against torch's own CUDA events (examples/gpu_time_check.py), for three
# host/GPU mixes, and a CUDA graph captured and replayed under tracing; then
# launch-bound loops (kernels of 20 and 50 us launched one at a time with host
# work after each) against their calibrated kernel time, for the estimate
# from kernels timed alone.  Prints the truth line, explain's GPU idle over
# exactly the loop's window (and its estimate as JSON), and the marks' flags;
# everything under OUT.  MIXES picks mixes: "GPU_MS:HOST_MS" or
# "kKERNEL_US:SPACING_US:HOST_MS".
set -u
B=$1 OUT=$2
mkdir -p "$OUT"
for mix in ${MIXES:-4:6 8:2 1:10 k20:60:2 k50:120:2}; do
	case $mix in
	k*) set -- $(echo "${mix#k}" | tr : ' ')
		n="k$1s$2h$3"
		set -- --kernel-us "$1" --spacing-us "$2" --host-ms "$3" --steps 100 ;;
	*) set -- $(echo "$mix" | tr : ' ')
		n="g$1h$2"
		set -- --gpu-ms "$1" --host-ms "$2" ;;
	esac
	"$B/ingero-run" -q -o "$OUT/$n.db" -- python3 examples/gpu_time_check.py "$@" \
		>"$OUT/$n.out" 2>&1
	truth=$(grep '^truth' "$OUT/$n.out")
	echo "$n: $truth | $(grep '^graph' "$OUT/$n.out")"
	t0=$(echo "$truth" | sed 's/.*t0_ns=\([0-9]*\).*/\1/') t1=$(echo "$truth" | sed 's/.*t1_ns=\([0-9]*\).*/\1/')
	rel=$(python3 - "$OUT/$n.db" "$t0" "$t1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = int(db.execute("select value from session where key='start_mono_ns'").fetchone()[0])
print(f"{(int(sys.argv[2]) - s) / 1e9:.6f}s {(int(sys.argv[3]) - s) / 1e9:.6f}s")
r = db.execute("select count(*), sum(flags&1), sum((flags&2)/2), sum((flags&4)/4), "
               "avg(done_ns-recorded_ns) from gpu_marks").fetchone()
print("marks", r, "losses", db.execute("select source, count from losses where count > 0").fetchall(),
      file=sys.stderr)
PY
)
	set -- $rel
	"$B/ingero-analyze" explain --from "$1" --to "$2" "$OUT/$n.db" >"$OUT/$n.explain.txt" 2>&1
	grep -m1 '^GPU idle' "$OUT/$n.explain.txt"
	"$B/ingero-analyze" explain --json --from "$1" --to "$2" "$OUT/$n.db" 2>/dev/null | python3 -c '
import json, sys
g = json.load(sys.stdin)["gpu_idle_pct"]
print("  bounds", g["low"], g["high"], "estimate", json.dumps(g.get("estimate_from_timed_work", {}).get("idle")),
      json.dumps({k: v for k, v in g.get("estimate_from_timed_work", {}).items() if k != "basis"}))'
done
