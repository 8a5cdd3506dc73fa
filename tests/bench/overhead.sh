#!/bin/sh
# tests/bench/overhead.sh — `make bench-overhead`: what the whole tracer
# (ingero-run: preload, collector, eBPF, sampler) costs a launch-bound Python
# loop on the fake CUDA runtime, measured by taking turns with an untraced
# copy (tests/bench/turns_lib.sh).  The loop (tests/bench/launch_loop.py)
# has the H200 Adam loop's shape and pace: 36 launches and a sync per step,
# ~22,000 CUDA calls/s (FAKECUDA_LAUNCH_NS burns the host time a PyTorch
# operator costs).  Prints key=value lines:
#   calls_per_s                      the untraced loop's CUDA calls per second
#   turns_variant=V median_ratio=…   traced/untraced wall time per chunk, its
#                                    mean and 95 % CI; the same for thread CPU
#   with PAIRS=N (turns_lib.sh, turns_paired): N pairs of an A/A round and
#   one round of each variant; paired_variant=V overhead_pct=… ci95=…
#   with TOGGLE=N (turns_lib.sh, turns_toggle): N processes per variant, each
#   against itself, recording and paused in turns; toggle_variant=V …
#   loaded_…: tests/bench/loaded.sh (every CPU but one busy; SCHED_BATCH or not)
# Root (eBPF).  Environment: ROUNDS (4), CHUNKS (40), STEPS (300), TURNS
# (full), PAIRS (unset), LOADED_PAIRS (5; 0 skips loaded.sh), FAKECUDA_LAUNCH_NS (40000), FAKECUDA_KERNEL_US (20).
set -u
B=${B:-build}
ROUNDS=${ROUNDS:-4}; CHUNKS=${CHUNKS:-40}; STEPS=${STEPS:-300}; TURNS=${TURNS:-full}
export FAKECUDA_LAUNCH_NS=${FAKECUDA_LAUNCH_NS:-40000} FAKECUDA_KERNEL_US=${FAKECUDA_KERNEL_US:-20}
export INGERO_COLLECTOR="$PWD/$B/ingero-collector" INGERO_ANALYZE="$PWD/$B/ingero-analyze" \
	INGERO_PRELOAD="${INGERO_PRELOAD:-$PWD/$B/libingero_preload.so}"
RUN=scripts/ingero-run
LIB=$PWD/$B/fakecuda/libcudart.so.13
OUT=$(mktemp -d "${TMPDIR:-/tmp}/ingero-bench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
log() { echo "$*"; }
if [ "$(id -u)" -ne 0 ]; then
	echo "# overhead: needs root (eBPF)"
	exit 0
fi
echo "# $(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%d)"
python3 tests/bench/launch_loop.py "$LIB" --steps "$STEPS" | sed -n 's/.*\(calls_per_s=[0-9]*\).*/\1/p'
workload() { echo python3 tests/bench/launch_loop.py "$LIB" --steps "$STEPS" --chunks "$CHUNKS" --turns "$@"; }
. tests/bench/turns_lib.sh
ANALYZE=$INGERO_ANALYZE
toggle_workload() { echo python3 tests/bench/launch_loop.py "$LIB" --steps "$STEPS" --chunks "$CHUNKS" --toggle; }
turns_by_method "$OUT"
# the tracer with no idle CPU: its threads under SCHED_BATCH against the default policy
if [ "${LOADED_PAIRS:-5}" -gt 0 ]; then sh tests/bench/loaded.sh "$LIB"; fi
