#!/bin/sh
# lines.sh — `make bench-lines`: how many cache lines the library touches per
# CUDA call, and how many instructions it runs, counted by cachegrind
# (deterministic: no timing, so a change that saves one line shows as one).
# A program that works between its calls (PyTorch runs ~46 us of Python and
# C++ between launches on the H200 loop) evicts the library's lines each
# time; each line it then touches is a miss, and where the program's
# footprint also evicts the L2 it is a trip to L3 or memory: ~0.6 us a call
# there, against 0.2 us in a hot loop (docs/gpu-runs.md section 8).
# Kernel launches on the fake runtime, PRELOAD_CALLS_THRASH_KB touched between
# calls, no stacks, no collector (the ring is not drained: N stays far below
# its 65,536 slots, so no call is dropped); each figure is the traced run less
# the untraced one, per launch, under cachegrind's model of a 48 KiB L1d and a
# 2 MiB last level (the GPU machine's L2 per core).  Prints key=value:
#   lines_l1_per_launch         L1d misses added per launch (256 KiB touched between calls)
#   lines_ll_per_launch         last-level misses added per launch (4 MiB touched between calls)
#   instr_per_launch            instructions added per launch
#   lines_l1_paused_per_launch  L1d misses per launch with recording paused
#                               (INGERO_CAPTURE=cudaProfilerApi, never started):
#                               what the interposition alone costs
set -u
B=${B:-build}
N=${N:-5000}
SO=${SO:-$PWD/$B/libingero_preload.so}
CALLS=$B/tests/preload_calls
command -v valgrind >/dev/null || { echo "# lines: needs valgrind (cachegrind)"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ingero-lines.XXXXXX")
trap 'rm -rf "$T"' EXIT
export INGERO_ENDPOINT="ipc://$T/none.sock" FAKECUDA_NOOP=1 FAKECUDA_KERNEL_US=1 \
	PRELOAD_CALLS_LAUNCH=1 INGERO_STACKS=none INGERO_LAUNCH_SAMPLE=0 INGERO_GPU_MARKS=0
# run KB [ENV...]: "Ir D1misses LLmisses" of the whole process
run() {
	kb=$1; shift
	env PRELOAD_CALLS_THRASH_KB="$kb" "$@" valgrind --tool=cachegrind --cache-sim=yes \
		--D1=49152,12,64 --I1=32768,8,64 --LL=2097152,16,64 --cachegrind-out-file=/dev/null \
		"$CALLS" loop "$N" 100 2>&1 >/dev/null | awk '
		/ I *refs:/ { gsub(",", "", $4); ir = $4 }
		/ D1 *misses:/ { gsub(",", "", $4); d1 = $4 }
		/ LLd misses:/ { gsub(",", "", $4); ll = $4 }
		END { print ir, d1, ll }'
}
# per launch: (traced - untraced) / N of column C
per() { echo "$1 $2" | awk -v n="$N" -v c="$3" '{ printf "%.1f", ($c - $(c + 3)) / n }'; }
base256=$(run 256 X=1); traced256=$(run 256 LD_PRELOAD="$SO")
base4m=$(run 4096 X=1); traced4m=$(run 4096 LD_PRELOAD="$SO")
paused=$(run 256 LD_PRELOAD="$SO" INGERO_CAPTURE=cudaProfilerApi)
echo "# $(uname -n), cachegrind $(valgrind --version), $(date -u +%Y-%m-%dT%H:%MZ), $N launches"
echo "lines_l1_per_launch=$(per "$traced256" "$base256" 2)"
echo "lines_ll_per_launch=$(per "$traced4m" "$base4m" 3)"
echo "instr_per_launch=$(per "$traced256" "$base256" 1)"
echo "lines_l1_paused_per_launch=$(per "$paused" "$base256" 2)"
