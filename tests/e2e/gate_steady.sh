#!/bin/sh
# gate_steady.sh — the CI gate a user can trust, on real traces of the fake
# runtime (tests/helpers/python_gate.py traced by ingero-run: collector,
# preload, eBPF): no alarm on identical runs, every injected regression
# caught with its cause named.
#   A/A: four traced runs of the same healthy loop (DataLoader-style workers,
#        pinned copies, host work hidden behind the GPU's step); a baseline
#        saved from three of them, with the default thresholds, says which
#        runs made it and passes the fourth; every ordered pair of single runs
#        passes with the limits docs/gate-config.md gives a shared runner —
#        on this 2-CPU VM at a load average of 20 one run in four came out
#        32 % slower, its main thread waiting for a CPU (a real difference
#        between the runs, which the three-run baseline's median absorbs);
#        how many pairs the defaults would fail is printed
#   regressions, each against that baseline, each failing with the cause
#   named in the reason:
#     num_workers 4 -> 0        "DataLoader worker processes 4 -> 0"
#     a per-step .item()        the new sync_per_step chain at the line, syncs per step 1 -> 2
#     pin_memory removed        cudaMemcpyAsync slower: new pageable copies, "pin_memory removed?"
#     a CPU-heavy step          throughput down: the main thread's CPU time per step up
# Short traced runs (100 steps of 10 ms of fake GPU work): the test's wall
# time is mostly the collector's start, eight times.
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "traced gate test needs root (eBPF)"; finish; fi
for f in "$B/ingero-collector" "$B/ingero-analyze" "$B/libingero_preload.so" "$B/fakecuda/libcudart.so.13"; do
	if [ ! -e "$f" ]; then skip "needs $f (make)"; finish; fi
done
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
export INGERO_ANALYZE="$B/ingero-analyze"
PY=$PWD/tests/helpers/python_gate.py
LIB=$PWD/$B/fakecuda/libcudart.so.13
GATE=scripts/ingero-gate
trace() { # NAME, python_gate.py args...
	n=$1
	shift
	# ahead of other jobs on the machine, as a CI benchmark should be
	FAKECUDA_KERNEL_US=2500 nice -n -15 scripts/ingero-run -q -o "$T/$n.db" -- python3 "$PY" "$LIB" --steps 100 "$@" \
		>"$T/$n.out" 2>&1
	check_eq "$n: traced (exit 0)" 0 $?
}

# --- A/A: identical runs, every pair -------------------------------------------------------
for i in 1 2 3 4; do trace "a$i"; done
cat >"$T/runner.conf" <<'CONF'
# a shared 2-CPU runner: other jobs can slow a whole run
throughput_drop_pct = 40
gpu_idle_growth_pts = 30
new_high_chains = warn
CONF
fails=0 pairs=0 dfails=0
for b in 1 2 3 4; do
	for c in 1 2 3 4; do
		[ "$b" = "$c" ] && continue
		pairs=$((pairs + 1))
		if ! "$GATE" "$T/a$b.db" "$T/a$c.db" >"$T/aa.out" 2>&1; then
			dfails=$((dfails + 1))
			echo "# default limits, a$b vs a$c: $(grep -m1 '^regression' "$T/aa.out" | cut -c1-200)"
		fi
		"$GATE" -c "$T/runner.conf" "$T/a$b.db" "$T/a$c.db" >"$T/aa.out" 2>&1
		rc=$?
		if [ "$rc" -ne 0 ]; then
			fails=$((fails + 1))
			echo "# a$b vs a$c: exit $rc"
			sed 's/^/#   /' "$T/aa.out" | head -n 20
		fi
	done
done
check_eq "A/A: $pairs ordered pairs of identical runs, none fails (the runner's limits)" 0 "$fails"
echo "# with the default limits: $dfails of $pairs pairs fail"

"$GATE" --save-baseline "$T/a1.db" "$T/a2.db" "$T/a3.db" -o "$T/base.json" 2>"$T/save.err"
check_eq "a baseline saved from three runs" 0 $?
check "it says so" grep -q "baseline of 3 runs" "$T/save.err"
"$GATE" --markdown "$T/aa.md" --junit "$T/aa.xml" "$T/base.json" "$T/a4.db" >"$T/aa.out" 2>&1
rc=$?
check_eq "the fourth run against the three-run baseline passes" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/aa.out" | head -n 20
check "Markdown names the runs that made the baseline" grep -q "median of 3 runs: .*a1.db, .*a2.db, .*a3.db" "$T/aa.md"
check "JUnit names them too" grep -q '<property name="baseline_runs" value=".*a1.db, .*a2.db, .*a3.db"/>' "$T/aa.xml"

# --- regressions, each with its cause -------------------------------------------------------
gate_fails() { # NAME: gates the run against base.json, expects exit 1
	"$GATE" "$T/base.json" "$T/$1.db" >"$T/$1.gate" 2>&1
	rc=$?
	check_eq "$1: regression (exit 1)" 1 "$rc"
	[ "$rc" -eq 1 ] || sed 's/^/# /' "$T/$1.gate" | head -n 30
}
steady_fails() { # NAME: GPU idle or throughput of the steady state fails
	if grep -Eq '^regression: (GPU idle of the steady state|throughput of the steady state)' "$T/$1.gate"; then
		ok "$1: a steady-state figure fails"
	else
		nok "$1: a steady-state figure fails"
		sed 's/^/# /' "$T/$1.gate" | head -n 30
		grep -v '^ingero' "$T/$1.out" | sed 's/^/# /'
	fi
}

trace w0 --workers 0
gate_fails w0
steady_fails w0
check "workers 4 -> 0: the reason names the workers gone" \
	grep -Eq '^regression: (GPU idle|throughput) .*DataLoader worker processes 4 -> 0 \(num_workers=0\?\)' "$T/w0.gate"

trace item --item
gate_fails item
steady_fails item
line=$(marker_line "$PY" ITEM)
check "a per-step .item(): the reason names the new sync at python_gate.py:$line" \
	grep -Eq "^regression: .*new: a sync every step \(sync_per_step:.*python_gate.py:$line " "$T/item.gate"
if grep -Eq "syncs per step [0-9.]+ -> [0-9.]+ \(an .item\(\)" "$T/item.gate"; then
	ok "... and syncs per step up (an .item()?)"
else
	nok "... and syncs per step up (an .item()?)"
	sed 's/^/# /' "$T/item.gate" | head -n 40
fi

trace page --pageable
gate_fails page
check "pin_memory removed: cudaMemcpyAsync p50 fails" grep -Eq '^  cudaMemcpyAsync p50 .* FAIL$' "$T/page.gate"
check "... named: new pageable copies, pin_memory removed?" \
	grep -Eq '^regression: cudaMemcpyAsync got slower: .*new: copies from pageable host memory .*\(pin_memory removed\?\)' \
	"$T/page.gate"

trace cpu --host-ms 20
gate_fails cpu
check "a CPU-heavy step: throughput fails" grep -q '^regression: throughput of the steady state fell' "$T/cpu.gate"
check "... named: the main thread's CPU time per step up" \
	grep -Eq "^regression: throughput .*the main thread's CPU time per step [0-9.]+ ms -> [0-9.]+ ms \(more host work" \
	"$T/cpu.gate"
finish
