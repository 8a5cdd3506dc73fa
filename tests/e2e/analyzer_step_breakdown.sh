#!/bin/sh
# tests/e2e/analyzer_step_breakdown.sh — the per-step breakdown (issue 43,
# measure/step_breakdown.h) on real corpus traces: every step's parts sum to
# the step (the totals to the steps' sum), the shares to 100 %, and each
# trace's class is what the trace shows (checked by hand against explain's
# own figures before it was written down):
#   c01_cnn_workers2: the main thread blocked on 2 slow DataLoader workers
#     while the GPU idles (73 % of the steady state): input-bound;
#   c02_transformer_gpu_bound: the GPU had work ~100 % of the steady state:
#     device-bound, device compute >= 90 %;
#   c05_python_lists: the main thread on a CPU building tensors from lists
#     (93 % of the steady state in gaps, on-CPU): host-bound;
#   c21_item_every_step: .item() every step — but its syncs wait while the
#     GPU still runs the step's kernels, and the measured gaps are 5 % of
#     the steady state; the rest of the ~24 % idle the headline estimates is
#     in stretches under 50 us, the GPU done before the host queued more
#     (after each .item() returns): the host's, as the estimate says since
#     the thirty-seventh session (until then device compute held every
#     instant outside a gap: 94 % against the headline's ~76 % busy).
#     Device compute ~76 %, host compute ~20 %, sync ~0 %: host-bound at
#     the high tier's line, not sync-bound (it read "somewhat" at 19.9 %
#     until the forty-ninth session: its 0.2 % blocked in backward() while
#     autograd's thread queued the work is host compute now);
#   c15_amp_gradscaler: a launch-rate-bound AMP loop (GPU idle ~69 %, each
#     small kernel done before the next launch): host-bound, launches a
#     fifth of the steps, device compute ~100 % less the headline's idle
#     (it read device-bound, 96 %, before).
# ONLY=ERE picks traces by name.
# tests/run: pool (no clock it asserts on: run beside another test)
. "$(dirname "$0")/../lib.sh"
ONLY=${ONLY:-.}
A=$B/ingero-analyze
command -v xz >/dev/null || { skip "step breakdown: xz missing"; finish; }
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# one NAME CLASS PYTHON-ASSERTION
one() {
	echo "$1" | grep -Eq "$ONLY" || return 0
	if ! db=$(corpus_db "tests/corpus/$1.db.xz" "$T/$1.db" 2>/dev/null); then
		nok "$1: unpacked"
		return
	fi
	"$A" explain --json "$db" >"$T/$1.json" 2>"$T/$1.err" || { nok "$1: explain --json"; return; }
	"$A" explain --width 100 "$db" >"$T/$1.txt" 2>>"$T/$1.err" || { nok "$1: explain"; return; }
	check "$1: the parts sum to the steps, the shares to 100 %" python3 - "$T/$1.json" <<'PYEOF'
import json, sys
b = json.load(open(sys.argv[1]))["step_breakdown"]
assert b["steps"] > 10, b
assert sum(p["total_ns"] for p in b["parts"].values()) == b["total_ns"], b
assert abs(sum(p["share_pct"] for p in b["parts"].values()) - 100) < 0.5, b
assert b["thresholds"]["input_wait"] == {"high_pct": 20, "moderate_pct": 5}, b
PYEOF
	check "$1: $2" python3 - "$T/$1.json" "$2" "$3" <<'PYEOF'
import json, sys
b = json.load(open(sys.argv[1]))["step_breakdown"]
s = {k: v["share_pct"] for k, v in b["parts"].items()}
assert b["class"] == sys.argv[2], (b["class"], s)
assert eval(sys.argv[3]), s
PYEOF
	check "$1: explain prints the table with the class" \
		grep -q "^  Class: $2\. Input-bound: input wait >= 20% of the step (5%: somewhat)" "$T/$1.txt"
}

one c01_cnn_workers2 input-bound 's["input_wait"] >= 50 and s["device_compute"] < 40'
one c02_transformer_gpu_bound device-bound 's["device_compute"] >= 90'
one c05_python_lists host-bound 's["host_compute"] >= 80 and s["input_wait"] < 5'
one c21_item_every_step host-bound 's["device_compute"] >= 65 and 15 <= s["host_compute"] < 25 and s["sync"] < 5'
one c15_amp_gradscaler host-bound 's["launch"] >= 15 and 20 <= s["device_compute"] <= 45'
one c05_python_lists_under_cpu_quota CPU-starved 's["cpu_wait"] >= 50 and s["host_compute"] < 40'
one c10_contended_loop CPU-starved 's["cpu_wait"] >= 20 and s["input_wait"] < 5'
finish
