#!/bin/sh
# bench_toggle_pool.sh — the toggle's estimator (tests/bench/turns_lib.sh:
# toggle_rows, toggle_summary), which every H200 overhead figure comes
# from, on chunk files of known content, through tests/bench/toggle_pool.sh:
#   - a process whose recording chunks take 2 % longer than their paused
#     neighbours reads 2.00, whatever the drift both share;
#   - the first 5 % of the chunks (at least two) are warm-up, left out;
#   - runs in two directories pool: processes and chunks add up;
#   - the A/A (untraced) reads 0 and each traced variant is read against it;
#   - one process of a variant still reads from its chunks;
#   - SPLIT=1 (INGERO_SPLIT_BPF's runs): the second, fourth, ... recording
#     chunks read as VARIANT-held, and the variant less them;
#   - no chunk file: one error line, exit 2;
#   - toggle_history.sh: the device sessions' chunk files of the current
#     per-call path (docs/gpu-runs/toggle-current.txt) read as the docs
#     quote them; a list that names what is not there: one line, exit 2.
# tests/run: pool (no clock it asserts on: run beside another test)
. tests/lib.sh
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
# chunks FILE N PCT: N chunks alternating paused/recording, the paused ones
# drifting up 0.1 % a chunk, the recording ones PCT % above that drift;
# chunk 0 and 1 (warm-up) 50 % slower
chunks() {
	awk -v n="$2" -v pct="$3" 'BEGIN { for (i = 0; i < n; i++) { on = i % 2; w = 0.040 * (1 + 0.001 * i)
		if (on) w *= 1 + pct / 100; if (i < 2) w *= 1.5
		printf "chunk=%d on=%d wall_s=%.9f thread_cpu_s=%.9f\n", i, on, w, w * 0.7 } }' >"$1"
}
mkdir -p "$T/a" "$T/b"
chunks "$T/a/toggle.full.0.out" 41 2
chunks "$T/a/toggle.untraced.0.out" 41 0
chunks "$T/b/toggle.full.0.out" 41 2
chunks "$T/b/toggle.untraced.0.out" 41 0
sh tests/bench/toggle_pool.sh "$T/a" "$T/b" >"$T/out" 2>&1
check_eq "exits 0" 0 $?
line() { grep "^$1" "$T/out"; }
val() { line "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
check_eq "full: recording 2 % slower reads 2.00 (drift shared)" 2.00 "$(val "toggle_variant=full " chunk_mean_pct)"
check_eq "full: two processes pooled" 2 "$(val "toggle_variant=full " procs)"
# 41 chunks: recording ones 3, 5, ..., 39 (chunk 1 is warm-up, 40 has no next)
check_eq "full: 19 recording chunks a process, warm-up and the last left out" 38 "$(val "toggle_variant=full " chunks)"
check_eq "untraced (A/A) reads 0.00" 0.00 "$(val "toggle_variant=untraced " chunk_mean_pct)"
check_eq "full less the A/A" 2.00 "$(val "toggle_vs_aa=full " pct)"
check "the A/A is listed first" sh -c 'head -n 1 "$1" | grep -q "^toggle_variant=untraced "' _ "$T/out"
# one process of a variant (TOGGLE_AA=1: the A/A in the first process only):
# no CI over processes, its chunks' figures all the same
sh tests/bench/toggle_pool.sh "$T/a" >"$T/one" 2>&1
check_eq "one process: its chunks read" 2.00 "$(grep '^toggle_variant=full ' "$T/one" | tr ' ' '\n' | sed -n 's/^chunk_mean_pct=//p')"
check_eq "one process: no CI over processes" - "$(grep '^toggle_variant=full ' "$T/one" | tr ' ' '\n' | sed -n 's/^ci95_low=//p')"
# split: recording windows alternate 3 % (all of it) and 1 % (a part held)
# above the drift: 2 % of the 3 is the held part's share
mkdir -p "$T/s"
awk 'BEGIN { for (i = 0; i < 41; i++) { on = i % 2; w = 0.040 * (1 + 0.001 * i)
	if (on) w *= (i % 4 == 1) ? 1.03 : 1.01
	printf "chunk=%d on=%d wall_s=%.9f thread_cpu_s=%.9f\n", i, on, w, w * 0.7 } }' >"$T/s/toggle.full.0.out"
SPLIT=1 sh tests/bench/toggle_pool.sh "$T/s" >"$T/split" 2>&1
sval() { grep "^$1" "$T/split" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
check_eq "split: the first, third, ... windows read whole" 3.00 "$(sval "toggle_variant=full " chunk_mean_pct)"
check_eq "split: the second, fourth, ... read held" 1.00 "$(sval "toggle_variant=full-held " chunk_mean_pct)"
check_eq "split: 9 whole and 10 held chunks (windows 3, 5, ... and 2, 4, ...; 1 is warm-up)" "9 10" "$(sval "toggle_variant=full " chunks) $(sval "toggle_variant=full-held " chunks)"
check_eq "split: the held part's share" 2.00 "$(sval "toggle_split=full " pct)"
check_eq "without SPLIT: one variant" 0 "$(sh tests/bench/toggle_pool.sh "$T/s" | grep -c 'held')"
sh tests/bench/toggle_pool.sh "$T/none" >"$T/err" 2>&1
check_eq "no chunk files: exit 2" 2 $?
check_eq "no chunk files: one line" 1 "$(wc -l <"$T/err" | tr -d ' ')"
sh tests/bench/toggle_history.sh >"$T/hist" 2>&1
check_eq "history: the current per-call path's processes pooled (docs/gpu-runs.md section 50)" \
	"overhead_pct=0.97 ci95_low=0.89 ci95_high=1.05 procs=57" \
	"$(grep '^toggle_variant=full ' "$T/hist" | grep -o 'overhead_pct=[^ ]* ci95_low=[^ ]* ci95_high=[^ ]* procs=[0-9]*')"
check_eq "history: a fresh folder after the list joins the pool" "procs=58" \
	"$(sh tests/bench/toggle_history.sh docs/gpu-runs/toggle-current.txt "$T/a" | grep '^toggle_variant=full ' | grep -o 'procs=[0-9]*')"
printf '2026-12-06-thirtyninth/raw.tar.xz raw39/nothing\n' >"$T/list"
sh tests/bench/toggle_history.sh "$T/list" >"$T/err" 2>&1
check_eq "history: a folder not in its tarball: exit 2, one line" "2 1" "$? $(wc -l <"$T/err" | tr -d ' ')"
finish
